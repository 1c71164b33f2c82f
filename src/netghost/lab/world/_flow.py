"""End-to-end evaluation of one traffic flow through a world (DNS, NSGs, routes, service).

Kept apart from the configuration queries (:mod:`~netghost.lab.world._topology`) so the walk reads
top to bottom like a packet's life: resolve the name from the client's VNet, leave through the
client's NSGs, follow the effective route (appliance, peering, VPN gateway, Internet), enter through the
server's NSGs, meet the listening service. The first step that stops the packet decides the
outcome.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Literal

from netghost.lab.world._answers import DnsAnswer, FlowOutcome, NextHop
from netghost.lab.world._resources import Nic, TrafficFlow, Vm
from netghost.lab.world._topology import Topology

__all__ = ["EPHEMERAL_PORT", "evaluate_flow"]

_DATA_PLANE = {"pmtu-blackhole", "path-packet-loss", "middlebox-rst"}
EPHEMERAL_PORT = 49152  # the client port NSG evaluation assumes (rules rarely constrain it)


@dataclass
class _Walk:
    """What the walk of one flow has learnt so far; :meth:`done` turns it into the verdict."""

    flow: TrafficFlow
    client_ip: str
    server_ip: str | None
    path: list[str] = field(default_factory=list)
    dns: DnsAnswer | None = None
    hop: NextHop | None = None

    def done(self, outcome: str, reason: str, **extra: Any) -> FlowOutcome:
        flow = self.flow
        return FlowOutcome(flow=flow.name, outcome=outcome, reason=reason, client_ip=self.client_ip,
                           server_ip=self.server_ip, port=flow.port, protocol=flow.protocol, dns=self.dns,
                           next_hop=self.hop, path=tuple(self.path), **extra)


def evaluate_flow(world: Topology, flow: TrafficFlow) -> FlowOutcome:
    """Walk ``flow`` from client to server and report the first thing that stops it."""
    client_vm = world.vm(flow.client)
    walk = _Walk(flow, world.endpoint_ip(flow.client), world.endpoint_ip(flow.server))
    walk.path.append(walk.client_ip)
    stopped = _resolve_server(world, walk, client_vm)
    if stopped is None and client_vm is not None:
        stopped = _leave_client(world, walk, client_vm)
    if stopped is not None:
        return stopped
    assert walk.server_ip is not None
    walk.path.append(walk.server_ip)
    stopped = _enter_server(world, walk)
    if stopped is not None:
        return stopped
    fault = world.fault
    if fault is not None and flow.name in fault.flows and fault.type in _DATA_PLANE:
        if fault.type == "pmtu-blackhole" and not _icmp_blocked(world, walk, str(fault.params.get("at", ""))):
            # the sender hears "fragmentation needed" and sends smaller segments: no black hole
            return walk.done("delivered", "delivered: ICMP fragmentation-needed reaches the sender, PMTUD works",
                             impairment="pmtud", params=dict(fault.params))
        return walk.done("delivered", f"delivered, impaired by {fault.type}", impairment=fault.type,
                         params=dict(fault.params))
    return walk.done("delivered", "delivered")


def _icmp_blocked(world: Topology, walk: _Walk, at: str) -> bool:
    """Whether the ICMP "fragmentation needed" that the small-MTU hop ``at`` sends back to the server (the
    sender of the big segments) is denied by the server's inbound NSGs: a PMTU black hole follows from
    such a rule (ICMP denied "for security"), not from the smaller MTU alone."""
    server = world.vm_by_ip(walk.server_ip or "")
    if server is None or not at:
        return True  # a sender outside the lab's NSGs: the declared black hole stands
    vm, nic = server
    decision = world.evaluate_nsg(vm, "Inbound", protocol="Icmp", local_ip=nic.private_ip, local_port=None,
                                  remote_ip=at, remote_port=None, nic=nic)
    return decision.access == "Deny"


def _resolve_server(world: Topology, walk: _Walk, client_vm: Vm | None) -> FlowOutcome | None:
    """The DNS step: the name must resolve, from the client's VNet, to the server's address."""
    flow = walk.flow
    if not flow.server_name:
        return None
    from_vnet = world.subnet_of(client_vm.nics[0])[0].name if client_vm else None
    walk.dns = dns = world.resolve(flow.server_name, from_vnet)
    if dns.rcode == "NXDOMAIN":
        walk.server_ip = None
        return walk.done("dns-nxdomain", f"{flow.server_name} does not resolve from {from_vnet or 'outside'}")
    if walk.server_ip not in dns.addresses:
        private, walk.server_ip = walk.server_ip, dns.addresses[0]
        return walk.done("dns-public-answer", f"{flow.server_name} resolved to {walk.server_ip} via {dns.source}, "
                                              f"not the private address {private}")
    return None


def _leave_client(world: Topology, walk: _Walk, client_vm: Vm) -> FlowOutcome | None:
    """The client's side: its outbound NSGs, then the effective route towards the server."""
    flow, server_ip = walk.flow, walk.server_ip
    assert server_ip is not None
    nic: Nic = client_vm.nics[0]
    icmp = flow.protocol == "Icmp"  # no ports: only rules with port ranges "*" match it
    out = world.evaluate_nsg(client_vm, "Outbound", protocol=flow.protocol, local_ip=walk.client_ip,
                             local_port=None if icmp else EPHEMERAL_PORT, remote_ip=server_ip,
                             remote_port=None if icmp else flow.port, nic=nic)
    if out.access == "Deny":
        return walk.done("nsg-denied-outbound", f"{out.nsg} {out.rule_name} denies it leaving {client_vm.name}",
                         nsg=out)
    walk.hop = hop = world.next_hop(nic, server_ip)
    if hop.next_hop_type == "None":
        return walk.done("no-route", f"no active route to {server_ip} (next hop None)")
    if hop.next_hop_type == "VirtualAppliance":
        walk.path.append(hop.next_hop_ip or "")
        appliance = world.vm_by_ip(hop.next_hop_ip or "")
        if appliance is None or appliance[0].power_state != "running" or not appliance[1].ip_forwarding:
            what = "no NIC holds it" if appliance is None else (
                f"{appliance[0].name} is {appliance[0].power_state}" if appliance[0].power_state != "running"
                else f"{appliance[0].name} does not forward (IP forwarding off)")
            return walk.done("appliance-down", f"next hop {hop.next_hop_ip} ({hop.route_name}) is dead: {what}")
        stopped = _through_appliance(world, walk, *appliance)
        if stopped is not None:
            return stopped
    if hop.next_hop_type == "VirtualNetworkGateway":
        # on-premises hosts are not VMs: the tunnel delivers to them like the Internet to an address
        vnet = world.subnet_of(nic)[0]
        if world.connection_towards(vnet, server_ip) is None:
            return walk.done("no-route", f"next hop VirtualNetworkGateway, but no Connected VPN connection of "
                                         f"{vnet.name}'s gateway reaches {server_ip}")
    if hop.next_hop_type == "Internet" and not ipaddress.IPv4Address(server_ip).is_global:
        return walk.done("no-route", f"{server_ip} is private but routes to the Internet")
    return None


