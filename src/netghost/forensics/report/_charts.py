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

WHY each chart is drawn to its data (a general rule, not per capture): the time axis cuts long
silences (_timeaxis.py) and is labelled in real seconds, so retransmissions sit where they
happened; the sequence graph's own axis is the flow's (its silences cut), and the receive-window
line never sets the scale: when it runs far above the data it is clipped at the chart's edge and
the chart says how far above it runs; two series of different magnitude get an axis each
(retransmissions against all segments); outlying RTT samples are clipped and counted rather than
flattening the rest. A panel with nothing to draw is not drawn: the report says "none" in words.
Every data artist carries an SVG id ``ghost-data-...`` (``ghost-aux-...`` for context such as the
window line, ``ghost-axes-...`` for each plot area), so a test can measure from the SVG alone how
much of the plot the data covers.

Rendering uses matplotlib's object API with the SVG canvas (no pyplot, no global backend switch),
so it is safe in a headless process and in threads.
"""

from __future__ import annotations

import io
import itertools
from typing import Any

import numpy as np

from netghost.forensics.engine import Analysis
from netghost.forensics.report._timeaxis import Gap, TimeAxis, describe_gap, time_gaps
from netghost.forensics.tcp import FLAG_BITS

__all__ = [
    "Gap",
    "TimeAxis",
    "charts_available",
    "delay_svg",
    "describe_gap",
    "flow_axis",
    "handshake_ladder_svg",
    "rtt_samples",
    "sequence_graph_svg",
    "stream_data_segments",
    "stream_payload",
    "time_gaps",
    "timeline_svg",
]

_WRAP = 1 << 32
_DENSE = 4000  # more points than this in one artist: rasterise it inside the SVG
_LADDER_MAX = 24
_WINDOW_ROOM = 1.6  # the window line may reach this far above the data before it is clipped
_RTT_CLIP = 3.0  # RTT samples past this many times the 95th percentile are clipped and counted
_RTT_LOG = 50.0  # RTT samples spanning more than this ratio (largest / median) go on a log scale
_SALT = itertools.count()
_TCP = {"FIN": 0x01, "SYN": 0x02, "RST": 0x04, "PSH": 0x08, "ACK": 0x10}


def charts_available() -> bool:
    """True when matplotlib can be imported (a main dependency; False only in a broken install)."""
    try:
        import matplotlib  # noqa: F401, PLC0415  probe only
    except ImportError:
        return False
    return True


# ---- figure plumbing -------------------------------------------------------------------------------

def _figure(w: float, h: float, rows: int = 1, *, sharex: bool = True) -> tuple[Any, list[Any]]:
    from matplotlib.figure import Figure  # noqa: PLC0415  loaded only when a chart is drawn

    fig = Figure(figsize=(w, h), dpi=100, layout="constrained")
    fig.ghost_salt = next(_SALT)  # type: ignore[attr-defined]  # one number per chart: its SVG ids, ghost-* tags
    fig.ghost_tags = itertools.count()  # type: ignore[attr-defined]
    first = fig.add_subplot(rows, 1, 1)
    axes = [first] + [fig.add_subplot(rows, 1, i + 1, sharex=first if sharex else None) for i in range(1, rows)]
    for ax in axes:
        _tag(ax.patch, "axes")
    return fig, axes


def _kind(ax: Any, kind: str) -> None:
    """Name the plot area's kind in its tag (``ghost-axes-<chart>-<n>-<kind>``: seq, retrans, rtt, delay)."""
    ax.patch.set_gid(f"{ax.patch.get_gid()}-{kind}")


def _tag(artist: Any, role: str) -> Any:
    """Give ``artist`` the SVG id ``ghost-<role>-<chart>-<n>`` (role: data, aux, axes) and return it."""
    fig = artist.get_figure() if hasattr(artist, "get_figure") else None
    fig = fig or artist.axes.figure
    artist.set_gid(f"ghost-{role}-{fig.ghost_salt}-{next(fig.ghost_tags)}")
    return artist


def _svg(fig: Any, label: str) -> str:
    """The figure as an inline ``<svg>`` element (no XML prolog), labelled for screen readers."""
    import matplotlib  # noqa: PLC0415
    from matplotlib.backends.backend_svg import FigureCanvasSVG  # noqa: PLC0415

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"ghost-chart-{fig.ghost_salt}"}):
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


def stream_data_segments(an: Analysis, stream: int) -> int:
    """Segments of the stream that carried payload, both directions."""
    pos = np.flatnonzero(an.tcp_stream == stream)
    return int(np.count_nonzero(an.cols.paylen[an.tcp_rows[pos]] > 0))


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

