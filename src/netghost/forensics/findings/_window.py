"""Receive-window detectors: zero windows and full windows (tshark's ``tcp.analysis.zero_window`` and
``tcp.analysis.window_full``).

Both say the receiver, not the network, set the pace: a zero window stops the sender outright; a
full window means the sender had as much data in flight as the receiver advertised room for, so
the flow ran as fast as the receiver's window allowed and no faster. tshark counts the flag per
frame; the findings keep that count exactly (``metrics.count``), so a reader can check them against
tshark's expert info.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from netghost.forensics.arrays import select, take
from netghost.forensics.findings._context import MAX_FRAMES, Ctx, Finding, ep, finding, flow_id
from netghost.forensics.tcp import FLAG_BITS

__all__ = ["MAX_WINDOW_FLOWS", "window_full", "zero_window"]

MAX_WINDOW_FLOWS = 5  # flow directions described in a window-full finding (the count covers all)
# share of a direction's data segments that met a full window: from here on the window, not the
# path, is what limits the flow (tshark flags the segment that fills it; a bulk transfer that is
# receiver-limited fills it on most round trips)
_LIMITING_SHARE = 0.10
_LIMITING_MIN = 10


def zero_window(x: Ctx) -> list[Finding]:
    """Receivers that advertised a zero window (a receiver-side stall, not a network fault)."""
    st = x.a.streams
    zw = FLAG_BITS["zero_window"]
    out = []
    for s in np.flatnonzero(st.zero_window > 0)[:5].tolist():
        r = select(x.rows_of(s), lambda r: (x.a.tcp_flags[r] & zw) != 0)  # a stream's rows: capture order
        k = r[0]
        who = ep(x.seg("src_hi", k), x.seg("src_lo", k), x.seg("sport", k))
        out.append(finding(
            "zero_window", "medium", 0.8,
            f"{who} advertised a zero receive window {int(st.zero_window[s])}× on {flow_id(s)} → receiver not reading",
            "The receiving application (or host) did not drain its socket buffer, so the sender had to stop: "
            "a receiver-side bottleneck, not a network fault.",
            [int(f) for f in x.seg("frame", r[:MAX_FRAMES])], [flow_id(s)], float(x.seg("ts", k)),
            count=int(st.zero_window[s]),
        ))
    return out


def _size(n: int) -> str:
    for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


@dataclass(frozen=True)
class _Direction:
    """One flow direction that met a full window: who sent, who received, how often, against what window."""

    flow: str
    sender: str
    receiver: str
    count: int
    data_segments: int
    receiver_window_bytes: int | None

    @property
    def share(self) -> float:
        """Window-full segments per data segment the sender sent."""
        return self.count / max(self.data_segments, 1)


def _direction(x: Ctx, s: int, from_client: bool, count: int) -> _Direction:
    st = x.a.streams
    rows = x.rows_of(s)
    side = x.client_side(rows) == from_client
    data = int(np.count_nonzero(side & (x.seg("pay", rows) > 0)))
    back = rows[~side]
    back = back[(x.seg("fl", back) & 0x02) == 0]  # SYN windows are never scaled: left out
    shift = int((st.ws_s if from_client else st.ws_c)[s])  # the receiver's scale
    both = int(st.ws_c[s]) >= 0 and int(st.ws_s[s]) >= 0  # scaling applies only when both sides offered it
    win = take(x.a.cols.win, take(x.a.tcp_rows, back)).astype(np.float64) * float(1 << shift if both else 1)
    c = ep(st.c_hi[s], st.c_lo[s], st.c_port[s])
    v = ep(st.s_hi[s], st.s_lo[s], st.s_port[s])
    sender, receiver = (c, v) if from_client else (v, c)
    return _Direction(flow_id(s), sender, receiver, count, data, int(np.median(win)) if win.shape[0] else None)


def window_full(x: Ctx) -> list[Finding]:
    """Senders that filled the receiver's advertised window, one finding for the capture.

    One finding, not one per flow: its ``count`` is tshark's count of ``tcp.analysis.window_full``
    frames over the whole capture, and the flow directions that met it most are described (the
    first :data:`MAX_WINDOW_FLOWS`). Severity follows the worst direction's share of its data
    segments: past 10% (and 10 segments) the receiver's window is what limits the flow (medium);
    a few segments are worth a line (low); one is noted (info).
    """
    flagged = x.with_flag(FLAG_BITS["window_full"])
    total = int(flagged.shape[0])
    if not total:
        return []
    key = take(x.sid, flagged).astype(np.int64) * 2 + x.client_side(flagged)
    keys, first, counts = np.unique(key, return_index=True, return_counts=True)
    order = np.lexsort((first, -counts))[:MAX_WINDOW_FLOWS]
    dirs = [_direction(x, int(keys[k]) >> 1, bool(keys[k] & 1), int(counts[k])) for k in order.tolist()]
    worst = max(dirs, key=lambda d: (d.share, d.count))
    limiting = worst.share >= _LIMITING_SHARE and worst.count >= _LIMITING_MIN
    sev = "medium" if limiting else "low" if total >= 3 else "info"
    head = dirs[0]
    room = f" (it advertised ~{_size(head.receiver_window_bytes)})" if head.receiver_window_bytes else ""
    flows = f" on {keys.shape[0]} flow directions" if keys.shape[0] > 1 else ""
    title = (f"TCP window full {total}×{flows}: {head.sender} filled the receive window of {head.receiver}{room} "
             f"on {head.flow} ({head.count} of {head.data_segments} data segments)"
             + (" → throughput limited by the receiver's window" if limiting else " → the receiver's window was reached"))
    detail = ("The sender had as many bytes in flight as the receiver advertised room for, so it had to wait for the "
              "receiver's ACK before sending more (Wireshark's expert info \"Window full\"). Many such segments mean "
              "the receiver, not the network, set the pace: a slow-reading application, a small socket buffer, or "
              "window scaling missing on a long path. A zero window, when there is one, is the same story taken "
              "to a stop.")
    return [finding("window_full", sev, 0.8, title, detail,
                    [int(f) for f in x.seg("frame", flagged[:MAX_FRAMES])], [d.flow for d in dirs],
                    float(x.seg("ts", flagged[0])), count=total, flow_directions=int(keys.shape[0]),
                    worst_share=round(worst.share, 4), by_flow=[asdict(d) for d in dirs])]
