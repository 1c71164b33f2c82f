"""Vectorised packet decode: link layer → IPv4/IPv6 → TCP/UDP/ICMP/ICMPv6, one numpy column per field.

Every header field of every packet in a :class:`~netghost.forensics.capture.RawBatch` is extracted with
numpy gathers (``buf[off + k]``), so the cost per packet is a handful of vector operations, not a
Python object. Only rare shapes get a Python loop over *their* packets: NFLOG TLV walks, TCP options
of SYN segments and DNS messages (see ``forensics/dns/``).

A packet that does not decode is never silently dropped: it gets an ``issue`` code (see
:data:`ISSUES`) and is counted by reason in the semantic output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netghost.forensics.capture import RawBatch
from netghost.forensics.decode._columns import decode_batch_compiled, walkdecode_module
from netghost.forensics.decode._gather import Gather
from netghost.forensics.decode._l4 import icmp_columns, tcp_options
from netghost.forensics.decode._packets import _ISSUE, IPV6_EXT, V4_MARK, Packets

__all__ = ["decode_batch"]


def _link_layer(g: Gather, b: RawBatch, issue: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return (ethertype, network-layer offset, vlan-tagged, network-layer end) per packet.

    The end is the record's *reported* (wire) end, or PPPoE's own length when shorter: like
    Wireshark, an IP total length larger than what the link layer carries is clipped to it.
    """
    n = len(b)
    off, lt = b.off, b.linktype
    end = off + b.caplen
    et = np.full(n, -1, np.int64)
    p = np.full(n, -1, np.int64)
    vlan = np.zeros(n, bool)
    lim = off + b.wirelen

    m = lt == 1  # Ethernet, 802.1Q / 802.1ad / QinQ, PPPoE session
    if m.any():
        et[m] = g.u16(off[m] + 12)
        p[m] = off[m] + 14
        for _ in range(3):
            v = m & np.isin(et, (0x8100, 0x88A8, 0x9100))
            if not v.any():
                break
            vlan |= v
            et[v] = g.u16(p[v] + 2)
            p[v] += 4
        pp = m & (et == 0x8864)
        if pp.any():
            ppp = g.u16(p[pp] + 6)
            lim[pp] = np.minimum(lim[pp], p[pp] + 6 + g.u16(p[pp] + 4))
            et[pp] = np.where(ppp == 0x21, 0x0800, np.where(ppp == 0x57, 0x86DD, 0x10000 + ppp))
            p[pp] += 8
    for code, hdr, at in ((113, 16, 14), (276, 20, 0)):  # Linux SLL / SLL2
        m = lt == code
        if m.any():
            et[m] = g.u16(off[m] + at)
            p[m] = off[m] + hdr
    m = np.isin(lt, (12, 14, 101, 228, 229))  # raw IP: version nibble decides
    if m.any():
        ver = g.u8(off[m]) >> 4
        et[m] = np.where(ver == 4, 0x0800, np.where(ver == 6, 0x86DD, -1))
        p[m] = off[m]
    m = np.isin(lt, (0, 108))  # BSD loopback: AF in host order (null) or network order (loop)
    if m.any():
        le = g.u8(off[m]) | (g.u8(off[m] + 1) << 8) | (g.u8(off[m] + 2) << 16) | (g.u8(off[m] + 3) << 24)
        fam = np.where((lt[m] == 0) & (le < 256), le, g.u32(off[m]))
        et[m] = np.where(fam == 2, 0x0800, np.where(np.isin(fam, (10, 23, 24, 28, 30)), 0x86DD, -1))
        p[m] = off[m] + 4
    m = lt == 239
    if m.any():
        _nflog(g, b, np.flatnonzero(m), et, p, issue)
    known = np.isin(lt, (0, 1, 12, 14, 101, 108, 113, 228, 229, 239, 276))
    issue[~known & (issue == 0)] = _ISSUE["unsupported_linktype"]
    short = known & (issue == 0) & (p > end)
    issue[short] = _ISSUE["truncated_link_header"]
    et[issue != 0] = -1
    return et, p, vlan, lim


def _nflog(g: Gather, b: RawBatch, idx: np.ndarray, et: np.ndarray, p: np.ndarray, issue: np.ndarray) -> None:  # noqa: PLR0917  internal column writer
    """NFLOG: 4-byte header then little-endian TLVs; NFULA_PAYLOAD (type 9) holds the IP packet."""
    buf = g.buf
    for i in idx.tolist():
        o, end = int(b.off[i]), int(b.off[i] + b.caplen[i])
        fam = int(buf[o]) if o < end else -1
        q = o + 4
        found = False
        while q + 4 <= end:
            tlen = int(buf[q]) | (int(buf[q + 1]) << 8)
            ttype = int(buf[q + 2]) | (int(buf[q + 3]) << 8)
            if tlen < 4:
                break
            if (ttype & 0x7FFF) == 9:
                p[i] = q + 4
                et[i] = 0x0800 if fam == 2 else 0x86DD if fam == 10 else -1
                found = True
                break
            q += (tlen + 3) & ~3
        if not found:
            issue[i] = _ISSUE["malformed_nflog"]


