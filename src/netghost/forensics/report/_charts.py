"""Charts for the HTML report, drawn as SVG with matplotlib (a main dependency, so every install has them).

WHY these charts: a tcptrace-style sequence graph shows at a glance whether a flow stalls on loss
(red retransmissions, flat ACK line), on the receiver (ACK line touching the window line) or on the
sender (idle gaps); a flow that never carried data has no sequence to graph, so it gets a handshake
ladder (who sent SYN, what came back, how often it was retried); retransmissions and RTT over time
show when the path degraded, on one shared time axis so the two panels line up.

WHY SVG rather than PNG: the charts are line art with labels, which SVG keeps sharp at any zoom and
on any screen density, with its text searchable and selectable (text stays text: ``svg.fonttype =
none``), inline in the page with no base64. It is not smaller: the espn sample's two charts are 92 KiB
as SVG against 60 KiB of base64 PNG at 100 dpi (``bench/mcp_bench.py``); what bounds the size is that
dense point clouds (thousands of segments) are rasterised inside the SVG, so a long capture cannot
produce a multi-megabyte chart. Each chart gets its own id salt, so several inlined in one page never
share an element id.

WHY time gaps are cut out of the axis: a capture whose packets span years (a reused file, a clock
jump) would otherwise be drawn on a ×1e8 s axis with every packet on one vertical line. Silences
longer than a minute and a quarter of the capture's span are cut, marked on the axis with their
length, and listed by :func:`time_gaps` so the report states them as a finding.

Rendering uses matplotlib's object API with the SVG canvas (no pyplot, no global backend switch),
so it is safe in a headless process and in threads.
"""

from __future__ import annotations

import io
import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from netghost.forensics.engine import Analysis
from netghost.forensics.tcp import FLAG_BITS

__all__ = [
    "Gap",
    "TimeAxis",
    "charts_available",
    "delay_svg",
    "describe_gap",
    "handshake_ladder_svg",
    "rtt_samples",
    "sequence_graph_svg",
    "stream_payload",
    "time_gaps",
    "timeline_svg",
]

_WRAP = 1 << 32
_DENSE = 4000  # more points than this in one artist: rasterise it inside the SVG
_GAP_MIN_S = 60.0
_GAP_SHARE = 0.25
_MAX_GAPS = 5
_LADDER_MAX = 24
_SALT = itertools.count()
_TCP = {"FIN": 0x01, "SYN": 0x02, "RST": 0x04, "PSH": 0x08, "ACK": 0x10}


def charts_available() -> bool:
    """True when matplotlib can be imported (a main dependency; False only in a broken install)."""
    try:
        import matplotlib  # noqa: F401, PLC0415  probe only
    except ImportError:
        return False
    return True


# ---- time axis -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Gap:
    """A silence in the capture: no packet between ``start`` and ``end`` (epoch seconds)."""

    start: float
    end: float

    @property
    def seconds(self) -> float:
        """Its length."""
        return self.end - self.start


