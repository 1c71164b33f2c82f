"""What one world's configuration answers, computed from first principles and never stored.

:class:`Topology` wraps a validated :class:`~netghost.lab.world._spec.WorldSpec` and answers the
questions that need no walk through the network, so the ``az`` simulator, the probe shims and
the synthesized captures cannot disagree:

* :meth:`Topology.evaluate_nsg` — which NSG rule decides a 5-tuple at a VM (``test-ip-flow``);
* :meth:`Topology.effective_routes` / :meth:`Topology.next_hop` — the route for a destination
  (system routes, the routes a connected VPN gateway gives, user routes);
* :meth:`Topology.resolve` — what a name resolves to from a VNet (or from the laptop outside);
* :meth:`Topology.service_at` / :meth:`Topology.listening` — which services listen where.

The end-to-end verdict of a flow is built from these answers by
:func:`~netghost.lab.world._flow.evaluate_flow`; :class:`~netghost.lab.world.World` adds it on top.
"""

from __future__ import annotations

import ipaddress
from typing import Literal

from netghost.lab.world._answers import DnsAnswer, NextHop, NsgDecision
from netghost.lab.world._dns import resolve_name, txt_values
from netghost.lab.world._edge_queries import EdgeQueries
from netghost.lab.world._fault_specs import NetworkFault
from netghost.lab.world._gateways import GATEWAY_SUBNET, LocalNetworkGateway, VnetGateway, VpnConnection
from netghost.lab.world._netcalc import (
    DEFAULT_PRIORITIES,
    DEFAULT_RULES,
    EffectiveRoute,
    RuleMatchContext,
    lookup_route,
    rule_matches,
)
from netghost.lab.world._resources import (
    ManagedCluster,
    Nic,
    Nsg,
    PrivateEndpoint,
    RouteTable,
    ScaleSet,
    SecurityRule,
    Service,
    Subnet,
    TrafficFlow,
    Vm,
    VNet,
)
from netghost.lab.world._spec import WorldSpec

__all__ = ["Topology"]

_RFC1918_NONE = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")