def decode_batch(b: RawBatch, first_frame: int, compiled: bool | None = None) -> tuple[Packets, np.ndarray, np.ndarray]:
    """Decode every record of a batch into columns.

    This numpy version is the reference; the compiled kernel (``_walkdecode.pyx``) gives identical
    columns and is used when it is built and not disabled. One function per layer (link, IPv4, IPv6,
    TCP, UDP, ICMP) fills its columns for the packets that reach it.

    Args:
        b: the raw batch from the reader.
        first_frame: 1-based frame number of the batch's first record.
        compiled: ``False`` forces the numpy decoder; ``None``/``True`` use the compiled one when available.

    Returns:
        The columns, the batch-relative L4 payload offset and captured end of each packet (for DNS).
    """
    n = len(b)
    mod = walkdecode_module() if compiled is not False else None
    if mod is not None:
        return decode_batch_compiled(mod, b, first_frame)
    g = Gather(b.buf)
    end = b.off + b.caplen
    issue = np.zeros(n, np.int8)
    issue[b.caplen == 0] = _ISSUE["empty_record"]
    et, p, vlan, lim = _link_layer(g, b, issue)
    net = _Network.empty(n)
    _ipv4(g, net, et == 0x0800, p=p, end=end, lim=lim, issue=issue)
    _ipv6(g, net, et == 0x86DD, p=p, end=end, lim=lim, issue=issue)
    tr = _Transport.empty(n)
    has_l4 = (net.l3 > 0) & ~net.frag
    _tcp(g, tr, np.flatnonzero(has_l4 & (net.proto == 6)), net=net, end=end, issue=issue)
    _udp(g, tr, np.flatnonzero(has_l4 & (net.proto == 17)), net=net, end=end, issue=issue)
    ic = _Icmp.empty(n)
    icmp_columns(g, n, has_l4, net.proto, net.l4, end, issue, ic.itype, ic.icode, ic.imtu, ic.in_proto, ic.in_sport,
                 ic.in_dport, (ic.in_src_hi, ic.in_src_lo, ic.in_dst_hi, ic.in_dst_lo))
    ph = _payload_hash(g, tr.paylen, tr.payoff, end)
    opt = {"mss": _absent_i64(n), "wscale": _absent_i64(n), "sack": np.zeros(n, bool), "tsval": _absent_i64(n),
           "tsecr": _absent_i64(n)}
    with_opts = np.flatnonzero((tr.tflags >= 0) & (tr.thl > 20))
    if with_opts.size:
        tcp_options(g, with_opts, tr.payoff - tr.thl + 20, np.minimum(tr.payoff, end), (tr.tflags & 2) != 0, opt)
    cols = Packets(
        frame=np.arange(first_frame, first_frame + n, dtype=np.int64),
        ts=b.ts, caplen=b.caplen, wirelen=b.wirelen, linktype=b.linktype, ethertype=et.astype(np.int32),
        vlan=vlan, l3=net.l3, src_hi=net.src_hi, src_lo=net.src_lo, dst_hi=net.dst_hi, dst_lo=net.dst_lo,
        ttl=net.ttl.astype(np.int16), ip_id=net.ip_id.astype(np.int32), dscp=net.dscp.astype(np.int16),
        ip_frag=net.frag, proto=net.proto.astype(np.int16), sport=tr.sport.astype(np.int32),
        dport=tr.dport.astype(np.int32), seq=tr.seq, ack=tr.ack, tcp_flags=tr.tflags.astype(np.int16),
        win=tr.win.astype(np.int32), tcp_hlen=tr.thl.astype(np.int16), paylen=tr.paylen.astype(np.int32), pay_hash=ph,
        icmp_type=ic.itype.astype(np.int16), icmp_code=ic.icode.astype(np.int16), icmp_mtu=ic.imtu.astype(np.int32),
        in_proto=ic.in_proto.astype(np.int16), in_src_hi=ic.in_src_hi, in_src_lo=ic.in_src_lo,
        in_dst_hi=ic.in_dst_hi, in_dst_lo=ic.in_dst_lo, in_sport=ic.in_sport.astype(np.int32),
        in_dport=ic.in_dport.astype(np.int32), mss=opt["mss"].astype(np.int32), wscale=opt["wscale"].astype(np.int16),
        sack_perm=opt["sack"], tsval=opt["tsval"], tsecr=opt["tsecr"], issue=issue,
    )
    return cols, tr.payoff, end