def flow_axis(an: Analysis, stream: int, t0: float) -> TimeAxis:
    """A time axis of one flow: its own silences cut, labelled from ``t0`` (the capture's first packet)."""
    return TimeAxis(an.cols.ts[an.tcp_rows[an.tcp_stream == stream]], t0=t0)


def _size(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} bytes"


def _xlim(ax: Any, xs: list[np.ndarray], axis: TimeAxis) -> None:
    """The view: the drawn points with a small margin, then real-time ticks and the cuts inside it."""
    vals = np.concatenate([x for x in xs if x.size]) if any(x.size for x in xs) else np.zeros(1)
    lo, hi = float(vals.min()), float(vals.max())
    pad = max(hi - lo, 1e-6) * 0.02
    ax.set_xlim(lo - pad, hi + pad)
    axis.apply(ax)


def sequence_graph_svg(an: Analysis, stream: int, title: str, axis: TimeAxis) -> str:
    """tcptrace-style time/sequence graph of one stream's busier direction (call it for a flow with data).

    Segments are vertical bars (seq → seq+len), retransmissions red; the peer's ACK number is the
    green step line and ACK + advertised window (scaled) the olive line. The data sets the scale: a
    window line far above it is clipped at the top edge and labelled with how far it reaches.

    Args:
        an: the analysis.
        stream: the TCP stream to draw.
        title: the chart's title (and accessible label).
        axis: its time axis (:func:`flow_axis`: the flow's silences cut, the capture's clock).
    """
    pos, from_c, retr = _stream_rows(an, stream)
    c, st = an.cols, an.streams
    rows = an.tcp_rows[pos]
    pay = c.paylen[rows].astype(np.int64)
    data_dir = bool(pay[from_c].sum() >= pay[~from_c].sum())
    snd, rcv = (from_c == data_dir) & (pay > 0), (from_c != data_dir) & ((c.tcp_flags[rows] & 0x10) != 0)
    base = int(c.seq[rows[snd]][0]) if snd.any() else 0
    fig, (ax,) = _figure(10, 4.2)
    _kind(ax, "seq")
    s_rel = ((c.seq[rows[snd]] - base) % _WRAP).astype(np.float64)
    t = axis.x(c.ts[rows[snd]])
    ln = pay[snd].astype(np.float64)
    rt = retr[snd]
    dense = int(snd.sum()) > _DENSE
    top = float((s_rel + ln).max()) if s_rel.size else 1.0
    # segments on top of the ACK/window lines (zorder 3): a segment hidden behind its own ACK step says nothing
    _tag(ax.vlines(t[~rt], s_rel[~rt], s_rel[~rt] + ln[~rt], colors="black", linewidth=2, label="data segments",
                   rasterized=dense, zorder=3), "data")
    if rt.any():
        _tag(ax.vlines(t[rt], s_rel[rt], s_rel[rt] + ln[rt], colors="red", linewidth=2.5, label="retransmissions",
                       zorder=4), "data")
    xs = [t]
    note = ""
    if rcv.any():
        ta = axis.x(c.ts[rows[rcv]])
        a_rel = ((c.ack[rows[rcv]] - base) % _WRAP).astype(np.float64)
        a_rel = np.where(a_rel > _WRAP // 2, 0.0, a_rel)
        ws = st.ws_s[stream] if data_dir else st.ws_c[stream]
        scale = float(1 << int(ws)) if ws >= 0 else 1.0
        win = c.win[rows[rcv]].astype(np.float64) * scale
        _tag(ax.step(ta, a_rel, where="post", color="green", linewidth=1, label="ACK", rasterized=dense)[0], "data")
        _tag(ax.step(ta, a_rel + win, where="post", color="olive", linewidth=0.8, label="receive window",
                     rasterized=dense)[0], "aux")
        top = max(top, float(a_rel.max()))
        reach = float((a_rel + win).max())
        if reach > top * _WINDOW_ROOM:  # the window line would flatten the data: clip it at the edge
            full = int(np.count_nonzero(an.tcp_flags[pos] & FLAG_BITS["window_full"]))
            note = (f"receive window edge: up to {_size(reach - top)} above the data, off this chart"
                    + (f"; the sender filled the window {full}×" if full else ""))
        else:
            top = max(top, reach)
        xs.append(ta)
    ax.set_ylim(-0.02 * top, top * 1.08)
    _xlim(ax, xs, axis)
    if note:
        ax.annotate(f"↑ {note}", xy=(0.99, 0.99), xycoords="axes fraction", ha="right", va="top", fontsize=8,
                    color="olive", bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1})
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
        pay = int(c.paylen[rows[i]])
        label = (_flag_text(int(c.tcp_flags[rows[i]])) + (f" · {pay} bytes" if pay > 0 else "")
                 + (" (retransmission)" if retr[i] else ""))
        ax.text(0.5, i + 0.22, label, ha="center", va="bottom", fontsize=8, color=color,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
        ax.text(-0.08 if left_to_right else 1.08, i + 0.05, f"+{t[i]:.3f} s", ha="right" if left_to_right else "left",
                va="center", fontsize=7, color="0.3")
    more = int(np.count_nonzero(an.tcp_stream == stream)) - n
    ax.set_title(title + (f" (first {n} packets; {more} more)" if more > 0 else ""), fontsize=10)
    return _svg(fig, title)


def _rtt_points(an: Analysis, stream: int | None) -> list[tuple[np.ndarray, np.ndarray, str, str]]:
    """The RTT series of the timeline: (send times, ms, label, colour), those with samples only."""
    st = an.streams
    out = []
    ok = ~np.isnan(st.irtt)
    if ok.any():
        out.append((st.first_ts[ok], st.irtt[ok] * 1000, "handshake RTT (per flow)", "tab:blue"))
    if stream is not None:
        for side, name, color in ((True, "client", "tab:orange"), (False, "server", "tab:green")):
            ts, rtt = rtt_samples(an, stream, side)
            if ts.size:
                out.append((ts, rtt * 1000, f"tcp/{stream}: {name} data → ACK", color))
    return out


def timeline_svg(an: Analysis, axis: TimeAxis, stream: int | None = None,
                 bins: int = 60) -> tuple[str | None, list[str]]:
    """Retransmissions per time bin over the whole capture, and RTT, on one shared time axis.

    A panel is drawn only when it has something to show; what is left out is said in words (the
    second value), so no chart is ever an empty frame. Retransmissions (red bars, left axis) are
    drawn against every TCP segment (grey line, right axis), each series on its own scale. The RTT
    panel shows every stream's handshake RTT at its start time and, for ``stream``, the data-to-ACK
    samples of :func:`rtt_samples` in both directions; samples far above the rest are drawn at the
    top edge and counted.

    Returns:
        (the SVG, or None when neither panel has data; sentences for what is not drawn).
    """
    c = an.cols
    tt = axis.x(c.ts[an.tcp_rows])
    retr = (an.tcp_flags & FLAG_BITS["retransmission"]) != 0
    series = _rtt_points(an, stream)
    samples = sum(int(x[0].size) for x in series)
    notes = []
    if not retr.any():
        notes.append("Retransmissions: none in this capture." if tt.size else "Retransmissions: no TCP traffic.")
    if samples < 2:
        notes.append("RTT: " + ("one sample only." if samples else "no samples (no handshake or data was acknowledged)."))
    panels = [p for p, on in (("retrans", bool(retr.any())), ("rtt", samples >= 2)) if on]
    if not panels:
        return None, notes
    # each panel on its own time axis (real-time labels, the capture's clock): RTT samples exist only
    # where flows start or carry data, and on the whole capture's axis they would be a sliver
    fig, axes = _figure(10, 2.4 + 2.6 * len(panels), rows=len(panels), sharex=False)
    for ax, panel in zip(axes, panels, strict=True):
        _kind(ax, panel)
        if panel == "retrans":
            span = max(axis.extent, 1e-3)
            _retrans_panel(ax, tt, retr, span, bins)
            ax.set_xlim(-0.01 * span, span * 1.01)
            axis.apply(ax)
            ax.set_xlabel(axis.label)
        else:
            rtt_axis = TimeAxis(np.concatenate([x[0] for x in series]), t0=axis.t0)
            _rtt_panel(ax, series, rtt_axis)
            _xlim(ax, [rtt_axis.x(x[0]) for x in series], rtt_axis)
            ax.set_xlabel(rtt_axis.label)
        ax.grid(alpha=0.3)
    return _svg(fig, "Retransmissions and RTT over time" if len(panels) == 2 else
                "Retransmissions over time" if panels == ["retrans"] else "RTT over time"), notes


def _retrans_panel(ax: Any, tt: np.ndarray, retr: np.ndarray, span: float, bins: int) -> None:
    edges = np.linspace(0.0, span, bins + 1)
    counts = np.histogram(tt[retr], bins=edges)[0]
    some = counts > 0  # a bar where retransmissions happened, nothing drawn where none did
    for bar in ax.bar(edges[:-1][some], counts[some], width=edges[1] - edges[0], align="edge", color="red",
                      label="retransmissions (left axis)"):
        _tag(bar, "data")
    ax.set_ylim(0, max(int(counts.max()), 1) * 1.15)
    ax.set_ylabel("retransmissions per bin")
    ax.set_title("Retransmissions over time")
    other = ax.twinx()  # all segments on their own scale: thousands of them must not flatten a few retransmissions
    segs = np.histogram(tt, bins=edges)[0]
    _tag(other.stairs(segs, edges, color="0.55", linewidth=1, label="all TCP segments (right axis)"), "aux")
    other.set_ylim(0, max(int(segs.max()), 1) * 1.15)
    other.set_ylabel("TCP segments per bin", color="0.4")
    lines = ax.get_legend_handles_labels()
    more = other.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper right", fontsize=8)


def _rtt_panel(ax: Any, series: list[tuple[np.ndarray, np.ndarray, str, str]], axis: TimeAxis) -> None:
    """RTT samples: linear up to a cap (outliers drawn at the top and counted), or on a log scale when
    they span orders of magnitude (a handshake retried after 1 s beside sub-millisecond ACKs), so the
    bulk of the samples is never a flat line along the bottom."""
    allv = np.concatenate([v for _, v, _, _ in series])
    pos = allv[allv > 0]
    log = pos.size >= 2 and float(pos.max()) / max(float(np.median(pos)), 1e-9) > _RTT_LOG
    cap = float(allv.max()) if log else max(float(np.percentile(allv, 95)) * _RTT_CLIP, float(np.median(allv)) * 2, 1e-3)
    top = min(float(allv.max()), cap)
    floor = float(pos.min()) / 2 if log else 0.0
    for ts, v, label, color in series:
        inside = v <= cap
        shown = np.maximum(v[inside], floor) if log else v[inside]
        _tag(ax.plot(axis.x(ts[inside]), shown, ".", markersize=4 if "per flow" not in label else 6, color=color,
                     label=label, rasterized=int(inside.sum()) > _DENSE)[0], "data")
        if (~inside).any():
            _tag(ax.plot(axis.x(ts[~inside]), np.full(int((~inside).sum()), top * 1.04), "^", markersize=5,
                         color=color, clip_on=False)[0], "data")
    over = int(np.count_nonzero(allv > cap))
    if over:
        ax.annotate(f"▲ {over} sample(s) above the chart, up to {float(allv.max()):.1f} ms", xy=(0.01, 0.99),
                    xycoords="axes fraction", ha="left", va="top", fontsize=8,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1})
    if log:
        ax.set_yscale("log")
        ax.set_ylim(floor / 1.5, top * 1.5)
        ax.set_ylabel("RTT (ms, log scale)")
    else:
        ax.set_ylim(0, top * 1.1 if top > 0 else 1.0)
        ax.set_ylabel("RTT (ms)")
    ax.set_title("RTT over time")
    _legend(ax)


