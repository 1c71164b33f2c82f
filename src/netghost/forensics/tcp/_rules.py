"""tshark 4.0's TCP sequence analysis (``tcp_analyze_sequence_number``), in its own order: the home of the rules.

This file is where the Wireshark rules are written for a reader: one pass over each conversation's
segments in capture order, per-direction state held in two-slot lists (index ``d`` is the sender's
direction, ``r`` the receiver's), each rule a few lines under the name tshark gives its flag. It is
also the product's pure path: :func:`analyze_tcp_sequences` runs it when the compiled kernel is not
built (no C compiler at install) or ``NETGHOST_NO_COMPILED=1`` is set.

The compiled kernel (``_compiled.pyx`` with ``_compiled_rules.pxi``) is a C port of :func:`run_rules`,
statement for statement, fused with the conversation table and the stream aggregates so that a 2M
packet capture is analysed in a fraction of a second. Tests hold it to this file on the whole corpus,
on the tshark truth files and on generated segment sequences: a rule changes here first, then there.

Why not the earlier vectorised numpy version as the pure path: measured on the 2,000,000-packet bench
capture without the compiled kernels, it made the whole run 10.1 s CPU against 16.9 s with this loop,
for 860 lines that restated every rule a third time as segmented scans and fixpoints. The pure path
only serves machines that could not compile the extension, where this loop still beats tshark (24 s
on the same capture); one readable statement of the rules is worth more than that 1.7x.

Rule notes (see PCAP-NOTES.md §2; deviations we know of are documented in FAITHFULNESS.md):

* seq/ack are raw 32-bit numbers; comparisons are modulo 2**32, "0" means "not seen yet".
* ``retransmission`` is also set on fast and spurious retransmissions, as tshark's display filter
  ``tcp.analysis.retransmission`` matches them.
* A pure SYN with a different ISN on a conversation whose base sequence is known starts a new
  stream and is flagged ``reused_ports``.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from netghost.forensics.accel import compiled
from netghost.forensics.tcp._flags import (
    ACK,
    ACKLOST,
    DUPACK,
    FAST,
    FIN,
    HALF,
    KA,
    KAACK,
    LOST,
    M32,
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

__all__ = ["analyze_tcp_sequences", "compiled_fields", "compiled_tcp", "run_rules"]


def compiled_tcp() -> ModuleType | None:
    """The compiled kernel ``tcp._compiled``, or ``None`` (not built, or ``NETGHOST_NO_COMPILED=1``)."""
    return compiled("tcp._compiled")


def _ahead(x: int, ref: int) -> bool:
    """``x`` is after ``ref`` in 32-bit sequence space (tshark's ``GT_SEQ``)."""
    return 0 < ((x - ref) & M32) < HALF


class _Directions:
    """Per-direction analysis state of one conversation: tshark's ``tcp_flow_t``, two of them.

    Each attribute is a two-slot list indexed by direction; a new conversation (or a port reuse)
    starts from :meth:`reset`. The un-ACKed segment lists are capped at tshark's 1000 entries.
    """

    __slots__ = ("base", "base_set", "dupacks", "first_ack", "lastack", "lastacktime", "lastflags", "maxtba",
                 "nextseq", "nextseqtime", "seg_n", "seg_nxt", "seg_seq", "seg_ts", "window", "wsc")

    def __init__(self) -> None:
        # un-ACKed segments per direction (tshark's list, capped): seq, nextseq, time; newest last.
        # Python lists, not numpy: the walk reads them one scalar at a time (~25% of the pure path's time)
        self.seg_seq = [[0] * UNACKED_MAX, [0] * UNACKED_MAX]
        self.seg_nxt = [[0] * UNACKED_MAX, [0] * UNACKED_MAX]
        self.seg_ts = [[0.0] * UNACKED_MAX, [0.0] * UNACKED_MAX]
        self.base = [0, 0]
        self.nextseq, self.lastack, self.dupacks, self.maxtba, self.lastflags, self.seg_n = ([0, 0] for _ in range(6))
        self.nextseqtime, self.lastacktime = [0.0, 0.0], [0.0, 0.0]
        self.window, self.wsc = [-1, -1], [-1, -1]
        self.first_ack, self.base_set = [True, True], [False, False]

    def reset(self) -> None:
        """Forget everything but the base sequence numbers' values (their ``base_set`` is cleared).

        The lists are refilled in place, so a caller may hold them in local names across resets.
        """
        self.nextseq[:] = self.lastack[:] = self.dupacks[:] = self.maxtba[:] = self.lastflags[:] = (0, 0)
        self.seg_n[:] = (0, 0)
        self.nextseqtime[:] = self.lastacktime[:] = (0.0, 0.0)
        self.window[:] = self.wsc[:] = (-1, -1)
        self.first_ack[:] = (True, True)
        self.base_set[:] = (False, False)


def _window_scale(st: _Directions, d: int, fl: int, wsv: int) -> None:
    """Window scaling is negotiated on the handshake: a SYN-ACK without the option cancels both sides."""
    r = 1 - d
    if fl & ACK:
        if wsv < 0:
            st.wsc[d] = st.wsc[r] = -2
        else:
            st.wsc[d] = wsv
    else:
        st.wsc[d] = wsv if wsv >= 0 else -2


def _window_and_ack_flags(st: _Directions, d: int, fl: int, s: int, a: int, w: int, ln: int) -> int:  # noqa: PLR0917  per-segment helper: positional for speed
    """zero_window, lost_segment, keep_alive, window_update, window_full and the duplicate-ACK family.

    Runs unless the segment is a zero-window probe (tshark skips these checks for probes).
    """
    r = 1 - d
    nx = st.nextseq[d]
    ctl = fl & (SYN | FIN | RST)
    af = 0
    if w == 0 and ctl == 0:
        af |= ZW
    if nx != 0 and _ahead(s, nx) and not (fl & RST):
        af |= LOST
    if ln <= 1 and s == ((nx - 1) & M32) and ctl == 0:
        af |= KA
    same = ln == 0 and s == nx and a == st.lastack[d] and ctl == 0
    if same and w != 0 and w != st.window[d]:
        af |= WUPD
    if ln > 0 and st.wsc[r] != -1 and ctl == 0 and st.window[r] >= 0:
        sh = 0 if (st.first_ack[r] or st.wsc[r] == -2) else st.wsc[r]
        if ((s + ln) & M32) == ((st.lastack[r] + (st.window[r] << sh)) & M32):
            af |= WFULL
    if not same or w != st.window[d]:
        return af
    if w != 0 and (st.lastflags[r] & KA):
        af |= KAACK
    elif w == 0 and (st.lastflags[r] & ZWP):
        af |= ZWPACK
    elif w != 0:
        st.dupacks[d] = 1 if st.dupacks[d] == -1 else st.dupacks[d] + 1
        af |= DUPACK
    return af


def _ack_of_unseen(st: _Directions, d: int, fl: int, a: int) -> int:
    """ack_lost_segment: this ACK covers bytes the peer was never seen to send, one flag per hole.

    When the boundary lags the peer's nextseq it jumps there; otherwise the peer's dup-ACK counter is
    parked at -1 so repeated ACKs of the same hole stay silent (FAITHFULNESS.md: how this was pinned).
    """
    r = 1 - d
    if not (st.maxtba[r] != 0 and _ahead(a, st.maxtba[r]) and (fl & ACK)):
        return 0
    if st.maxtba[r] != st.nextseq[r]:
        st.maxtba[r] = st.nextseq[r]
        return ACKLOST
    af = ACKLOST if st.dupacks[r] == 0 else 0
    st.dupacks[r] = -1
    return af


def _retransmission_kind(st: _Directions, d: int, fl: int, s: int, ln: int, t: float, irtt: float) -> int:  # noqa: PLR0917  per-segment helper
    """spurious / fast retransmission, out-of-order, or plain retransmission of a segment with data or SYN/FIN."""
    r = 1 - d
    nx = st.nextseq[d]
    nad = nx != 0 and _ahead(nx, s)  # the segment does not advance the sequence space
    if ln > 1 and s == ((nx - 1) & M32):
        nad = False
    end = (s + ln + (1 if fl & (SYN | FIN) else 0)) & M32
    if ln > 0 and st.lastack[r] != 0 and ((st.lastack[r] - ((s + ln) & M32)) & M32) < HALF:
        return SPUR | RETR
    if nad and st.dupacks[r] >= 2 and st.lastack[r] == s and 0 <= (t - st.lastacktime[r]) < 0.02:
        return FAST | RETR
    if nad and 0 <= (t - st.nextseqtime[d]) < (irtt if irtt > 0 else 0.003) and nx != end:
        return OOO
    return RETR if nad else 0


def _record_segment(st: _Directions, d: int, fl: int, s: int, ln: int, t: float, af: int) -> None:  # noqa: PLR0917  per-segment helper
    """List the segment as un-ACKed, then advance nextseq and the ACK boundary as tshark does."""
    nxt = (s + ln) & M32
    if (ln > 0 or (fl & (SYN | FIN))) and st.seg_n[d] < UNACKED_MAX:
        if fl & (SYN | FIN):
            nxt = (nxt + 1) & M32  # SYN/FIN count one byte (only when the segment is listed)
        k = st.seg_n[d]
        st.seg_seq[d][k] = s
        st.seg_nxt[d][k] = nxt
        st.seg_ts[d][k] = t
        st.seg_n[d] = k + 1
    nx = st.nextseq[d]
    if (nx == 0 or _ahead(nxt, nx)) and not (af & ZWP):
        st.nextseq[d] = nxt
        st.nextseqtime[d] = t
    if (s == st.maxtba[d] or st.maxtba[d] == 0) and not (af & ZWP):
        st.maxtba[d] = st.nextseq[d]


def _ack_peer_segments(st: _Directions, r: int, a: int, t: float) -> float | None:
    """Apply an ACK to the peer's un-ACKed list; return ``tcp.analysis.ack_rtt``, or None when tshark shows none.

    tshark walks the list newest first: an exact match yields the RTT, the oldest matching copy
    winning; fully ACKed segments leave the list and a partial ACK trims one. Each segment's fate
    depends only on this ACK, so one oldest-first pass decides and compacts (the first qualifying
    match is the oldest) instead of shifting the list once per removal.
    """
    seg_seq, seg_nxt, seg_ts = st.seg_seq[r], st.seg_nxt[r], st.seg_ts[r]
    rtt: float | None = None
    kept = 0
    for k in range(st.seg_n[r]):
        nq = seg_nxt[k]
        if a == nq or not (0 < ((nq - a) & M32) < HALF):  # fully ACKed (inline _ahead: the hot inner loop)
            if a == nq and rtt is None and t != seg_ts[k]:  # tshark shows ack_rtt only when non-zero
                rtt = t - seg_ts[k]
            continue
        if 0 < ((a - seg_seq[k]) & M32) < HALF:
            seg_seq[kept] = a  # partial ACK trims the segment
        elif kept != k:
            seg_seq[kept] = seg_seq[k]
        if kept != k:  # nothing removed yet: the segment stays where it is
            seg_nxt[kept] = nq
            seg_ts[kept] = seg_ts[k]
        kept += 1
    st.seg_n[r] = kept
    return rtt


def run_rules(  # noqa: PLR0912, PLR0915, PLR0917  the per-segment walk (hot: state bound to locals once, the rules already in helpers), taking the columns positionally as the compiled port does
    order: Any, rows: Any, conv: Any, dirn: Any, seq: Any, ack: Any, flags: Any, win: Any, seglen: Any,
    ts: Any, wscale: Any, out_flags: Any, out_sub: Any, out_irtt: Any, out_rtt: Any,
) -> None:
    """Run the rules over segments ``order[0], order[1], ...`` (each conversation contiguous, capture order).

    Segment ``i``'s conversation, direction and outputs are at index ``i``; its header fields at
    ``rows[i]``. Writes the four ``out_*`` arrays: analysis flags, sub-stream (port reuse), iRTT on
    the segment that completed the handshake, ``ack_rtt`` on ACKs that exactly ACK a segment.
    """
    st = _Directions()
    # the state lists, bound once (reset() refills them in place): the walk reads them on every segment
    base, base_set, nextseq, window = st.base, st.base_set, st.nextseq, st.window
    lastack, lastacktime, lastflags, first_ack, dupacks = st.lastack, st.lastacktime, st.lastflags, st.first_ack, st.dupacks
    prev = -1
    sub = 0
    mru_syn = irtt = -1.0
    for step in range(len(order)):
        i = order[step]
        c = rows[i]
        d = int(dirn[i])
        r = 1 - d
        fl, s, a = int(flags[c]), int(seq[c]), int(ack[c])
        w, ln, t = int(win[c]), int(seglen[c]), float(ts[c])
        af = 0
        new = conv[i] != prev
        if not new and (fl & SYN) and base_set[d] and s != base[d]:
            # dissect_tcp: a SYN with a new ISN on a known 4-tuple is a new conversation; a SYN-ACK
            # with a new ISN stays in its conversation (flagged, base_seq follows it)
            af = REUSED
            if fl & ACK:
                base[d] = s
            else:
                new = True
                sub += 1
        if new:
            if conv[i] != prev:
                sub = 0
                prev = conv[i]
            st.reset()
            mru_syn = irtt = -1.0
        out_sub[i] = sub
        # base sequence numbers (relative seq 0): the first segment seen each way, or the ACK's view
        if not base_set[d]:
            base_set[d] = True
            base[d] = s if fl & SYN else (s - 1) & M32
        if not base_set[r] and (fl & ACK):
            base_set[r] = True
            base[r] = (a - 1) & M32
        if fl & SYN:
            _window_scale(st, d, fl, int(wscale[c]))
        if ln == 1 and s == nextseq[d] and window[r] == 0:
            af |= ZWP  # zero_window_probe: one byte at nextseq into a closed window
        else:
            af |= _window_and_ack_flags(st, d, fl, s, a, w, ln)
        if a != lastack[d]:
            dupacks[d] = 0
        if fl & ACK and st.maxtba[r]:
            af |= _ack_of_unseen(st, d, fl, a)
        if (ln > 0 or (fl & (SYN | FIN))) and not (af & KA):
            af |= _retransmission_kind(st, d, fl, s, ln, t, irtt)
        _record_segment(st, d, fl, s, ln, t, af)
        window[d] = w
        lastack[d] = a
        lastacktime[d] = t
        lastflags[d] = af
        first_ack[d] = bool(fl & SYN)
        out_flags[i] = af
        if st.seg_n[r]:
            rtt = _ack_peer_segments(st, r, a, t)
            if rtt is not None:
                out_rtt[i] = rtt
        # iRTT: most recent pure SYN → first pure ACK (set after the analysis, as dissect_tcp does)
        if (fl & (SYN | ACK)) == SYN:
            mru_syn = t
        elif (fl & (SYN | ACK)) == ACK and irtt < 0 and mru_syn >= 0:
            irtt = t - mru_syn
            out_irtt[i] = irtt


def analyze_tcp_sequences(conv: np.ndarray, dirn: np.ndarray, *, seq: np.ndarray, ack: np.ndarray,
                          flags: np.ndarray, win: np.ndarray, seglen: np.ndarray, ts: np.ndarray,
                          wscale: np.ndarray, order: np.ndarray | None = None, rows: np.ndarray | None = None,
                          compiled: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flag every TCP segment as tshark 4.0 would.

    Args:
        conv: conversation (4-tuple) index per segment, in capture order.
        dirn: 0/1 direction within the conversation.
        seq, ack, flags, win, seglen, ts, wscale: header fields (wscale -1 = no option): one entry
            per segment, or — when ``rows`` is given — whole decoded columns, segment ``i`` at ``rows[i]``.
        order: a permutation making each conversation contiguous in capture order (from
            :func:`~netghost.forensics.tcp.group_conversations`); computed when omitted. The
            compiled kernel does not need it: it walks segments in index order (which therefore must
            be capture order, as for every caller) with one state block per conversation.
        rows: where each segment's header fields sit in the field arrays (e.g. ``tcp_rows``); lets the
            compiled kernel read the columns in place instead of gathering copies.
        compiled: ``False`` runs :func:`run_rules` (the pure path); ``None``/``True`` use the compiled
            kernel when it is available.

    Raises:
        IndexError: (compiled path) a row, conversation id or direction is out of range.

    Returns:
        (analysis flag bitmask per segment, sub-stream index within the conversation — port reuse
        starts a new one —, iRTT in seconds on the segment that completed the handshake else NaN,
        tshark's ``tcp.analysis.ack_rtt`` in seconds on ACKs that exactly ACK a segment else NaN),
        all in the input order.
    """
    n = conv.shape[0]
    mod = compiled_tcp() if compiled is not False else None
    if mod is not None and n:
        # capture order with per-conversation state: ``order`` is not needed (see the module docstring)
        r = np.arange(n, dtype=np.int64) if rows is None else rows
        out: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] = mod.analyze(
            *_i64(r, conv, dirn), int(conv.max()) + 1, *compiled_fields((seq, ack, flags, win, seglen, ts, wscale)))
        return out
    if order is None:
        order = np.argsort(conv, kind="stable")
    if rows is None:
        rows = np.arange(n, dtype=np.int64)
    # pure Python: gather each field in walk order once (list indexing beats numpy scalars ~4x)
    at = rows[order]
    l_seq, l_ack, l_flags, l_win, l_len, l_ts, l_wscale = (
        np.asarray(c)[at].tolist() for c in (seq, ack, flags, win, seglen, ts, wscale))
    lof = [0] * n
    lsub = [0] * n
    lirtt = [float("nan")] * n
    lrtt = [float("nan")] * n
    ident = range(n)
    run_rules(ident, ident, conv[order].tolist(), dirn[order].tolist(), l_seq, l_ack, l_flags, l_win, l_len, l_ts,
              l_wscale, lof, lsub, lirtt, lrtt)
    out_f = np.empty(n, np.int64)
    out_s = np.empty(n, np.int64)
    out_r = np.empty(n)
    out_a = np.empty(n)
    out_f[order], out_s[order] = np.asarray(lof, np.int64), np.asarray(lsub, np.int64)
    out_r[order], out_a[order] = np.asarray(lirtt), np.asarray(lrtt)
    return out_f, out_s, out_r, out_a


def _i64(*arrays: np.ndarray) -> list[np.ndarray]:
    return [np.ascontiguousarray(a, dtype=np.int64) for a in arrays]


def compiled_fields(arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """(seq, ack, flags, win, seglen, ts, wscale) in the dtypes the compiled kernel reads (no copy when
    they already match)."""
    dtypes = (np.int64, np.int64, np.int16, np.int32, np.int32, np.float64, np.int16)
    return [np.ascontiguousarray(a, dtype=dt) for a, dt in zip(arrays, dtypes, strict=True)]
