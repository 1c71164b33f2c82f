"""Two-point comparison: the same path captured at two points (A and B), packet by packet.

WHY: a single capture shows symptoms (retransmissions, resets); two captures of one path show *where*
a packet died or was forged. A packet seen at the upstream point and never at the downstream one was
lost between them; a packet at the downstream point that never passed the upstream one was injected
between them (a middlebox's spoofed RST).

Matching is vectorised: every IP packet gets a 64-bit key that survives NAT and routing (IP ID, TCP
seq/ack/flags, payload length and a hash of the first payload bytes, ICMP type/code; *not* addresses,
ports, TTL, DSCP or TCP options), plus its occurrence rank among equal keys at its point; the keys of
both points are intersected with ``np.intersect1d``. A second pass matches the leftovers without the
IP ID (rewritten by some NATs; absent in IPv6). Per-flow statistics are ``bincount``/``lexsort``
group reductions; the only Python loops run over the few flows reported.

Clock offset and one-way delay: for a flow with matched packets both ways, ``t_B - t_A`` is
``θ + d`` one way and ``θ - d`` the other (θ = B's clock minus A's). The fastest packet each way
gives θ = (min of the high side + max of the low side) / 2 and d = (their difference) / 2 (an
NTP-style estimate that assumes a symmetric path); the capture's offset is the median over flows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from netghost.forensics.decode import Packets, format_addr
from netghost.forensics.engine import Analysis

__all__ = ["COMPARE_VERSION", "MAX_BY_FLOW", "MAX_FLOWS", "MAX_FRAMES", "pair_sides", "side_of"]

COMPARE_VERSION = 1
MAX_FRAMES = 100  # frames listed per category (the count is always exact)
MAX_FLOWS = 25  # flows in per_flow (problems first, then the busiest)
MAX_BY_FLOW = 10  # flows listed per category
MAX_FLOW_FRAMES = 10  # frames per listed flow, examples per list
_C = np.uint64(0x9E3779B97F4A7C15)
_PROTO = {6: "tcp", 17: "udp", 1: "icmp", 58: "icmpv6"}


def _mix(h: np.ndarray, v: np.ndarray) -> np.ndarray:
    h = (h ^ v.astype(np.uint64)) * _C
    out: np.ndarray = h ^ (h >> np.uint64(29))
    return out


def _u64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.int64).astype(np.uint64)


@dataclass
class _Side:
    """One capture point's IP packets as match-ready columns (``rows`` index the decoded table)."""

    an: Analysis
    rows: np.ndarray
    key: np.ndarray
    key_noid: np.ndarray
    conv: np.ndarray
    fwd: np.ndarray

    @property
    def c(self) -> Packets:
        return self.an.cols


def _side(an: Analysis) -> _Side:
    c = an.cols
    rows = np.flatnonzero((c.l3 > 0) & (c.issue == 0))
    key = np.full(rows.shape[0], np.uint64(0x51ED), np.uint64)
    fl = c.tcp_flags[rows].astype(np.int64)
    for col in (c.proto[rows], c.seq[rows], c.ack[rows], np.where(fl >= 0, fl & 0x3F, -1),
                c.paylen[rows], c.icmp_type[rows], c.icmp_code[rows]):
        key = _mix(key, _u64(col))
    key_noid = _mix(key, c.pay_hash[rows])
    key = _mix(key_noid, _u64(c.ip_id[rows]))
    # conversation: unordered endpoint pair + protocol; fwd = the source is the lower endpoint
    sh, sl, sp = c.src_hi[rows], c.src_lo[rows], _u64(c.sport[rows])
    dh, dl, dp = c.dst_hi[rows], c.dst_lo[rows], _u64(c.dport[rows])
    fwd = (sh < dh) | ((sh == dh) & ((sl < dl) | ((sl == dl) & (sp <= dp))))
    conv = np.full(rows.shape[0], np.uint64(7), np.uint64)
    conv = _mix(conv, _u64(c.proto[rows]))
    for x, y in ((sh, dh), (sl, dl), (sp, dp)):
        conv = _mix(conv, np.where(fwd, x, y))
    for x, y in ((sh, dh), (sl, dl), (sp, dp)):
        conv = _mix(conv, np.where(fwd, y, x))
    return _Side(an, rows, key, key_noid, conv, fwd)


def _sorted_ranked(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order, sorted keys, occurrence rank of each sorted entry among equal keys, in frame order)."""
    order = np.argsort(key, kind="stable")
    ks = key[order]
    start = np.ones(ks.shape[0], bool)
    start[1:] = ks[1:] != ks[:-1]
    pos = np.arange(ks.shape[0])
    gstart = np.maximum.accumulate(np.where(start, pos, 0)) if ks.size else pos
    return order, ks, pos - gstart


def _match_keys(ka: np.ndarray, kb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair the k-th packet with a given key at A with the k-th with that key at B.

    Retransmitted copies thus match copy by copy (first with first) instead of colliding. One sort
    per side and one ``searchsorted``: B's (key, rank) is found at A's first index of the key + rank.
    """
    oa, ksa, _ = _sorted_ranked(ka)
    ob, ksb, rb = _sorted_ranked(kb)
    if not ksa.size or not ksb.size:
        e = np.zeros(0, np.int64)
        return e, e
    cand = np.searchsorted(ksa, ksb, side="left") + rb
    ok = cand < ksa.shape[0]
    ok[ok] = ksa[cand[ok]] == ksb[ok]
    return oa[cand[ok]], ob[ok]


