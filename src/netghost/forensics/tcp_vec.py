"""tshark 4.0 TCP sequence analysis in pure numpy: same inputs and outputs as
:func:`netghost.forensics.tcp.analyze_tcp_sequences`, no Python loop per packet.

Why: the engine's fallback when the compiled kernel is unavailable must not walk packets in Python
(~5 µs each). Every per-direction state variable of ``tcp._kernel`` is rewritten as a scan over the
walk order (conversation-contiguous, capture order) split into *segments* (tshark streams:
conversation changes and port-reuse SYNs), where each position knows the previous packet of its own
and of the reverse direction:

* last-value state (window, last ACK and its time, "previous was a SYN", previous peer flags, window
  scale, iRTT) is a forward fill of "index of the last event" (``nextseqtime``, read only by the
  out-of-order rule, is a binary search among the positions that advanced ``nextseq``);
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
* the dup-ACK counter is "dup ACKs since the last reset or park", evaluated only where a rule reads
  it (fast retransmission, ACKed-unseen) by binary searches in the sorted event positions;
* ``ack_rtt``: every listed segment's removal time is the first peer packet whose ACK covers it (a
  "first position reaching x" search); a sample is the oldest exact match removed at that ACK.

Comparisons are exactly the kernel's modulo-2**32 ones wherever both operands are known per packet;
unwrapped 64-bit values are used only for the scans and searches. Those agree with the modular rules
when every compared pair is within 2**29 (a segment vs nextseq, a listed segment vs nextseq until
it is ACKed, a lagging boundary vs nextseq), a stream direction carries < 8 GB, and the unacked
list stays below tshark's 1000-entry cap — all checked per packet. Conversations breaking a premise
(garbage sequence numbers jumping by ~2**31, a SYN-ACK changing ISN mid-stream, ``nextseq``
wrapping to exactly 0 before another segment of that direction, a probe before any sequence is
known, >= 1000 unacked segments, negative timestamps) are re-run through the sequential reference —
the documented hybrid last resort; ``stats["fallback_packets"]`` counts them: 0 of 1,878,675 TCP
segments of the 2M-packet benchmark capture, 71 of ~27,000 corpus segments (two KakaoTalk
conversations whose FIN retries jump 1.9e9, the tcp-fastopen file's ISN change). Fixpoint
iterations on the benchmark: 1 (streams), 1 (probes), 1 pointer-doubling round.
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
NEAR = 1 << 29  # how far apart two compared sequence numbers may be for the unwrapped compare
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
    """``arr[idx]``, ``fill`` where ``idx`` is -1 (the appended last element)."""
    out: np.ndarray = np.append(arr, np.asarray(fill, arr.dtype))[idx]
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

    def set_segments(self, bnd: np.ndarray) -> None:
        self.bnd = bnd
        starts = np.flatnonzero(bnd)
        self.starts = starts
        self.seg = np.cumsum(bnd, dtype=np.int64) - 1
        self.segstart = starts[self.seg]
        self.segend = np.append(starts[1:], self.n)[self.seg]
        self.segkey = self.seg << np.int64(35)

    def first_in_seg(self, mask: np.ndarray) -> np.ndarray:
        """Per position, the first position of its segment where ``mask`` holds (``n`` if none)."""
        if not self.n:
            return self.pos
        per = np.minimum.reduceat(np.where(mask, self.pos, self.n), self.starts)
        out: np.ndarray = per[self.seg]
        return out


def _first_at_or_after(p: np.ndarray, start: np.ndarray, end: np.ndarray, n: int) -> np.ndarray:
    """First element of sorted positions ``p`` in ``[start, end)``, else ``n``."""
    j = np.searchsorted(p, start, "left")
    v = p[np.minimum(j, p.shape[0] - 1)] if p.size else np.full(start.shape[0], n)
    out: np.ndarray = np.where((j < p.shape[0]) & (v < end), v, n)
    return out


def _streams(wk: _Walk, stats: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Split conversations at port-reuse SYNs (fixpoint); returns (sub index, REUSED mask).

    tshark's base sequence of a direction is the seq of its last SYN in the stream, else the first
    value learned (own first segment ``seq-1``, or the peer's first ACK ``ack-1``). Only SYN
    positions need it, so it is evaluated there, from per-stream "first segment of x" searches.
    """
    n = wk.n
    syn = np.flatnonzero(wk.syn & ~wk.convstart)
    d = wk.d1[syn]
    own = [np.flatnonzero(~wk.d1), np.flatnonzero(wk.d1)]
    ackers = [np.flatnonzero(wk.d1 & wk.ackf), np.flatnonzero(~wk.d1 & wk.ackf)]  # ACKs learning x's base
    all_syn = np.flatnonzero(wk.syn)
    same_dir_syn = [all_syn[~wk.d1[all_syn]], all_syn[wk.d1[all_syn]]]
    cstart = np.flatnonzero(wk.convstart)
    pure = ~wk.ackf[syn]
    trig = np.zeros(syn.shape[0], bool)
    it = 0
    while True:
        it += 1
        bd = np.union1d(cstart, syn[trig])
        ends = np.append(bd[1:], n)
        j = np.searchsorted(bd, syn - 1, "right") - 1  # the stream holding the previous position
        lo = bd[j]
        pre_set = np.zeros(syn.shape[0], bool)
        pre_val = np.zeros(syn.shape[0], np.int64)
        for x in (0, 1):
            m = d == bool(x)
            k, jj, lok = syn[m], j[m], lo[m]
            fx = _first_at_or_after(own[x], bd, ends, n)[jj]
            fa = _first_at_or_after(ackers[x], bd, ends, n)[jj]
            sp = same_dir_syn[x]
            i = np.searchsorted(sp, k, "left") - 1
            prev = sp[np.maximum(i, 0)] if sp.size else k
            has_prev = (i >= 0) & (prev >= lok)
            init = np.where(fx < fa, wk.s[np.minimum(fx, n - 1)] - 1, wk.a[np.minimum(fa, n - 1)] - 1)
            pre_set[m] = has_prev | (np.minimum(fx, fa) <= k - 1)
            pre_val[m] = np.where(has_prev, wk.s[prev], init) & M32
        differs = pre_set & (wk.s[syn] != pre_val)
        new_trig = differs & pure
        if np.array_equal(new_trig, trig):
            break
        trig = new_trig
    stats["stream_iterations"] = it
    bnd = wk.convstart.copy()
    bnd[syn[trig]] = True
    wk.set_segments(bnd)
    sub = wk.seg - wk.seg[cstart[np.cumsum(wk.convstart) - 1]]
    reused = np.zeros(n, bool)
    reused[syn[differs]] = True
    return sub, reused


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
        self.dx = dx = [~wk.d1, wk.d1]
        ex = [ffill_index(m, wk.segstart, inclusive=False, pos=wk.pos) for m in dx]
        self.ps = _by_dir(wk.d1, ex).astype(np.int32)
        self.pr = pr = _by_dir(wk.d1, ex, own=False).astype(np.int32)
        del ex
        # unwrapped = running sum of signed 32-bit steps between a direction's consecutive segments,
        # relative to its first one; s0 maps it back to 32 bits
        self.s0 = [s[np.minimum(wk.first_in_seg(m), n - 1)] for m in dx]
        ps = self.ps
        step = s - s[np.maximum(ps, 0)]
        step += HALF
        step &= M32
        step -= HALF
        step[ps < 0] = 0
        c1 = np.cumsum(np.where(wk.d1, step, 0))
        su = np.cumsum(step)
        su -= c1  # direction-0 running sum
        del step
        before = wk.segstart - 1
        for run in (su, c1):  # restart both sums at each stream
            np.subtract(run, np.where(before >= 0, run[np.maximum(before, 0)], 0), out=run)
        su = np.where(wk.d1, c1, su)
        del c1, before
        # searchable values must stay in [0, 2**34): 8 GB per stream direction, else fall back
        self.bad = np.abs(su) >= (1 << 33) - (1 << 31)
        su += wk.ln
        su += wk.sf
        su += OFF
        self.nxt_u = su
        self.nxt32 = (s + wk.ln + wk.sf) & M32
        # zero-window probes: candidates = 1-byte segments into a zero window; fixpoint on nextseq
        self.win_r = _pick(pr, wk.w, -1)
        cand = (wk.ln == 1) & (self.win_r == 0)
        excl = cand.copy()
        it = 0
        while True:
            it += 1
            self._nextseq(wk, excl)
            zwp = cand & (s == self.nx32)
            adv = (self.nxpre == NONE) | (su > self.nxpre)
            if not cand.any():
                break
            new = cand & (zwp | ~adv)
            if np.array_equal(new, excl):
                break
            excl = new
        stats["zwp_iterations"] = it
        del self.s0
        self.zwp = zwp
        self.raised = ~excl & adv
        self.bad |= zwp & (self.nxpre == NONE)
        # modular "seq+len beyond nextseq" equals the unwrapped compare while the step is < 2**29
        self.bad |= (self.nxpre != NONE) & (np.abs(su - self.nxpre) >= NEAR)
        # nextseq wrapping to exactly 0 reads as "unknown" to the kernel: only a later segment of that
        # direction notices (e.g. a refused connection's RST with seq 0 is harmless)
        zero = self.raised & (self.nxt32 == 0)
        if zero.any():
            self.bad |= _by_dir(wk.d1, [ffill_index(zero & m, wk.segstart, inclusive=False, pos=wk.pos) for m in dx]) >= 0
        self._rpos = [np.flatnonzero(self.raised & m) for m in dx]

    def _nextseq(self, wk: _Walk, excl: np.ndarray) -> None:
        """NX[x]: nextseq of direction x after every position (+OFF, NONE = unknown); own pre-state."""
        self.nx_u = []
        self.nx32_at = []
        for m, s0 in zip(self.dx, self.s0, strict=True):
            v = seg_running_max(np.where(m & ~excl, self.nxt_u, NONE), wk.segkey)
            v32 = v + s0
            v32 -= OFF
            v32 &= M32
            v32[v == NONE] = 0
            self.nx_u.append(v)
            self.nx32_at.append(v32)
        self.nx32prev = [_shift(v, self.first, 0) for v in self.nx32_at]  # NX[x] before each position
        self.nxpre = _by_dir(wk.d1, [_shift(v, self.first, NONE) for v in self.nx_u])
        self.nx32 = _by_dir(wk.d1, self.nx32prev)

    def nst_pre(self, wk: _Walk, k: np.ndarray) -> np.ndarray:
        """tshark's nextseqtime of the sender's direction before positions ``k``."""
        out = np.zeros(k.shape[0])
        for x, rp in enumerate(self._rpos):
            m = wk.d1[k] == bool(x)
            kk = k[m]
            j = np.searchsorted(rp, kk, "left") - 1
            hit = j >= 0
            hit[hit] = rp[j[hit]] >= wk.segstart[kk[hit]]
            out[np.flatnonzero(m)[hit]] = wk.t[rp[j[hit]]]
        return out


