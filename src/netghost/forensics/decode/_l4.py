"""Vectorised L4 details the main decode delegates: ICMP/ICMPv6 (type, code, MTU, quoted flow) and the
TCP options of SYN segments (MSS, window scale, SACK-permitted)."""

from __future__ import annotations

import numpy as np

from netghost.forensics.decode._gather import Gather

__all__ = ["icmp_columns", "tcp_options"]

V4_MARK = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
ICMP4_ERRORS = (3, 4, 5, 11, 12)
ICMP6_ERRORS = (1, 2, 3, 4)
TRUNCATED_ICMP = 10  # decode.ISSUES index of "truncated_icmp_header"


def icmp_columns(g: Gather, n: int, has_l4: np.ndarray, proto: np.ndarray, l4: np.ndarray, end: np.ndarray,  # noqa: PLR0917  internal column writer
          issue: np.ndarray, itype: np.ndarray, icode: np.ndarray, imtu: np.ndarray, in_proto: np.ndarray,
          in_sport: np.ndarray, in_dport: np.ndarray, in_addr: tuple[np.ndarray, ...]) -> None:
    """ICMP/ICMPv6 type, code, MTU and the quoted packet's flow (for errors)."""
    in_src_hi, in_src_lo, in_dst_hi, in_dst_lo = in_addr
    for pr, errors in ((1, ICMP4_ERRORS), (58, ICMP6_ERRORS)):
        c = np.flatnonzero(has_l4 & (proto == pr))
        if not c.size:
            continue
        q = l4[c]
        ok = q + 4 <= end[c]
        issue[c[~ok]] = TRUNCATED_ICMP
        c, q = c[ok], q[ok]
        ty, co = g.u8(q), g.u8(q + 1)
        itype[c], icode[c] = ty, co
        if pr == 1:
            fn = (ty == 3) & (co == 4)
            imtu[c[fn]] = g.u16(q[fn] + 6)
        else:
            fn = ty == 2
            imtu[c[fn]] = g.u32(q[fn] + 4)
        e = np.isin(ty, errors)
        c, q = c[e], q[e] + 8
        if not c.size:
            continue
        if pr == 1:
            ok = (q + 20 <= end[c]) & ((g.u8(q) >> 4) == 4)
            c, q = c[ok], q[ok]
            ihl = (g.u8(q) & 15) * 4
            in_proto[c] = g.u8(q + 9)
            in_src_hi[c] = V4_MARK
            in_dst_hi[c] = V4_MARK
            in_src_lo[c] = g.u32(q + 12).astype(np.uint64)
            in_dst_lo[c] = g.u32(q + 16).astype(np.uint64)
            pq = q + ihl
        else:
            ok = (q + 40 <= end[c]) & ((g.u8(q) >> 4) == 6)
            c, q = c[ok], q[ok]
            in_proto[c] = g.u8(q + 6)
            in_src_hi[c], in_src_lo[c] = g.u64(q + 8), g.u64(q + 16)
            in_dst_hi[c], in_dst_lo[c] = g.u64(q + 24), g.u64(q + 32)
            pq = q + 40
        hp = np.isin(in_proto[c], (6, 17)) & (pq + 4 <= end[c])
        in_sport[c[hp]] = g.u16(pq[hp])
        in_dport[c[hp]] = g.u16(pq[hp] + 2)


def tcp_options(g: Gather, idx: np.ndarray, start: np.ndarray, stop: np.ndarray,  # noqa: PLR0917  internal column writer
                 syn: np.ndarray, out: dict[str, np.ndarray]) -> None:
    """TCP options: MSS / window scale / SACK-permitted (SYN segments only, as negotiated there) and
    the timestamps TSval/TSecr (every segment). The TLV walk runs vectorised over all segments.

    Args:
        idx: rows of TCP segments with options; start/stop: option bytes [start, stop) per row.
        syn: per-row SYN flag; out: the ``mss``, ``wscale``, ``sack``, ``tsval``, ``tsecr`` columns.
    """
    p = start[idx].copy()
    z = stop[idx]
    is_syn = syn[idx]
    active = p < z
    for _ in range(40):  # at most 40 option bytes, so at most 40 steps
        if not active.any():
            break
        kind = g.u8(p)
        ln = g.u8(p + 1)
        active &= kind != 0
        nop = active & (kind == 1)
        ok = active & ~nop & (ln >= 2) & (p + ln <= z)
        active &= nop | ok
        m = ok & is_syn & (kind == 2) & (ln == 4)
        out["mss"][idx[m]] = g.u16(p[m] + 2)
        m = ok & is_syn & (kind == 3) & (ln == 3)
        out["wscale"][idx[m]] = g.u8(p[m] + 2)
        out["sack"][idx[ok & is_syn & (kind == 4)]] = True
        m = ok & (kind == 8) & (ln == 10)
        out["tsval"][idx[m]] = g.u32(p[m] + 2)
        out["tsecr"][idx[m]] = g.u32(p[m] + 6)
        p = np.where(nop, p + 1, np.where(ok, p + ln, p))
        active &= p < z
