"""One scenario world as written in ``scenarios/<name>.yaml``, and the checks that hold it together.

:class:`WorldSpec` validates each resource with its own model, then :func:`reference_problems`
checks every name a resource mentions (a subnet's NSG, a NIC's subnet, a peering's remote VNet, a
DNS link's VNet, a flow's endpoints, a fault's flow) and reports every broken one at once, as
sentences, so one load shows all of them rather than the first.
"""

from __future__ import annotations

import ipaddress
from datetime import datetime
from typing import Any

from pydantic import Field, model_validator

from netghost.lab.world._edge import LoadBalancer, NatGateway
from netghost.lab.world._fault_specs import CloudFaultSpec, NetworkFault
from netghost.lab.world._fields import LabModel, is_ip
from netghost.lab.world._firewall import AzureFirewall, FirewallPolicy
from netghost.lab.world._gateways import GATEWAY_SUBNET, LocalNetworkGateway, VnetGateway, VpnConnection
from netghost.lab.world._resources import (
    LocalMachine,
    ManagedCluster,
    NetworkWatcherDecl,
    Nsg,
    PrivateDnsZone,
    PrivateEndpoint,
    PublicDnsRecord,
    ResourceGroup,
    RouteTable,
    ScaleSet,
    ServiceEndpointPolicy,
    StorageAccount,
    Subscription,
    TrafficFlow,
    Vm,
    VNet,
)
from netghost.lab.world._spec_edge import edge_problems

__all__ = ["WorldSpec", "reference_problems"]


class WorldSpec(LabModel):
    """One scenario world, as written in ``scenarios/<name>.yaml``."""

    name: str
    description: str
    symptom: str | None = Field(
        default=None,
        description="the complaint as the engineer types it (the demo's and the benchmark's problem statement); "
                    "without it the first broken flow's 'X cannot reach Y on port P'")
    subscription: Subscription = Field(default_factory=Subscription)
    clock_start: datetime | None = None
    resource_groups: list[ResourceGroup]
    network_watchers: list[NetworkWatcherDecl] = Field(default_factory=list)
    vnets: list[VNet] = Field(default_factory=list)
    nsgs: list[Nsg] = Field(default_factory=list)
    route_tables: list[RouteTable] = Field(default_factory=list)
    vnet_gateways: list[VnetGateway] = Field(default_factory=list)
    local_network_gateways: list[LocalNetworkGateway] = Field(default_factory=list)
    vpn_connections: list[VpnConnection] = Field(default_factory=list)
    load_balancers: list[LoadBalancer] = Field(default_factory=list)
    nat_gateways: list[NatGateway] = Field(default_factory=list)
    firewalls: list[AzureFirewall] = Field(default_factory=list)
    firewall_policies: list[FirewallPolicy] = Field(default_factory=list)
    service_endpoint_policies: list[ServiceEndpointPolicy] = Field(default_factory=list)
    vms: list[Vm] = Field(default_factory=list)
    vm_scale_sets: list[ScaleSet] = Field(default_factory=list)
    aks_clusters: list[ManagedCluster] = Field(default_factory=list)
    private_dns_zones: list[PrivateDnsZone] = Field(default_factory=list)
    private_endpoints: list[PrivateEndpoint] = Field(default_factory=list)
    public_dns: list[PublicDnsRecord] = Field(default_factory=list)
    storage_accounts: list[StorageAccount] = Field(default_factory=list)
    traffic: list[TrafficFlow] = Field(default_factory=list)
    fault: NetworkFault | None = None
    faults: list[NetworkFault] = Field(default_factory=list, description=(
        "more network faults, each breaking its own flows for its own reason (``fault`` is the first one)"))
    cloud_faults: list[CloudFaultSpec] = Field(default_factory=list)
    local_machine: LocalMachine = Field(default_factory=LocalMachine)

    @property
    def all_faults(self) -> list[NetworkFault]:
        """Every declared network fault, ``fault`` first."""
        return ([self.fault] if self.fault is not None else []) + list(self.faults)

    @model_validator(mode="after")
    def _references(self) -> WorldSpec:
        problems = reference_problems(self)
        if problems:
            raise ValueError("broken references:\n  - " + "\n  - ".join(problems))
        return self