def delay_svg(t: np.ndarray, delay_ms: np.ndarray, a_to_b: np.ndarray) -> str | None:
    """One-way delay of every matched packet over time, A→B and B→A (compare mode); None without samples.

    Rising delay in one direction only is queueing on that direction's path; a step in both is a route
    change; the two directions drifting apart is clock drift between the probes.
    """
    if not len(t):
        return None
    axis = TimeAxis(t)
    fig, (ax,) = _figure(10, 3.6)
    _kind(ax, "delay")
    xs = []
    for m, name, color in ((a_to_b, "A → B", "tab:blue"), (~a_to_b, "B → A", "tab:orange")):
        if m.any():
            xs.append(axis.x(t[m]))
            _tag(ax.plot(xs[-1], delay_ms[m], ".", markersize=3, color=color, label=name,
                         rasterized=int(m.sum()) > _DENSE)[0], "data")
    lo, hi = float(np.min(delay_ms)), float(np.max(delay_ms))
    pad = max(hi - lo, abs(hi) * 0.05, 1e-3) * 0.1
    ax.set_ylim(min(0.0, lo - pad), hi + pad)
    _xlim(ax, xs, axis)
    ax.set_xlabel(axis.label.replace("capture's first packet", "first matched packet (A's clock)"))
    ax.set_ylabel("one-way delay (ms)")
    ax.set_title("One-way delay between the capture points (clock offset removed)")
    _legend(ax)
    ax.grid(alpha=0.3)
    return _svg(fig, "One-way delay between the capture points over time")
