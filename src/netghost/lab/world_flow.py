"""End-to-end evaluation of one traffic flow through a world (DNS, NSGs, routes, service).

Kept apart from :mod:`netghost.lab.world` so the walk reads top to bottom like a packet's life:
resolve the name from the client's VNet, leave through the client's NSGs, follow the effective
route (appliance, peering, Internet), enter through the server's NSGs, meet the listening
service. The first step that stops the packet decides the outcome.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from netghost.lab.world_model import TrafficFlow

if TYPE_CHECKING:
    from netghost.lab.world import FlowOutcome, World

__all__ = ["evaluate_flow"]

_DATA_PLANE = {"pmtu-blackhole", "path-packet-loss", "middlebox-rst"}


def evaluate_flow(world: World, flow: TrafficFlow) -> FlowOutcome:
    """Walk ``flow`` from client to server and report the first thing that stops it."""
    from netghost.lab.world import FlowOutcome

    client_vm = world.vm(flow.client)
    client_ip = world.endpoint_ip(flow.client)
    server_ip = world.endpoint_ip(flow.server)
    base = {"flow": flow.name, "client_ip": client_ip, "port": flow.port, "protocol": flow.protocol}
    path: list[str] = [client_ip]
    dns = None
    if flow.server_name:
        from_vnet = world.subnet_of(client_vm.nics[0])[0].name if client_vm else None
        dns = world.resolve(flow.server_name, from_vnet)
        if dns.rcode == "NXDOMAIN":
            return FlowOutcome(**base, outcome="dns-nxdomain", server_ip=None, dns=dns,
                               reason=f"{flow.server_name} does not resolve from {from_vnet or 'outside'} ({dns.source})")
        if server_ip not in dns.addresses:
            return FlowOutcome(**base, outcome="dns-public-answer", server_ip=dns.addresses[0], dns=dns,
                               reason=f"{flow.server_name} resolved to {dns.addresses[0]} via {dns.source}, "
                                      f"not the private address {server_ip}")
    hop = None
    if client_vm is not None:
        nic = client_vm.nics[0]
        out = world.evaluate_nsg(client_vm, "Outbound", flow.protocol, client_ip, 49152, server_ip, flow.port, nic)
        if out.access == "Deny":
            return FlowOutcome(**base, outcome="nsg-denied-outbound", server_ip=server_ip, dns=dns, nsg=out,
                               path=tuple(path), reason=f"{out.nsg} {out.rule_name} denies it leaving {client_vm.name}")
        hop = world.next_hop(nic, server_ip)
        if hop.next_hop_type == "None":
            return FlowOutcome(**base, outcome="no-route", server_ip=server_ip, dns=dns, next_hop=hop,
                               path=tuple(path), reason=f"no active route to {server_ip} (next hop None)")
        if hop.next_hop_type == "VirtualAppliance":
            appliance = world.vm_by_ip(hop.next_hop_ip or "")
            if appliance is None or appliance[0].power_state != "running" or not appliance[1].ip_forwarding:
                what = "no NIC holds it" if appliance is None else f"{appliance[0].name} is {appliance[0].power_state}"
                return FlowOutcome(**base, outcome="appliance-down", server_ip=server_ip, dns=dns, next_hop=hop,
                                   path=(*path, hop.next_hop_ip or ""),
                                   reason=f"next hop {hop.next_hop_ip} ({hop.route_name}) is dead: {what}")
            path.append(hop.next_hop_ip or "")
        if hop.next_hop_type == "Internet" and not ipaddress.IPv4Address(server_ip).is_global:
            return FlowOutcome(**base, outcome="no-route", server_ip=server_ip, dns=dns, next_hop=hop,
                               path=tuple(path), reason=f"{server_ip} is private but routes to the Internet")
    server = world.vm_by_ip(server_ip)
    path.append(server_ip)
    if server is not None:
        server_vm, server_nic = server
        inbound = world.evaluate_nsg(server_vm, "Inbound", flow.protocol, server_ip, flow.port, client_ip,
                                     49152, server_nic)
        if inbound.access == "Deny":
            return FlowOutcome(**base, outcome="nsg-denied-inbound", server_ip=server_ip, dns=dns, nsg=inbound,
                               next_hop=hop, path=tuple(path),
                               reason=f"{inbound.nsg} {inbound.rule_name} denies it entering {server_vm.name}")
        if server_vm.power_state != "running":
            return FlowOutcome(**base, outcome="host-down", server_ip=server_ip, dns=dns, next_hop=hop,
                               path=tuple(path), reason=f"{server_vm.name} is {server_vm.power_state}")
        if world.service_at(server_ip, flow.port, flow.protocol) is None:
            return FlowOutcome(**base, outcome="service-down", server_ip=server_ip, dns=dns, next_hop=hop,
                               path=tuple(path), reason=f"nothing listens on {server_ip}:{flow.port}/{flow.protocol}")
    fault = world.fault
    if fault is not None and fault.flow == flow.name and fault.type in _DATA_PLANE:
        return FlowOutcome(**base, outcome="delivered", server_ip=server_ip, dns=dns, next_hop=hop,
                           path=tuple(path), impairment=fault.type, params=dict(fault.params),
                           reason=f"delivered, impaired by {fault.type}")
    return FlowOutcome(**base, outcome="delivered", server_ip=server_ip, dns=dns, next_hop=hop, path=tuple(path),
                       reason="delivered")