def _dupes(kind: str, names: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for name in names:
        if name.lower() in seen:
            out.append(f"duplicate {kind} name {name!r}")
        seen.add(name.lower())
    return out


def reference_problems(w: WorldSpec) -> list[str]:
    """Every broken cross reference in ``w``, as human sentences (empty when the world is sound)."""
    nsgs = {n.name for n in w.nsgs}
    vnets = {v.name: v for v in w.vnets}
    return [
        *_duplicate_names(w),
        *_resource_group_problems(w),
        *_vnet_problems(w, nsgs, vnets),
        *_nic_problems(w, nsgs, vnets),
        *_zone_link_problems(w, vnets),
        *_traffic_and_fault_problems(w, vnets),
        *_scale_set_problems(w),
        *_gateway_problems(w, vnets),
        *edge_problems(w, vnets),
    ]


def _duplicate_names(w: WorldSpec) -> list[str]:
    return [
        *_dupes("resource group", [g.name for g in w.resource_groups]),
        *_dupes("vnet", [v.name for v in w.vnets]),
        *_dupes("nsg", [n.name for n in w.nsgs]),
        *_dupes("route table", [r.name for r in w.route_tables]),
        *_dupes("vm", [v.name for v in w.vms]),
        *_dupes("vm scale set", [s.name for s in w.vm_scale_sets]),
        *_dupes("aks cluster", [c.name for c in w.aks_clusters]),
        *_dupes("storage account", [s.name for s in w.storage_accounts]),
        *_dupes("private endpoint", [e.name for e in w.private_endpoints]),
        *_dupes("traffic flow", [t.name for t in w.traffic]),
        *_dupes("network watcher region", [n.location for n in w.network_watchers]),
        *_dupes("virtual network gateway", [g.name for g in w.vnet_gateways]),
        *_dupes("local network gateway", [g.name for g in w.local_network_gateways]),
        *_dupes("vpn connection", [c.name for c in w.vpn_connections]),
        *_dupes("load balancer", [lb.name for lb in w.load_balancers]),
        *_dupes("nat gateway", [n.name for n in w.nat_gateways]),
        *_dupes("firewall", [f.name for f in w.firewalls]),
        *_dupes("firewall policy", [f.name for f in w.firewall_policies]),
        *_dupes("service endpoint policy", [p.name for p in w.service_endpoint_policies]),
    ]


def _resource_group_problems(w: WorldSpec) -> list[str]:
    rgs = {g.name.lower() for g in w.resource_groups}
    owned: list[Any] = [*w.vnets, *w.nsgs, *w.route_tables, *w.vms, *w.private_dns_zones, *w.storage_accounts,
                        *w.vm_scale_sets, *w.aks_clusters, *w.private_endpoints, *w.vnet_gateways,
                        *w.local_network_gateways, *w.vpn_connections, *w.load_balancers, *w.nat_gateways,
                        *w.firewalls, *w.firewall_policies, *w.service_endpoint_policies]
    return [
        f"{type(res).__name__} {res.name}: resource group {res.resource_group!r} is not declared"
        for res in owned
        if res.resource_group.lower() not in rgs
    ]


def _vnet_problems(w: WorldSpec, nsgs: set[str], vnets: dict[str, VNet]) -> list[str]:
    p: list[str] = []
    rts = {r.name for r in w.route_tables}
    for vnet in w.vnets:
        nets = [ipaddress.ip_network(a) for a in vnet.address_prefixes]
        for sn in vnet.subnets:
            net = ipaddress.ip_network(sn.address_prefix)
            if not any(net.subnet_of(n) for n in nets):  # type: ignore[arg-type]
                p.append(f"subnet {vnet.name}/{sn.name} {sn.address_prefix} is outside the VNet's address space")
            if sn.nsg and sn.nsg not in nsgs:
                p.append(f"subnet {vnet.name}/{sn.name}: NSG {sn.nsg!r} is not declared")
            if sn.route_table and sn.route_table not in rts:
                p.append(f"subnet {vnet.name}/{sn.name}: route table {sn.route_table!r} is not declared")
        p.extend(
            f"peering {vnet.name}/{peer.name}: remote VNet {peer.remote_vnet!r} is not declared"
            for peer in vnet.peerings
            if peer.remote_vnet not in vnets
        )
    return p


def _placement_problem(ref: str, ip: str, vnets: dict[str, VNet]) -> str | None:
    """Why ``ip`` cannot be an address of subnet ``ref`` (``vnet/subnet``), or None."""
    vnet_name, _, sn_name = ref.partition("/")
    vnet_decl = vnets.get(vnet_name)
    subnet = next((s for s in vnet_decl.subnets if s.name == sn_name), None) if vnet_decl else None
    if subnet is None:
        return f"subnet {ref!r} is not declared"
    if ipaddress.ip_address(ip) not in ipaddress.ip_network(subnet.address_prefix):
        return f"{ip} is outside {ref} {subnet.address_prefix}"
    return None


def _nic_problems(w: WorldSpec, nsgs: set[str], vnets: dict[str, VNet]) -> list[str]:
    p: list[str] = []
    ips: dict[str, str] = {}
    for vm in w.vms:
        for nic in vm.nics:
            sn_name = nic.subnet.partition("/")[2]
            placed = _placement_problem(nic.subnet, nic.private_ip, vnets)
            if placed:
                p.append(f"VM {vm.name} NIC {nic.name}: {placed}")
            if nic.nsg and nic.nsg not in nsgs:
                p.append(f"VM {vm.name} NIC {nic.name}: NSG {nic.nsg!r} is not declared")
            if sn_name == GATEWAY_SUBNET:
                p.append(f"VM {vm.name} NIC {nic.name}: no VM may sit in a {GATEWAY_SUBNET}")
            if nic.private_ip in ips:
                p.append(f"IP {nic.private_ip} is assigned to both {ips[nic.private_ip]} and {vm.name}")
            ips[nic.private_ip] = vm.name
    for pe in w.private_endpoints:  # an endpoint's NIC takes an address of its subnet like a VM's
        placed = _placement_problem(pe.subnet, pe.private_ip, vnets)
        if placed:
            p.append(f"private endpoint {pe.name}: {placed}")
        if pe.private_ip in ips:
            p.append(f"IP {pe.private_ip} is assigned to both {ips[pe.private_ip]} and {pe.name}")
        ips[pe.private_ip] = pe.name
    return p


def _zone_link_problems(w: WorldSpec, vnets: dict[str, VNet]) -> list[str]:
    return [
        f"private DNS zone {zone.name} link {link.name}: VNet {link.vnet!r} is not declared"
        for zone in w.private_dns_zones
        for link in zone.links
        if link.vnet not in vnets
    ]


def _traffic_and_fault_problems(w: WorldSpec, vnets: dict[str, VNet]) -> list[str]:
    p: list[str] = []
    vm_names = {v.name for v in w.vms}
    for flow in w.traffic:
        p.extend(
            f"traffic {flow.name}: endpoint {end!r} is neither a declared VM nor an IPv4 address"
            for end in (flow.client, flow.server)
            if end not in vm_names and not is_ip(end)
        )
    declared = {t.name for t in w.traffic}
    claimed: dict[str, str] = {}
    for fault in w.all_faults:
        p.extend(f"fault {fault.type}: flow {name!r} is not a declared traffic flow"
                 for name in fault.flows if name not in declared)
        for name in fault.flows:
            if name in claimed:
                p.append(f"flow {name!r} is claimed by two faults ({claimed[name]}, {fault.type})")
            claimed[name] = fault.type
    p.extend(
        f"cloud fault {cf.kind}: VM {cf.vm!r} is not declared"
        for cf in w.cloud_faults
        if cf.vm is not None and cf.vm not in vm_names
    )
    if w.local_machine.inside_vnet is not None and w.local_machine.inside_vnet not in vnets:
        p.append(f"local_machine.inside_vnet {w.local_machine.inside_vnet!r} is not a declared VNet")
    return p


def _scale_set_problems(w: WorldSpec) -> list[str]:
    """An instance names a declared set, lives in its group, is called ``<set>_<id>``, ids unique."""
    p: list[str] = []
    sets = {s.name: s for s in w.vm_scale_sets}
    seen: set[tuple[str, str]] = set()
    for vm in w.vms:
        if vm.scale_set is None and vm.instance_id is None:
            continue
        owner = sets.get(vm.scale_set or "")
        if owner is None or vm.instance_id is None:
            p.append(f"VM {vm.name}: scale_set {vm.scale_set!r} and instance_id must name a declared scale set "
                     "and an instance id together")
            continue
        if vm.name != f"{owner.name}_{vm.instance_id}":
            p.append(f"VM {vm.name}: an instance of {owner.name} must be named {owner.name}_{vm.instance_id}")
        if vm.resource_group.lower() != owner.resource_group.lower():
            p.append(f"VM {vm.name}: an instance must be in its scale set's group {owner.resource_group!r}")
        if (owner.name, vm.instance_id) in seen:
            p.append(f"scale set {owner.name}: instance id {vm.instance_id!r} is declared twice")
        seen.add((owner.name, vm.instance_id))
    return p


def _gateway_problems(w: WorldSpec, vnets: dict[str, VNet]) -> list[str]:
    """A gateway sits in its VNet's ``GatewaySubnet`` (one per VNet); a connection joins declared
    gateways; on-premises ranges do not overlap the gateway VNet; BGP needs both ends to speak it."""
    p: list[str] = []
    owners: dict[str, str] = {}
    for gw in w.vnet_gateways:
        home = vnets.get(gw.vnet)
        if home is None:
            p.append(f"virtual network gateway {gw.name}: VNet {gw.vnet!r} is not declared")
        elif not any(s.name == GATEWAY_SUBNET for s in home.subnets):
            p.append(f"virtual network gateway {gw.name}: VNet {gw.vnet} has no subnet named {GATEWAY_SUBNET}")
        if gw.vnet in owners:
            p.append(f"VNet {gw.vnet} has two virtual network gateways ({owners[gw.vnet]}, {gw.name})")
        owners[gw.vnet] = gw.name
    gateways = {g.name: g for g in w.vnet_gateways}
    locals_ = {g.name: g for g in w.local_network_gateways}
    for conn in w.vpn_connections:
        gateway, lng = gateways.get(conn.vnet_gateway), locals_.get(conn.local_gateway)
        if gateway is None:
            p.append(f"vpn connection {conn.name}: virtual network gateway {conn.vnet_gateway!r} is not declared")
        if lng is None:
            p.append(f"vpn connection {conn.name}: local network gateway {conn.local_gateway!r} is not declared")
        if gateway is None or lng is None:
            continue
        if conn.enable_bgp and (gateway.bgp is None or lng.bgp is None):
            p.append(f"vpn connection {conn.name}: enable_bgp needs bgp settings on both gateways")
        vnet = vnets.get(gateway.vnet)
        space = [ipaddress.ip_network(a) for a in vnet.address_prefixes] if vnet else []
        p.extend(f"local network gateway {lng.name}: {prefix} overlaps VNet {gateway.vnet}'s address space"
                 for prefix in lng.address_prefixes
                 if any(ipaddress.ip_network(prefix).overlaps(n) for n in space))
    return p