C2 = np.int64(1 << 33)


class _Acks:
    """A direction's ACKs mapped into the peer's unwrapped sequence space, as searchable arrays.

    ``plain`` holds ACKs within 2**30 of the peer's nextseq (or far below it): "ACK covers x" is then
    ``a_u >= x``. ``wild`` holds ACKs 2**30..2**31 above nextseq, for which the kernel's modulo
    compare "covers x" means ``x >= a_u - 2**31`` instead; stored as ``C2 + 2**31 - a_u`` so that both
    are "first value reaching a threshold" searches.
    """

    def __init__(self, wk: _Walk, sq: _Seq, x: int) -> None:
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


def _next_same_seq(wk: _Walk, zwp: np.ndarray, brk: list[np.ndarray], m32: list[np.ndarray]) -> list[np.ndarray]:
    """For each break of direction x: the first later non-probe segment of x in its stream with seq == M."""
    n = wk.n
    qk = [((wk.seg[b] * 2 + x) << np.int64(32)) | m for x, (b, m) in enumerate(zip(brk, m32, strict=True))]
    allq = np.unique(np.concatenate(qk))
    key = (wk.seg * 2 + wk.d1) << np.int64(32)
    key |= wk.s
    cand = np.flatnonzero(np.isin(key, allq) & ~zwp) if allq.size else np.zeros(0, np.int64)
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
        j = lo + _count_le(p1, lo, hi, b)
        out.append(np.where(j < hi, p1[np.minimum(j, nk - 1)], n))
    return out


