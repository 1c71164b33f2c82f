"""Charts for the HTML report (matplotlib is an optional extra: ``pip install netghost[charts]``).

WHY these charts: a tcptrace-style sequence graph shows at a glance whether a flow stalls on loss
(red retransmissions, flat ACK line), on the receiver (ACK line touching the window line) or on the
sender (idle gaps); retransmissions and RTT over time show when the path degraded.

Rendering uses matplotlib's object API with the Agg canvas (no pyplot, no global backend switch),
so it is safe in a headless process and in threads. Each function returns PNG bytes; the caller
embeds them (base64) so the HTML file is self-contained.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from netghost.forensics.engine import Analysis
from netghost.forensics.tcp import FLAG_BITS

__all__ = ["charts_available", "delay_png", "rtt_samples", "sequence_graph_png", "timeline_png"]

_WRAP = 1 << 32


def charts_available() -> bool:
    """True when matplotlib can be imported (the ``charts`` extra is installed)."""
    try:
        import matplotlib  # noqa: F401, PLC0415  probe only
    except ImportError:
        return False
    return True


def _figure(w: float, h: float, rows: int = 1) -> tuple[Any, Any, list[Any]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415  optional extra
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=(w, h), dpi=100, layout="constrained")
    canvas = FigureCanvasAgg(fig)
    axes = [fig.add_subplot(rows, 1, i + 1) for i in range(rows)]
    return fig, canvas, axes


def _png(canvas: Any) -> bytes:
    buf = io.BytesIO()
    canvas.print_png(buf)
    return buf.getvalue()


def _decorate(ax: Any, xlabel: str, ylabel: str, title: str) -> None:
    """Labels, title and grid; a legend only when something was plotted (an empty one warns)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)


def _stream_rows(an: Analysis, stream: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions into tcp_rows, from-client mask, retransmission mask) of one stream, in frame order."""
    pos = np.flatnonzero(an.tcp_stream == stream)
    rows = an.tcp_rows[pos]
    c, st = an.cols, an.streams
    from_c = (c.src_hi[rows] == st.c_hi[stream]) & (c.src_lo[rows] == st.c_lo[stream]) & (c.sport[rows] == st.c_port[stream])
    retr = (an.tcp_flags[pos] & FLAG_BITS["retransmission"]) != 0
    return pos, from_c, retr


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


def sequence_graph_png(an: Analysis, stream: int, title: str = "") -> bytes:
    """tcptrace-style time/sequence graph of one stream's busier direction.

    Segments are vertical bars (seq → seq+len), retransmissions red; the peer's ACK number is the
    green step line and ACK + advertised window (scaled) the olive line.
    """
    pos, from_c, retr = _stream_rows(an, stream)
    c, st = an.cols, an.streams
    rows = an.tcp_rows[pos]
    pay = c.paylen[rows].astype(np.int64)
    data_dir = bool(pay[from_c].sum() >= pay[~from_c].sum())
    snd, rcv = from_c == data_dir, (from_c != data_dir) & ((c.tcp_flags[rows] & 0x10) != 0)
    t0 = float(c.ts[rows].min()) if rows.size else 0.0
    base = int(c.seq[rows[snd]][0]) if snd.any() else 0
    fig, canvas, (ax,) = _figure(10, 4.5)
    s_rel = ((c.seq[rows[snd]] - base) % _WRAP).astype(np.float64)
    t = c.ts[rows[snd]] - t0
    ln = pay[snd].astype(np.float64)
    rt = retr[snd]
    ax.vlines(t[~rt], s_rel[~rt], s_rel[~rt] + np.maximum(ln[~rt], 1), colors="black", linewidth=1, label="segments")
    if rt.any():
        ax.vlines(t[rt], s_rel[rt], s_rel[rt] + np.maximum(ln[rt], 1), colors="red", linewidth=2, label="retransmissions")
    if rcv.any():
        ta = c.ts[rows[rcv]] - t0
        a_rel = ((c.ack[rows[rcv]] - base) % _WRAP).astype(np.float64)
        a_rel = np.where(a_rel > _WRAP // 2, 0.0, a_rel)
        ws = st.ws_s[stream] if data_dir else st.ws_c[stream]
        scale = float(1 << int(ws)) if ws >= 0 else 1.0
        win = c.win[rows[rcv]].astype(np.float64) * scale
        ax.step(ta, a_rel, where="post", color="green", linewidth=1, label="ACK")
        ax.step(ta, a_rel + win, where="post", color="olive", linewidth=0.8, label="receive window")
    ax.set_xlabel("seconds since the flow's first packet")
    ax.set_ylabel("relative sequence number (bytes)")
    ax.set_title(title or f"Sequence graph, tcp/{stream}")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    del fig
    return _png(canvas)


def timeline_png(an: Analysis, stream: int | None = None, bins: int = 60) -> bytes:
    """Retransmissions per time bin over the whole capture, and RTT over time.

    The RTT panel shows every stream's handshake RTT at its start time and, for ``stream``, the
    data-to-ACK samples of :func:`rtt_samples` in both directions.
    """
    c = an.cols
    fig, canvas, (ax1, ax2) = _figure(10, 5.5, rows=2)
    t0 = float(c.ts.min()) if len(c) else 0.0
    tt = c.ts[an.tcp_rows] - t0
    retr = (an.tcp_flags & FLAG_BITS["retransmission"]) != 0
    span = float(tt.max()) if tt.size else 1.0
    edges = np.linspace(0.0, max(span, 1e-3), bins + 1)
    ax1.stairs(np.histogram(tt, bins=edges)[0], edges, fill=True, color="lightgray", label="TCP segments")
    ax1.stairs(np.histogram(tt[retr], bins=edges)[0], edges, fill=True, color="red", label="retransmissions")
    ax1.set_ylabel("segments per bin")
    ax1.set_yscale("symlog")
    ax1.legend(loc="upper right", fontsize=8)
    ax1.set_title("Retransmissions over time")
    ax1.grid(alpha=0.3)
    st = an.streams
    ok = ~np.isnan(st.irtt)
    if ok.any():
        ax2.scatter(st.first_ts[ok] - t0, st.irtt[ok] * 1000, s=10, color="tab:blue", label="handshake RTT (per flow)")
    if stream is not None:
        for side, name, color in ((True, "client", "tab:orange"), (False, "server", "tab:green")):
            ts, rtt = rtt_samples(an, stream, side)
            if ts.size:
                ax2.plot(ts - t0, rtt * 1000, ".", markersize=4, color=color,
                         label=f"tcp/{stream}: {name} data → ACK")
    _decorate(ax2, "seconds since the first packet", "RTT (ms)", "RTT over time")
    del fig
    return _png(canvas)


def delay_png(t: np.ndarray, delay_ms: np.ndarray, a_to_b: np.ndarray) -> bytes:
    """One-way delay of every matched packet over time, A→B and B→A (compare mode).

    Rising delay in one direction only is queueing on that direction's path; a step in both is a route
    change; the two directions drifting apart is clock drift between the probes.
    """
    fig, canvas, (ax,) = _figure(10, 3.8)
    t0 = float(t.min()) if t.size else 0.0
    for m, name, color in ((a_to_b, "A → B", "tab:blue"), (~a_to_b, "B → A", "tab:orange")):
        if m.any():
            ax.plot(t[m] - t0, delay_ms[m], ".", markersize=3, color=color, label=name)
    _decorate(ax, "seconds since the first matched packet (A's clock)", "one-way delay (ms)",
              "One-way delay between the capture points (clock offset removed)")
    del fig
    return _png(canvas)
