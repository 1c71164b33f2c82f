"""tshark 4.0 TCP sequence analysis in pure numpy: same inputs and outputs as
:func:`netghost.forensics.tcp.analyze_tcp_sequences`, no Python loop per packet.

Why: the engine's fallback when the compiled kernel is unavailable must not walk packets in Python
(~5 µs each). Every per-direction state variable of ``tcp._kernel`` is rewritten as a scan over the
walk order (conversation-contiguous, capture order) split into *segments* (tshark streams:
conversation changes and port-reuse SYNs), where each position knows the previous packet of its own
and of the reverse direction:

* last-value state (window, last ACK and its time, "previous was a SYN", previous peer flags, window
  scale, iRTT, nextseqtime) is a forward fill of "index of the last event";
* ``nextseq`` is a running maximum of ``seq+len(+1 SYN/FIN)`` in 64-bit per-direction unwrapped
  sequence space; zero-window probes do not advance it and whether a segment is a probe depends on
  ``nextseq`` — the one genuinely recursive rule, solved by **fixpoint iteration** (probe candidates
  start excluded; candidates that would advance are let in until nothing changes, usually 1–2 passes);
* port reuse (a pure SYN with a new ISN starts a new stream) is a second small fixpoint: the streams
  found so far define the base sequence numbers that decide the next split;
* ``maxseqtobeacked`` equals ``nextseq`` except after a *break* (a segment jumping past the boundary);
  each break lasts until the first same-seq segment or the first peer ACK beyond it (a bulk
  exact-match search and a "first position whose ACK reaches x" search); which breaks are live is a
  chain over breaks, marked by pointer doubling;
* the dup-ACK counter is "dup ACKs since the last reset or park" (cumulative sums between events);
* ``ack_rtt``: every listed segment's removal time is the first peer packet whose ACK covers it (a
  "first position reaching x" search); a sample is the oldest exact match removed at that ACK.

Comparisons are exactly the kernel's modulo-2**32 ones wherever both operands are known per packet;
unwrapped 64-bit values are used only for the scans and searches, which agree with the modular rules
when a stream direction spans < 2**29 sequence numbers and its unacked list stays below tshark's
1000-entry cap. Conversations breaking such a premise (garbage sequence numbers spanning the whole
space, ``nextseq`` wrapping to exactly 0, a probe before any sequence is known, >= 1000 unacked
segments, negative timestamps) are re-run through the sequential reference — the documented hybrid
last resort; ``stats["fallback_packets"]`` counts them (0 on the corpus and the benchmark capture).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netghost.forensics.tcp import (
    ACK,
    ACKLOST,
    DUPACK,
    FAST,
    FIN,
    KA,
    KAACK,
    LOST,
    OOO,
    RETR,
    REUSED,
    RST,
    SPUR,
    SYN,
    UNACKED_MAX,
    WFULL,
    WUPD,
    ZW,
    ZWP,
    ZWPACK,
)
from netghost.forensics.tcp_vec_scan import NONE, FirstAtLeast, ffill_index, seg_running_max

__all__ = ["analyze_tcp_sequences_vec"]

M32 = np.int64(0xFFFFFFFF)
HALF = np.int64(0x80000000)
OFF = np.int64(1 << 32)  # unwrapped sequence values are stored + OFF so that they are >= 0
SPAN_MAX = 1 << 29
WILD = 1 << 30


def _circ_gt(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    d = (x - y) & M32
    out: np.ndarray = (d > 0) & (d < HALF)
    return out


def _shift(arr: np.ndarray, first: np.ndarray, fill: Any) -> np.ndarray:
    """``arr[k-1]``, or ``fill`` where ``k`` starts a segment."""
    out = np.empty_like(arr)
    out[1:] = arr[:-1]
    out[first] = fill
    return out


def _pick(idx: np.ndarray, arr: np.ndarray, fill: Any) -> np.ndarray:
    out: np.ndarray = np.where(idx >= 0, arr[np.maximum(idx, 0)], fill)
    return out


class _Walk:
    """Header fields gathered in walk order plus the segment (stream) structure."""

    def __init__(self, cv: np.ndarray, d1: np.ndarray, s: np.ndarray, a: np.ndarray, fl: np.ndarray,  # noqa: PLR0917  header columns
                 w: np.ndarray, ln: np.ndarray, t: np.ndarray, wsv: np.ndarray) -> None:
        self.n = n = cv.shape[0]
        self.cv, self.d1, self.s, self.a, self.fl, self.w, self.ln, self.t, self.wsv = cv, d1, s, a, fl, w, ln, t, wsv
        self.pos = np.arange(n, dtype=np.int64)
        self.convstart = np.ones(n, bool)
        self.convstart[1:] = cv[1:] != cv[:-1]
        self.syn = (fl & SYN) != 0
        self.ackf = (fl & ACK) != 0
        self.sf = (fl & (SYN | FIN)) != 0
        self.set_segments(self.convstart)

    def set_segments(self, bnd: np.ndarray) -> None:
        self.bnd = bnd
        starts = np.flatnonzero(bnd)
        self.starts = starts
        self.seg = np.cumsum(bnd, dtype=np.int64) - 1
        self.segstart = starts[self.seg]
        self.segend = np.append(starts[1:], self.n)[self.seg]

    def first_in_seg(self, mask: np.ndarray) -> np.ndarray:
        """Per position, the first position of its segment where ``mask`` holds (``n`` if none)."""
        if not self.n:
            return self.pos
        per = np.minimum.reduceat(np.where(mask, self.pos, self.n), self.starts)
        out: np.ndarray = per[self.seg]
        return out


def _base_post(wk: _Walk) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """tshark's base sequence per absolute direction after each packet: (is set, value)."""
    sets, vals = [], []
    for x in (False, True):
        own = wk.d1 == x
        li = ffill_index(wk.syn & own, wk.segstart)
        fx = wk.first_in_seg(own)
        fa = wk.first_in_seg(~own & wk.ackf)
        init_pos = np.minimum(fx, fa)
        init_val = np.where(fx < fa, wk.s[np.minimum(fx, wk.n - 1)] - 1, wk.a[np.minimum(fa, wk.n - 1)] - 1)
        sets.append((li >= 0) | (init_pos <= wk.pos))
        vals.append(np.where(li >= 0, wk.s[np.maximum(li, 0)], init_val) & M32)
    return sets, vals


