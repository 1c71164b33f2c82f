"""Wireshark-faithful TCP sequence analysis (tshark 4.0 ``tcp_analyze_sequence_number`` rules and order).

The rules are stated once, sequentially, in :func:`_kernel`: TCP packets sorted by (conversation,
frame), one loop, per-direction state in a few two-slot lists reset when the loop crosses into the next
conversation. That Python loop is the reference, not the product path: :func:`analyze_tcp_sequences`
runs the compiled port (``_tcp.pyx``) when it is built, else the vectorised numpy version
(``tcp_vec.py``, no loop per packet); tests hold both to the reference.

Rule notes (see PCAP-NOTES.md §2; deviations we know of are documented in FAITHFULNESS.md):

* seq/ack are raw 32-bit numbers; comparisons are modulo 2**32, "0" means "not seen yet".
* ``retransmission`` is also set on fast and spurious retransmissions, as tshark's display filter
  ``tcp.analysis.retransmission`` matches them.
* A pure SYN with a different ISN on a conversation whose base sequence is known starts a new
  stream and is flagged ``reused_ports``.

Compiled path: ``_tcp.pyx`` is a C port of :func:`_kernel` (built at install; tests compare the two on
the corpus and on generated segment sequences). It walks segments in capture order with one state
block per conversation instead of sorting them, which is equivalent because conversations are
independent. ``NETGHOST_NO_COMPILED=1`` (or a missing extension) selects the pure path.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["FLAG_BITS", "FLAG_NAMES", "analyze_tcp_sequences", "reference_tcp_sequences"]

FLAG_NAMES = (
    "retransmission",
    "fast_retransmission",
    "spurious_retransmission",
    "out_of_order",
    "lost_segment",
    "ack_lost_segment",
    "duplicate_ack",
    "zero_window",
    "zero_window_probe",
    "zero_window_probe_ack",
    "window_full",
    "window_update",
    "keep_alive",
    "keep_alive_ack",
    "reused_ports",
)
FLAG_BITS = {name: 1 << i for i, name in enumerate(FLAG_NAMES)}
RETR, FAST, SPUR, OOO, LOST, ACKLOST, DUPACK, ZW, ZWP, ZWPACK, WFULL, WUPD, KA, KAACK, REUSED = (
    1 << i for i in range(15)
)
FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10
M32 = 0xFFFFFFFF
HALF = 0x80000000
UNACKED_MAX = 1000  # TCP_MAX_UNACKED_SEGMENTS


def compiled_tcp() -> ModuleType | None:
    """The compiled ``netghost.forensics._tcp`` module, or ``None`` (not built, or ``NETGHOST_NO_COMPILED``)."""
    if os.environ.get("NETGHOST_NO_COMPILED", "") not in {"", "0"}:
        return None
    try:
        return importlib.import_module("netghost.forensics._tcp")
    except ImportError:
        return None


def _kernel(  # noqa: PLR0917  kernels take positional arrays
    order: Any, rows: Any, conv: Any, dirn: Any, seq: Any, ack: Any, flags: Any, win: Any, seglen: Any,
    ts: Any, wscale: Any, out_flags: Any, out_sub: Any, out_irtt: Any, out_rtt: Any,
) -> None:
    """Run the rules over segments ``order[0], order[1], ...`` (each conversation contiguous, capture order).

    Segment ``i``'s conversation, direction and outputs are at index ``i``; its header fields at
    ``rows[i]`` (so the compiled kernel reads the decoded columns in place, with no gathered copies).
    Writes the four ``out_*`` arrays.
    """
    n = len(order)
    prev = -1
    sub = 0
    nextseq = [0, 0]
    nextseqtime = [0.0, 0.0]
    lastack = [0, 0]
    lastacktime = [0.0, 0.0]
    window = [-1, -1]
    wsc = [-1, -1]
    first_ack = [True, True]
    dupacks = [0, 0]
    maxtba = [0, 0]
    lastflags = [0, 0]
    base_set = [False, False]
    base = [0, 0]
    mru_syn = -1.0
    irtt = -1.0
    # un-ACKed segments per direction (tshark's list, capped at 1000): seq, nextseq, time; newest last
    seg_seq = np.zeros((2, UNACKED_MAX), np.int64)
    seg_nxt = np.zeros((2, UNACKED_MAX), np.int64)
    seg_ts = np.zeros((2, UNACKED_MAX), np.float64)
    seg_n = [0, 0]
    for step in range(n):
        i = order[step]
        c = rows[i]
        d = int(dirn[i])
        r = 1 - d
        fl = int(flags[c])
        s = int(seq[c])
        a = int(ack[c])
        w = int(win[c])
        ln = int(seglen[c])
        t = float(ts[c])
        wsv = int(wscale[c])
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
            for k in range(2):
                nextseq[k] = 0
                nextseqtime[k] = 0.0
                lastack[k] = 0
                lastacktime[k] = 0.0
                window[k] = -1
                wsc[k] = -1
                first_ack[k] = True
                dupacks[k] = 0
                maxtba[k] = 0
                lastflags[k] = 0
                base_set[k] = False
                seg_n[k] = 0
            mru_syn = -1.0
            irtt = -1.0
        out_sub[i] = sub
        if not base_set[d]:
            base_set[d] = True
            base[d] = s if fl & SYN else (s - 1) & M32
        if not base_set[r] and (fl & ACK):
            base_set[r] = True
            base[r] = (a - 1) & M32
        ctl = fl & (SYN | FIN | RST)
        if fl & SYN:
            if fl & ACK:
                if wsv < 0:
                    wsc[d] = -2
                    wsc[r] = -2
                else:
                    wsc[d] = wsv
            else:
                wsc[d] = wsv if wsv >= 0 else -2
        nx = nextseq[d]
        skip = False
        # 1 zero window probe
        if ln == 1 and s == nx and window[r] == 0:
            af |= ZWP
            skip = True
        if not skip:
            if w == 0 and ctl == 0:
                af |= ZW
            if nx != 0 and 0 < ((s - nx) & M32) < HALF and not (fl & RST):
                af |= LOST
            if ln <= 1 and s == ((nx - 1) & M32) and ctl == 0:
                af |= KA
            same = ln == 0 and s == nx and a == lastack[d] and ctl == 0
            if same and w != 0 and w != window[d]:
                af |= WUPD
            if ln > 0 and wsc[r] != -1 and ctl == 0 and window[r] >= 0:
                sh = 0 if (first_ack[r] or wsc[r] == -2) else wsc[r]
                if ((s + ln) & M32) == ((lastack[r] + (window[r] << sh)) & M32):
                    af |= WFULL
            if same and w != 0 and w == window[d] and (lastflags[r] & KA):
                af |= KAACK
            elif same and w == 0 and w == window[d] and (lastflags[r] & ZWP):
                af |= ZWPACK
            elif same and w != 0 and w == window[d]:
                dupacks[d] = 1 if dupacks[d] == -1 else dupacks[d] + 1
                af |= DUPACK
        if a != lastack[d]:
            dupacks[d] = 0
        if maxtba[r] != 0 and 0 < ((a - maxtba[r]) & M32) < HALF and (fl & ACK):
            # ACKed unseen segment, one flag per hole: when the boundary lags the peer's nextseq
            # it jumps there; otherwise the peer's dup-ACK counter is parked at -1 so repeated
            # ACKs of the same hole stay silent (see FAITHFULNESS.md for how this was pinned).
            if maxtba[r] != nextseq[r]:
                maxtba[r] = nextseq[r]
                af |= ACKLOST
            else:
                if dupacks[r] == 0:
                    af |= ACKLOST
                dupacks[r] = -1
        if (ln > 0 or (fl & (SYN | FIN))) and not (af & KA):
            nad = nx != 0 and 0 < ((nx - s) & M32) < HALF
            if ln > 1 and s == ((nx - 1) & M32):
                nad = False
            end = (s + ln + (1 if fl & (SYN | FIN) else 0)) & M32
            if ln > 0 and lastack[r] != 0 and ((lastack[r] - ((s + ln) & M32)) & M32) < HALF:
                af |= SPUR | RETR
            elif nad and dupacks[r] >= 2 and lastack[r] == s and 0 <= (t - lastacktime[r]) < 0.02:
                af |= FAST | RETR
            elif nad and 0 <= (t - nextseqtime[d]) < (irtt if irtt > 0 else 0.003) and nx != end:
                af |= OOO
            elif nad:
                af |= RETR
        nxt = (s + ln) & M32
        if (ln > 0 or (fl & (SYN | FIN))) and seg_n[d] < UNACKED_MAX:
            if fl & (SYN | FIN):
                nxt = (nxt + 1) & M32  # SYN/FIN count one byte (only when the segment is listed)
            k = seg_n[d]
            seg_seq[d, k] = s
            seg_nxt[d, k] = nxt
            seg_ts[d, k] = t
            seg_n[d] = k + 1
        if (nx == 0 or 0 < ((nxt - nx) & M32) < HALF) and not (af & ZWP):
            nextseq[d] = nxt
            nextseqtime[d] = t
        if (s == maxtba[d] or maxtba[d] == 0) and not (af & ZWP):
            maxtba[d] = nextseq[d]
        window[d] = w
        lastack[d] = a
        lastacktime[d] = t
        lastflags[d] = af
        first_ack[d] = bool(fl & SYN)
        out_flags[i] = af
        # ACK processing over the peer's list (tshark walks it newest first): an exact match yields
        # tcp.analysis.ack_rtt, the oldest matching copy winning; fully ACKed segments leave the list.
        # Each segment's fate depends only on this ACK, so one oldest-first pass decides and compacts
        # (the first qualifying match is the oldest) instead of shifting the list once per removal.
        kept = 0
        rtt_set = False
        for k in range(seg_n[r]):
            nq = seg_nxt[r, k]
            if a == nq or not (0 < ((nq - a) & M32) < HALF):
                if a == nq and not rtt_set and t != seg_ts[r, k]:  # tshark shows ack_rtt only when non-zero
                    out_rtt[i] = t - seg_ts[r, k]
                    rtt_set = True
                continue
            if 0 < ((a - seg_seq[r, k]) & M32) < HALF:
                seg_seq[r, kept] = a  # partial ACK trims the segment
            elif kept != k:
                seg_seq[r, kept] = seg_seq[r, k]
            if kept != k:  # nothing removed yet: the segment stays where it is
                seg_nxt[r, kept] = nq
                seg_ts[r, kept] = seg_ts[r, k]
            kept += 1
        seg_n[r] = kept
        # iRTT: most recent pure SYN → first pure ACK (set after the analysis, as dissect_tcp does)
        if (fl & (SYN | ACK)) == SYN:
            mru_syn = t
        elif (fl & (SYN | ACK)) == ACK and irtt < 0 and mru_syn >= 0:
            irtt = t - mru_syn
            out_irtt[i] = irtt


def analyze_tcp_sequences(conv: np.ndarray, dirn: np.ndarray, *, seq: np.ndarray, ack: np.ndarray,
                          flags: np.ndarray, win: np.ndarray, seglen: np.ndarray, ts: np.ndarray,
                          wscale: np.ndarray, order: np.ndarray | None = None,
                          rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flag every TCP segment as tshark 4.0 would.

    Args:
        conv: conversation (4-tuple) index per segment, in capture order.
        dirn: 0/1 direction within the conversation.
        seq, ack, flags, win, seglen, ts, wscale: header fields (wscale -1 = no option): one entry
            per segment, or — when ``rows`` is given — whole decoded columns, segment ``i`` at ``rows[i]``.
        order: a permutation making each conversation contiguous in capture order (from
            :func:`~netghost.forensics.flows.group_conversations`); computed when omitted. The
            compiled kernel does not need it: it walks segments in index order (which therefore must
            be capture order, as for every caller) with one state block per conversation.
        rows: where each segment's header fields sit in the field arrays (e.g. ``tcp_rows``); lets the
            compiled kernel read the columns in place instead of gathering copies.

    Raises:
        IndexError: (compiled path) a row, conversation id or direction is out of range.

    Returns:
        (analysis flag bitmask per segment, sub-stream index within the conversation — port reuse
        starts a new one —, iRTT in seconds on the segment that completed the handshake else NaN,
        tshark's ``tcp.analysis.ack_rtt`` in seconds on ACKs that exactly ACK a segment else NaN),
        all in the input order.
    """
    n = conv.shape[0]
    mod = compiled_tcp()
    if mod is not None and n:
        # capture order with per-conversation state: ``order`` is not needed (see the module docstring)
        r = np.arange(n, dtype=np.int64) if rows is None else rows
        out: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] = mod.analyze(
            *_i64(r, conv, dirn), int(conv.max()) + 1, *compiled_fields((seq, ack, flags, win, seglen, ts, wscale)))
        return out
    if not os.environ.get("NETGHOST_TCP_REFERENCE"):
        from netghost.forensics.tcp_vec import analyze_tcp_sequences_vec  # noqa: PLC0415  tcp_vec imports this module

        return analyze_tcp_sequences_vec(conv, dirn, seq=seq, ack=ack, flags=flags, win=win, seglen=seglen, ts=ts,
                                         wscale=wscale, order=order, rows=rows)
    return reference_tcp_sequences(conv, dirn, seq=seq, ack=ack, flags=flags, win=win, seglen=seglen, ts=ts,
                                   wscale=wscale, order=order, rows=rows)