def _span_text(seconds: float) -> str:
    for unit, size in (("years", 365.25 * 86400), ("days", 86400.0), ("hours", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def _when(ts: float) -> str:
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (ValueError, OverflowError, OSError):
        return f"{ts!r} s since the epoch"


def describe_gap(gap: Gap) -> str:
    """One sentence: how long, from when to when."""
    return f"no packets for {_span_text(gap.seconds)}, from {_when(gap.start)} to {_when(gap.end)}"


def time_gaps(ts: np.ndarray) -> list[Gap]:
    """The silences worth cutting out of a time axis: longer than a minute and than a quarter of the
    capture's span (at most five, the longest), in time order."""
    t = np.sort(np.asarray(ts, dtype=np.float64)[np.isfinite(ts)])
    if t.size < 2:
        return []
    span = float(t[-1] - t[0])
    d = np.diff(t)
    idx = np.flatnonzero(d > max(_GAP_MIN_S, _GAP_SHARE * span))
    idx = np.sort(idx[np.argsort(d[idx])[::-1][:_MAX_GAPS]])
    return [Gap(float(t[i]), float(t[i + 1])) for i in idx]


class TimeAxis:
    """Capture time → x: seconds since the first packet with the gaps cut out (each shown as a narrow break).

    One instance is shared by every time chart of a report, so their x values mean the same instant.
    """

    def __init__(self, ts: np.ndarray) -> None:
        t = np.asarray(ts, dtype=np.float64)
        t = t[np.isfinite(t)]
        self.t0 = float(t.min()) if t.size else 0.0
        self.gaps = time_gaps(t)
        active = (float(t.max()) - self.t0 if t.size else 0.0) - sum(g.seconds for g in self.gaps)
        self.break_w = max(active, 1e-3) * 0.03  # each cut is drawn 3 % of the active span wide
        self.label = ("seconds since the capture's first packet"
                      + (" (silences cut out, marked //)" if self.gaps else ""))

    def x(self, ts: np.ndarray) -> np.ndarray:
        """x of each timestamp."""
        t = np.asarray(ts, dtype=np.float64)
        out = t - self.t0
        for g in self.gaps:
            out = np.where(t >= g.end, out - g.seconds + self.break_w, out)
        return out

    def mark(self, ax: Any) -> None:
        """Draw each cut inside the plotted data as a hatched band labelled with the silence's length."""
        lo, hi = ax.dataLim.intervalx
        for g in self.gaps:
            left = float(self.x(np.array([g.start]))[0])
            if not lo <= left < hi:  # a chart of one flow that ended before the silence: nothing was cut
                continue
            ax.axvspan(left, left + self.break_w, facecolor="white", edgecolor="0.4", hatch="//", linewidth=0.5,
                       zorder=3)
            ax.text(left + self.break_w / 2, 0.5, f"// {_span_text(g.seconds)} silent //", transform=ax.get_xaxis_transform(),
                    rotation=90, ha="center", va="center", fontsize=7, color="0.2", zorder=4,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})


# ---- figure plumbing -------------------------------------------------------------------------------

def _figure(w: float, h: float, rows: int = 1) -> tuple[Any, list[Any]]:
    from matplotlib.figure import Figure  # noqa: PLC0415  loaded only when a chart is drawn

    fig = Figure(figsize=(w, h), dpi=100, layout="constrained")
    first = fig.add_subplot(rows, 1, 1)
    axes = [first] + [fig.add_subplot(rows, 1, i + 1, sharex=first) for i in range(1, rows)]
    return fig, axes


def _svg(fig: Any, label: str) -> str:
    """The figure as an inline ``<svg>`` element (no XML prolog), labelled for screen readers."""
    import matplotlib  # noqa: PLC0415
    from matplotlib.backends.backend_svg import FigureCanvasSVG  # noqa: PLC0415

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"ghost-chart-{next(_SALT)}"}):
        FigureCanvasSVG(fig).print_svg(buf, metadata={"Date": None, "Creator": None})  # type: ignore[no-untyped-call]
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    safe = label.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return text.replace("<svg ", f'<svg class="chart" role="img" aria-label="{safe}" ', 1)


def _legend(ax: Any, loc: str = "upper right") -> None:
    if ax.get_legend_handles_labels()[0]:  # an empty legend warns (warnings are errors in tests)
        ax.legend(loc=loc, fontsize=8)