def _streams(wk: _Walk, stats: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Split conversations at port-reuse SYNs (fixpoint); returns (sub index, REUSED mask)."""
    pure_syn = wk.syn & ~wk.ackf
    trig = np.zeros(wk.n, bool)
    it = 0
    while True:
        it += 1
        wk.set_segments(wk.convstart | trig)
        sets, vals = _base_post(wk)
        # the pre-state of k is the post-state of k-1 *in its own direction's slot*
        pre_set = np.where(wk.d1, _shift(sets[1], wk.convstart, False), _shift(sets[0], wk.convstart, False))
        pre_val = np.where(wk.d1, _shift(vals[1], wk.convstart, 0), _shift(vals[0], wk.convstart, 0))
        differs = wk.syn & ~wk.convstart & pre_set & (wk.s != pre_val)
        new_trig = differs & pure_syn
        if np.array_equal(new_trig, trig):
            break
        trig = new_trig
    stats["stream_iterations"] = it
    cs = np.cumsum(trig, dtype=np.int64)
    sub = cs - cs[np.flatnonzero(wk.convstart)[np.cumsum(wk.convstart) - 1]]
    return sub, differs


def _by_dir(d1: np.ndarray, pair: list[np.ndarray], own: bool = True) -> np.ndarray:
    """Select per position the value of its own direction (or of the reverse one)."""
    out: np.ndarray = np.where(d1, pair[1], pair[0]) if own else np.where(d1, pair[0], pair[1])
    return out


class _Seq:
    """Unwrapped sequence space per stream direction, ``nextseq`` (zero-window-probe fixpoint)."""

    def __init__(self, wk: _Walk, stats: dict[str, Any]) -> None:
        n, s = wk.n, wk.s
        self.first = first = np.zeros(n, bool)
        first[wk.starts] = True
        dx = [wk.d1 == x for x in (False, True)]
        self.dx = dx
        ex = [ffill_index(m, wk.segstart, inclusive=False) for m in dx]
        self.ps = ps = _by_dir(wk.d1, ex)
        self.pr = pr = _by_dir(wk.d1, ex, own=False)
        delta = np.where(ps >= 0, ((s - s[np.maximum(ps, 0)] + HALF) & M32) - HALF, 0)
        su = np.zeros(n, np.int64)
        self.s0: list[np.ndarray] = []
        before = wk.segstart - 1
        for m in dx:
            cx = np.cumsum(np.where(m, delta, 0))
            cb = np.where(before >= 0, cx[np.maximum(before, 0)], 0)
            su[m] = (cx - cb)[m]
            fx = wk.first_in_seg(m)
            self.s0.append(np.where(fx < n, s[np.minimum(fx, n - 1)], 0))
        ln, sf = wk.ln, wk.sf.astype(np.int64)
        self.nxt_u = nxt_u = su + ln + sf + OFF
        self.nxt32 = (s + ln + sf) & M32
        lo = np.minimum(su + OFF, nxt_u)
        span_bad = np.zeros(n, bool)
        for m in dx:
            hi_s = np.maximum.reduceat(np.where(m, nxt_u, 0), wk.starts) if n else nxt_u
            lo_s = np.minimum.reduceat(np.where(m, lo, 1 << 40), wk.starts) if n else lo
            span_bad |= ((hi_s - lo_s) >= SPAN_MAX)[wk.seg] & m
        self.bad = span_bad
        self.nxt_u = np.clip(nxt_u, 0, (1 << 34) - 1)
        # zero-window probes: candidates = 1-byte segments into a zero window; fixpoint on nextseq
        self.win_r = _pick(pr, wk.w, -1)
        cand = (ln == 1) & (self.win_r == 0)
        excl = cand.copy()
        it = 0
        while True:
            it += 1
            self._nextseq(wk, excl)
            zwp = cand & (s == self.nx32)
            adv = (self.nxpre == NONE) | (self.nxt_u > self.nxpre)
            new = cand & (zwp | ~adv)
            if np.array_equal(new, excl):
                break
            excl = new
        stats["zwp_iterations"] = it
        self.zwp = zwp
        self.raised = ~excl & adv
        # nextseq wrapping to exactly 0 reads as "unknown" to the kernel: only a later segment of that
        # direction notices (e.g. a refused connection's RST with seq 0 is harmless)
        zero = self.raised & (self.nxt32 == 0)
        after0 = _by_dir(wk.d1, [ffill_index(zero & m, wk.segstart, inclusive=False) for m in dx]) >= 0
        self.bad |= (zwp & (self.nxpre == NONE)) | after0
        rx = [ffill_index(self.raised & m, wk.segstart, inclusive=False) for m in dx]
        self.nst_pre = _pick(_by_dir(wk.d1, rx), wk.t, 0.0)

    def _nextseq(self, wk: _Walk, excl: np.ndarray) -> None:
        """NX[x]: nextseq of direction x after every position (+OFF, NONE = unknown); own pre-state."""
        self.nx_u = [seg_running_max(np.where(m & ~excl, self.nxt_u, NONE), wk.seg) for m in self.dx]
        self.nx32_at = [np.where(v == NONE, 0, (s0 + v - OFF) & M32) for v, s0 in zip(self.nx_u, self.s0, strict=True)]
        self.nxprev = [_shift(v, self.first, NONE) for v in self.nx_u]  # NX[x] before each position
        self.nx32prev = [_shift(v, self.first, 0) for v in self.nx32_at]
        self.nxpre = _by_dir(wk.d1, self.nxprev)
        self.nx32 = _by_dir(wk.d1, self.nx32prev)


C2 = np.int64(1 << 33)


class _Acks:
    """A direction's ACKs mapped into the peer's unwrapped sequence space, as searchable arrays.

    ``plain`` holds ACKs within 2**30 of the peer's nextseq (or far below it): "ACK covers x" is then
    ``a_u >= x``. ``wild`` holds ACKs 2**30..2**31 above nextseq, for which the kernel's modulo
    compare "covers x" means ``x >= a_u - 2**31`` instead; stored as ``C2 + 2**31 - a_u`` so that both
    are "first value reaching a threshold" searches.
    """

    def __init__(self, wk: _Walk, sq: _Seq, x: int, only_ack: bool) -> None:
        nxu, nx32 = sq.nx_u[x], sq.nx32_at[x]
        ok = sq.dx[1 - x] & (nxu != NONE)
        if only_ack:
            ok &= wk.ackf
        dd = ((wk.a - nx32 + HALF) & M32) - HALF
        wild = (dd >= WILD) | (dd <= -HALF + 4)
        au = nxu + np.where(wild & (dd < 0), dd + (OFF), dd)
        v1 = np.where(ok & ~wild, np.clip(au, 0, (1 << 34) - 1), NONE)
        v2 = np.where(ok & wild, np.clip(C2 + HALF - au, 0, (1 << 34) - 1), NONE)
        self.plain = FirstAtLeast(v1, wk.seg, wk.segstart, wk.segend)
        self.wild = FirstAtLeast(v2, wk.seg, wk.segstart, wk.segend)

    def first_covering(self, start: np.ndarray, xu: np.ndarray, strict: bool) -> np.ndarray:
        """First position >= start whose ACK covers ``xu`` (``strict``: goes beyond it)."""
        k = np.int64(1 if strict else 0)
        out: np.ndarray = np.minimum(self.plain.query(start, xu + k), self.wild.query(start, C2 - xu + k))
        return out


def _exact_seq_index(wk: _Walk, zwp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sorted (stream, direction, seq) keys of non-probe segments, for "next segment with seq == M"."""
    p = np.flatnonzero(~zwp)
    key = ((wk.seg[p] * 2 + wk.d1[p]) << np.int64(32)) | wk.s[p]
    o = np.argsort(key, kind="stable")
    k1, p1 = key[o], p[o]
    run = np.cumsum(np.r_[True, k1[1:] != k1[:-1]]) - 1 if k1.size else k1
    return k1, p1, run, run * (wk.n + 1) + p1


def _next_same_seq(wk: _Walk, idx: tuple[np.ndarray, ...], x: int, b: np.ndarray, m32: np.ndarray) -> np.ndarray:
    k1, p1, run, key3 = idx
    n, nk = wk.n, k1.shape[0]
    if not nk:
        return np.full(b.shape[0], n, np.int64)
    qk = ((wk.seg[b] * 2 + x) << np.int64(32)) | m32
    lo = np.minimum(np.searchsorted(k1, qk, "left"), nk - 1)
    exists = k1[lo] == qk
    j = np.minimum(np.searchsorted(key3, run[lo] * (n + 1) + b + 1, "left"), nk - 1)
    ok = exists & (run[j] == run[lo]) & (p1[j] > b)
    out: np.ndarray = np.where(ok, p1[j], n)
    return out


def _live_breaks(wk: _Walk, b: np.ndarray, e: np.ndarray, stats: dict[str, Any]) -> np.ndarray:
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


def _flags(wk: _Walk, sq: _Seq, stats: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Analysis bitmask per walk position (without REUSED) and the "falls back" mask."""
    s, a, fl, w, ln, t, d1 = wk.s, wk.a, wk.fl, wk.w, wk.ln, wk.t, wk.d1
    ps, pr, nx32, zwp = sq.ps, sq.pr, sq.nx32, sq.zwp
    ctl0 = (fl & (SYN | FIN | RST)) == 0
    win_d, win_r = _pick(ps, w, -1), sq.win_r
    la_d, la_r, lat_r = _pick(ps, a, 0), _pick(pr, a, 0), _pick(pr, t, 0.0)
    fa_r = _pick(pr, wk.syn, True)
    wsc = []
    for xb in (False, True):
        own = d1 == xb
        ev = (wk.syn & own) | (wk.syn & wk.ackf & ~own & (wk.wsv < 0))
        li = ffill_index(ev, wk.segstart)
        wsc.append(_pick(li, np.where(own & (wk.wsv >= 0), wk.wsv, -2), -1))
    wsc_r = _by_dir(d1, wsc, own=False)
    nz = ~zwp
    ka = nz & (ln <= 1) & (s == ((nx32 - 1) & M32)) & ctl0
    same = nz & (ln == 0) & (s == nx32) & (a == la_d) & ctl0
    sh = np.where(fa_r | (wsc_r == -2), 0, np.maximum(wsc_r, 0))
    wfull = nz & (ln > 0) & (wsc_r != -1) & ctl0 & (win_r >= 0) & (
        ((s + ln) & M32) == ((la_r + (np.maximum(win_r, 0) << sh)) & M32))
    lf_ka, lf_zwp = _pick(pr, ka, False), _pick(pr, zwp, False)
    dup = same & (w != 0) & (w == win_d) & ~lf_ka
    af = (np.where(zwp, ZWP, 0) | np.where(nz & (w == 0) & ctl0, ZW, 0)
          | np.where(nz & (nx32 != 0) & _circ_gt(s, nx32) & ((fl & RST) == 0), LOST, 0) | np.where(ka, KA, 0)
          | np.where(same & (w != 0) & (w != win_d), WUPD, 0) | np.where(wfull, WFULL, 0)
          | np.where(same & (w != 0) & (w == win_d) & lf_ka, KAACK, 0)
          | np.where(same & (w == 0) & (w == win_d) & lf_zwp, ZWPACK, 0) | np.where(dup, DUPACK, 0))
    # maxseqtobeacked per direction x, then ACKed-unseen and the dup-ACK counters
    sidx = _exact_seq_index(wk, zwp)
    va = []
    bad = sq.bad.copy()
    for x in (0, 1):
        own = sq.dx[x]
        brk = np.flatnonzero(own & nz & (sq.nxpre != NONE) & (s != nx32) & sq.raised)
        mu, m32 = sq.nxpre[brk], nx32[brk]
        start = brk + 1
        fine = start < wk.segend[brk]
        start = np.where(fine, start, wk.n)
        e = np.minimum(_next_same_seq(wk, sidx, x, brk, m32), _Acks(wk, sq, x, True).first_covering(start, mu, True))
        e = np.where(fine, e, wk.n)
        live = _live_breaks(wk, brk, e, stats) & fine
        lb, le, lm = brk[live], np.minimum(e[live], wk.segend[brk[live]] - 1), m32[live]
        mk = np.full(wk.n, -1, np.int64)
        mk[lb + 1] = np.arange(lb.shape[0])
        last = np.maximum.accumulate(mk) if wk.n else mk
        cover = (last >= 0) & (wk.pos <= le[np.maximum(last, 0)] if lb.size else np.zeros(wk.n, bool))
        nxp = sq.nx32prev[x]
        mt = np.where(cover, lm[np.maximum(last, 0)] if lb.size else 0, nxp)
        cond = sq.dx[1 - x] & wk.ackf & (mt != 0) & _circ_gt(a, mt)
        lag = cond & (mt != nxp)
        park = cond & ~lag
        inc = np.cumsum(dup & own)
        reset = own & (a != la_d)
        le_ev = ffill_index(reset | park, wk.segstart)
        base = np.where(wk.segstart > 0, inc[np.maximum(wk.segstart - 1, 0)], 0)
        cnt = inc - np.where(le_ev >= 0, inc[np.maximum(le_ev, 0)], base)
        val = np.where((le_ev >= 0) & park[np.maximum(le_ev, 0)] & (cnt == 0), -1, cnt)
        va.append(val)
        pre0 = _shift(val, sq.first, 0) == 0
        af |= np.where(lag | (park & pre0), ACKLOST, 0)
    dup_r = _by_dir(d1, va, own=False)
    # retransmission family
    elig = ((ln > 0) | wk.sf) & ~ka
    nad = (nx32 != 0) & _circ_gt(nx32, s) & ~((ln > 1) & (s == ((nx32 - 1) & M32)))
    spur = elig & (ln > 0) & (la_r != 0) & (((la_r - ((s + ln) & M32)) & M32) < HALF)
    dt = t - lat_r
    fast = elig & ~spur & nad & (dup_r >= 2) & (la_r == s) & (dt >= 0) & (dt < 0.02)
    irtt = stats["_irtt_pre"]
    dtn = t - sq.nst_pre
    ooo = elig & ~spur & ~fast & nad & (dtn >= 0) & (dtn < np.where(irtt > 0, irtt, 0.003)) & (nx32 != sq.nxt32)
    retr = elig & (spur | fast | (nad & ~ooo))
    af |= np.where(spur, SPUR, 0) | np.where(fast, FAST, 0) | np.where(ooo, OOO, 0) | np.where(retr, RETR, 0)
    return af, bad


def _irtt(wk: _Walk) -> tuple[np.ndarray, np.ndarray]:
    """(iRTT in force before each position, -1 if none; iRTT output per position, NaN if none)."""
    sa = wk.fl & (SYN | ACK)
    mru = ffill_index(sa == SYN, wk.segstart, inclusive=False)
    q = (sa == ACK) & (mru >= 0)
    cand = wk.t - wk.t[np.maximum(mru, 0)]
    done = ffill_index(q & (cand >= 0), wk.segstart, inclusive=False) >= 0
    setter = q & ~done
    pre = _pick(ffill_index(setter, wk.segstart, inclusive=False), cand, -1.0)
    return pre, np.where(setter, cand, np.nan)


def _ack_rtt(wk: _Walk, sq: _Seq) -> tuple[np.ndarray, np.ndarray]:
    """(tcp.analysis.ack_rtt per position, NaN if none; True where the 1000-entry cap would bite)."""
    n = wk.n
    rtt = np.full(n, np.nan)
    capped = np.zeros(n, bool)
    listed = (wk.ln > 0) | wk.sf
    for x in (0, 1):
        ent = np.flatnonzero(sq.dx[x] & listed)
        if not ent.size:
            continue
        start = ent + 1
        fine = start < wk.segend[ent]
        start = np.where(fine, start, n)
        rem = np.where(fine, _Acks(wk, sq, x, False).first_covering(start, sq.nxt_u[ent], False), n)
        delta = np.zeros(n + 1, np.int64)
        delta[ent] += 1
        np.subtract.at(delta, rem, 1)
        cum = np.cumsum(delta[:n])
        base = np.where(wk.segstart > 0, cum[np.maximum(wk.segstart - 1, 0)], 0)
        capped[ent] = (cum[ent] - 1 - base[ent]) >= UNACKED_MAX
        remc = np.minimum(rem, n - 1)
        hit = (rem < n) & (wk.a[remc] == sq.nxt32[ent]) & (wk.t[remc] != wk.t[ent])
        he, hr = ent[hit], rem[hit]
        o = np.argsort(hr, kind="stable")
        he, hr = he[o], hr[o]
        first = np.r_[True, hr[1:] != hr[:-1]] if hr.size else np.zeros(0, bool)
        rtt[hr[first]] = wk.t[hr[first]] - wk.t[he[first]]
    return rtt, capped


def analyze_tcp_sequences_vec(conv: np.ndarray, dirn: np.ndarray, *, seq: np.ndarray, ack: np.ndarray,
                              flags: np.ndarray, win: np.ndarray, seglen: np.ndarray, ts: np.ndarray,
                              wscale: np.ndarray, use_jit: bool = False, order: np.ndarray | None = None,
                              rows: np.ndarray | None = None, stats: dict[str, Any] | None = None,
                              fallback: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flag every TCP segment as tshark 4.0 would — vectorised twin of ``tcp.analyze_tcp_sequences``.

    Args:
        conv, dirn, seq, ack, flags, win, seglen, ts, wscale, order, rows: exactly as
            :func:`netghost.forensics.tcp.analyze_tcp_sequences`.
        use_jit: ignored (accepted so both functions are interchangeable).
        stats: when given, filled with the fixpoint iteration counts and the fallback size
            (``fallback_conversations``/``fallback_packets``, ``fallback_conv_ids``).
        fallback: re-run the conversations outside the vectorised premises through the sequential
            reference (tests turn it off to check the vectorised result everywhere else).

    Returns:
        (analysis flag bitmask, sub-stream index, iRTT or NaN, ack_rtt or NaN) per segment, in the
        input order — identical to the sequential reference.
    """
    del use_jit
    st: dict[str, Any] = {} if stats is None else stats
    n = conv.shape[0]
    if order is None:
        order = np.argsort(conv, kind="stable")
    at = np.arange(n, dtype=np.int64)[order] if rows is None else np.asarray(rows)[order]
    i64 = [np.asarray(c)[at].astype(np.int64) for c in (seq, ack, flags, win, seglen, wscale)]
    wk = _Walk(np.asarray(conv)[order].astype(np.int64), np.asarray(dirn)[order] == 1, i64[0] & M32, i64[1] & M32,
               i64[2], i64[3], i64[4], np.asarray(ts)[at].astype(np.float64), i64[5])
    out_f, out_s, out_r, out_a = np.zeros(n, np.int64), np.zeros(n, np.int64), np.full(n, np.nan), np.full(n, np.nan)
    if not n:
        return out_f, out_s, out_r, out_a
    sub, reused = _streams(wk, st)
    sq = _Seq(wk, st)
    st["_irtt_pre"], irtt_out = _irtt(wk)
    af, bad = _flags(wk, sq, st)
    del st["_irtt_pre"]
    rtt, capped = _ack_rtt(wk, sq)
    af |= np.where(reused, REUSED, 0)
    out_f[order], out_s[order], out_r[order], out_a[order] = af, sub, irtt_out, rtt
    bad |= capped | (wk.t < 0)
    badc = np.zeros(int(wk.cv.max()) + 1, bool)
    badc[wk.cv[bad]] = True
    redo = badc[wk.cv]
    st["fallback_conversations"] = int(badc.sum())
    st["fallback_packets"] = int(redo.sum())
    st["fallback_conv_ids"] = np.flatnonzero(badc)
    if fallback and redo.any():
        fr = _reference(wk, np.flatnonzero(redo))
        idx = order[redo]
        out_f[idx], out_s[idx], out_r[idx], out_a[idx] = fr
    return out_f, out_s, out_r, out_a


def _reference(wk: _Walk, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The sequential reference kernel (``tcp._kernel``, pure Python) over walk positions ``pos``.

    Called directly rather than through ``analyze_tcp_sequences`` so that this module can itself be
    that function's pure path without recursing.
    """
    from netghost.forensics.tcp import _kernel  # noqa: PLC0415  only needed for the rare fallback

    m = pos.shape[0]
    cv, d, s, a, fl, w, ln, t, ws = (c[pos].tolist() for c in (wk.cv, wk.d1.astype(np.int64), wk.s, wk.a, wk.fl,
                                                                wk.w, wk.ln, wk.t, wk.wsv))
    lof, lsub, lirtt, lrtt = [0] * m, [0] * m, [float("nan")] * m, [float("nan")] * m
    ident = range(m)
    _kernel(ident, ident, cv, d, s, a, fl, w, ln, t, ws, lof, lsub, lirtt, lrtt)
    return (np.asarray(lof, np.int64), np.asarray(lsub, np.int64), np.asarray(lirtt, np.float64),
            np.asarray(lrtt, np.float64))