def _absent_i64(n: int) -> np.ndarray:
    """An int64 column of -1 ("absent") that a layer fills for its packets."""
    return np.full(n, -1, np.int64)


def _zeros_u64(n: int) -> np.ndarray:
    return np.zeros(n, np.uint64)


@dataclass
class _Network:
    """The IPv4/IPv6 columns, filled by :func:`_ipv4` / :func:`_ipv6`; ``l4``/``l4len`` locate the L4 header."""

    l3: np.ndarray
    src_hi: np.ndarray
    src_lo: np.ndarray
    dst_hi: np.ndarray
    dst_lo: np.ndarray
    ttl: np.ndarray
    ip_id: np.ndarray
    dscp: np.ndarray
    proto: np.ndarray
    l4: np.ndarray
    l4len: np.ndarray
    frag: np.ndarray

    @classmethod
    def empty(cls, n: int) -> _Network:
        return cls(l3=np.zeros(n, np.int8), src_hi=_zeros_u64(n), src_lo=_zeros_u64(n), dst_hi=_zeros_u64(n),
                   dst_lo=_zeros_u64(n), ttl=_absent_i64(n), ip_id=_absent_i64(n), dscp=_absent_i64(n),
                   proto=_absent_i64(n), l4=_absent_i64(n), l4len=_absent_i64(n), frag=np.zeros(n, bool))


def _ipv4(g: Gather, net: _Network, m4: np.ndarray, *, p: np.ndarray, end: np.ndarray, lim: np.ndarray,
          issue: np.ndarray) -> None:
    """IPv4 header fields of the packets in mask ``m4`` (network layer at ``p``); bad headers get an issue."""
    if not m4.any():
        return
    q = p[m4]
    ok = q + 20 <= end[m4]
    vihl = g.u8(q)
    ihl = (vihl & 15) * 4
    bad_v = ok & ((vihl >> 4) != 4)
    bad_h = ok & ~bad_v & ((ihl < 20) | (q + ihl > end[m4]))
    iss = np.where(~ok, _ISSUE["truncated_ip_header"], np.where(bad_v, _ISSUE["bad_ip_version"], np.where(bad_h, _ISSUE["bad_ip_header_length"], 0)))
    good = iss == 0
    sub = np.flatnonzero(m4)
    issue[sub[~good]] = iss[~good]
    s = sub[good]
    q, ihl = q[good], ihl[good]
    net.l3[s] = 4
    tot = g.u16(q + 2)
    ff = g.u16(q + 6)
    net.dscp[s] = g.u8(q + 1) >> 2
    net.ip_id[s] = g.u16(q + 4)
    net.ttl[s] = g.u8(q + 8)
    net.proto[s] = g.u8(q + 9)
    net.src_hi[s] = V4_MARK
    net.dst_hi[s] = V4_MARK
    net.src_lo[s] = g.u32(q + 12).astype(np.uint64)
    net.dst_lo[s] = g.u32(q + 16).astype(np.uint64)
    net.frag[s] = (ff & 0x3FFF) != 0
    net.l4[s] = q + ihl
    # tot == 0 happens with TSO offload captures: fall back to the captured length
    net.l4len[s] = np.where(tot == 0, end[s] - q, np.minimum(tot, lim[s] - q)) - ihl


def _ipv6(g: Gather, net: _Network, m6: np.ndarray, *, p: np.ndarray, end: np.ndarray, lim: np.ndarray,
          issue: np.ndarray) -> None:
    """IPv6 header fields of the packets in mask ``m6``, walking up to 6 extension headers to the L4 one."""
    if not m6.any():
        return
    sub = np.flatnonzero(m6)
    q = p[sub]
    ok = q + 40 <= end[sub]
    bad_v = ok & ((g.u8(q) >> 4) != 6)
    issue[sub[~ok]] = _ISSUE["truncated_ip_header"]
    issue[sub[bad_v]] = _ISSUE["bad_ip_version"]
    good = ok & ~bad_v
    s, q = sub[good], q[good]
    net.l3[s] = 6
    net.dscp[s] = (g.u16(q) >> 6) & 0x3F
    net.ttl[s] = g.u8(q + 7)
    net.src_hi[s], net.src_lo[s] = g.u64(q + 8), g.u64(q + 16)
    net.dst_hi[s], net.dst_lo[s] = g.u64(q + 24), g.u64(q + 32)
    nh = g.u8(q + 6)
    plen = g.u16(q + 4)
    q = q + 40
    fr = np.zeros(s.shape[0], bool)
    for _ in range(6):
        e = np.isin(nh, IPV6_EXT)
        if not e.any():
            break
        hl = np.where(nh == 44, 8, np.where(nh == 51, (g.u8(q + 1) + 2) * 4, (g.u8(q + 1) + 1) * 8))
        fr |= e & (nh == 44) & ((g.u16(q + 2) & 0xFFF9) != 0)
        nnh = g.u8(q)
        nh = np.where(e, nnh, nh)
        plen = np.where(e, plen - hl, plen)
        q = np.where(e, q + hl, q)
    net.proto[s] = nh
    net.frag[s] = fr
    net.l4[s] = q
    net.l4len[s] = np.minimum(plen, lim[s] - q)


