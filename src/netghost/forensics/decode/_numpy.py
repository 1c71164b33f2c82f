"""Vectorised packet decode: link layer → IPv4/IPv6 → TCP/UDP/ICMP/ICMPv6, one numpy column per field.

Every header field of every packet in a :class:`~netghost.forensics.capture.RawBatch` is extracted with
numpy gathers (``buf[off + k]``), so the cost per packet is a handful of vector operations, not a
Python object. Only rare shapes get a Python loop over *their* packets: NFLOG TLV walks, TCP options
of SYN segments and DNS messages (see ``forensics/dns/``).

A packet that does not decode is never silently dropped: it gets an ``issue`` code (see
:data:`ISSUES`) and is counted by reason in the semantic output.
"""

from __future__ import annotations

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
    columns and is used when it is built and not disabled.

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
    off = b.off
    end = off + b.caplen
    issue = np.zeros(n, np.int8)
    issue[b.caplen == 0] = _ISSUE["empty_record"]
    et, p, vlan, lim = _link_layer(g, b, issue)


    def i64() -> np.ndarray:
        return np.full(n, -1, np.int64)
    l3 = np.zeros(n, np.int8)
    src_hi, src_lo, dst_hi, dst_lo = (np.zeros(n, np.uint64) for _ in range(4))
    ttl, ip_id, dscp, proto, l4, l4len = i64(), i64(), i64(), i64(), i64(), i64()
    frag = np.zeros(n, bool)

    m4 = et == 0x0800
    if m4.any():
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
        l3[s] = 4
        tot = g.u16(q + 2)
        ff = g.u16(q + 6)
        dscp[s] = g.u8(q + 1) >> 2
        ip_id[s] = g.u16(q + 4)
        ttl[s] = g.u8(q + 8)
        proto[s] = g.u8(q + 9)
        src_hi[s] = V4_MARK
        dst_hi[s] = V4_MARK
        src_lo[s] = g.u32(q + 12).astype(np.uint64)
        dst_lo[s] = g.u32(q + 16).astype(np.uint64)
        frag[s] = (ff & 0x3FFF) != 0
        l4[s] = q + ihl
        # tot == 0 happens with TSO offload captures: fall back to the captured length
        l4len[s] = np.where(tot == 0, end[s] - q, np.minimum(tot, lim[s] - q)) - ihl

    m6 = et == 0x86DD
    if m6.any():
        sub = np.flatnonzero(m6)
        q = p[sub]
        ok = q + 40 <= end[sub]
        bad_v = ok & ((g.u8(q) >> 4) != 6)
        issue[sub[~ok]] = _ISSUE["truncated_ip_header"]
        issue[sub[bad_v]] = _ISSUE["bad_ip_version"]
        good = ok & ~bad_v
        s, q = sub[good], q[good]
        l3[s] = 6
        dscp[s] = (g.u16(q) >> 6) & 0x3F
        ttl[s] = g.u8(q + 7)
        src_hi[s], src_lo[s] = g.u64(q + 8), g.u64(q + 16)
        dst_hi[s], dst_lo[s] = g.u64(q + 24), g.u64(q + 32)
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
        proto[s] = nh
        frag[s] = fr
        l4[s] = q
        l4len[s] = np.minimum(plen, lim[s] - q)

    sport, dport, seq, ack, tflags, win, thl = i64(), i64(), i64(), i64(), i64(), i64(), i64()
    paylen, payoff = i64(), i64()
    itype, icode, imtu = i64(), i64(), i64()
    in_proto, in_sport, in_dport = i64(), i64(), i64()
    in_src_hi, in_src_lo, in_dst_hi, in_dst_lo = (np.zeros(n, np.uint64) for _ in range(4))
    has_l4 = (l3 > 0) & ~frag

    t = np.flatnonzero(has_l4 & (proto == 6))
    if t.size:
        q = l4[t]
        ok = q + 20 <= end[t]
        issue[t[~ok]] = _ISSUE["truncated_tcp_header"]
        hl = (g.u8(q + 12) >> 4) * 4
        bad = ok & (hl < 20)
        issue[t[bad]] = _ISSUE["bad_tcp_header_length"]
        good = ok & ~bad
        t, q, hl = t[good], q[good], hl[good]
        sport[t], dport[t] = g.u16(q), g.u16(q + 2)
        seq[t], ack[t] = g.u32(q + 4), g.u32(q + 8)
        tflags[t] = g.u16(q + 12) & 0x0FFF
        win[t] = g.u16(q + 14)
        thl[t] = hl
        paylen[t] = np.maximum(l4len[t] - hl, 0)
        payoff[t] = q + hl
    u = np.flatnonzero(has_l4 & (proto == 17))
    if u.size:
        q = l4[u]
        ok = q + 8 <= end[u]
        issue[u[~ok]] = _ISSUE["truncated_udp_header"]
        u, q = u[ok], q[ok]
        sport[u], dport[u] = g.u16(q), g.u16(q + 2)
        paylen[u] = np.maximum(np.minimum(g.u16(q + 4), l4len[u]) - 8, 0)
        payoff[u] = q + 8
    icmp_columns(g, n, has_l4, proto, l4, end, issue, itype, icode, imtu, in_proto, in_sport, in_dport,
          (in_src_hi, in_src_lo, in_dst_hi, in_dst_lo))

    # 64-bit fingerprint of the first 8 payload bytes + length (cross-capture packet matching).
    avail = np.clip(np.minimum(paylen, end - payoff), 0, 8)
    ph = np.zeros(n, np.uint64)
    for k in range(8):
        byte = np.where(avail > k, g.u8(payoff + k), 0).astype(np.uint64)
        ph = (ph << np.uint64(8)) | byte
    ph ^= paylen.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)

    opt = {"mss": i64(), "wscale": i64(), "sack": np.zeros(n, bool), "tsval": i64(), "tsecr": i64()}
    with_opts = np.flatnonzero((tflags >= 0) & (thl > 20))
    if with_opts.size:
        tcp_options(g, with_opts, payoff - thl + 20, np.minimum(payoff, end), (tflags & 2) != 0, opt)
    mss, wscale, sack = opt["mss"], opt["wscale"], opt["sack"]

    cols = Packets(
        frame=np.arange(first_frame, first_frame + n, dtype=np.int64),
        ts=b.ts, caplen=b.caplen, wirelen=b.wirelen, linktype=b.linktype, ethertype=et.astype(np.int32),
        vlan=vlan, l3=l3, src_hi=src_hi, src_lo=src_lo, dst_hi=dst_hi, dst_lo=dst_lo,
        ttl=ttl.astype(np.int16), ip_id=ip_id.astype(np.int32), dscp=dscp.astype(np.int16), ip_frag=frag,
        proto=proto.astype(np.int16), sport=sport.astype(np.int32), dport=dport.astype(np.int32),
        seq=seq, ack=ack, tcp_flags=tflags.astype(np.int16), win=win.astype(np.int32),
        tcp_hlen=thl.astype(np.int16), paylen=paylen.astype(np.int32), pay_hash=ph,
        icmp_type=itype.astype(np.int16), icmp_code=icode.astype(np.int16), icmp_mtu=imtu.astype(np.int32),
        in_proto=in_proto.astype(np.int16), in_src_hi=in_src_hi, in_src_lo=in_src_lo,
        in_dst_hi=in_dst_hi, in_dst_lo=in_dst_lo, in_sport=in_sport.astype(np.int32),
        in_dport=in_dport.astype(np.int32), mss=mss.astype(np.int32), wscale=wscale.astype(np.int16),
        sack_perm=sack, tsval=opt["tsval"], tsecr=opt["tsecr"], issue=issue,
    )
    return cols, payoff, end
