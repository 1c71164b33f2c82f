"""Searches over ACKs for :mod:`netghost.forensics.tcp_vec` (internal): which peer ACK first covers
a sequence number, where a lagging ``maxseqtobeacked`` boundary resolves, which boundary breaks
happen, and the dup-ACK counter at chosen positions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netghost.forensics.tcp_vec_scan import NONE, FirstAtLeast
from netghost.forensics.tcp_vec_state import HALF, M32, OFF, WILD, Seq, Walk

C2 = np.int64(1 << 33)


class Acks:
    """A direction's ACKs mapped into the peer's unwrapped sequence space, as searchable arrays.

    ``plain`` holds ACKs within 2**30 of the peer's nextseq (or far below it): "ACK covers x" is then
    ``a_u >= x``. ``wild`` holds ACKs 2**30..2**31 above nextseq, for which the kernel's modulo
    compare "covers x" means ``x >= a_u - 2**31`` instead; stored as ``C2 + 2**31 - a_u`` so that both
    are "first value reaching a threshold" searches.
    """

    def __init__(self, wk: Walk, sq: Seq, x: int) -> None:
        self.wk = wk
        nxu = sq.nx_u[x]
        dd = wk.a - sq.nx32_at[x]
        dd += HALF
        dd &= M32
        dd -= HALF
        wild = dd >= WILD
        wild |= dd <= -HALF + 4
        ok = sq.dx[1 - x] & (nxu != NONE)
        dd[wild & (dd < 0)] += OFF
        dd += nxu
        np.clip(dd, 0, (1 << 34) - 1, out=dd)  # a_u
        self.v1 = np.where(ok & ~wild, dd, NONE)
        np.subtract(C2 + HALF, dd, out=dd)
        np.clip(dd, 0, (1 << 34) - 1, out=dd)
        dd[~(ok & wild)] = NONE
        self.v2 = dd

    def first_covering(self, start: np.ndarray, xu: np.ndarray, strict: bool, only_ack: bool) -> np.ndarray:
        """First position >= start whose ACK covers ``xu`` (``strict``: goes beyond it)."""
        wk = self.wk
        k = np.int64(1 if strict else 0)
        v1, v2 = (np.where(wk.ackf, v, NONE) for v in (self.v1, self.v2)) if only_ack else (self.v1, self.v2)
        out: np.ndarray = FirstAtLeast(v1, wk.segkey, wk.segstart, wk.segend).query(start, xu + k)
        if (v2 != NONE).any():
            np.minimum(out, FirstAtLeast(v2, wk.segkey, wk.segstart, wk.segend).query(start, C2 - xu + k), out=out)
        return out


def next_same_seq(wk: Walk, zwp: np.ndarray, brk: list[np.ndarray], m32: list[np.ndarray]) -> list[np.ndarray]:
    """For each break of direction x: the first later non-probe segment of x in its stream with seq == M."""
    n = wk.n
    qk = [((wk.seg[b] * 2 + x) << np.int64(32)) | m for x, (b, m) in enumerate(zip(brk, m32, strict=True))]
    allq = np.unique(np.concatenate(qk))
    key = (wk.seg * 2 + wk.d1) << np.int64(32)
    key |= wk.s
    if allq.size:  # np.isin would sort all n keys; a search in the few query keys is cheaper
        at = np.minimum(np.searchsorted(allq, key), allq.shape[0] - 1)
        cand = np.flatnonzero((allq[at] == key) & ~zwp)
    else:
        cand = np.zeros(0, np.int64)
    k1 = key[cand]
    o = np.argsort(k1, kind="stable")
    k1, p1 = k1[o], cand[o]
    nk = k1.shape[0]
    out = []
    for b, q in zip(brk, qk, strict=True):
        if not nk:
            out.append(np.full(b.shape[0], n, np.int64))
            continue
        lo = np.searchsorted(k1, q, "left")
        hi = np.searchsorted(k1, q, "right")
        # inside [lo, hi) positions ascend: the first one after b
        j = lo + count_le(p1, lo, hi, b)
        out.append(np.where(j < hi, p1[np.minimum(j, nk - 1)], n))
    return out


def count_le(p: np.ndarray, lo: np.ndarray, hi: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many of ``p[lo:hi]`` (ascending) are <= b, for each query (vectorised bisection)."""
    left, right = lo.copy(), hi.copy()
    while True:
        live = left < right
        if not live.any():
            out: np.ndarray = left - lo
            return out
        mid = (left + right) // 2
        go = live & (p[np.minimum(mid, p.shape[0] - 1)] <= b)
        left = np.where(go, mid + 1, left)
        right = np.where(live & ~go, mid, right)


def live_breaks(wk: Walk, b: np.ndarray, e: np.ndarray, stats: dict[str, Any]) -> np.ndarray:
    """Which breaks happen: the first of each stream direction, then the first after each one's end."""
    nb = b.shape[0]
    if not nb:
        return np.zeros(0, bool)
    j = np.searchsorted(b, e, "right")
    jc = np.minimum(j, nb - 1)
    jump = np.append(np.where((e < wk.n) & (j < nb) & (wk.seg[b[jc]] == wk.seg[b]), j, nb), nb)
    reach = np.zeros(nb + 1, bool)
    reach[:nb] = np.r_[True, wk.seg[b[1:]] != wk.seg[b[:-1]]]
    it = 0
    while True:  # pointer doubling: after k rounds every break within 2**k hops of a start is marked
        it += 1
        reach[jump[reach]] = True
        if (jump == nb).all():
            break
        jump = jump[jump]
    stats["doubling_rounds"] = max(stats.get("doubling_rounds", 0), it)
    out: np.ndarray = reach[:nb]
    return out


class DupCounter:
    """One direction's dup-ACK counter, evaluated at chosen positions only.

    tshark's ``dupacknum`` counts dup ACKs since the last reset (the sender's ACK number moved) or
    "park" (an ACKed-unseen check by the peer sets it to -1; the next dup ACK makes it 1). Resets,
    parks and dup ACKs are sorted position lists, so a value is three binary searches.
    """

    def __init__(self, wk: Walk, resets: np.ndarray, parks: np.ndarray, dups: np.ndarray) -> None:
        self.segstart = wk.segstart
        mask = resets.copy()
        mask[parks] = True
        self.ev = np.flatnonzero(mask)
        self.is_park = ~resets[self.ev]
        self.dups = dups

    def value(self, k: np.ndarray) -> np.ndarray:
        """Counter after position ``k`` (events at ``k`` included)."""
        j = np.searchsorted(self.ev, k, "right") - 1
        jc = np.maximum(j, 0)
        has = (j >= 0) & (self.ev[jc] >= self.segstart[k]) if self.ev.size else np.zeros(k.shape[0], bool)
        since = np.where(has, self.ev[jc] if self.ev.size else 0, self.segstart[k] - 1)
        cnt = np.searchsorted(self.dups, k, "right") - np.searchsorted(self.dups, since, "right")
        parked = has & (self.is_park[jc] if self.ev.size else False)
        out: np.ndarray = np.where(parked & (cnt == 0), -1, cnt)
        return out


