"""Cross-reference checks of a scenario: every name a resource mentions must exist.

Run by :class:`~netghost.lab.world_model.WorldSpec` after its fields validate; returns every
problem as a sentence so one load reports all of them, not just the first.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from netghost.lab.world_faults import is_ip

if TYPE_CHECKING:
    from netghost.lab.world_model import WorldSpec

__all__ = ["reference_problems"]


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
    p: list[str] = []
    rgs = {g.name.lower(): g for g in w.resource_groups}
    p += _dupes("resource group", [g.name for g in w.resource_groups])
    p += _dupes("vnet", [v.name for v in w.vnets])
    p += _dupes("nsg", [n.name for n in w.nsgs])
    p += _dupes("route table", [r.name for r in w.route_tables])
    p += _dupes("vm", [v.name for v in w.vms])
    p += _dupes("storage account", [s.name for s in w.storage_accounts])
    p += _dupes("traffic flow", [t.name for t in w.traffic])
    p += _dupes("network watcher region", [n.location for n in w.network_watchers])
    nsgs = {n.name for n in w.nsgs}
    rts = {r.name for r in w.route_tables}
    vnets = {v.name: v for v in w.vnets}
    owned: list[Any] = [*w.vnets, *w.nsgs, *w.route_tables, *w.vms, *w.private_dns_zones, *w.storage_accounts]
    for res in owned:
        if res.resource_group.lower() not in rgs:
            p.append(f"{type(res).__name__} {res.name}: resource group {res.resource_group!r} is not declared")
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
        for peer in vnet.peerings:
            if peer.remote_vnet not in vnets:
                p.append(f"peering {vnet.name}/{peer.name}: remote VNet {peer.remote_vnet!r} is not declared")
    ips: dict[str, str] = {}
    for vm in w.vms:
        for nic in vm.nics:
            vnet_name, _, sn_name = nic.subnet.partition("/")
            vnet_decl = vnets.get(vnet_name)
            subnet = next((s for s in vnet_decl.subnets if s.name == sn_name), None) if vnet_decl else None
            if subnet is None:
                p.append(f"VM {vm.name} NIC {nic.name}: subnet {nic.subnet!r} is not declared")
            elif ipaddress.ip_address(nic.private_ip) not in ipaddress.ip_network(subnet.address_prefix):
                p.append(f"VM {vm.name} NIC {nic.name}: {nic.private_ip} is outside {nic.subnet} {subnet.address_prefix}")
            if nic.nsg and nic.nsg not in nsgs:
                p.append(f"VM {vm.name} NIC {nic.name}: NSG {nic.nsg!r} is not declared")
            if nic.private_ip in ips:
                p.append(f"IP {nic.private_ip} is assigned to both {ips[nic.private_ip]} and {vm.name}")
            ips[nic.private_ip] = vm.name
    for zone in w.private_dns_zones:
        for link in zone.links:
            if link.vnet not in vnets:
                p.append(f"private DNS zone {zone.name} link {link.name}: VNet {link.vnet!r} is not declared")
    vm_names = {v.name for v in w.vms}
    for flow in w.traffic:
        for end in (flow.client, flow.server):
            if end not in vm_names and not is_ip(end):
                p.append(f"traffic {flow.name}: endpoint {end!r} is neither a declared VM nor an IPv4 address")
    if w.fault is not None and w.fault.flow not in {t.name for t in w.traffic}:
        p.append(f"fault {w.fault.type}: flow {w.fault.flow!r} is not a declared traffic flow")
    for cf in w.cloud_faults:
        if cf.vm is not None and cf.vm not in vm_names:
            p.append(f"cloud fault {cf.kind}: VM {cf.vm!r} is not declared")
    if w.local_machine.inside_vnet is not None and w.local_machine.inside_vnet not in vnets:
        p.append(f"local_machine.inside_vnet {w.local_machine.inside_vnet!r} is not a declared VNet")
    return p
