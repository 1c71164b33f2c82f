"""The cross-reference checks of the resources that translate or filter on the way: load balancers, NAT
gateways, Azure Firewalls and their policies, service endpoints and their policies.

Split from :mod:`~netghost.lab.world._spec` (which calls :func:`edge_problems` with the rest of its checks)
so each module stays one screenful of rules; like the others, every broken reference is one sentence.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from netghost.lab.world._resources import VNet

__all__ = ["FIREWALL_SUBNET", "edge_problems"]

FIREWALL_SUBNET = "AzureFirewallSubnet"  # Azure requires exactly this name for a firewall's subnet


def _subnet_prefix(vnets: dict[str, VNet], ref: str) -> str | None:
    vnet_name, _, sn_name = ref.partition("/")
    vnet = vnets.get(vnet_name)
    subnet = next((s for s in vnet.subnets if s.name == sn_name), None) if vnet else None
    return subnet.address_prefix if subnet else None


def _placed(vnets: dict[str, VNet], ref: str, ip: str, what: str) -> list[str]:
    prefix = _subnet_prefix(vnets, ref)
    if prefix is None:
        return [f"{what}: subnet {ref!r} is not declared"]
    if ipaddress.ip_address(ip) not in ipaddress.ip_network(prefix):
        return [f"{what}: {ip} is outside {ref} {prefix}"]
    return []


def edge_problems(w: Any, vnets: dict[str, VNet]) -> list[str]:
    """Broken references of ``w``'s load balancers, NAT gateways, firewalls and service endpoint policies."""
    p: list[str] = []
    nats = {n.name for n in w.nat_gateways}
    seps = {s.name for s in w.service_endpoint_policies}
    for vnet in w.vnets:
        for sn in vnet.subnets:
            if sn.nat_gateway and sn.nat_gateway not in nats:
                p.append(f"subnet {vnet.name}/{sn.name}: NAT gateway {sn.nat_gateway!r} is not declared")
            p.extend(f"subnet {vnet.name}/{sn.name}: service endpoint policy {name!r} is not declared"
                     for name in sn.service_endpoint_policies if name not in seps)
    vm_names = {v.name for v in w.vms}
    for lb in w.load_balancers:
        for fe in lb.frontends:
            if fe.private_ip is not None and fe.subnet is not None:
                p.extend(_placed(vnets, fe.subnet, fe.private_ip, f"load balancer {lb.name} frontend {fe.name}"))
        p.extend(f"load balancer {lb.name} pool {pool.name}: member {m!r} is not a declared VM"
                 for pool in lb.backend_pools for m in pool.members if m not in vm_names)
    policies = {f.name for f in w.firewall_policies}
    for fw in w.firewalls:
        if fw.vnet not in vnets:
            p.append(f"firewall {fw.name}: VNet {fw.vnet!r} is not declared")
            continue
        p.extend(_placed(vnets, f"{fw.vnet}/{FIREWALL_SUBNET}", fw.private_ip, f"firewall {fw.name}"))
        if fw.policy is not None and fw.policy not in policies:
            p.append(f"firewall {fw.name}: firewall policy {fw.policy!r} is not declared")
    for account in w.storage_accounts:
        p.extend(f"storage account {account.name}: virtual network rule {ref!r} is not a declared subnet"
                 for ref in account.virtual_network_rules if _subnet_prefix(vnets, ref) is None)
    return p
