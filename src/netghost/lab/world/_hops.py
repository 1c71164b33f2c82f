"""The hops of a flow's walk that are neither its ends nor plain routing: appliances (a VM NVA or an Azure
Firewall), load balancers, the VPN gateway's subnet, on-premises clients arriving through a tunnel, and the
way back.

Each function takes the walk so far (:class:`Walk`) and returns the verdict that stops the flow, or None to let
it go on; :mod:`~netghost.lab.world._flow` calls them in a packet's order. What each models, and why:

* an appliance must run and forward (a VM NVA's NIC needs IP forwarding: without it Azure drops traffic not
  addressed to the NIC before the guest sees it), its own NSGs filter what passes, an Azure Firewall applies
  its rules (:func:`~netghost.lab.world._firewall.firewall_verdict`) and may translate the source;
* a load balancer sends a connection to a healthy member of the rule's pool and its backend port;
* the reply takes the responder's own effective route: a stateful box (an Azure Firewall, a VM marked
  ``stateful``) on one direction only drops what it has no connection for (asymmetric routing), a missing
  route back (BGP propagation disabled on the responder's subnet, a tunnel down) loses the reply;
* the GatewaySubnet's NSG and route table, which Azure does not support there, filter and steer what the
  gateway passes in both directions.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Literal

from netghost.lab.world._answers import DnsAnswer, FlowOutcome, NextHop
from netghost.lab.world._edge_queries import PROBE_SOURCE
from netghost.lab.world._gateways import VnetGateway
from netghost.lab.world._netcalc import lookup_route
from netghost.lab.world._resources import Nic, TrafficFlow, Vm
from netghost.lab.world._topology import Topology

__all__ = ["EPHEMERAL_PORT", "Walk", "gateway_subnet_passes", "into_lb", "return_path", "through_appliance"]

EPHEMERAL_PORT = 49152  # the client port NSG evaluation assumes (rules rarely constrain it)


@dataclass
class Walk:
    """What the walk of one flow has learnt so far; :meth:`done` turns it into the verdict."""

    flow: TrafficFlow
    client_ip: str
    server_ip: str | None
    path: list[str] = field(default_factory=list)
    dns: DnsAnswer | None = None
    hop: NextHop | None = None
    stateful: list[str] = field(default_factory=list)  # stateful appliances the forward path crosses
    seen_source: str | None = None  # the source the server sees, when a hop translated it
    backend: tuple[Vm, Nic] | None = None  # the load balancer member the connection lands on
    backend_port: int | None = None
    tunnel: str | None = None  # the VPN connection the path crosses
    egress: str | None = None  # the NAT gateway Internet traffic leaves through

    def done(self, outcome: str, reason: str, **extra: Any) -> FlowOutcome:
        flow = self.flow
        extra.setdefault("params", {})
        extra["params"] = {**self.notes(), **extra["params"]}
        return FlowOutcome(flow=flow.name, outcome=outcome, reason=reason, client_ip=self.client_ip,
                           server_ip=self.server_ip, port=flow.port, protocol=flow.protocol, dns=self.dns,
                           next_hop=self.hop, path=tuple(self.path), **extra)

    def notes(self) -> dict[str, object]:
        """The translations and crossings the synthesizer needs (where packets land, what the far end sees)."""
        out: dict[str, object] = {}
        if self.backend is not None:
            out["backend_ip"] = self.backend[1].private_ip
            out["backend_port"] = self.backend_port or self.flow.port
        if self.seen_source is not None:
            out["seen_source"] = self.seen_source
        if self.tunnel is not None:
            out["tunnel"] = self.tunnel
        if self.egress is not None:
            out["egress"] = self.egress
        return out

    @property
    def ports(self) -> tuple[int | None, int | None]:
        icmp = self.flow.protocol == "Icmp"
        return (None, None) if icmp else (EPHEMERAL_PORT, self.flow.port)


def through_appliance(world: Topology, walk: Walk, ip: str, route: str | None) -> FlowOutcome | None:
    """The VirtualAppliance hop at ``ip``: an Azure Firewall's rules, or a VM NVA's state, forwarding, NSGs."""
    walk.path.append(ip)
    fw = world.firewall_by_ip(ip)
    if fw is not None:
        return _through_firewall(world, walk, fw)
    appliance = world.vm_by_ip(ip)
    if appliance is None:
        return walk.done("appliance-down", f"next hop {ip} ({route}) is dead: no NIC holds it")
    vm, nic = appliance
    if vm.power_state != "running":
        return walk.done("appliance-down", f"next hop {ip} ({route}) is dead: {vm.name} is {vm.power_state}")
    if not nic.ip_forwarding:
        return walk.done("appliance-not-forwarding",
                         f"next hop {ip} ({route}): {nic.name} of {vm.name} has IP forwarding disabled, so Azure "
                         "drops traffic addressed to others before the appliance sees it")
    if vm.stateful:
        walk.stateful.append(ip)
    stopped = _appliance_nsgs(world, walk, vm, nic)
    if stopped is not None or walk.server_ip is None:
        return stopped
    # the appliance routes the packet on with its own NIC's routes: a user route to a further appliance chains
    onward = world.next_hop(nic, walk.server_ip)
    if onward.next_hop_type == "VirtualAppliance" and onward.next_hop_ip and onward.next_hop_ip not in walk.path:
        return through_appliance(world, walk, onward.next_hop_ip, onward.route_name)
    return None


def _appliance_nsgs(world: Topology, walk: Walk, appliance: Vm, nic: Nic) -> FlowOutcome | None:
    """The NSGs of the appliance's NIC and subnet filter what passes through it, with the packet's own
    addresses: in from the client, then out towards the server."""
    flow, server_ip = walk.flow, walk.server_ip
    assert server_ip is not None
    sport, dport = walk.ports
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


def _through_firewall(world: Topology, walk: Walk, fw: Any) -> FlowOutcome | None:
    from netghost.lab.world._firewall import firewall_verdict  # noqa: PLC0415  kept beside its only caller

    flow, server_ip = walk.flow, walk.server_ip
    assert server_ip is not None
    if fw.provisioning_state != "Succeeded":
        return walk.done("appliance-down", f"firewall {fw.name} is {fw.provisioning_state}")
    verdict = firewall_verdict(fw, world.policy_of(fw), protocol=flow.protocol.upper(), src_ip=walk.client_ip,
                               dst_ip=server_ip, dst_port=None if flow.protocol == "Icmp" else flow.port,
                               fqdn=flow.server_name)
    walk.stateful.append(fw.private_ip)
    if verdict.action == "Deny":
        where = (f"rule collection {verdict.collection} rule {verdict.rule}"
                 + (f" (group {verdict.group})" if verdict.group else "")) if verdict.kind != "default" else \
            "its default deny (no rule matched)"
        return walk.done("firewall-denied", f"firewall {fw.name} denies it: {where}",
                         params={"firewall": fw.name, "collection": verdict.collection, "rule": verdict.rule,
                                 "group": verdict.group or "", "kind": verdict.kind, "reset": verdict.reset,
                                 "firewall_ip": fw.private_ip})
    if verdict.snat:
        walk.seen_source = fw.public_ip if ipaddress.IPv4Address(server_ip).is_global else fw.private_ip
    return None


def into_lb(world: Topology, walk: Walk) -> FlowOutcome | None:
    """A load balancer frontend: the rule for the port, a member of its pool that passes the probe."""
    flow, server_ip = walk.flow, walk.server_ip
    assert server_ip is not None
    if flow.protocol == "Icmp":
        return None
    target = world.lb_target(server_ip, flow.port, flow.protocol)
    if target is None:
        return None
    lb, rule = target.lb, target.rule
    if rule is None:
        return walk.done("lb-no-rule", f"load balancer {lb.name} has no rule for {server_ip}:{flow.port}",
                         params={"lb": lb.name})
    pool = lb.pool(rule.backend_pool)
    members = [m for m in (world.vm(name) for name in pool.members) if m is not None]
    if not members:
        return walk.done("lb-backend-pool-empty", f"rule {rule.name} of {lb.name} sends to pool {pool.name}, "
                                                  "which has no member", params={"lb": lb.name, "rule": rule.name})
    probe = lb.probe(rule.probe)
    failing: list[str] = []
    healthy: list[Vm] = []
    for vm in members:
        why = _probe_fails(world, vm, probe)
        if why is None:
            healthy.append(vm)
        else:
            failing.append(why)
    if not healthy:
        return walk.done("lb-no-healthy-backend", f"no member of {lb.name}/{pool.name} passes probe "
                                                  f"{probe.name if probe else '-'} ({world.probe_text(probe)}): "
                                                  + "; ".join(failing),
                         params={"lb": lb.name, "rule": rule.name, "probe": probe.name if probe else ""})
    chosen = healthy[0]
    walk.backend = (chosen, chosen.nics[0])
    walk.backend_port = rule.backend_port or flow.port
    walk.path.append(chosen.nics[0].private_ip)
    return None


def _probe_fails(world: Topology, vm: Vm, probe: Any) -> str | None:
    if vm.power_state != "running":
        return f"{vm.name} is {vm.power_state}"
    if probe is None:
        return None
    nic = vm.nics[0]
    decision = world.evaluate_nsg(vm, "Inbound", protocol="Tcp", local_ip=nic.private_ip, local_port=probe.port,
                                  remote_ip=PROBE_SOURCE, remote_port=None, nic=nic, probe=True)
    if decision.access == "Deny":
        return f"{decision.nsg} {decision.rule_name} denies the probe from {PROBE_SOURCE} at {vm.name}"
    return world.probe_listener(vm, probe)


def gateway_subnet_passes(world: Topology, walk: Walk, gw: VnetGateway, src: str, dst: str, *,
                          inbound: bool) -> FlowOutcome | None:
    """What the GatewaySubnet's own NSG and route table do to traffic the gateway passes into the VNet (from
    on premises to ``dst``): an NSG there filters it, a user route there steers it (None, or an appliance)."""
    vnet, subnet = world.gateway_subnet(gw)
    sport, dport = walk.ports if inbound else (walk.ports[1], walk.ports[0])
    if subnet.nsg:
        nsg = world.nsg(subnet.nsg)
        assert nsg is not None
        for direction in ("Inbound", "Outbound"):
            decision = world.evaluate_subnet_nsg(nsg, vnet, direction, protocol=walk.flow.protocol, src=src,
                                                 sport=sport, dst=dst, dport=dport)
            if decision is not None and decision.access == "Deny":
                return walk.done("gateway-subnet-blocked",
                                 f"the NSG {nsg.name} on {vnet.name}/GatewaySubnet ({decision.rule_name}) drops what "
                                 f"the gateway {gw.name} passes from {src} to {dst}", nsg=decision,
                                 params={"gateway": gw.name})
    if subnet.route_table:
        route = lookup_route(world.subnet_routes(vnet, subnet), dst)
        if route is not None and route.source == "User" and route.next_hop_type == "None":
            return walk.done("gateway-subnet-blocked", f"route {route.name} of {route.route_table} on "
                                                       f"{vnet.name}/GatewaySubnet sends {dst} to None",
                             params={"gateway": gw.name})
        if route is not None and route.source == "User" and route.next_hop_type == "VirtualAppliance":
            return through_appliance(world, walk, route.next_hop_ips[0], route.name)
    return None


def return_path(world: Topology, walk: Walk, client_vm: Vm | None) -> FlowOutcome | None:
    """The reply's own route from the responder back to the address it answers."""
    server_ip = walk.server_ip
    assert server_ip is not None
    responder = walk.backend or world.vm_by_ip(server_ip)
    if responder is None:
        return None  # a PaaS endpoint or an address outside the lab: its way back is Azure's or the Internet's
    dst = walk.seen_source or walk.client_ip
    if walk.seen_source is not None and world.firewall_by_ip(walk.seen_source) is not None:
        return None  # translated to the firewall: the reply goes back to it, symmetric by construction
    vm, nic = responder
    hop = world.next_hop(nic, dst)
    if hop.next_hop_type == "None":
        return walk.done("no-return-route", f"{vm.name} has no route back to {dst} (next hop None): its replies "
                                            "are dropped", params={"return_hop": "None"})
    if hop.next_hop_type == "VirtualNetworkGateway":
        vnet = world.subnet_of(nic)[0]
        if world.connection_towards(vnet, dst) is None:
            return walk.done("no-return-route", f"{vm.name}'s replies to {dst} go to the gateway, but no Connected "
                                                "tunnel reaches it", params={"return_hop": "VirtualNetworkGateway"})
    back_via = hop.next_hop_ip if hop.next_hop_type == "VirtualAppliance" else None
    if back_via is not None and back_via not in walk.path:
        stateful = world.firewall_by_ip(back_via) is not None or bool(
            (found := world.vm_by_ip(back_via)) and found[0].stateful)
        dead = world.firewall_by_ip(back_via) is None and not (
            found and found[0].power_state == "running" and found[1].ip_forwarding)
        if dead:
            return walk.done("no-return-route", f"{vm.name}'s replies to {dst} go to {back_via} ({hop.route_name}), "
                                                "which does not forward", params={"return_hop": back_via})
        if stateful:
            return walk.done("asymmetric-return",
                             f"{vm.name}'s replies to {dst} go through {back_via} ({hop.route_name}), which never saw "
                             "the connection open and drops them",
                             params={"return_via": back_via, "return_route": hop.route_name or "",
                                     "shape": "return-via-appliance"})
    bypassed = [ip for ip in walk.stateful if ip != back_via]
    if bypassed:
        return walk.done("asymmetric-return",
                         f"the connection goes out through {bypassed[0]} but {vm.name} replies to {dst} "
                         f"{'directly' if back_via is None else 'through ' + back_via} ({hop.next_hop_type}): "
                         f"{bypassed[0]} never sees the replies and drops the rest of the connection",
                         params={"forward_via": bypassed[0], "shape": "return-bypasses-appliance"})
    del client_vm
    return None