def _count_le(p: np.ndarray, lo: np.ndarray, hi: np.ndarray, b: np.ndarray) -> np.ndarray:
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


class _DupCounter:
    """One direction's dup-ACK counter, evaluated at chosen positions only.

    tshark's ``dupacknum`` counts dup ACKs since the last reset (the sender's ACK number moved) or
    "park" (an ACKed-unseen check by the peer sets it to -1; the next dup ACK makes it 1). Resets,
    parks and dup ACKs are sorted position lists, so a value is three binary searches.
    """

    def __init__(self, wk: _Walk, resets: np.ndarray, parks: np.ndarray, dups: np.ndarray) -> None:
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


def _flags(wk: _Walk, sq: _Seq, acks: list[_Acks], irtt: np.ndarray,
           stats: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
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
        li = ffill_index(ev, wk.segstart, pos=wk.pos)
        wsc.append(_pick(li, np.where(own & (wk.wsv >= 0), wk.wsv, -2), -1))
    wsc_r = _by_dir(d1, wsc, own=False)
    nz = ~zwp
    ka = nz & (ln <= 1) & (s == ((nx32 - 1) & M32)) & ctl0
    same = nz & (ln == 0) & (s == nx32) & (a == la_d) & ctl0
    # the peer's window in bytes (a shift of 32+ leaves nothing of a 16-bit window below 2**32)
    sh = np.where(fa_r | (wsc_r == -2), 0, np.clip(wsc_r, 0, 32)).astype(np.int64)
    room = np.maximum(win_r, 0).astype(np.int64) << sh
    room[sh >= 32] = 0
    room += la_r
    room &= M32
    wfull = nz & (ln > 0) & (wsc_r != -1) & ctl0 & (win_r >= 0) & (((s + ln) & M32) == room)
    del sh, room, wsc, fa_r
    lf_ka, lf_zwp = _pick(pr, ka, False), _pick(pr, zwp, False)
    dup = same & (w != 0) & (w == win_d) & ~lf_ka
    af = np.zeros(wk.n, np.int64)
    for bit, m in ((ZWP, zwp), (ZW, nz & (w == 0) & ctl0), (KA, ka), (WFULL, wfull), (DUPACK, dup),
                   (LOST, nz & (nx32 != 0) & _circ_gt(s, nx32) & ((fl & RST) == 0)),
                   (WUPD, same & (w != 0) & (w != win_d)), (KAACK, same & (w != 0) & (w == win_d) & lf_ka),
                   (ZWPACK, same & (w == 0) & (w == win_d) & lf_zwp)):
        np.bitwise_or(af, bit, out=af, where=m)
    del wfull, same, win_d, lf_ka, lf_zwp, wsc_r
    # maxseqtobeacked per direction x, then ACKed-unseen and the dup-ACK counters
    brks = [np.flatnonzero(sq.dx[x] & nz & (sq.nxpre != NONE) & (s != nx32) & sq.raised) for x in (0, 1)]
    same_seq = _next_same_seq(wk, zwp, brks, [nx32[b] for b in brks])
    counters = []
    bad = sq.bad.copy()
    moved = a != la_d  # resets the sender's dup-ACK counter
    del la_d
    for x in (0, 1):
        own = sq.dx[x]
        brk = brks[x]
        mu, m32 = sq.nxpre[brk], nx32[brk]
        start = brk + 1
        fine = start < wk.segend[brk]
        start = np.where(fine, start, wk.n)
        e = np.minimum(same_seq[x], acks[x].first_covering(start, mu, True, True))
        e = np.where(fine, e, wk.n)
        live = _live_breaks(wk, brk, e, stats) & fine
        lb, le, lm = brk[live], np.minimum(e[live], wk.segend[brk[live]] - 1), m32[live]
        bad[lb] |= (sq.nx_u[x][le] - mu[live]) >= NEAR  # the boundary stays near nextseq while it lags
        nxp = sq.nx32prev[x]
        if lb.size:
            mk = np.full(wk.n, -1, np.int32)
            mk[lb + 1] = np.arange(lb.shape[0])
            last = np.maximum.accumulate(mk)
            lastc = np.maximum(last, 0)
            cover = (last >= 0) & (wk.pos <= le[lastc])
            mt = np.where(cover, lm[lastc], nxp)
            del mk, last, lastc, cover
        else:
            mt = nxp
        cond = sq.dx[1 - x] & wk.ackf & (mt != 0) & _circ_gt(a, mt)
        condp = np.flatnonzero(cond)
        lag = mt[condp] != nxp[condp]
        park = condp[~lag]
        ctr = _DupCounter(wk, own & moved, park, np.flatnonzero(dup & own))
        counters.append(ctr)
        prev = park - 1
        pre0 = np.where(prev >= wk.segstart[park], ctr.value(np.maximum(prev, 0)), 0) == 0
        hit = np.concatenate((condp[lag], park[pre0]))
        af[hit] |= ACKLOST
        del mt, cond
    # retransmission family
    elig = ((ln > 0) | wk.sf) & ~ka
    nad = (nx32 != 0) & _circ_gt(nx32, s) & ~((ln > 1) & (s == ((nx32 - 1) & M32)))
    spur = elig & (ln > 0) & (la_r != 0) & (((la_r - ((s + ln) & M32)) & M32) < HALF)
    dt = t - lat_r
    fast = elig & ~spur & nad & (la_r == s) & (dt >= 0) & (dt < 0.02)
    fp = np.flatnonzero(fast)
    ok = np.zeros(fp.shape[0], bool)
    for x in (0, 1):  # the peer's dup-ACK counter (after this segment's own ACKed-unseen step)
        m = d1[fp] == (x == 0)
        ok[m] = counters[x].value(fp[m]) >= 2
    fast[fp[~ok]] = False
    ooo = elig & ~spur & ~fast & nad & (nx32 != sq.nxt32)
    op = np.flatnonzero(ooo)
    dtn = t[op] - sq.nst_pre(wk, op)
    ooo[op[~((dtn >= 0) & (dtn < np.where(irtt[op] > 0, irtt[op], 0.003)))]] = False
    retr = elig & (spur | fast | (nad & ~ooo))
    for bit, m in ((SPUR, spur), (FAST, fast), (OOO, ooo), (RETR, retr)):
        np.bitwise_or(af, bit, out=af, where=m)
    return af, bad


def _irtt(wk: _Walk) -> tuple[np.ndarray, np.ndarray]:
    """(iRTT in force before each position, -1 if none; iRTT output per position, NaN if none)."""
    sa = wk.fl & (SYN | ACK)
    mru = ffill_index(sa == SYN, wk.segstart, inclusive=False, pos=wk.pos)
    q = (sa == ACK) & (mru >= 0)
    cand = wk.t - wk.t[np.maximum(mru, 0)]
    done = ffill_index(q & (cand >= 0), wk.segstart, inclusive=False, pos=wk.pos) >= 0
    setter = q & ~done
    pre = _pick(ffill_index(setter, wk.segstart, inclusive=False, pos=wk.pos), cand, -1.0)
    return pre, np.where(setter, cand, np.nan)


def _ack_rtt(wk: _Walk, sq: _Seq, acks: list[_Acks]) -> tuple[np.ndarray, np.ndarray]:
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
        rem = np.where(fine, acks[x].first_covering(start, sq.nxt_u[ent], False, False), n)
        delta = np.zeros(n + 1, np.int64)
        delta[ent] += 1
        np.subtract.at(delta, rem, 1)
        cum = np.cumsum(delta[:n])
        base = np.where(wk.segstart > 0, cum[np.maximum(wk.segstart - 1, 0)], 0)
        capped[ent] = (cum[ent] - 1 - base[ent]) >= UNACKED_MAX
        # an unacked segment stays near nextseq while listed (else the ACK classes are not exact)
        capped[ent] |= (sq.nx_u[x][np.where(rem < n, rem, wk.segend[ent] - 1)] - sq.nxt_u[ent]) >= NEAR
        remc = np.minimum(rem, n - 1)
        hit = (rem < n) & (wk.a[remc] == sq.nxt32[ent]) & (wk.t[remc] != wk.t[ent])
        he, hr = ent[hit], rem[hit]
        o = np.argsort(hr, kind="stable")
        he, hr = he[o], hr[o]
        first = np.r_[True, hr[1:] != hr[:-1]] if hr.size else np.zeros(0, bool)
        rtt[hr[first]] = wk.t[hr[first]] - wk.t[he[first]]
    return rtt, capped


def _gather(conv: np.ndarray, dirn: np.ndarray, fields: tuple[np.ndarray, ...], order: np.ndarray,
            at: np.ndarray) -> _Walk:
    """Header fields in walk order: 32-bit seq/ack as int64, small fields as int32."""
    seq, ack, flags, win, seglen, ts, wscale = (np.asarray(c) for c in fields)
    s, a = seq[at].astype(np.int64), ack[at].astype(np.int64)
    np.bitwise_and(s, M32, out=s)
    np.bitwise_and(a, M32, out=a)
    fl, w, ln, ws = (c[at].astype(np.int32) for c in (flags, win, seglen, wscale))
    return _Walk(np.asarray(conv)[order].astype(np.int64), np.asarray(dirn)[order] == 1, s, a, fl, w, ln,
                 ts[at].astype(np.float64), ws)


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
    wk = _gather(conv, dirn, (seq, ack, flags, win, seglen, ts, wscale), order, at)
    out_f, out_s, out_r, out_a = np.zeros(n, np.int64), np.zeros(n, np.int64), np.full(n, np.nan), np.full(n, np.nan)
    if not n:
        return out_f, out_s, out_r, out_a
    sub, reused = _streams(wk, st)
    sq = _Seq(wk, st)
    irtt_pre, irtt_out = _irtt(wk)
    acks = [_Acks(wk, sq, 0), _Acks(wk, sq, 1)]
    af, bad = _flags(wk, sq, acks, irtt_pre, st)
    rtt, capped = _ack_rtt(wk, sq, acks)
    del acks
    np.bitwise_or(af, REUSED, out=af, where=reused)
    out_f[order], out_s[order], out_r[order], out_a[order] = af, sub, irtt_out, rtt
    bad |= capped | (wk.t < 0)
    bad_ids = np.unique(wk.cv[bad])
    redo = np.isin(wk.cv, bad_ids) if bad_ids.size else np.zeros(n, bool)
    st["fallback_conversations"] = int(bad_ids.size)
    st["fallback_packets"] = int(redo.sum())
    st["fallback_conv_ids"] = bad_ids
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
