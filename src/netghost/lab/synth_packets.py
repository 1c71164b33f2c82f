"""Wire-neutral packets and the two capture points that observe them.

A :class:`Pkt` is one IP packet as its sender emitted it: the time it left, its IP ID, TTL and the
encoded L4 bytes, plus where it ended up (``arrive`` at the destination host, or lost). A capture
on a VM is a *view* of the same packet list: what the VM sent (at the time it left, full TTL)
and what reached it (at its arrival time, TTL lowered by the hops in between). Because both ends
render the same objects, a dual-end capture shows identical IP IDs and sequence numbers and
differs exactly where the world's fault acted: a packet lost on the path, a reset forged by a
middlebox that only one end ever sees.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from netghost.lab.synth_pcap import AZURE_GW_MAC, ETH_IPV4, encode_ipv4, ethernet, write_pcap

__all__ = ["Pkt", "observed", "render_view"]


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

    @property
    def size(self) -> int:
        """IP total length (what a path MTU is compared against)."""
        return 20 + len(self.l4)


def observed(pkts: Iterable[Pkt], ip: str) -> list[tuple[float, Pkt, bool]]:
    """(time, packet, outbound) for every packet the host ``ip`` would capture."""
    out: list[tuple[float, Pkt, bool]] = []
    for p in pkts:
        if p.src == ip and not p.forged:
            out.append((p.t, p, True))
        elif p.dst == ip and p.arrive is not None:
            out.append((p.arrive, p, False))
    return out


def render_view(pkts: Iterable[Pkt], ip: str, mac: bytes, start: float, end: float) -> bytes:
    """The pcap a capture on host ``ip`` (NIC ``mac``) records during ``[start, end]``."""
    seen = [(t, p, outbound) for t, p, outbound in observed(pkts, ip) if start <= t <= end]
    seen.sort(key=lambda item: (round(item[0] * 1e6), item[1].t))
    records = []
    for t, p, outbound in seen:
        if p.raw is not None:
            records.append((t, p.raw))
            continue
        ttl = p.ttl if outbound else max(1, p.ttl - p.hops)
        ip_bytes = encode_ipv4(p.src, p.dst, p.proto, p.l4, ident=p.ident, ttl=ttl, df=p.df)
        src_mac, dst_mac = (mac, AZURE_GW_MAC) if outbound else (AZURE_GW_MAC, mac)
        records.append((t, ethernet(src_mac, dst_mac, ETH_IPV4, ip_bytes)))
    return write_pcap(records)
