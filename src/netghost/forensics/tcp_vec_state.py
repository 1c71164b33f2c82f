"""Walk-order state for :mod:`netghost.forensics.tcp_vec` (internal): header fields gathered per
conversation, the stream (port-reuse) split, the unwrapped sequence space and ``nextseq``.

Positions are indices into the walk order (each conversation contiguous, capture order inside);
*segments* are tshark streams. Every array has one entry per position.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netghost.forensics.tcp import ACK, FIN, SYN
from netghost.forensics.tcp_vec_scan import NONE, ffill_index, seg_running_max

M32 = np.int64(0xFFFFFFFF)
HALF = np.int64(0x80000000)
OFF = np.int64(1 << 32)  # unwrapped sequence values are stored + OFF so that they are >= 0
NEAR = 1 << 29  # how far apart two compared sequence numbers may be for the unwrapped compare
WILD = 1 << 30
MAX_ITER = 16  # fixpoint rounds before the conversations still changing are handed to the reference


def circ_gt(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """tshark's ``GT_SEQ``: x is after y modulo 2**32 (the kernel's ``0 < (x - y) & M32 < HALF``)."""
    d = (x - y) & M32
    out: np.ndarray = (d > 0) & (d < HALF)
    return out


def shift(arr: np.ndarray, first: np.ndarray, fill: Any) -> np.ndarray:
    """``arr[k-1]``, or ``fill`` where ``k`` starts a segment."""
    out = np.empty_like(arr)
    out[1:] = arr[:-1]
    out[first] = fill
    return out


def pick(idx: np.ndarray, arr: np.ndarray, fill: Any) -> np.ndarray:
    """``arr[idx]``, ``fill`` where ``idx`` is -1 (the appended last element)."""
    out: np.ndarray = np.append(arr, np.asarray(fill, arr.dtype))[idx]
    return out


class Walk:
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
        self.unsettled = np.zeros(n, bool)  # conversations whose stream split did not converge

    def set_segments(self, bnd: np.ndarray) -> None:
        """Fix the streams: ``bnd`` is True where one starts (conversation start or port reuse)."""
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


def first_at_or_after(p: np.ndarray, start: np.ndarray, end: np.ndarray, n: int) -> np.ndarray:
    """First element of sorted positions ``p`` in ``[start, end)``, else ``n``."""
    j = np.searchsorted(p, start, "left")
    v = p[np.minimum(j, p.shape[0] - 1)] if p.size else np.full(start.shape[0], n)
    out: np.ndarray = np.where((j < p.shape[0]) & (v < end), v, n)
    return out


def streams(wk: Walk, stats: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
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
            fx = first_at_or_after(own[x], bd, ends, n)[jj]
            fa = first_at_or_after(ackers[x], bd, ends, n)[jj]
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
        if it == MAX_ITER:  # pathological chain: the conversations still changing go to the reference
            wk.unsettled = np.isin(wk.cv, wk.cv[syn[new_trig != trig]])
            break
        trig = new_trig
    stats["stream_iterations"] = it
    bnd = wk.convstart.copy()
    bnd[syn[trig]] = True
    wk.set_segments(bnd)
    sub = wk.seg - wk.seg[cstart[np.cumsum(wk.convstart) - 1]] if trig.any() else np.zeros(n, np.int64)
    reused = np.zeros(n, bool)
    reused[syn[differs]] = True
    return sub, reused


def by_dir(d1: np.ndarray, pair: list[np.ndarray], own: bool = True) -> np.ndarray:
    """Select per position the value of its own direction (or of the reverse one)."""
    out: np.ndarray = np.where(d1, pair[1], pair[0]) if own else np.where(d1, pair[0], pair[1])
    return out


class Seq:
    """Unwrapped sequence space per stream direction, ``nextseq`` (zero-window-probe fixpoint)."""

    def __init__(self, wk: Walk, stats: dict[str, Any]) -> None:
        n, s = wk.n, wk.s
        self.first = first = np.zeros(n, bool)
        first[wk.starts] = True
        self.dx = dx = [~wk.d1, wk.d1]
        ex = [ffill_index(m, wk.segstart, inclusive=False, pos=wk.pos) for m in dx]
        self.ps = by_dir(wk.d1, ex).astype(np.int32)
        self.pr = pr = by_dir(wk.d1, ex, own=False).astype(np.int32)
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
        self.win_r = pick(pr, wk.w, -1)
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
            if it == MAX_ITER:  # pathological chain of probes: unsettled conversations fall back
                self.bad |= np.isin(wk.cv, wk.cv[new != excl])
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
        zero = np.flatnonzero(self.raised & (self.nxt32 == 0))
        if zero.size:
            followed = np.zeros(n, bool)  # another segment of the same direction comes later
            followed[self.ps[self.ps >= 0]] = True
            self.bad[zero] |= followed[zero]
        self._rpos = [np.flatnonzero(self.raised & m) for m in dx]

    def _nextseq(self, wk: Walk, excl: np.ndarray) -> None:
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
        self.nx32prev = [shift(v, self.first, 0) for v in self.nx32_at]  # NX[x] before each position
        self.nxpre = by_dir(wk.d1, [shift(v, self.first, NONE) for v in self.nx_u])
        self.nx32 = by_dir(wk.d1, self.nx32prev)

    def nst_pre(self, wk: Walk, k: np.ndarray) -> np.ndarray:
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


def gather(conv: np.ndarray, dirn: np.ndarray, fields: tuple[np.ndarray, ...], order: np.ndarray,
            at: np.ndarray) -> Walk:
    """Header fields in walk order: 32-bit seq/ack as int64, small fields as int32."""
    seq, ack, flags, win, seglen, ts, wscale = (np.asarray(c) for c in fields)
    # fancy indexing already copies: the dtype conversions must not copy again
    s, a = seq[at].astype(np.int64, copy=False), ack[at].astype(np.int64, copy=False)
    np.bitwise_and(s, M32, out=s)
    np.bitwise_and(a, M32, out=a)
    fl, w, ln, ws = (c[at].astype(np.int32, copy=False) for c in (flags, win, seglen, wscale))
    return Walk(np.asarray(conv)[order].astype(np.int64, copy=False), np.asarray(dirn)[order] == 1, s, a, fl, w,
                ln, ts[at].astype(np.float64, copy=False), ws)


def irtt_state(wk: Walk) -> tuple[np.ndarray, np.ndarray]:
    """(iRTT in force before each position, -1 if none; iRTT output per position, NaN if none)."""
    sa = wk.fl & (SYN | ACK)
    mru = ffill_index(sa == SYN, wk.segstart, inclusive=False, pos=wk.pos)
    q = (sa == ACK) & (mru >= 0)
    cand = wk.t - wk.t[np.maximum(mru, 0)]
    done = ffill_index(q & (cand >= 0), wk.segstart, inclusive=False, pos=wk.pos) >= 0
    setter = q & ~done
    pre = pick(ffill_index(setter, wk.segstart, inclusive=False, pos=wk.pos), cand, -1.0)
    return pre, np.where(setter, cand, np.nan)


