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
rounds: 1 (streams), 1 (probes), 1 pointer-doubling round on the benchmark; at most 2, 3 and 3 on
2,000 Hypothesis-generated captures. Both fixpoints stop after 16 rounds; conversations still
changing then (a contrived chain of probes, see the tests) fall back, so the cost stays bounded.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netghost.forensics.tcp import (
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
from netghost.forensics.tcp_vec_acks import Acks, DupCounter, live_breaks, next_same_seq
from netghost.forensics.tcp_vec_scan import NONE, ffill_index
from netghost.forensics.tcp_vec_state import (
    HALF,
    M32,
    NEAR,
    Seq,
    Walk,
    by_dir,
    circ_gt,
    gather,
    irtt_state,
    pick,
    streams,
)

__all__ = ["analyze_tcp_sequences_vec"]


def _flags(wk: Walk, sq: Seq, acks: list[Acks], irtt: np.ndarray,
           stats: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Analysis bitmask per walk position (without REUSED) and the "falls back" mask."""
    s, a, fl, w, ln, t, d1 = wk.s, wk.a, wk.fl, wk.w, wk.ln, wk.t, wk.d1
    ps, pr, nx32, zwp = sq.ps, sq.pr, sq.nx32, sq.zwp
    ctl0 = (fl & (SYN | FIN | RST)) == 0
    win_d, win_r = pick(ps, w, -1), sq.win_r
    la_d, la_r, lat_r = pick(ps, a, 0), pick(pr, a, 0), pick(pr, t, 0.0)
    fa_r = pick(pr, wk.syn, True)
    wsc = []
    for xb in (False, True):
        own = d1 == xb
        ev = (wk.syn & own) | (wk.syn & wk.ackf & ~own & (wk.wsv < 0))
        li = ffill_index(ev, wk.segstart, pos=wk.pos)
        wsc.append(pick(li, np.where(own & (wk.wsv >= 0), wk.wsv, -2), -1))
    wsc_r = by_dir(d1, wsc, own=False)
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
    lf_ka, lf_zwp = pick(pr, ka, False), pick(pr, zwp, False)
    dup = same & (w != 0) & (w == win_d) & ~lf_ka
    af = np.zeros(wk.n, np.int64)
    for bit, m in ((ZWP, zwp), (ZW, nz & (w == 0) & ctl0), (KA, ka), (WFULL, wfull), (DUPACK, dup),
                   (LOST, nz & (nx32 != 0) & circ_gt(s, nx32) & ((fl & RST) == 0)),
                   (WUPD, same & (w != 0) & (w != win_d)), (KAACK, same & (w != 0) & (w == win_d) & lf_ka),
                   (ZWPACK, same & (w == 0) & (w == win_d) & lf_zwp)):
        np.bitwise_or(af, bit, out=af, where=m)
    del wfull, same, win_d, lf_ka, lf_zwp, wsc_r
    # maxseqtobeacked per direction x, then ACKed-unseen and the dup-ACK counters
    brks = [np.flatnonzero(sq.dx[x] & nz & (sq.nxpre != NONE) & (s != nx32) & sq.raised) for x in (0, 1)]
    same_seq = next_same_seq(wk, zwp, brks, [nx32[b] for b in brks])
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
        live = live_breaks(wk, brk, e, stats) & fine
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
        cond = sq.dx[1 - x] & wk.ackf & (mt != 0) & circ_gt(a, mt)
        condp = np.flatnonzero(cond)
        lag = mt[condp] != nxp[condp]
        park = condp[~lag]
        ctr = DupCounter(wk, own & moved, park, np.flatnonzero(dup & own))
        counters.append(ctr)
        prev = park - 1
        pre0 = np.where(prev >= wk.segstart[park], ctr.value(np.maximum(prev, 0)), 0) == 0
        hit = np.concatenate((condp[lag], park[pre0]))
        af[hit] |= ACKLOST
        del mt, cond
    # retransmission family
    elig = ((ln > 0) | wk.sf) & ~ka
    nad = (nx32 != 0) & circ_gt(nx32, s) & ~((ln > 1) & (s == ((nx32 - 1) & M32)))
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


def _ack_rtt(wk: Walk, sq: Seq, acks: list[Acks]) -> tuple[np.ndarray, np.ndarray]:
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
        delta = np.bincount(ent, minlength=n + 1) - np.bincount(rem, minlength=n + 1)
        cum = np.cumsum(delta[:n])
        before = wk.segstart[ent] - 1
        base = np.where(before >= 0, cum[np.maximum(before, 0)], 0)
        capped[ent] = (cum[ent] - 1 - base) >= UNACKED_MAX
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


def analyze_tcp_sequences_vec(conv: np.ndarray, dirn: np.ndarray, *, seq: np.ndarray, ack: np.ndarray,
                              flags: np.ndarray, win: np.ndarray, seglen: np.ndarray, ts: np.ndarray,
                              wscale: np.ndarray, order: np.ndarray | None = None,
                              rows: np.ndarray | None = None, stats: dict[str, Any] | None = None,
                              fallback: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flag every TCP segment as tshark 4.0 would — vectorised twin of ``tcp.analyze_tcp_sequences``.

    Args:
        conv, dirn, seq, ack, flags, win, seglen, ts, wscale, order, rows: exactly as
            :func:`netghost.forensics.tcp.analyze_tcp_sequences`.
        stats: when given, filled with the fixpoint iteration counts and the fallback size
            (``fallback_conversations``/``fallback_packets``, ``fallback_conv_ids``).
        fallback: re-run the conversations outside the vectorised premises through the sequential
            reference (tests turn it off to check the vectorised result everywhere else).

    Returns:
        (analysis flag bitmask, sub-stream index, iRTT or NaN, ack_rtt or NaN) per segment, in the
        input order — identical to the sequential reference.
    """
    st: dict[str, Any] = {} if stats is None else stats
    n = conv.shape[0]
    if order is None:
        order = np.argsort(conv, kind="stable")
    at = order if rows is None else np.asarray(rows)[order]
    wk = gather(conv, dirn, (seq, ack, flags, win, seglen, ts, wscale), order, at)
    out_f, out_s, out_r, out_a = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n), np.empty(n)
    if not n:
        return out_f, out_s, out_r, out_a
    sub, reused = streams(wk, st)
    sq = Seq(wk, st)
    irtt_pre, irtt_out = irtt_state(wk)
    acks = [Acks(wk, sq, 0), Acks(wk, sq, 1)]
    af, bad = _flags(wk, sq, acks, irtt_pre, st)
    rtt, capped = _ack_rtt(wk, sq, acks)
    del acks
    np.bitwise_or(af, REUSED, out=af, where=reused)
    out_f[order], out_s[order], out_r[order], out_a[order] = af, sub, irtt_out, rtt
    bad |= capped | (wk.t < 0) | wk.unsettled
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


def _reference(wk: Walk, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
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