def reference_tcp_sequences(conv: np.ndarray, dirn: np.ndarray, *, seq: np.ndarray, ack: np.ndarray,
                            flags: np.ndarray, win: np.ndarray, seglen: np.ndarray, ts: np.ndarray,
                            wscale: np.ndarray, order: np.ndarray | None = None,
                            rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`analyze_tcp_sequences` through the sequential Python :func:`_kernel` (one loop per segment).

    Why keep it: it is the readable statement of tshark's rules that the compiled kernel and the
    vectorised ``tcp_vec`` are tested against. Too slow for real captures (~5 µs per segment); the
    pure path uses it only when ``NETGHOST_TCP_REFERENCE=1``.
    """
    n = conv.shape[0]
    if order is None:
        order = np.argsort(conv, kind="stable")
    if rows is None:
        rows = np.arange(n, dtype=np.int64)
    # pure Python: gather each field in walk order once (list indexing beats numpy scalars ~4x)
    at = rows[order]
    lists = [conv[order].tolist(), dirn[order].tolist(),
             *(np.asarray(c)[at].tolist() for c in (seq, ack, flags, win, seglen, ts, wscale))]
    lof = [0] * n
    lsub = [0] * n
    lirtt = [float("nan")] * n
    lrtt = [float("nan")] * n
    ident = range(n)
    _kernel(ident, ident, lists[0], lists[1], lists[2], lists[3], lists[4], lists[5], lists[6], lists[7], lists[8],
            lof, lsub, lirtt, lrtt)
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
