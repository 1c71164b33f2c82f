"""End-to-end evaluation of one traffic flow through a world (DNS, NSGs, routes, hops, service, the way back).

Kept apart from the configuration queries (:mod:`~netghost.lab.world._topology`) so the walk reads
top to bottom like a packet's life: resolve the name from the client's VNet, leave through the
client's NSGs (or arrive from on premises through a tunnel), follow the effective route (appliance or
firewall, peering, VPN gateway, NAT gateway, Internet), meet a load balancer, enter through the server's
NSGs, meet the listening service, then take the reply's own route back. The first step that stops the
packet decides the outcome; the hops themselves are in :mod:`~netghost.lab.world._hops`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from netghost.lab.world._answers import FlowOutcome
from netghost.lab.world._hops import (
    EPHEMERAL_PORT,
    Walk,
    gateway_subnet_passes,
    into_lb,
    return_path,
    through_appliance,
)
from netghost.lab.world._resources import Nic, TrafficFlow, Vm
from netghost.lab.world._topology import Topology

__all__ = ["DATA_PLANE", "EPHEMERAL_PORT", "evaluate_flow"]

DATA_PLANE = {"pmtu-blackhole", "path-packet-loss", "middlebox-rst", "snat-port-exhaustion", "vpn-mtu-mss"}


def evaluate_flow(world: Topology, flow: TrafficFlow) -> FlowOutcome:
    """Walk ``flow`` from client to server and back, and report the first thing that stops it."""
    client_vm = world.vm(flow.client)
    walk = Walk(flow, world.endpoint_ip(flow.client), world.endpoint_ip(flow.server))
    walk.path.append(walk.client_ip)
    stopped = _resolve_server(world, walk, client_vm)
    if stopped is None and client_vm is not None:
        stopped = _leave_client(world, walk, client_vm)
    elif stopped is None:
        stopped = _arrive_from_outside(world, walk)
    if stopped is not None:
        return stopped
    assert walk.server_ip is not None
    walk.path.append(walk.server_ip)
    stopped = into_lb(world, walk) or _enter_server(world, walk) or return_path(world, walk, client_vm)
    if stopped is not None:
        return stopped
    fault = world.fault_for(flow.name)
    if fault is not None and fault.type in DATA_PLANE:
        if fault.type == "pmtu-blackhole" and not _icmp_blocked(world, walk, fault.params):
            # the sender hears "fragmentation needed" and sends smaller segments: no black hole
            return walk.done("delivered", "delivered: ICMP fragmentation-needed reaches the sender, PMTUD works",
                             impairment="pmtud", params=dict(fault.params))
        return walk.done("delivered", f"delivered, impaired by {fault.type}", impairment=fault.type,
                         params=dict(fault.params))
    return walk.done("delivered", "delivered")


def _icmp_blocked(world: Topology, walk: Walk, params: Mapping[str, object]) -> bool:
    """Whether the ICMP "fragmentation needed" that the small-MTU hop ``at`` sends back to the server (the
    sender of the big segments) never arrives: the hop does not send it (``frag_needed: never``, a tunnel
    or appliance with no MSS clamping that drops silently, whatever the NSGs allow), or the server's
    inbound NSGs deny it (ICMP denied "for security")."""
    if str(params.get("frag_needed", "")) == "never":
        return True
    at = str(params.get("at", ""))
    server = world.vm_by_ip(walk.server_ip or "")
    if server is None or not at:
        return True  # a sender outside the lab's NSGs: the declared black hole stands
    vm, nic = server
    decision = world.evaluate_nsg(vm, "Inbound", protocol="Icmp", local_ip=nic.private_ip, local_port=None,
                                  remote_ip=at, remote_port=None, nic=nic)
    return decision.access == "Deny"


def _resolve_server(world: Topology, walk: Walk, client_vm: Vm | None) -> FlowOutcome | None:
    """The DNS step: the name must resolve, from the client's VNet, to the server's address."""
    flow = walk.flow
    if not flow.server_name:
        return None
    from_vnet = world.subnet_of(client_vm.nics[0])[0].name if client_vm else None
    walk.dns = dns = world.resolve(flow.server_name, from_vnet)
    if dns.rcode == "NXDOMAIN" or not dns.addresses:
        walk.server_ip = None
        what = "does not resolve" if dns.rcode == "NXDOMAIN" else "has no address record"
        return walk.done("dns-nxdomain", f"{flow.server_name} {what} from {from_vnet or 'outside'} "
                                         f"(server {dns.server})")
    if walk.server_ip not in dns.addresses:
        private, walk.server_ip = walk.server_ip, dns.addresses[0]
        if world.storage_by_ip(walk.server_ip) is not None:
            return None  # a storage account's public endpoint: its network rules decide (server side)
        return walk.done("dns-public-answer", f"{flow.server_name} resolved to {walk.server_ip} via {dns.source} "
                                              f"(server {dns.server}), not the private address {private}")
    return None


def _leave_client(world: Topology, walk: Walk, client_vm: Vm) -> FlowOutcome | None:
    """The client's side: its outbound NSGs, then the effective route towards the server."""
    flow, server_ip = walk.flow, walk.server_ip
    assert server_ip is not None
    nic: Nic = client_vm.nics[0]
    sport, dport = walk.ports
    out = world.evaluate_nsg(client_vm, "Outbound", protocol=flow.protocol, local_ip=walk.client_ip,
                             local_port=sport, remote_ip=server_ip, remote_port=dport, nic=nic)
    if out.access == "Deny":
        return walk.done("nsg-denied-outbound", f"{out.nsg} {out.rule_name} denies it leaving {client_vm.name}",
                         nsg=out)
    walk.hop = hop = world.next_hop(nic, server_ip)
    if hop.next_hop_type == "None":
        return walk.done("no-route", f"no active route to {server_ip} (next hop None)")
    if hop.next_hop_type == "VirtualAppliance":
        stopped = through_appliance(world, walk, hop.next_hop_ip or "", hop.route_name)
        if stopped is not None:
            return stopped
    vnet, subnet = world.subnet_of(nic)
    if hop.next_hop_type == "VirtualNetworkGateway":
        # on-premises hosts are not VMs: the tunnel delivers to them like the Internet to an address
        conn = world.connection_towards(vnet, server_ip)
        if conn is None:
            return walk.done("no-route", f"next hop VirtualNetworkGateway, but no Connected VPN connection of "
                                         f"{vnet.name}'s gateway reaches {server_ip}")
        walk.tunnel = conn.name
        gw = world.serving_gateway(vnet)
        assert gw is not None
        stopped = gateway_subnet_passes(world, walk, gw, server_ip, walk.client_ip, inbound=False)
        if stopped is not None:
            return stopped
    if hop.next_hop_type == "Internet":
        if not ipaddress.IPv4Address(server_ip).is_global:
            return walk.done("no-route", f"{server_ip} is private but routes to the Internet")
        walk.egress = subnet.nat_gateway
    return None


