"""Application exchanges of one traffic flow, shaped by the world's verdict on that flow.

Each request of a flow is one *exchange*: an optional DNS lookup, then a TCP connection whose
fate :meth:`~netghost.lab.world.World.flow_outcome` decides (delivered, silently dropped,
refused, impaired on the data plane). Exchanges sit on an absolute time grid (``k * interval``
plus a seeded jitter) and every random draw is seeded by (world, flow, k), so a capture on the
client and one on the server, over any windows, contain the very same packets.
"""

from __future__ import annotations

import hashlib
import math
import random
import struct
from dataclasses import dataclass

from netghost.lab.synth._packets import Pkt
from netghost.lab.synth._pcap import (
    TcpOpts,
    dns_message,
    encode_ipv4,
    icmp_echo,
    icmp_error,
    tcp_segment,
    udp_datagram,
)
from netghost.lab.synth._tcp import ACK, PSH, RST, SYN, Endpoint, PathModel, TcpConv
from netghost.lab.world import DnsAnswer, FlowOutcome, TrafficFlow, World

__all__ = ["Exchange", "flow_exchanges", "seeded", "tcp_endpoint"]

# Outcomes where the client's SYNs vanish: nothing answers, not even an ICMP error.
SILENT = {"nsg-denied-outbound", "nsg-denied-inbound", "no-route", "appliance-down", "host-down", "dns-public-answer",
          "private-endpoint-not-approved", "nsg-denied-at-appliance", "appliance-not-forwarding", "firewall-denied",
          "lb-no-rule", "lb-backend-pool-empty", "lb-no-healthy-backend", "gateway-subnet-blocked"}
# Outcomes where the client's SYN arrives and the answer is lost on the way back.
REPLY_LOST = {"no-return-route"}
INTERNET_HOPS = 12


@dataclass
class Exchange:
    """The packets of one request (DNS + TCP), kept together so a capture includes it whole."""

    key: str
    pkts: list[Pkt]