@dataclass
class _Transport:
    """The TCP/UDP columns, filled by :func:`_tcp` / :func:`_udp`; ``payoff``/``paylen`` locate the payload."""

    sport: np.ndarray
    dport: np.ndarray
    seq: np.ndarray
    ack: np.ndarray
    tflags: np.ndarray
    win: np.ndarray
    thl: np.ndarray
    paylen: np.ndarray
    payoff: np.ndarray

    @classmethod
    def empty(cls, n: int) -> _Transport:
        return cls(*(_absent_i64(n) for _ in range(9)))


def _tcp(g: Gather, tr: _Transport, t: np.ndarray, *, net: _Network, end: np.ndarray, issue: np.ndarray) -> None:
    """TCP header fields of rows ``t``; a truncated header or a data offset below 20 gets an issue."""
    if not t.size:
        return
    q = net.l4[t]
    ok = q + 20 <= end[t]
    issue[t[~ok]] = _ISSUE["truncated_tcp_header"]
    hl = (g.u8(q + 12) >> 4) * 4
    bad = ok & (hl < 20)
    issue[t[bad]] = _ISSUE["bad_tcp_header_length"]
    good = ok & ~bad
    t, q, hl = t[good], q[good], hl[good]
    tr.sport[t], tr.dport[t] = g.u16(q), g.u16(q + 2)
    tr.seq[t], tr.ack[t] = g.u32(q + 4), g.u32(q + 8)
    tr.tflags[t] = g.u16(q + 12) & 0x0FFF
    tr.win[t] = g.u16(q + 14)
    tr.thl[t] = hl
    tr.paylen[t] = np.maximum(net.l4len[t] - hl, 0)
    tr.payoff[t] = q + hl


def _udp(g: Gather, tr: _Transport, u: np.ndarray, *, net: _Network, end: np.ndarray, issue: np.ndarray) -> None:
    """UDP ports and payload of rows ``u`` (length: the UDP header's, clipped to the IP payload)."""
    if not u.size:
        return
    q = net.l4[u]
    ok = q + 8 <= end[u]
    issue[u[~ok]] = _ISSUE["truncated_udp_header"]
    u, q = u[ok], q[ok]
    tr.sport[u], tr.dport[u] = g.u16(q), g.u16(q + 2)
    tr.paylen[u] = np.maximum(np.minimum(g.u16(q + 4), net.l4len[u]) - 8, 0)
    tr.payoff[u] = q + 8


@dataclass
class _Icmp:
    """The ICMP/ICMPv6 columns :func:`~netghost.forensics.decode._l4.icmp_columns` fills (``in_*``: the
    flow of the packet an ICMP error quotes)."""

    itype: np.ndarray
    icode: np.ndarray
    imtu: np.ndarray
    in_proto: np.ndarray
    in_sport: np.ndarray
    in_dport: np.ndarray
    in_src_hi: np.ndarray
    in_src_lo: np.ndarray
    in_dst_hi: np.ndarray
    in_dst_lo: np.ndarray

    @classmethod
    def empty(cls, n: int) -> _Icmp:
        return cls(*(_absent_i64(n) for _ in range(6)), *(_zeros_u64(n) for _ in range(4)))


def _payload_hash(g: Gather, paylen: np.ndarray, payoff: np.ndarray, end: np.ndarray) -> np.ndarray:
    """64-bit fingerprint of the first 8 payload bytes + length (cross-capture packet matching)."""
    avail = np.clip(np.minimum(paylen, end - payoff), 0, 8)
    ph = np.zeros(paylen.shape[0], np.uint64)
    for k in range(8):
        byte = np.where(avail > k, g.u8(payoff + k), 0).astype(np.uint64)
        ph = (ph << np.uint64(8)) | byte
    ph ^= paylen.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return ph