def _arrive_from_outside(world: Topology, walk: Walk) -> FlowOutcome | None:
    """A client that is an address, not a VM: an on-premises host reaches Azure only through a Connected
    tunnel of the gateway serving the server's VNet, and the GatewaySubnet then passes it (or not)."""
    server_ip = walk.server_ip
    if server_ip is None:
        return None
    vnet = world.vnet_of_ip(server_ip)
    gw = world.serving_gateway(vnet) if vnet is not None else None
    if gw is None or vnet is None:
        return None  # the Internet, or a world without a tunnel: nothing of the lab's stands in between
    address = ipaddress.IPv4Address(walk.client_ip)
    behind = [(prefix, conn) for prefix, conn in world.onprem_ranges(gw, connected_only=False)
              if address in ipaddress.ip_network(prefix)]
    if not behind:
        return None
    live = [conn for _prefix, conn in behind if conn.status == "Connected"]
    if not live:
        conn = behind[0][1]
        return walk.done("no-route", f"{walk.client_ip} is on premises behind {conn.name}, which is {conn.status}: "
                                     "nothing reaches Azure through the tunnel")
    walk.tunnel = live[0].name
    return gateway_subnet_passes(world, walk, gw, walk.client_ip, server_ip, inbound=True)


def _enter_server(world: Topology, walk: Walk) -> FlowOutcome | None:
    """The server's side: a private endpoint's connection, a storage account's network rules, or the VM's
    inbound NSGs, its power state and a listening service on the port."""
    flow, server_ip = walk.flow, walk.server_ip
    assert server_ip is not None
    server = walk.backend or world.vm_by_ip(server_ip)
    if server is None:
        return _enter_paas(world, walk, server_ip)
    server_vm, server_nic = server
    icmp = flow.protocol == "Icmp"
    port = walk.backend_port or flow.port
    source = walk.seen_source or walk.client_ip
    inbound = world.evaluate_nsg(server_vm, "Inbound", protocol=flow.protocol, local_ip=server_nic.private_ip,
                                 local_port=None if icmp else port, remote_ip=source,
                                 remote_port=None if icmp else EPHEMERAL_PORT, nic=server_nic)
    if inbound.access == "Deny":
        seen = f" (it arrives from {source}, translated)" if walk.seen_source else ""
        return walk.done("nsg-denied-inbound", f"{inbound.nsg} {inbound.rule_name} denies it entering "
                                               f"{server_vm.name}{seen}", nsg=inbound)
    if server_vm.power_state != "running":
        return walk.done("host-down", f"{server_vm.name} is {server_vm.power_state}")
    if icmp:
        return None  # a running host answers echo requests itself (net.ipv4.icmp_echo_ignore_all=0)
    if world.service_at(server_nic.private_ip, port, flow.protocol) is None:
        via = f" (load-balanced from {server_ip}:{flow.port})" if walk.backend else ""
        return walk.done("service-down", f"nothing listens on {server_nic.private_ip}:{port}/{flow.protocol}{via}")
    return None


def _enter_paas(world: Topology, walk: Walk, server_ip: str) -> FlowOutcome | None:
    endpoint = world.private_endpoint_by_ip(server_ip)
    if endpoint is not None and endpoint.status != "Approved":
        return walk.done("private-endpoint-not-approved",
                         f"private endpoint {endpoint.name} ({server_ip}) is {endpoint.status}: its connection to "
                         f"{endpoint.target.rsplit('/', 1)[-1]} carries no traffic until it is approved")
    account = world.storage_by_ip(server_ip)
    if account is not None:
        client = world.vm_by_ip(walk.client_ip)
        vnet, subnet = world.subnet_of(client[1]) if client is not None else (None, None)
        refused = world.storage_admits(account, vnet, subnet, walk.seen_source)
        if refused is not None:
            return walk.done("paas-denied", f"the connection opens but {refused}: every request is answered "
                                            "403 (AuthorizationFailure)", params={"account": account.name})
    return None  # a PaaS service behind an approved endpoint, or an address outside Azure
