"""Wire-neutral packets and the two capture points that observe them.

A :class:`Pkt` is one IP packet as its sender emitted it: the time it left, its IP ID, TTL and the
encoded L4 bytes, plus where it ended up (``arrive`` at the destination host, or lost). A capture
on a VM is a *view* of the same packet list: what the VM sent (at the time it left, full TTL)
and what reached it (at its arrival time, TTL lowered by the hops in between). Because both ends
render the same objects, a dual-end capture shows identical IP IDs and sequence numbers and
differs exactly where the world's fault acted: a packet lost on the path, a reset forged by a
middlebox that only one end ever sees.

A translated packet (a load balancer's destination NAT, an Azure Firewall's source NAT) also carries
``far``: its addresses and ports as the server's side sees them. The client's capture shows the packet as
sent to (or received from) the address it asked for; the server's shows the translated one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from netghost.lab.synth._pcap import AZURE_GW_MAC, ETH_IPV4, checksum, encode_ipv4, ethernet, write_pcap

__all__ = ["Pkt", "observed", "passes", "render_view", "seen_at", "transit"]


@dataclass
class Pkt:
    """One IPv4 packet; ``forged`` packets claim ``src`` but were sent by a box on the path."""

    t: float
    src: str
    dst: str
    proto: int
    ident: int
    ttl: int
    df: bool
    l4: bytes
    arrive: float | None
    hops: int = 0
    forged: bool = False
    raw: bytes | None = None  # a whole non-IP frame (ARP), sent as is
    via: str | None = None  # the appliance (NVA) the packet is routed through, if any
    hop_t: float | None = None  # when it reached ``via`` (None: never got there)
    hop_fwd: bool = False  # whether ``via`` forwarded it on
    far: tuple[str, str, int, int] | None = None  # (src, dst, sport, dport) on the server's side of a NAT
    to_far: bool = False  # sent by the client side (the far view is the receiver's)

    @property
    def size(self) -> int:
        """IP total length (what a path MTU is compared against)."""
        return 20 + len(self.l4)


def observed(pkts: Iterable[Pkt], ip: str) -> list[tuple[float, Pkt, bool]]:
    """(time, packet, outbound) for every packet the host ``ip`` would capture."""
    out: list[tuple[float, Pkt, bool]] = []
    for p in pkts:
        sender, receiver = p.src, p.dst
        if p.far is not None:
            sender, receiver = (p.src, p.far[1]) if p.to_far else (p.far[0], p.dst)
        if sender == ip and not p.forged:
            out.append((p.t, p, True))
        elif receiver == ip and p.arrive is not None:
            out.append((p.arrive, p, False))
    return out


def _far_view(p: Pkt) -> tuple[str, str, bytes]:
    """The packet's addresses and L4 bytes as the server's side of the translation sees them."""
    assert p.far is not None
    src, dst, sport, dport = p.far
    if p.proto not in (6, 17) or len(p.l4) < 8:
        return src, dst, p.l4
    l4 = bytearray(p.l4)
    l4[0:4] = sport.to_bytes(2, "big") + dport.to_bytes(2, "big")
    offset = 16 if p.proto == 6 else 6
    l4[offset:offset + 2] = b"\0\0"
    pseudo = (ipaddress.IPv4Address(src).packed + ipaddress.IPv4Address(dst).packed
              + bytes((0, p.proto)) + len(l4).to_bytes(2, "big"))
    value = checksum(pseudo + bytes(l4))
    l4[offset:offset + 2] = (value or (0xFFFF if p.proto == 17 else 0)).to_bytes(2, "big")
    return src, dst, bytes(l4)


def transit(pkts: Iterable[Pkt], ip: str) -> list[tuple[float, Pkt, bool, int]]:
    """(time, packet, outbound, ttl) for packets routed through the appliance ``ip``.

    A single-NIC appliance captures a forwarded packet twice: arriving (TTL untouched, Azure's
    fabric does not decrement it) and leaving 20 µs later with TTL - 1. Packets the appliance
    drops (path MTU, loss) arrive and never leave; resets it forges only leave.
    """
    out: list[tuple[float, Pkt, bool, int]] = []
    for p in pkts:
        if p.via != ip or ip in (p.src, p.dst):
            continue
        if p.forged:
            out.append((p.t, p, True, p.ttl))
        elif p.hop_t is not None:
            ttl = p.ttl - _hops_before(p)
            out.append((p.hop_t, p, False, ttl))
            if p.hop_fwd:
                out.append((p.hop_t + 20e-6, p, True, max(1, ttl - 1)))
    return out


def _hops_before(p: Pkt) -> int:
    """Routers a packet crossed before the appliance: none inside Azure (its fabric keeps the TTL), the
    Internet's hops (all but the appliance's own) for a packet whose sender is on the Internet."""
    return max(0, p.hops - 1) if ipaddress.IPv4Address(p.src).is_global else 0


def seen_at(pkts: Iterable[Pkt], ip: str) -> list[tuple[float, Pkt, bool, int]]:
    """Everything host ``ip`` captures: as an endpoint (:func:`observed`) and as an appliance."""
    pkts = list(pkts)
    own = [(t, p, outbound, p.ttl if outbound else max(1, p.ttl - p.hops)) for t, p, outbound in observed(pkts, ip)]
    return own + transit(pkts, ip)


def _ports(p: Pkt) -> tuple[int, int] | None:
    if p.proto in (6, 17) and len(p.l4) >= 4:
        return int.from_bytes(p.l4[0:2], "big"), int.from_bytes(p.l4[2:4], "big")
    return None


def _matches(spec: object, value: str | int | None, numeric: bool) -> bool:
    """One Network Watcher filter field: empty = any; ``a;b`` a list; ``lo-hi`` a range."""
    if spec in (None, ""):
        return True
    if value is None:
        return False
    for raw_part in str(spec).split(";"):
        part = raw_part.strip()
        if numeric and "-" in part:
            lo, _, hi = part.partition("-")
            if int(lo) <= int(value) <= int(hi):
                return True
        elif numeric and part.isdigit() and int(part) == int(value):
            return True
        elif not numeric and "-" in part:
            lo, _, hi = part.partition("-")
            key = [int(x) for x in str(value).split(".")]
            if [int(x) for x in lo.split(".")] <= key <= [int(x) for x in hi.split(".")]:
                return True
        elif part == str(value):
            return True
    return False


def passes(filters: Sequence[Mapping[str, object]], p: Pkt, local_ip: str, outbound: bool) -> bool:
    """Whether a packet seen by ``local_ip`` passes Network Watcher capture filters (OR of filters,
    AND of a filter's fields; ``local`` is the VM's side of the packet)."""
    if not filters:
        return True
    remote = p.dst if outbound else p.src
    ports = _ports(p)
    lport, rport = (None, None) if ports is None else ((ports[0], ports[1]) if outbound else (ports[1], ports[0]))
    proto = {6: "TCP", 17: "UDP"}.get(p.proto, "")
    for f in filters:
        want = str(f.get("protocol") or "Any").upper()
        if p.raw is not None and any(f.get(k) for k in ("localIPAddress", "remoteIPAddress", "localPort",
                                                        "remotePort")):
            continue
        if want not in ("ANY", proto):
            continue
        if (_matches(f.get("localIPAddress"), local_ip if p.raw is None else None, False)
                and _matches(f.get("remoteIPAddress"), remote if p.raw is None else None, False)
                and _matches(f.get("localPort"), lport, True) and _matches(f.get("remotePort"), rport, True)):
            return True
    return False


def render_view(pkts: Iterable[Pkt], ip: str, mac: bytes, start: float, end: float, *,
                filters: Sequence[Mapping[str, object]] = (), snaplen: int = 0, max_bytes: int = 0) -> bytes:
    """The pcap a capture on host ``ip`` (NIC ``mac``) records during ``[start, end]``."""
    seen = [item for item in seen_at(pkts, ip) if start <= item[0] <= end and passes(filters, item[1], ip, item[2])]
    seen.sort(key=lambda item: (round(item[0] * 1e6), item[1].t, item[2]))
    records = []
    for t, p, outbound, ttl in seen:
        if p.raw is not None:
            records.append((t, p.raw))
            continue
        src, dst, l4 = p.src, p.dst, p.l4
        if p.far is not None and outbound != p.to_far:  # the server's side of a translation
            src, dst, l4 = _far_view(p)
        ip_bytes = encode_ipv4(src, dst, p.proto, l4, ident=p.ident, ttl=ttl, df=p.df)
        src_mac, dst_mac = (mac, AZURE_GW_MAC) if outbound else (AZURE_GW_MAC, mac)
        records.append((t, ethernet(src_mac, dst_mac, ETH_IPV4, ip_bytes)))
    return write_pcap(records, snaplen=snaplen, max_bytes=max_bytes)
