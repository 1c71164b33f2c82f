"""Background traffic every Azure VM carries, so a capture is never only the fault.

Per minute of lab time (slot ``k``, seeded by world, VM and ``k``): two ARPs for the subnet gateway
answered by Azure's virtual switch (``12:34:56:78:9a:bc``), an NTP poll, the guest agent asking
the WireServer ``168.63.129.16:80`` for its goal state twice, and load-balancer health probes
from ``168.63.129.16`` to every listening TCP service the NSGs let them reach (handshake then a
FIN close, as Azure's TCP probe does). All of it is healthy: no retransmissions, no resets.
"""

from __future__ import annotations

import ipaddress
import math

from netghost.lab.synth._flows import Exchange, seeded, tcp_endpoint
from netghost.lab.synth._packets import Pkt
from netghost.lab.synth._pcap import AZURE_GW_MAC, arp_frame, ntp_client, udp_datagram, vm_mac
from netghost.lab.synth._tcp import PathModel, TcpConv
from netghost.lab.world import Nic, Vm, World

__all__ = ["WIRESERVER", "noise_exchanges"]

WIRESERVER = "168.63.129.16"
NTP_SERVERS = {"Linux": "185.125.190.56", "Windows": "168.61.215.74"}
_GOALSTATE = (b"GET /machine/?comp=goalstate HTTP/1.1\r\nHost: 168.63.129.16\r\nx-ms-version: 2012-11-30\r\n"
              b"x-ms-agent-name: WALinuxAgent\r\n\r\n")
_GOALSTATE_REPLY = b"HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=utf-8\r\n\r\n<?xml version=\"1.0\"?><GoalState>"


def _arp(vm: Vm, nic: Nic, world: World, t: float) -> list[Pkt]:
    _, subnet = world.subnet_of(nic)
    gateway = str(next(ipaddress.ip_network(subnet.address_prefix).hosts()))
    mac = vm_mac(nic.name or vm.name)
    req = arp_frame(1, mac, nic.private_ip, b"\xff" * 6, gateway)
    rep = arp_frame(2, AZURE_GW_MAC, gateway, mac, nic.private_ip)
    return [Pkt(t, nic.private_ip, gateway, 0, 0, 0, False, b"", None, raw=req),
            Pkt(t, gateway, nic.private_ip, 0, 0, 0, False, b"", t + 0.00004, raw=rep)]


def _ntp(vm: Vm, nic: Nic, t: float, ident: int, sport: int) -> list[Pkt]:
    server = NTP_SERVERS[vm.os]
    rtt = 0.0021
    ttl = 128 if vm.os == "Windows" else 64
    req = udp_datagram(nic.private_ip, server, sport, 123, ntp_client(t, response=False))
    rep = udp_datagram(server, nic.private_ip, 123, sport, ntp_client(t + rtt / 2, response=True))
    return [Pkt(t, nic.private_ip, server, 17, ident, ttl, True, req, t + rtt / 2),
            Pkt(t + rtt / 2, server, nic.private_ip, 17, ident ^ 0x5A5A, 52, True, rep, t + rtt, hops=0)]


def _wireserver(world: World, nic: Nic, t: float, key: str) -> list[Pkt]:
    rng = seeded(key)
    client = tcp_endpoint(world, nic.private_ip, rng.randint(32768, 60999), rng)
    server = tcp_endpoint(world, WIRESERVER, 80, rng)
    server.ttl = 128
    conv = TcpConv(client, server, PathModel(owd=0.00012, rng=rng))
    est = conv.handshake(t)
    assert est is not None
    t, _ = conv.transfer(est + 0.0001, client, _GOALSTATE, piggyback=True)
    t, _ = conv.transfer(t + 0.0015, server, _GOALSTATE_REPLY + b" " * 1800 + b"</GoalState>", piggyback=True)
    conv.close(t + 0.0002, client)
    return conv.pkts


def _probe(world: World, vm: Vm, nic: Nic, port: int, t: float, key: str) -> list[Pkt]:  # noqa: PLR0917  internal
    decision = world.evaluate_nsg(vm, "Inbound", protocol="Tcp", local_ip=nic.private_ip, local_port=port,
                                  remote_ip=WIRESERVER, remote_port=54321, nic=nic)
    if decision.access == "Deny":
        return []
    rng = seeded(key)
    prober = tcp_endpoint(world, WIRESERVER, rng.randint(1024, 65000), rng)
    prober.ttl = 128
    target = tcp_endpoint(world, nic.private_ip, port, rng)
    conv = TcpConv(prober, target, PathModel(owd=0.00015, rng=rng))
    est = conv.handshake(t, syn_tries=1)
    if est is not None:
        conv.close(est + 0.0003, prober)
    return conv.pkts


def noise_exchanges(world: World, vm: Vm, start: float, end: float) -> list[Exchange]:
    """Background exchanges of ``vm`` for the minutes overlapping ``[start, end]``."""
    if vm.power_state != "running":
        return []
    nic = vm.nics[0]
    out: list[Exchange] = []
    for k in range(math.floor(start / 60.0) - 1, math.ceil(end / 60.0) + 1):
        base = k * 60.0
        rng = seeded(world.name, "noise", vm.name, k)
        key = f"{world.name}|{vm.name}|{k}"
        for i in range(2):  # the neighbour entry goes stale every ~30 s on Linux
            out.append(Exchange(f"arp/{k}/{i}", _arp(vm, nic, world, base + i * 30 + rng.uniform(0, 30))))
        out.append(Exchange(f"ntp/{k}", _ntp(vm, nic, base + rng.uniform(0, 60), rng.getrandbits(16),
                                             rng.randint(32768, 60999))))
        for i in range(2):
            out.append(Exchange(f"wire/{k}/{i}", _wireserver(world, nic, base + i * 30 + rng.uniform(0, 29),
                                                              f"{key}|wire|{i}")))
        for svc in world.listening(vm):
            if svc.protocol != "Tcp":
                continue
            for i in range(4):
                t = base + i * 15 + rng.uniform(0, 14)
                out.append(Exchange(f"probe/{svc.port}/{k}/{i}",
                                    _probe(world, vm, nic, svc.port, t, f"{key}|probe|{svc.port}|{i}")))
    return out
