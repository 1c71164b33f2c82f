"""Zeek-style connection ``history`` strings and reset attribution for the flows a report shows.

Only the (bounded) flows of the semantic output get a history, so this is a short Python loop over
their own segments, not over the capture. Letters follow base/protocols/conn/main.zeek: upper case
= originator, lower case = responder; ``s`` SYN, ``h`` SYN-ACK, ``a`` pure ACK, ``d`` payload,
``f`` FIN, ``r`` RST, ``t`` retransmitted payload, ``w`` zero window, ``g`` content gap (a segment
after a hole, tshark's lost_segment). ``a d`` appear once per direction; ``f h r s`` again when the
sequence number differs; ``g t w`` logarithmically (1st, 10th, 100th ... occurrence).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netghost.forensics.arrays import take
from netghost.forensics.engine import Analysis
from netghost.forensics.tcp import FLAG_BITS

__all__ = ["flow_details"]

_LOG_LETTERS = "gtw"
_RETR = FLAG_BITS["retransmission"]
_LOST = FLAG_BITS["lost_segment"]
_ZW = FLAG_BITS["zero_window"]


def _history(fl: list[int], pay: list[int], seq: list[int], af: list[int], from_c: list[bool]) -> str:
    out: list[str] = []
    once: set[str] = set()
    last_seq: dict[str, int] = {}
    counts: dict[str, int] = {}

    def emit(letter: str, orig: bool, s: int | None = None) -> None:
        ch = letter.upper() if orig else letter
        if letter in "ad":
            if ch in once:
                return
            once.add(ch)
        elif letter in "fhrs":
            if last_seq.get(ch) == s:
                return
            last_seq[ch] = s if s is not None else -1
        elif letter in _LOG_LETTERS:
            n = counts.get(ch, 0) + 1
            counts[ch] = n
            if n not in (1, 10, 100, 1000, 10000, 100000):
                return
        out.append(ch)

    for f, p, s, a, c in zip(fl, pay, seq, af, from_c, strict=True):
        if f & 0x02:
            emit("h" if f & 0x10 else "s", c, s)
        if f & 0x01:
            emit("f", c, s)
        if f & 0x04:
            emit("r", c, s)
        if a & _LOST:
            emit("g", c)
        if p > 0:
            emit("t" if a & _RETR else "d", c)
        elif f & 0x17 == 0x10:
            emit("a", c)
        if a & _ZW:
            emit("w", c)
    return "".join(out)


def flow_details(a: Analysis, streams: list[int]) -> dict[int, dict[str, Any]]:
    """History, reset attribution and throughput for a few streams.

    Returns:
        stream id → {"history", "reset_by" (client/server/None), "first_rst_frame",
        "throughput_bps" (payload bits per second over the flow's duration, both directions)}.
    """
    out: dict[int, dict[str, Any]] = {}
    if not streams:
        return out
    st = a.streams
    sel = _segments_of(a, streams)
    # (take: the shown streams' segments lie at scattered rows of possibly spilled columns)
    rows = take(a.tcp_rows, sel)
    c = a.cols
    sid = take(a.tcp_stream, sel)
    from_c = ((take(c.src_hi, rows) == st.c_hi[sid]) & (take(c.src_lo, rows) == st.c_lo[sid])
              & (take(c.sport, rows) == st.c_port[sid]))
    fl = take(c.tcp_flags, rows).astype(np.int64)
    pay, seq, aflags, frame = take(c.paylen, rows), take(c.seq, rows), take(a.tcp_flags, sel), take(c.frame, rows)
    for s in streams:
        m = sid == s
        f_l = fl[m].tolist()
        h = _history(f_l, pay[m].tolist(), seq[m].tolist(), aflags[m].tolist(),
                     from_c[m].tolist())
        rst = np.flatnonzero((fl[m] & 0x04) != 0)
        dur = float(st.last_ts[s] - st.first_ts[s])
        total = int(st.bytes_c2s[s] + st.bytes_s2c[s])
        out[s] = {
            "history": h,
            "reset_by": None if not rst.size else ("client" if from_c[m][rst[0]] else "server"),
            "first_rst_frame": None if not rst.size else int(frame[m][rst[0]]),
            "throughput_bps": round(total * 8 / dur, 1) if dur > 0 else None,
        }
    return out


def _segments_of(a: Analysis, streams: list[int]) -> np.ndarray:
    """Ascending segment indices (into ``tcp_rows``) of the given streams.

    Why: with the engine's per-stream block offsets in ``tcp_order`` (``Analysis.tcp_stream_start``)
    the few shown streams' segments are sliced out directly instead of testing every segment's
    stream id (a scan of ~2M entries on a big capture). Same indices either way.
    """
    start = getattr(a, "tcp_stream_start", None)
    if a.tcp_order is None or start is None or start.shape[0] != len(a.streams):
        return np.flatnonzero(np.isin(a.tcp_stream, streams))
    size = a.streams.pkts_c2s + a.streams.pkts_s2c
    parts = [a.tcp_order[start[s] : start[s] + size[s]] for s in sorted(set(streams))]
    return np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