def seeded(*parts: object) -> random.Random:
    """A random generator seeded by a stable hash of ``parts`` (never Python's salted hash)."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def host_ttl(world: World, ip: str) -> int:
    found = world.vm_by_ip(ip)
    return 128 if found is not None and found[0].os == "Windows" else 64


def tcp_endpoint(world: World, ip: str, port: int, rng: random.Random) -> Endpoint:
    """An endpoint with Linux (or Windows) constants and seeded ISN, IP ID and timestamp clock."""
    found = world.vm_by_ip(ip)
    mtu = found[0].mtu if found is not None else 1500
    windows = found is not None and found[0].os == "Windows"
    return Endpoint(ip=ip, port=port, isn=rng.getrandbits(32), ident=rng.getrandbits(16), ts_base=rng.getrandbits(32),
                    mss=mtu - 40, wscale=8 if windows else 7, syn_win=64240 if not windows else 65535,
                    win=502 if not windows else 1026, ttl=host_ttl(world, ip))


def _dns_answers(ans: DnsAnswer, ttl: int) -> list[tuple[int, str, int]]:
    out = [(5, target, ttl) for target in ans.cname_chain]
    return out + [(1, addr, ttl) for addr in ans.addresses]


def dns_lookup(world: World, client_ip: str, name: str, ans: DnsAnswer, t: float,  # noqa: PLR0917  internal
               rng: random.Random) -> list[Pkt]:
    """A glibc-style lookup: A and AAAA queries in parallel from one socket, answered ~1 ms later."""
    sport = rng.randint(32768, 60999)
    ident = rng.getrandbits(16)
    rcode = 3 if ans.rcode == "NXDOMAIN" else 0
    ttl = 10 if ans.source.startswith("private-zone") else 300
    pkts: list[Pkt] = []
    ip_id = rng.getrandbits(16)
    rtt = 0.0006 + rng.random() * 0.0008
    for i, (qtype, answers) in enumerate(((1, _dns_answers(ans, ttl)), (28, []))):
        qid = (ident + i) & 0xFFFF
        tq = t + i * 40e-6
        query = udp_datagram(client_ip, ans.server, sport, 53, dns_message(qid, name, qtype, response=False))
        pkts.append(Pkt(tq, client_ip, ans.server, 17, ip_id + i, host_ttl(world, client_ip), True, query, tq + rtt / 2))
        tr = tq + rtt
        body = dns_message(qid, name, qtype, response=True, rcode=rcode, answers=answers)
        reply = udp_datagram(ans.server, client_ip, 53, sport, body)
        pkts.append(Pkt(tr - rtt / 2, ans.server, client_ip, 17, 0, 128, False, reply, tr))
    return pkts


def ephemeral_port(world: World, flow: TrafficFlow, k: int) -> int:
    """Linux hands out ephemeral ports to one destination in steps of two from a hashed offset,
    so consecutive requests never reuse a 4-tuple within a capture."""
    base = seeded(world.name, "port", flow.name).randint(0, 28231)
    return 32768 + (base + 2 * k) % 28232


def _payload(flow: TrafficFlow, size: int, request: bool) -> bytes:
    """Printable application bytes of exactly ``size`` (HTTP/Redis-looking where it matters)."""
    if flow.app in ("http", "https") and request:
        head = f"GET /api/{flow.name} HTTP/1.1\r\nHost: {flow.server_name or flow.server}\r\n".encode()
    elif flow.app in ("http", "https"):
        extra = f"{flow.response_header}\r\n".encode() if flow.response_header else b""
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra
    elif flow.app == "redis":
        head = b"*2\r\n$3\r\nGET\r\n$12\r\nsession:4711\r\n" if request else b"$1024\r\n"
    else:
        head = b""
    body = head + b"x" * max(0, size - len(head))
    return body[:size]


def _path(world: World, out: FlowOutcome, flow: TrafficFlow, rng: random.Random) -> PathModel:
    server_vm = world.vm_by_ip(out.server_ip or "")
    in_azure = server_vm is not None or world.private_endpoint_by_ip(out.server_ip or "") is not None
    hops = max(0, len(out.path) - 2) if in_azure else INTERNET_HOPS
    owd = 0.0004 + 0.00015 * hops if in_azure else 0.011
    # through an appliance (a UDR's VirtualAppliance hop), whether the far end is a VM or on the Internet
    path = PathModel(owd=owd + rng.random() * 0.0001, hops=hops, rng=rng,
                     via=out.path[1] if len(out.path) >= 2 and out.path[1] != out.server_ip
                     and world.vm_by_ip(out.path[1]) else None)
    params = out.params
    path.far_client = str(params["seen_source"]) if "seen_source" in params else None
    path.far_server = str(params["backend_ip"]) if "backend_ip" in params else None
    path.far_port = int(str(params["backend_port"])) if "backend_port" in params else None
    path.dropped_leaving_via = out.outcome == "nsg-denied-at-appliance" and out.nsg_direction == "Outbound"
    path.reply_blackhole = out.outcome in REPLY_LOST or (
        out.outcome == "asymmetric-return" and params.get("shape") == "return-via-appliance")
    path.client_after_syn_lost = out.outcome == "asymmetric-return" and params.get("shape") != "return-via-appliance"
    if out.impairment == "vpn-mtu-mss":  # the tunnel drops what does not fit, and says nothing
        path.mtu, path.via = int(str(params.get("tunnel_mtu", 1400))), None
    if out.impairment == "pmtu-blackhole":
        path.mtu = int(str(params.get("path_mtu", 1400)))
    elif out.impairment == "path-packet-loss":
        path.loss = float(str(params.get("loss_rate", 0.05)))
    elif out.impairment == "middlebox-rst" and "idle_timeout_s" not in params:
        after = int(str(params.get("after_bytes", flow.response_bytes // 2)))
        path.rst_after = max(0, min(after, flow.response_bytes - 1))
        path.rst_ttl = int(str(params.get("injector_ttl", 255)))
    if out.impairment == "middlebox-rst":
        path.rst_to_server = str(params.get("rst_to", "both")) != "client"
    return path


def one_exchange(world: World, flow: TrafficFlow, out: FlowOutcome, t: float, k: int,  # noqa: PLR0917  internal
                 rng: random.Random) -> list[Pkt]:
    """The packets of request ``k`` of ``flow`` starting at ``t``."""
    pkts: list[Pkt] = []
    if flow.server_name and out.dns is not None:
        pkts, t = _lookup_if_due(world, flow, out.dns, out.client_ip, t, k, rng)
        if out.dns.rcode == "NXDOMAIN":
            return pkts
    if not out.server_ip:
        return pkts
    if flow.protocol == "Udp":
        return pkts + udp_exchange(world, flow, out, t, k, rng)
    if flow.protocol == "Icmp":
        return pkts + echo_exchange(world, flow, out, t, k, rng)
    return pkts + _tcp_exchange(world, flow, out, out.server_ip, t, k, rng)


def _lookup_if_due(world: World, flow: TrafficFlow, dns: DnsAnswer, client_ip: str, t: float,  # noqa: PLR0917  internal
                   k: int, rng: random.Random) -> tuple[list[Pkt], float]:
    """The DNS lookup before request ``k``, when the resolver's cache has expired; and when the
    connection can start."""
    assert flow.server_name
    interval = 60.0 / flow.requests_per_minute
    every = max(1, math.ceil(10.0 / interval))
    if k % every != 0:  # systemd-resolved caches answers, negative ones too, for the record TTL
        return [], t
    pkts = dns_lookup(world, client_ip, flow.server_name, dns, t, rng)
    return pkts, max(p.arrive or p.t for p in pkts) + 0.0001


def _tcp_exchange(world: World, flow: TrafficFlow, out: FlowOutcome, server_ip: str, t: float,  # noqa: PLR0917  internal
                  k: int, rng: random.Random) -> list[Pkt]:
    """One TCP connection: handshake, request, response, then close (or whatever the fault leaves)."""
    path = _path(world, out, flow, rng)
    client = tcp_endpoint(world, out.client_ip, ephemeral_port(world, flow, k), rng)
    server = tcp_endpoint(world, server_ip, flow.port, rng)
    if out.impairment == "pmtud":  # PMTUD worked: the sender's cached path MTU caps its segments (ip route cache)
        mtu = int(str(out.params.get("path_mtu", 1400)))
        server.mss = min(server.mss, mtu - 40)
    conv = TcpConv(client, server, path)
    broken = _broken_exchange(world, conv, flow, out, t, k, rng)
    if broken is not None:
        return broken
    if out.outcome == "paas-denied":  # the service answers every request 403 (AuthorizationFailure)
        flow = flow.model_copy(update={"response_bytes": min(flow.response_bytes, 310)})
    established = conv.handshake(t)
    if established is None:
        return conv.pkts
    t, ok = _request_response(conv, flow, (client, server), established + 0.0002, rng)
    if conv.reset:
        return conv.pkts
    idle = out.params.get("idle_timeout_s") if out.impairment == "middlebox-rst" else None
    if ok and idle is not None:  # a pooled connection left idle; the box's idle timer kills it
        conv.forge_resets(t + float(str(idle)))
        return conv.pkts
    if ok:
        conv.close(t + 0.0002, client)
    else:
        conv.abandon(t + 0.0002, client)
    return conv.pkts


def _broken_exchange(world: World, conv: TcpConv, flow: TrafficFlow, out: FlowOutcome,  # noqa: PLR0917  internal
                     t: float, k: int, rng: random.Random) -> list[Pkt] | None:
    """The connection a fault breaks before any data flows (None: it opens): SYNs that vanish, replies lost
    on the way back, a stateful box that lets the SYN through and nothing after, a firewall's own reset, a
    port that refuses, a NAT gateway out of SNAT ports for this one connection."""
    path = conv.path
    if out.impairment == "snat-port-exhaustion" and seeded(world.name, "snat", flow.name, k).random() < float(
            str(out.params.get("fail_rate", 0.1))):
        path.blackhole = True  # no SNAT port for this connection: the gateway drops its SYNs
    if out.outcome in SILENT and not (out.outcome == "firewall-denied" and out.params.get("reset")):
        path.blackhole = True
    if path.blackhole or out.outcome in REPLY_LOST or out.outcome == "asymmetric-return":
        conv.handshake(t)
        if conv.c.rcv_nxt and not path.blackhole:  # established at the client: it sends, nothing comes back
            _request_response(conv, flow, (conv.c, conv.s), t + 0.0003, rng)
        return conv.pkts
    if out.outcome == "firewall-denied":
        return _proxy_reset(conv, flow, t)
    if out.outcome == "service-down":
        conv.refuse(t)
        return conv.pkts
    return None


def _proxy_reset(conv: TcpConv, flow: TrafficFlow, t: float) -> list[Pkt]:
    """An application-rule deny: the firewall itself answers the handshake in the server's name, takes the
    request, then resets the client; the server never sees the connection."""
    c, s, path = conv.c, conv.s, conv.path
    path.blackhole = True  # nothing of the client's reaches the server
    syn = conv.emit(t, c, SYN, seq=c.isn, ack=False,
                    opts=TcpOpts(mss=c.mss, sack_perm=True, ts=(c.tsval(t), 0), wscale=c.wscale))
    c.snd_nxt, c.rcv_nxt = c.isn + 1, s.isn + 1
    t2 = t + path.owd
    synack = tcp_segment(s.ip, c.ip, s.port, c.port, seq=s.isn, ack=c.isn + 1, flags=SYN | ACK, win=s.syn_win,
                         opts=TcpOpts(mss=1460, sack_perm=True, ts=(s.tsval(t2), c.tsval(t)), wscale=s.wscale),
                         payload=b"")
    conv.pkts.append(Pkt(t2, s.ip, c.ip, 6, 0, 64, True, synack, t2 + path.owd, path.hops, forged=True))
    conv.emit(t2 + path.owd + 20e-6, c, 0, seq=c.snd_nxt)
    request = _payload(flow, max(1, flow.request_bytes), True)
    t3 = t2 + path.owd + 60e-6
    conv.emit(t3, c, PSH, seq=c.snd_nxt, data=request)
    rst = tcp_segment(s.ip, c.ip, s.port, c.port, seq=s.isn + 1, ack=c.snd_nxt + len(request), flags=RST | ACK,
                      win=0, opts=TcpOpts(), payload=b"")
    conv.pkts.append(Pkt(t3 + path.owd, s.ip, c.ip, 6, 0, 64, False, rst, t3 + 2 * path.owd, path.hops, forged=True))
    del syn
    return conv.pkts


def _request_response(conv: TcpConv, flow: TrafficFlow, ends: tuple[Endpoint, Endpoint], t: float,
                      rng: random.Random) -> tuple[float, bool]:
    """The request then the response on an established connection: (time after, all delivered)."""
    client, server = ends
    path = conv.path
    ok = True
    request = _payload(flow, flow.request_bytes, True)
    t_req = t
    if flow.request_bytes:
        t, ok = conv.transfer(t, client, request, piggyback=True)
    if ok and flow.response_bytes and not conv.reset:
        t, ok = conv.transfer(t + 0.0008 + rng.random() * 0.002, server, _payload(flow, flow.response_bytes, False),
                              piggyback=True)
        if not ok and not conv.reset and request and client.rcv_nxt == server.isn + 1:
            # The ACK of the request rode on response segments that all died: the client's RTO
            # resends the (small) request and the server answers with an immediate duplicate ACK.
            # Not after a reset: the connection is gone, and a replayed request would read as a
            # PMTU black hole (small segments through, the large ones never).
            conv.resend(t_req + 0.2 + 2 * path.owd, client, client.isn + 1, request)
    return t, ok


def udp_exchange(world: World, flow: TrafficFlow, out: FlowOutcome, t: float, k: int,  # noqa: PLR0917  internal
                 rng: random.Random) -> list[Pkt]:
    """One UDP request and its answer: a closed port answers ICMP port unreachable (3/3), a
    silent drop answers nothing, a large datagram dies at a smaller path MTU (DF is set)."""
    path = _path(world, out, flow, rng)
    if out.outcome in SILENT:
        path.blackhole = True
    client, server = out.client_ip, out.server_ip or ""
    sport = ephemeral_port(world, flow, k)
    ident_c, ident_s = rng.getrandbits(16), rng.getrandbits(16)
    ttl_c, ttl_s = host_ttl(world, client), host_ttl(world, server)
    pkts: list[Pkt] = []
    req = Pkt(t, client, server, 17, ident_c, ttl_c, True,
              udp_datagram(client, server, sport, flow.port, _payload(flow, max(1, flow.request_bytes), True)), None,
              path.hops)
    pkts.append(req)
    pkts += path.route(req, True, len(req.l4), False)
    if req.arrive is None:
        return pkts
    if out.outcome == "service-down":
        quoted = encode_ipv4(client, server, 17, req.l4, ident=ident_c, ttl=max(1, ttl_c - path.hops), df=True)
        err = Pkt(req.arrive + 30e-6, server, client, 1, ident_s, ttl_s, False, icmp_error(3, 3, quoted), None,
                  path.hops)  # routed like any reply below
        return [*pkts, err, *path.route(err, False, 0, False)]
    tr = req.arrive + 0.0003 + rng.random() * 0.001
    remaining = max(1, flow.response_bytes)
    while remaining > 0:
        size = min(remaining, 1472)
        remaining -= size
        ident_s = (ident_s + 1) & 0xFFFF
        rep = Pkt(tr, server, client, 17, ident_s, ttl_s, True,
                  udp_datagram(server, client, flow.port, sport, _payload(flow, size, False)), None, path.hops)
        pkts.append(rep)
        pkts += path.route(rep, False, size, False)
        tr += 15e-6
    return pkts


def echo_exchange(world: World, flow: TrafficFlow, out: FlowOutcome, t: float, k: int,  # noqa: PLR0917  internal
                  rng: random.Random) -> list[Pkt]:
    """One ping: an echo request (iputils: identifier per flow, sequence ``k + 1``, 56 data bytes, DF
    set) and, when it gets there, the host's echo reply with the same identifier, sequence and data."""
    path = _path(world, out, flow, rng)
    if out.outcome in SILENT:
        path.blackhole = True
    client, server = out.client_ip, out.server_ip or ""
    ident = seeded(world.name, "ping", flow.name).getrandbits(16)
    data = struct.pack("!d", t) + bytes(range(16, 64))  # timestamp then the iputils fill pattern: 56 bytes
    req = Pkt(t, client, server, 1, rng.getrandbits(16), host_ttl(world, client), True,
              icmp_echo(8, ident, (k + 1) & 0xFFFF, data), None, path.hops)
    pkts = [req, *path.route(req, True, len(data), False)]
    if req.arrive is None or out.outcome != "delivered":
        return pkts
    rep = Pkt(req.arrive + 40e-6, server, client, 1, rng.getrandbits(16), host_ttl(world, server), False,
              icmp_echo(0, ident, (k + 1) & 0xFFFF, data), None, path.hops)
    return [*pkts, rep, *path.route(rep, False, len(data), False)]


def flow_exchanges(world: World, flow: TrafficFlow, start: float, end: float) -> list[Exchange]:
    """Every exchange of ``flow`` that starts in ``[start - 20 s, end]`` (a superset of the window)."""
    out = world.flow_outcome(flow)
    interval = 60.0 / flow.requests_per_minute
    result = []
    for k in range(math.floor((start - 20.0) / interval), math.ceil(end / interval) + 1):
        rng = seeded(world.name, "flow", flow.name, k)
        t = k * interval + rng.uniform(0.0, 0.3 * interval)
        if start - 20.0 <= t <= end:
            result.append(Exchange(f"{flow.name}/{k}", one_exchange(world, flow, out, t, k, rng)))
    return result