def _stream_rows(an: Analysis, stream: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions into tcp_rows, from-client mask, retransmission mask) of one stream, in frame order."""
    pos = np.flatnonzero(an.tcp_stream == stream)
    rows = an.tcp_rows[pos]
    c, st = an.cols, an.streams
    from_c = (c.src_hi[rows] == st.c_hi[stream]) & (c.src_lo[rows] == st.c_lo[stream]) & (c.sport[rows] == st.c_port[stream])
    retr = (an.tcp_flags[pos] & FLAG_BITS["retransmission"]) != 0
    return pos, from_c, retr


def stream_payload(an: Analysis, stream: int) -> int:
    """TCP payload bytes the stream carried, both directions (0: handshake or resets only)."""
    pos = np.flatnonzero(an.tcp_stream == stream)
    return int(an.cols.paylen[an.tcp_rows[pos]].astype(np.int64).sum())


def rtt_samples(an: Analysis, stream: int, from_client: bool) -> tuple[np.ndarray, np.ndarray]:
    """Data-to-ACK times of one stream direction: (send time, seconds), Karn's rule.

    For each data segment sent once, the first later ACK from the peer covering its end gives the
    sample; ``np.searchsorted`` on the running maximum of the ACK number finds it (no Python loop).
    Measured at the probe, so data sent *towards* the probe's host shows only that host's ACK delay,
    data sent *from* it shows the path RTT: the chart plots both directions.
    """
    pos, from_c, retr = _stream_rows(an, stream)
    if not pos.size:
        return np.zeros(0), np.zeros(0)
    c = an.cols
    rows = an.tcp_rows[pos]
    pay = c.paylen[rows]
    data_dir = from_client
    snd = (from_c == data_dir) & (pay > 0)
    if snd.any():  # Karn: a range sent more than once gives no sample (neither copy)
        key = c.seq[rows] * 65536 + pay
        _, inv, cnt = np.unique(key[snd], return_inverse=True, return_counts=True)
        once = np.zeros(snd.shape[0], bool)
        once[np.flatnonzero(snd)] = cnt[inv.ravel()] == 1
        snd &= once & ~retr
    rcv = (from_c != data_dir) & ((c.tcp_flags[rows] & 0x10) != 0)
    if not snd.any() or not rcv.any():
        return np.zeros(0), np.zeros(0)
    base = int(c.seq[rows[snd]][0])
    end = ((c.seq[rows[snd]] - base) % _WRAP) + pay[snd]
    t_snd = c.ts[rows[snd]]
    ack = (c.ack[rows[rcv]] - base) % _WRAP
    ack = np.where(ack > _WRAP // 2, 0, ack)  # ACKs below the first segment (wrap) cover nothing
    t_ack = c.ts[rows[rcv]]
    cover = np.maximum.accumulate(ack)
    k = np.maximum(np.searchsorted(cover, end, side="left"), np.searchsorted(t_ack, t_snd, side="right"))
    ok = k < t_ack.shape[0]
    k = np.minimum(k, t_ack.shape[0] - 1)
    ok &= cover[k] >= end
    return t_snd[ok], t_ack[k[ok]] - t_snd[ok]


# ---- the charts ------------------------------------------------------------------------------------

def sequence_graph_svg(an: Analysis, stream: int, title: str, axis: TimeAxis) -> str:
    """tcptrace-style time/sequence graph of one stream's busier direction (call it for a flow with data).

    Segments are vertical bars (seq → seq+len), retransmissions red; the peer's ACK number is the
    green step line and ACK + advertised window (scaled) the olive line.
    """
    pos, from_c, retr = _stream_rows(an, stream)
    c, st = an.cols, an.streams
    rows = an.tcp_rows[pos]
    pay = c.paylen[rows].astype(np.int64)
    data_dir = bool(pay[from_c].sum() >= pay[~from_c].sum())
    snd, rcv = (from_c == data_dir) & (pay > 0), (from_c != data_dir) & ((c.tcp_flags[rows] & 0x10) != 0)
    base = int(c.seq[rows[snd]][0]) if snd.any() else 0
    fig, (ax,) = _figure(10, 4.2)
    s_rel = ((c.seq[rows[snd]] - base) % _WRAP).astype(np.float64)
    t = axis.x(c.ts[rows[snd]])
    ln = pay[snd].astype(np.float64)
    rt = retr[snd]
    dense = int(snd.sum()) > _DENSE
    # segments on top of the ACK/window lines (zorder 3): a segment hidden behind its own ACK step says nothing
    ax.vlines(t[~rt], s_rel[~rt], s_rel[~rt] + ln[~rt], colors="black", linewidth=2, label="data segments",
              rasterized=dense, zorder=3)
    if rt.any():
        ax.vlines(t[rt], s_rel[rt], s_rel[rt] + ln[rt], colors="red", linewidth=2.5, label="retransmissions", zorder=4)
    if rcv.any():
        ta = axis.x(c.ts[rows[rcv]])
        a_rel = ((c.ack[rows[rcv]] - base) % _WRAP).astype(np.float64)
        a_rel = np.where(a_rel > _WRAP // 2, 0.0, a_rel)
        ws = st.ws_s[stream] if data_dir else st.ws_c[stream]
        scale = float(1 << int(ws)) if ws >= 0 else 1.0
        win = c.win[rows[rcv]].astype(np.float64) * scale
        ax.step(ta, a_rel, where="post", color="green", linewidth=1, label="ACK", rasterized=dense)
        ax.step(ta, a_rel + win, where="post", color="olive", linewidth=0.8, label="receive window", rasterized=dense)
    axis.mark(ax)
    ax.set_xlabel(axis.label)
    ax.set_ylabel("bytes sent (relative sequence number)")
    ax.set_title(title)
    _legend(ax, "upper left")
    ax.grid(alpha=0.3)
    return _svg(fig, title)


def _flag_text(flags: int) -> str:
    return ", ".join(name for name, bit in _TCP.items() if flags & bit and name != "PSH") or "no flags"


def handshake_ladder_svg(an: Analysis, stream: int, title: str) -> str:
    """Who sent what, in order, for a flow that never carried data: a ladder between client and server.

    Each packet is an arrow from its sender's lifeline to the other's, labelled with its flags and its
    time since the flow's first packet; retransmissions are red. A SYN retried with no answer, a SYN
    answered by RST, or a handshake that completes and is then reset read at a glance.
    """
    pos, from_c, retr = _stream_rows(an, stream)
    c = an.cols
    rows = an.tcp_rows[pos][:_LADDER_MAX]
    from_c, retr = from_c[:_LADDER_MAX], retr[:_LADDER_MAX]
    t = c.ts[rows] - (float(c.ts[rows[0]]) if rows.size else 0.0)
    n = int(rows.size)
    fig, (ax,) = _figure(7.5, 1.2 + 0.42 * max(n, 1))
    ax.set_xlim(-0.45, 1.45)
    ax.set_ylim(n + 0.2, -0.9)
    ax.axis("off")
    for x, who in ((0.0, "client"), (1.0, "server")):
        ax.plot([x, x], [-0.3, n], color="0.3", linewidth=1.2)
        ax.text(x, -0.55, who, ha="center", va="bottom", fontsize=10, fontweight="bold")
    for i in range(n):
        left_to_right = bool(from_c[i])
        x0, x1 = (0.0, 1.0) if left_to_right else (1.0, 0.0)
        color = "red" if retr[i] else "black"
        ax.annotate("", xy=(x1, i + 0.55), xytext=(x0, i + 0.05),
                    arrowprops={"arrowstyle": "-|>", "color": color, "linewidth": 1.2})
        label = _flag_text(int(c.tcp_flags[rows[i]])) + (" (retransmission)" if retr[i] else "")
        ax.text(0.5, i + 0.22, label, ha="center", va="bottom", fontsize=8, color=color,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
        ax.text(-0.08 if left_to_right else 1.08, i + 0.05, f"+{t[i]:.3f} s", ha="right" if left_to_right else "left",
                va="center", fontsize=7, color="0.3")
    more = int(np.count_nonzero(an.tcp_stream == stream)) - n
    ax.set_title(title + (f" (first {n} packets; {more} more)" if more > 0 else ""), fontsize=10)
    return _svg(fig, title)


def timeline_svg(an: Analysis, axis: TimeAxis, stream: int | None = None, bins: int = 60) -> str:
    """Retransmissions per time bin over the whole capture, and RTT, on one shared time axis.

    The RTT panel shows every stream's handshake RTT at its start time and, for ``stream``, the
    data-to-ACK samples of :func:`rtt_samples` in both directions.
    """
    c = an.cols
    fig, (ax1, ax2) = _figure(10, 5.2, rows=2)
    tt = axis.x(c.ts[an.tcp_rows])
    retr = (an.tcp_flags & FLAG_BITS["retransmission"]) != 0
    span = float(tt.max()) if tt.size else 1.0
    edges = np.linspace(0.0, max(span, 1e-3), bins + 1)
    ax1.stairs(np.histogram(tt, bins=edges)[0], edges, fill=True, color="lightgray", label="TCP segments")
    ax1.stairs(np.histogram(tt[retr], bins=edges)[0], edges, fill=True, color="red", label="retransmissions")
    ax1.set_ylabel("segments per bin")
    ax1.set_yscale("symlog")
    ax1.set_title("Retransmissions over time")
    _legend(ax1)
    ax1.grid(alpha=0.3)
    st = an.streams
    ok = ~np.isnan(st.irtt)
    if ok.any():
        ax2.scatter(axis.x(st.first_ts[ok]), st.irtt[ok] * 1000, s=10, color="tab:blue",
                    label="handshake RTT (per flow)", rasterized=int(ok.sum()) > _DENSE)
    if stream is not None:
        for side, name, color in ((True, "client", "tab:orange"), (False, "server", "tab:green")):
            ts, rtt = rtt_samples(an, stream, side)
            if ts.size:
                ax2.plot(axis.x(ts), rtt * 1000, ".", markersize=4, color=color,
                         label=f"tcp/{stream}: {name} data → ACK", rasterized=ts.size > _DENSE)
    ax2.set_xlabel(axis.label)
    ax2.set_ylabel("RTT (ms)")
    ax2.set_title("RTT over time")
    _legend(ax2)
    ax2.grid(alpha=0.3)
    ax2.set_xlim(0.0, max(span, 1e-3))
    for ax in (ax1, ax2):
        axis.mark(ax)
    return _svg(fig, "Retransmissions and RTT over time")


def delay_svg(t: np.ndarray, delay_ms: np.ndarray, a_to_b: np.ndarray) -> str:
    """One-way delay of every matched packet over time, A→B and B→A (compare mode).

    Rising delay in one direction only is queueing on that direction's path; a step in both is a route
    change; the two directions drifting apart is clock drift between the probes.
    """
    axis = TimeAxis(t)
    fig, (ax,) = _figure(10, 3.6)
    for m, name, color in ((a_to_b, "A → B", "tab:blue"), (~a_to_b, "B → A", "tab:orange")):
        if m.any():
            ax.plot(axis.x(t[m]), delay_ms[m], ".", markersize=3, color=color, label=name,
                    rasterized=int(m.sum()) > _DENSE)
    axis.mark(ax)
    ax.set_xlabel(axis.label.replace("capture's first packet", "first matched packet (A's clock)"))
    ax.set_ylabel("one-way delay (ms)")
    ax.set_title("One-way delay between the capture points (clock offset removed)")
    _legend(ax)
    ax.grid(alpha=0.3)
    return _svg(fig, "One-way delay between the capture points over time")