def _through_appliance(world: Topology, walk: _Walk, appliance: Vm, nic: Nic) -> FlowOutcome | None:
    """The NSGs of the appliance's NIC and subnet filter what passes through it, with the packet's own
    addresses: in from the client, then out towards the server. A hub NSG that allows the web ports
    and denies the rest blocks one port of a path whose two ends allow it."""
    flow, server_ip = walk.flow, walk.server_ip
    assert server_ip is not None
    icmp = flow.protocol == "Icmp"
    sport, dport = (None, None) if icmp else (EPHEMERAL_PORT, flow.port)
    legs: tuple[tuple[Literal["Inbound", "Outbound"], str, int | None, str, int | None], ...] = (
        ("Inbound", server_ip, dport, walk.client_ip, sport), ("Outbound", walk.client_ip, sport, server_ip, dport))
    for direction, local, lport, remote, rport in legs:
        decision = world.evaluate_nsg(appliance, direction, protocol=flow.protocol, local_ip=local, local_port=lport,
                                      remote_ip=remote, remote_port=rport, nic=nic)
        if decision.access == "Deny":
            return walk.done("nsg-denied-at-appliance", f"{decision.nsg} {decision.rule_name} denies it "
                                                        f"{'entering' if direction == 'Inbound' else 'leaving'} the "
                                                        f"appliance {appliance.name}", nsg=decision,
                             nsg_direction=direction)
    return None


def _enter_server(world: Topology, walk: _Walk) -> FlowOutcome | None:
    """The server's side: its inbound NSGs, its power state, a listening service on the port."""
    flow, server_ip = walk.flow, walk.server_ip
    assert server_ip is not None
    server = world.vm_by_ip(server_ip)
    if server is None:
        endpoint = world.private_endpoint_by_ip(server_ip)
        if endpoint is not None and endpoint.status != "Approved":
            return walk.done("private-endpoint-not-approved",
                             f"private endpoint {endpoint.name} ({server_ip}) is {endpoint.status}: its connection to "
                             f"{endpoint.target.rsplit('/', 1)[-1]} carries no traffic until it is approved")
        return None  # a PaaS service behind an approved endpoint, or an address outside Azure
    server_vm, server_nic = server
    icmp = flow.protocol == "Icmp"
    inbound = world.evaluate_nsg(server_vm, "Inbound", protocol=flow.protocol, local_ip=server_ip,
                                 local_port=None if icmp else flow.port, remote_ip=walk.client_ip,
                                 remote_port=None if icmp else EPHEMERAL_PORT, nic=server_nic)
    if inbound.access == "Deny":
        return walk.done("nsg-denied-inbound", f"{inbound.nsg} {inbound.rule_name} denies it entering {server_vm.name}",
                         nsg=inbound)
    if server_vm.power_state != "running":
        return walk.done("host-down", f"{server_vm.name} is {server_vm.power_state}")
    if icmp:
        return None  # a running host answers echo requests itself (net.ipv4.icmp_echo_ignore_all=0)
    if world.service_at(server_ip, flow.port, flow.protocol) is None:
        return walk.done("service-down", f"nothing listens on {server_ip}:{flow.port}/{flow.protocol}")
    return None