class Topology(EdgeQueries):
    """Queries over one validated world's configuration; see the module docstring."""

    def __init__(self, spec: WorldSpec) -> None:
        super().__init__(spec)
        self._vms = {v.name.lower(): v for v in spec.vms}
        self._nsgs = {n.name.lower(): n for n in spec.nsgs}
        self._vnets = {v.name.lower(): v for v in spec.vnets}
        self._rts = {r.name.lower(): r for r in spec.route_tables}
        self._rgs = {g.name.lower(): g for g in spec.resource_groups}
        self._sets = {s.name.lower(): s for s in spec.vm_scale_sets}
        self._clusters = {c.name.lower(): c for c in spec.aks_clusters}
        self._gateways = {g.name.lower(): g for g in spec.vnet_gateways}
        self._local_gateways = {g.name.lower(): g for g in spec.local_network_gateways}
        self._connections = {c.name.lower(): c for c in spec.vpn_connections}

    # ---- lookups -----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def fault(self) -> NetworkFault | None:
        return self.spec.fault

    @property
    def faults(self) -> list[NetworkFault]:
        """Every network fault the world declares (``fault`` first)."""
        return self.spec.all_faults

    def fault_for(self, flow: str) -> NetworkFault | None:
        """The fault that breaks ``flow`` (its ``flow`` or one of its ``also``), or None."""
        return next((f for f in self.spec.all_faults if flow in f.flows), None)

    def rg_location(self, rg: str) -> str:
        return self._rgs[rg.lower()].location

    def has_rg(self, rg: str) -> bool:
        return rg.lower() in self._rgs

    def vm(self, name: str) -> Vm | None:
        return self._vms.get(name.lower())

    def vm_location(self, vm: Vm) -> str:
        return vm.location or self.rg_location(vm.resource_group)

    def scale_set(self, name: str) -> ScaleSet | None:
        return self._sets.get(name.lower())

    def scale_set_location(self, vmss: ScaleSet) -> str:
        return vmss.location or self.rg_location(vmss.resource_group)

    def aks_cluster(self, name: str) -> ManagedCluster | None:
        return self._clusters.get(name.lower())

    def aks_location(self, cluster: ManagedCluster) -> str:
        return cluster.location or self.rg_location(cluster.resource_group)

    def aks_id(self, cluster: ManagedCluster) -> str:
        return self.rid(cluster.resource_group, "Microsoft.ContainerService/managedClusters", cluster.name)

    def instances(self, vmss: ScaleSet) -> list[Vm]:
        """The set's instance VMs, in instance-id order."""
        found = [v for v in self.spec.vms if v.scale_set and v.scale_set.lower() == vmss.name.lower()]
        return sorted(found, key=lambda v: (len(v.instance_id or ""), v.instance_id or ""))

    def vnet(self, name: str) -> VNet | None:
        return self._vnets.get(name.lower())

    def nsg(self, name: str) -> Nsg | None:
        return self._nsgs.get(name.lower())

    def route_table(self, name: str) -> RouteTable | None:
        return self._rts.get(name.lower())

    def vnet_gateway(self, name: str) -> VnetGateway | None:
        return self._gateways.get(name.lower())

    def local_gateway(self, name: str) -> LocalNetworkGateway | None:
        return self._local_gateways.get(name.lower())

    def vpn_connection(self, name: str) -> VpnConnection | None:
        return self._connections.get(name.lower())

    def location_of(self, resource: VnetGateway | LocalNetworkGateway | VpnConnection) -> str:
        return resource.location or self.rg_location(resource.resource_group)

    def nics(self) -> list[tuple[Vm, Nic]]:
        return [(vm, nic) for vm in self.spec.vms for nic in vm.nics]

    def nic(self, name: str) -> tuple[Vm, Nic] | None:
        return next(((vm, n) for vm, n in self.nics() if (n.name or "").lower() == name.lower()), None)

    def vm_by_ip(self, ip: str) -> tuple[Vm, Nic] | None:
        return next(((vm, n) for vm, n in self.nics() if n.private_ip == ip), None)

    def private_endpoint_by_ip(self, ip: str) -> PrivateEndpoint | None:
        return next((pe for pe in self.spec.private_endpoints if pe.private_ip == ip), None)

    def private_endpoint_id(self, pe: PrivateEndpoint) -> str:
        return self.rid(pe.resource_group, "Microsoft.Network/privateEndpoints", pe.name)

    def subnet_of(self, nic: Nic) -> tuple[VNet, Subnet]:
        vnet_name, _, sn_name = nic.subnet.partition("/")
        vnet = self._vnets[vnet_name.lower()]
        return vnet, next(s for s in vnet.subnets if s.name == sn_name)

    def vnet_of_ip(self, ip: str) -> VNet | None:
        address = ipaddress.IPv4Address(ip)
        return next(
            (v for v in self.spec.vnets if any(address in ipaddress.ip_network(p) for p in v.address_prefixes)),
            None,
        )

    def watcher_for(self, location: str) -> str | None:
        """Name of the Network Watcher in ``location``, or None (packet capture then fails)."""
        for decl in self.spec.network_watchers:
            if decl.location.lower() == location.lower():
                return decl.watcher_name
        return None

    # ---- resource ids ------------------------------------------------------------------------
    def vm_id(self, vm: Vm) -> str:
        """A VM's id; a scale-set instance's is ``.../virtualMachineScaleSets/<set>/virtualMachines/<id>``."""
        if vm.scale_set is not None and not self.is_flexible_instance(vm):
            return f"{self.rid(vm.resource_group, 'Microsoft.Compute/virtualMachineScaleSets', vm.scale_set)}" \
                   f"/virtualMachines/{vm.instance_id}"
        return self.rid(vm.resource_group, "Microsoft.Compute/virtualMachines", vm.name)

    def is_flexible_instance(self, vm: Vm) -> bool:
        """An instance of a Flexible scale set: an ordinary VM resource as far as ARM is concerned."""
        owner = self._sets.get((vm.scale_set or "").lower())
        return owner is not None and owner.orchestration_mode == "Flexible"

    def vmss_id(self, vmss: ScaleSet) -> str:
        return self.rid(vmss.resource_group, "Microsoft.Compute/virtualMachineScaleSets", vmss.name)

    def nic_id(self, vm: Vm, nic: Nic) -> str:
        return self.rid(vm.resource_group, "Microsoft.Network/networkInterfaces", nic.name or "")

    def nsg_id(self, nsg: Nsg) -> str:
        return self.rid(nsg.resource_group, "Microsoft.Network/networkSecurityGroups", nsg.name)

    def vnet_id(self, vnet: VNet) -> str:
        return self.rid(vnet.resource_group, "Microsoft.Network/virtualNetworks", vnet.name)

    def subnet_id(self, vnet: VNet, subnet: Subnet) -> str:
        return f"{self.vnet_id(vnet)}/subnets/{subnet.name}"

    def route_table_id(self, name: str) -> str:
        rt = self._rts[name.lower()]
        return self.rid(rt.resource_group, "Microsoft.Network/routeTables", rt.name)

    def vnet_gateway_id(self, gw: VnetGateway) -> str:
        return self.rid(gw.resource_group, "Microsoft.Network/virtualNetworkGateways", gw.name)

    def local_gateway_id(self, lng: LocalNetworkGateway) -> str:
        return self.rid(lng.resource_group, "Microsoft.Network/localNetworkGateways", lng.name)

    def connection_id(self, conn: VpnConnection) -> str:
        return self.rid(conn.resource_group, "Microsoft.Network/connections", conn.name)

    # ---- VPN gateways ------------------------------------------------------------------------
    def gateway_private_ip(self, gw: VnetGateway) -> str:
        """The gateway's address in its GatewaySubnet (the subnet's last usable address, where Azure
        puts a VPN gateway's default BGP peering address)."""
        vnet = self._vnets[gw.vnet.lower()]
        subnet = next(s for s in vnet.subnets if s.name == GATEWAY_SUBNET)
        return str(ipaddress.ip_network(subnet.address_prefix).broadcast_address - 1)

    def connections_of(self, gw: VnetGateway) -> list[VpnConnection]:
        return [c for c in self.spec.vpn_connections if c.vnet_gateway.lower() == gw.name.lower()]

    def serving_gateway(self, vnet: VNet) -> VnetGateway | None:
        """The VPN gateway whose routes ``vnet`` gets: its own, or a peered hub's when the peering uses
        the remote gateway and the hub's side allows gateway transit (both directions Connected)."""
        own = next((g for g in self.spec.vnet_gateways if g.vnet.lower() == vnet.name.lower()), None)
        if own is not None:
            return own
        for peer in vnet.peerings:
            remote = self._vnets.get(peer.remote_vnet.lower())
            if remote is None or not peer.use_remote_gateways or peer.state != "Connected":
                continue
            back = next((p for p in remote.peerings if p.remote_vnet.lower() == vnet.name.lower()), None)
            if back is not None and back.state == "Connected" and back.allow_gateway_transit:
                hub = next((g for g in self.spec.vnet_gateways if g.vnet.lower() == remote.name.lower()), None)
                if hub is not None:
                    return hub
        return None

    def onprem_ranges(self, gw: VnetGateway, connected_only: bool = True) -> list[tuple[str, VpnConnection]]:
        """(prefix, connection) for each on-premises range behind ``gw``'s connections."""
        out: list[tuple[str, VpnConnection]] = []
        for conn in self.connections_of(gw):
            lng = self._local_gateways.get(conn.local_gateway.lower())
            if lng is not None and (conn.status == "Connected" or not connected_only):
                out.extend((prefix, conn) for prefix in lng.address_prefixes)
        return out

    def gateway_routes(self, vnet: VNet, subnet: Subnet) -> list[EffectiveRoute]:
        """Routes source ``VirtualNetworkGateway`` for each on-premises range of a Connected
        connection, unless the subnet's route table stops gateway route propagation."""
        gw = self.serving_gateway(vnet)
        rt = self._rts[subnet.route_table.lower()] if subnet.route_table else None
        if gw is None or (rt is not None and rt.disable_bgp_route_propagation):
            return []
        return [EffectiveRoute((prefix,), "VirtualNetworkGateway", (gw.public_ip,), "VirtualNetworkGateway")
                for prefix, _conn in self.onprem_ranges(gw)]

    def connection_towards(self, vnet: VNet, ip: str) -> VpnConnection | None:
        """The Connected connection of ``vnet``'s serving gateway whose on-premises ranges hold ``ip``."""
        gw = self.serving_gateway(vnet)
        address = ipaddress.IPv4Address(ip)
        for prefix, conn in self.onprem_ranges(gw) if gw is not None else []:
            if address in ipaddress.ip_network(prefix):
                return conn
        return None

    def gateway_subnet(self, gw: VnetGateway) -> tuple[VNet, Subnet]:
        vnet = self._vnets[gw.vnet.lower()]
        return vnet, next(s for s in vnet.subnets if s.name == GATEWAY_SUBNET)

    def evaluate_subnet_nsg(self, nsg: Nsg, vnet: VNet, direction: Literal["Inbound", "Outbound"], *, protocol: str,
                            src: str, sport: int | None, dst: str, dport: int | None) -> NsgDecision | None:
        """The deciding rule of one NSG (a subnet's without a NIC: the GatewaySubnet's), None when none matches."""
        ctx = RuleMatchContext(tuple(vnet.address_prefixes) + tuple(self.peered_prefixes(vnet)))
        for qualified, _prio, rule in self.ordered_rules(nsg, direction):
            if rule_matches(rule, ctx, protocol=protocol, src_ip=src, src_port=sport, dst_ip=dst, dst_port=dport):
                return NsgDecision(rule.access, qualified, nsg.name, "subnet")
        return None

    def subnet_routes(self, vnet: VNet, subnet: Subnet) -> list[EffectiveRoute]:
        """The effective routes of a subnet with no NIC of a VM in it (a GatewaySubnet): as any NIC's there."""
        return self.effective_routes(Nic(subnet=f"{vnet.name}/{subnet.name}", private_ip=str(
            ipaddress.ip_network(subnet.address_prefix).network_address + 4)))

    # ---- NSG ---------------------------------------------------------------------------------
    def peered_prefixes(self, vnet: VNet) -> list[str]:
        """Address space reachable over peerings that are Connected in both directions."""
        out: list[str] = []
        for peer in vnet.peerings:
            remote = self._vnets.get(peer.remote_vnet.lower())
            if remote is None or peer.state != "Connected":
                continue
            back = next((p for p in remote.peerings if p.remote_vnet.lower() == vnet.name.lower()), None)
            if back is not None and back.state == "Connected":
                out.extend(remote.address_prefixes)
        return out

    def match_context(self, nic: Nic) -> RuleMatchContext:
        """The VirtualNetwork tag: the VNet, its connected peers, the on-premises ranges its gateway's
        local network gateways declare (whatever the tunnel's state: the tag follows configuration) and the
        prefixes of the user routes on the NIC's subnet (the service tags doc lists "address prefixes used
        on user-defined routes"; it adds that the tag "might also contain default routes", which the lab leaves
        out, so a default route to an appliance does not turn every Internet address into VirtualNetwork)."""
        vnet, subnet = self.subnet_of(nic)
        gw = self.serving_gateway(vnet)
        onprem = tuple(p for p, _c in self.onprem_ranges(gw, connected_only=False)) if gw is not None else ()
        rt = self._rts[subnet.route_table.lower()] if subnet.route_table else None
        udr = tuple(r.address_prefix for r in rt.routes if r.address_prefix != "0.0.0.0/0") if rt is not None else ()
        return RuleMatchContext(tuple(vnet.address_prefixes) + tuple(self.peered_prefixes(vnet)) + onprem + udr)

    def nsgs_for(self, nic: Nic) -> list[tuple[Literal["subnet", "nic"], Nsg]]:
        """The NSGs that apply to ``nic`` (subnet-level first), as (level, nsg)."""
        _, subnet = self.subnet_of(nic)
        out: list[tuple[Literal["subnet", "nic"], Nsg]] = []
        if subnet.nsg:
            out.append(("subnet", self._nsgs[subnet.nsg.lower()]))
        if nic.nsg:
            out.append(("nic", self._nsgs[nic.nsg.lower()]))
        return out

    @staticmethod
    def ordered_rules(nsg: Nsg, direction: str) -> list[tuple[str, int, SecurityRule]]:
        """(qualified name, priority, rule) in evaluation order, default rules last."""
        custom = [(f"securityRules/{r.name}", r.priority, r) for r in nsg.rules if r.direction == direction]
        defaults = [
            (f"defaultSecurityRules/{r.name}", DEFAULT_PRIORITIES[r.name], r)
            for r in DEFAULT_RULES
            if r.direction == direction
        ]
        return sorted(custom, key=lambda item: item[1]) + defaults

    def evaluate_nsg(
        self,
        vm: Vm,
        direction: Literal["Inbound", "Outbound"],
        *,
        protocol: str,
        local_ip: str,
        local_port: int | None,
        remote_ip: str,
        remote_port: int | None,
        nic: Nic | None = None,
        probe: bool = False,
    ) -> NsgDecision:
        """Which rule decides this packet at ``vm`` (first Deny wins, else the first NSG's Allow).

        ``probe``: the packet is a load balancer's health probe from 168.63.129.16, which ``*`` rules match
        (other platform traffic is exempt unless a rule names it; see :mod:`._netcalc`).
        """
        nic = nic or next((n for n in vm.nics if n.private_ip == local_ip), vm.nics[0])
        layers = self.nsgs_for(nic)
        if direction == "Outbound":
            layers = list(reversed(layers))
        ctx = self.match_context(nic)
        if probe:
            ctx = RuleMatchContext(ctx.virtual_network, platform_wildcard=True)
        if direction == "Inbound":
            src, sport, dst, dport = remote_ip, remote_port, local_ip, local_port
        else:
            src, sport, dst, dport = local_ip, local_port, remote_ip, remote_port
        first_allow: NsgDecision | None = None
        for level, nsg in layers:
            for qualified, _prio, rule in self.ordered_rules(nsg, direction):
                if rule_matches(rule, ctx, protocol=protocol, src_ip=src, src_port=sport, dst_ip=dst,
                                dst_port=dport):
                    decision = NsgDecision(rule.access, qualified, nsg.name, level)
                    if rule.access == "Deny":
                        return decision
                    first_allow = first_allow or decision
                    break
        return first_allow or NsgDecision("Allow", "", None, "none")

    # ---- routes ------------------------------------------------------------------------------
    def effective_routes(self, nic: Nic) -> list[EffectiveRoute]:
        """System routes, the gateway's routes, then the subnet's UDRs; a route overridden by one of
        the same prefix from a stronger source (User over gateway over Default) is marked Invalid."""
        vnet, subnet = self.subnet_of(nic)
        system = [EffectiveRoute(tuple(vnet.address_prefixes), "VnetLocal")]
        for peer in vnet.peerings:
            remote = self._vnets[peer.remote_vnet.lower()]
            if remote.address_prefixes[0] in self.peered_prefixes(vnet):
                system.append(EffectiveRoute(tuple(remote.address_prefixes), "VNetPeering"))
        system.append(EffectiveRoute(("0.0.0.0/0",), "Internet"))
        system.extend(EffectiveRoute((p,), "None") for p in _RFC1918_NONE)
        user: list[EffectiveRoute] = []
        if subnet.route_table:
            rt = self._rts[subnet.route_table.lower()]
            for route in rt.routes:
                ips = (route.next_hop_ip,) if route.next_hop_ip else ()
                user.append(
                    EffectiveRoute(
                        (route.address_prefix,), route.next_hop_type, ips, "User", "Active", route.name,
                        rt.name, rt.disable_bgp_route_propagation,
                    )
                )
        gateway = self.gateway_routes(vnet, subnet)
        by_user = {u.address_prefixes[0] for u in user}
        by_gateway = by_user | {g.address_prefixes[0] for g in gateway}
        return [*_invalidated(system, by_gateway), *_invalidated(gateway, by_user), *user]

    def next_hop(self, nic: Nic, dst_ip: str) -> NextHop:
        """``show-next-hop``: the effective route's hop for ``dst_ip`` leaving ``nic``."""
        route = lookup_route(self.effective_routes(nic), dst_ip)
        if route is None:
            return NextHop("None", None, "System Route")
        ip = route.next_hop_ips[0] if route.next_hop_ips else None
        rt_id = self.route_table_id(route.route_table) if route.route_table else "System Route"
        return NextHop(route.next_hop_type, ip, rt_id, route.name)

    # ---- DNS ---------------------------------------------------------------------------------
    def resolve(self, name: str, from_vnet: str | None = None) -> DnsAnswer:
        """Resolve ``name`` as a VM in ``from_vnet`` would (Azure DNS + linked private zones), or as
        the laptop outside every VNet would (public DNS only) when ``from_vnet`` is None."""
        return resolve_name(self.spec, name, from_vnet)

    def txt(self, name: str, from_vnet: str | None = None) -> list[str]:
        """The TXT strings ``name`` has, seen from ``from_vnet`` (or from the laptop: public DNS only)."""
        return txt_values(self.spec, name, from_vnet)

    # ---- services ----------------------------------------------------------------------------
    def listening(self, vm: Vm) -> list[Service]:
        """Services in state ``listening`` on ``vm`` (empty when the VM is not running)."""
        if vm.power_state != "running":
            return []
        return [s for s in vm.services if s.state == "listening"]

    def service_at(self, ip: str, port: int, protocol: str = "Tcp") -> Service | None:
        found = self.vm_by_ip(ip)
        if found is None:
            return None
        return next(
            (s for s in self.listening(found[0]) if s.port == port and s.protocol.lower() == protocol.lower()),
            None,
        )

    def flows_for(self, vm_name: str) -> list[TrafficFlow]:
        """Traffic flows with ``vm_name`` at either end (what a capture on it would see)."""
        return [t for t in self.spec.traffic if vm_name.lower() in (t.client.lower(), t.server.lower())]

    def endpoint_ip(self, end: str) -> str:
        vm = self.vm(end)
        return vm.nics[0].private_ip if vm else end


def _invalidated(routes: list[EffectiveRoute], overridden: set[str]) -> list[EffectiveRoute]:
    """``routes`` with those whose prefix is in ``overridden`` marked Invalid."""
    return [
        EffectiveRoute(r.address_prefixes, r.next_hop_type, r.next_hop_ips, r.source, "Invalid")
        if r.address_prefixes[0] in overridden else r
        for r in routes
    ]