def _match(a: _Side, b: _Side) -> tuple[np.ndarray, np.ndarray]:
    """Matched (a index, b index) pairs: first on the full key, then leftovers without the IP ID.

    The second (TCP) pass tolerates devices that rewrite the IP ID (some NATs, IPv6 has none); it only
    pairs packets left over by the first, so a retransmission never steals its original's match.
    """
    ia, ib = _match_keys(a.key, b.key)
    # TCP only: seq/ack make the key specific enough without the IP ID (ICMP/UDP keys would not be)
    la = np.ones(a.rows.shape[0], bool)
    la[ia] = False
    la = np.flatnonzero(la & (a.c.proto[a.rows] == 6))
    lb = np.ones(b.rows.shape[0], bool)
    lb[ib] = False
    lb = np.flatnonzero(lb & (b.c.proto[b.rows] == 6))
    if la.size and lb.size:
        ja, jb = _match_keys(a.key_noid[la], b.key_noid[lb])
        ia, ib = np.concatenate([ia, la[ja]]), np.concatenate([ib, lb[jb]])
    order = np.argsort(ia, kind="stable")
    return ia[order], ib[order]


def _group_quantiles(g: np.ndarray, v: np.ndarray, ng: int, qs: tuple[float, ...]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Count and quantiles of ``v`` per group id ``g`` in [0, ng) (NaN for empty groups)."""
    order = np.lexsort((v, g))
    vs = v[order]
    cnt = np.bincount(g, minlength=ng)
    start = np.concatenate(([0], np.cumsum(cnt)[:-1]))
    has = cnt > 0
    out = []
    for q in qs:
        r = np.full(ng, np.nan)
        idx = start + np.floor(q * np.maximum(cnt - 1, 0)).astype(np.int64)
        r[has] = vs[idx[has]]
        out.append(r)
    return cnt, out


def _ep(hi: Any, lo: Any, port: Any) -> str:
    a = format_addr(hi, lo)
    if int(port) < 0:
        return a
    return f"[{a}]:{int(port)}" if ":" in a else f"{a}:{int(port)}"


def _round(x: float, nd: int = 3) -> float | None:
    return None if not np.isfinite(x) else round(float(x), nd)


@dataclass
class _Pair:
    """The matched pair and the unified flow table both points share."""

    a: _Side
    b: _Side
    ia: np.ndarray  # matched indices into a.rows
    ib: np.ndarray
    fid_a: np.ndarray  # unified flow id per a.rows
    fid_b: np.ndarray
    dir_a: np.ndarray  # 0 = initiator → responder (as first seen), 1 = reverse
    dir_b: np.ndarray
    nflows: int
    first_side: np.ndarray  # per flow: 0 if first seen at A, 1 if only at B
    first_idx: np.ndarray  # per flow: index into that side's rows of its first packet


def _pair(a: _Side, b: _Side) -> _Pair:
    ia, ib = _match(a, b)
    # Map B conversations onto A's (NAT may rewrite the 5-tuple): the A conv most matched wins.
    ca, cb = a.conv[ia], b.conv[ib]
    flip = a.fwd[ia] != b.fwd[ib]
    mapped_b = b.conv.copy()
    flip_b = np.zeros(b.rows.shape[0], bool)
    if ia.size:
        pk = _mix(cb, ca)
        _, idx, inv, cnt = np.unique(pk, return_index=True, return_inverse=True, return_counts=True)
        inv = inv.ravel()
        ub, ua = cb[idx], ca[idx]
        fl_frac = np.bincount(inv, weights=flip, minlength=idx.shape[0]) / cnt
        order = np.lexsort((-cnt, ub))  # per B conversation, its most matched A conversation first
        first = np.ones(order.shape[0], bool)
        first[1:] = ub[order][1:] != ub[order][:-1]
        best = order[first]
        src, dst, fflip = ub[best], ua[best], fl_frac[best] > 0.5
        pos = np.minimum(np.searchsorted(src, b.conv), src.shape[0] - 1)
        hit = src[pos] == b.conv
        mapped_b[hit] = dst[pos[hit]]
        flip_b[hit] = fflip[pos[hit]]
    flows, inv_all = np.unique(np.concatenate([a.conv, mapped_b]), return_inverse=True)
    inv_all = inv_all.ravel()
    fid_a, fid_b = inv_all[: a.rows.shape[0]], inv_all[a.rows.shape[0]:]
    nf = flows.shape[0]
    fwd_b = b.fwd ^ flip_b
    # orientation: the sender of the flow's first packet at A (else at B) is the initiator
    big = np.iinfo(np.int64).max
    first_a = np.full(nf, big)
    np.minimum.at(first_a, fid_a, np.arange(a.rows.shape[0]))
    first_b = np.full(nf, big)
    np.minimum.at(first_b, fid_b, np.arange(b.rows.shape[0]))
    only_b = first_a == big
    first_side = only_b.astype(np.int8)
    first_idx = np.where(only_b, first_b, first_a)
    init_fwd = np.zeros(nf, bool)
    init_fwd[~only_b] = a.fwd[first_a[~only_b]]
    init_fwd[only_b] = fwd_b[first_b[only_b]]
    dir_a = (a.fwd != init_fwd[fid_a]).astype(np.int64)
    dir_b = (fwd_b != init_fwd[fid_b]).astype(np.int64)
    return _Pair(a, b, ia, ib, fid_a, fid_b, dir_a, dir_b, nf, first_side, first_idx)


def side_of(an: Analysis) -> _Side:
    """One capture point's matching keys and per-packet fields."""
    return _side(an)


def pair_sides(a: _Side, b: _Side) -> _Pair:
    """Match the packets of two capture points (A upstream of B, or the other way round)."""
    return _pair(a, b)
