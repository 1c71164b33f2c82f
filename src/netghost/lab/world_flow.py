"""End-to-end evaluation of one traffic flow through a world (DNS, NSGs, routes, service).

Kept apart from :mod:`netghost.lab.world` so the walk reads top to bottom like a packet's life:
resolve the name from the client's VNet, leave through the client's NSGs, follow the effective
route (appliance, peering, Internet), enter through the server's NSGs, meet the listening
service. The first step that stops the packet decides the outcome.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from netghost.lab.world_model import TrafficFlow
from netghost.lab.world_types import DnsAnswer, FlowOutcome, NextHop

if TYPE_CHECKING:
    from netghost.lab.world import World

__all__ = ["EPHEMERAL_PORT", "evaluate_flow"]

_DATA_PLANE = {"pmtu-blackhole", "path-packet-loss", "middlebox-rst"}
EPHEMERAL_PORT = 49152  # the client port NSG evaluation assumes (rules rarely constrain it)


def evaluate_flow(world: World, flow: TrafficFlow) -> FlowOutcome:
    """Walk ``flow`` from client to server and report the first thing that stops it."""
    client_vm = world.vm(flow.client)
    client_ip = world.endpoint_ip(flow.client)
    server_ip: str | None = world.endpoint_ip(flow.server)
    path: list[str] = [client_ip]
    dns: DnsAnswer | None = None
    hop: NextHop | None = None

    def done(outcome: str, reason: str, **extra: Any) -> FlowOutcome:
        return FlowOutcome(flow=flow.name, outcome=outcome, reason=reason, client_ip=client_ip,
                           server_ip=server_ip, port=flow.port, protocol=flow.protocol, dns=dns,
                           next_hop=hop, path=tuple(path), **extra)

    if flow.server_name:
        from_vnet = world.subnet_of(client_vm.nics[0])[0].name if client_vm else None
        dns = world.resolve(flow.server_name, from_vnet)
        if dns.rcode == "NXDOMAIN":
            server_ip = None
            return done("dns-nxdomain", f"{flow.server_name} does not resolve from {from_vnet or 'outside'}")
        if server_ip not in dns.addresses:
            private, server_ip = server_ip, dns.addresses[0]
            return done("dns-public-answer", f"{flow.server_name} resolved to {server_ip} via {dns.source}, "
                                             f"not the private address {private}")
    assert server_ip is not None
    if client_vm is not None:
        nic = client_vm.nics[0]
        out = world.evaluate_nsg(client_vm, "Outbound", protocol=flow.protocol, local_ip=client_ip,
                                 local_port=EPHEMERAL_PORT, remote_ip=server_ip, remote_port=flow.port, nic=nic)
        if out.access == "Deny":
            return done("nsg-denied-outbound", f"{out.nsg} {out.rule_name} denies it leaving {client_vm.name}", nsg=out)
        hop = world.next_hop(nic, server_ip)
        if hop.next_hop_type == "None":
            return done("no-route", f"no active route to {server_ip} (next hop None)")
        if hop.next_hop_type == "VirtualAppliance":
            path.append(hop.next_hop_ip or "")
            appliance = world.vm_by_ip(hop.next_hop_ip or "")
            if appliance is None or appliance[0].power_state != "running" or not appliance[1].ip_forwarding:
                what = "no NIC holds it" if appliance is None else (
                    f"{appliance[0].name} is {appliance[0].power_state}" if appliance[0].power_state != "running"
                    else f"{appliance[0].name} does not forward (IP forwarding off)")
                return done("appliance-down", f"next hop {hop.next_hop_ip} ({hop.route_name}) is dead: {what}")
        if hop.next_hop_type == "Internet" and not ipaddress.IPv4Address(server_ip).is_global:
            return done("no-route", f"{server_ip} is private but routes to the Internet")
    path.append(server_ip)
    server = world.vm_by_ip(server_ip)
    if server is not None:
        server_vm, server_nic = server
        inbound = world.evaluate_nsg(server_vm, "Inbound", protocol=flow.protocol, local_ip=server_ip,
                                     local_port=flow.port, remote_ip=client_ip, remote_port=EPHEMERAL_PORT,
                                     nic=server_nic)
        if inbound.access == "Deny":
            return done("nsg-denied-inbound", f"{inbound.nsg} {inbound.rule_name} denies it entering {server_vm.name}",
                        nsg=inbound)
        if server_vm.power_state != "running":
            return done("host-down", f"{server_vm.name} is {server_vm.power_state}")
        if world.service_at(server_ip, flow.port, flow.protocol) is None:
            return done("service-down", f"nothing listens on {server_ip}:{flow.port}/{flow.protocol}")
    fault = world.fault
    if fault is not None and fault.flow == flow.name and fault.type in _DATA_PLANE:
        return done("delivered", f"delivered, impaired by {fault.type}", impairment=fault.type,
                    params=dict(fault.params))
    return done("delivered", "delivered")
