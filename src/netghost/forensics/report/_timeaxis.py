"""The charts' time axis: capture time to x, with long silences cut out, marked, and labelled in real time.

WHY silences are cut: a capture whose traffic comes in bursts (a probe every minute, a job every
hour, a file reused years later) drawn on a plain time axis puts every packet on a few thin slivers
with the plot empty in between. A silence is cut when it is long (over :data:`MIN_CUT_S`), long
against the capture's own rhythm (over :data:`RHYTHM` times its median gap between packets, so the
doubling waits of a retransmission timer, which *are* the story, stay), and takes a visible share
of the axis: over :data:`GIANT` of the whole span, or over :data:`SHARE` of the axis left once those
are cut; the longest first, at most :data:`MAX_GAPS`. Each cut is drawn as a narrow hatched band
labelled with its length, and the report lists the long ones as a finding.

WHY ticks are labelled in real time: after a cut, x is no longer "seconds since the first packet";
the labels are (each segment between cuts gets its own round ticks), so a retransmission drawn at
a tick reading 120 happened 120 s after the capture's first packet, wherever the cuts put it. A
stretch that starts more than a day after the first packet is labelled with that distance
("5.8 years") and counts from there ("+20"), since nine-digit seconds read as noise. An
axis can be built from one flow's packets (its own silences cut) and still count from the capture's
first packet, so every chart of a report reads the same clock.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

__all__ = ["FAR_S", "GIANT", "MAX_GAPS", "MIN_CUT_S", "RHYTHM", "SHARE", "Gap", "TimeAxis", "describe_gap", "span_text", "time_gaps"]

MIN_CUT_S = 0.5
RHYTHM = 20.0
GIANT = 0.25
SHARE = 0.10
MAX_GAPS = 8
_BREAK = 0.02  # each cut is drawn this share of the active span wide
_TICKS = 8  # ticks over the whole axis, shared out among the segments by width
FAR_S = 86400.0  # a stretch starting later than this after the origin is labelled from its own start


@dataclass(frozen=True)
class Gap:
    """A silence in the capture: no packet between ``start`` and ``end`` (epoch seconds)."""

    start: float
    end: float

    @property
    def seconds(self) -> float:
        """Its length."""
        return self.end - self.start


def span_text(seconds: float) -> str:
    """A length of time in the largest unit that fits: ``59.2 s``, ``3.1 min``, ``1.5 years``."""
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
    return f"no packets for {span_text(gap.seconds)}, from {_when(gap.start)} to {_when(gap.end)}"


def time_gaps(ts: np.ndarray) -> list[Gap]:
    """The silences worth cutting out of a time axis (see the module docstring), in time order.

    Two passes: first every silence over :data:`GIANT` of the whole span (a file reused years later,
    bursts a minute apart), then, on the axis those cuts leave, every silence over :data:`SHARE` of
    it; both only past the rhythm floor, the longest first, at most :data:`MAX_GAPS`.
    """
    t = np.sort(np.asarray(ts, dtype=np.float64)[np.isfinite(ts)])
    if t.size < 2:
        return []
    d = np.diff(t)
    # a rhythm needs a few gaps to be one: with one or two, only the absolute floor applies
    floor = max(MIN_CUT_S, RHYTHM * float(np.median(d))) if d.size >= 3 else MIN_CUT_S
    cand = np.flatnonzero(d > floor)
    cand = cand[np.argsort(-d[cand], kind="stable")][:MAX_GAPS]
    span = float(t[-1] - t[0])
    giant = [int(i) for i in cand if d[i] > GIANT * span]
    left = span - float(d[giant].sum()) if giant else span
    rest = [int(i) for i in cand if int(i) not in giant and d[i] > SHARE * left]
    return [Gap(float(t[i]), float(t[i + 1])) for i in sorted(giant + rest)]


class TimeAxis:
    """Capture time → x: seconds since ``t0`` with the silences of ``ts`` cut out (each a narrow break).

    Args:
        ts: the timestamps whose silences are cut (a whole capture's, or one flow's).
        t0: the origin of the labels (default: the first of ``ts``); a flow's axis passes the
            capture's first packet so its labels read the same clock as the capture's charts.
    """

    def __init__(self, ts: np.ndarray, t0: float | None = None) -> None:
        t = np.asarray(ts, dtype=np.float64)
        t = t[np.isfinite(t)]
        self.first = float(t.min()) if t.size else 0.0
        self.last = float(t.max()) if t.size else 0.0
        self.t0 = self.first if t0 is None else float(t0)
        self.gaps = time_gaps(t)
        active = (self.last - self.first) - sum(g.seconds for g in self.gaps)
        self.break_w = max(active, 1e-3) * _BREAK
        self.label = ("seconds since the capture's first packet"
                      + (" (silences cut out, marked //)" if self.gaps else ""))

    def x(self, ts: np.ndarray) -> np.ndarray:
        """x of each timestamp."""
        t = np.asarray(ts, dtype=np.float64)
        out = t - self.first
        for g in self.gaps:
            out = np.where(t >= g.end, out - g.seconds + self.break_w, out)
        return out

    def real(self, x: float) -> float:
        """Seconds since ``t0`` at ``x`` (the inverse of :meth:`x`; inside a break, the silence's start)."""
        shift = 0.0  # what the cuts before x took out of the axis
        for g in self.gaps:
            left = g.start - self.first - shift  # the break's x
            if x <= left:
                break
            if x < left + self.break_w * (1 - 1e-9):
                return g.start - self.t0
            shift += g.seconds - self.break_w
        return self.first + x + shift - self.t0

    @property
    def extent(self) -> float:
        """x of the last timestamp (the axis runs from 0 to it)."""
        return float(self.x(np.array([self.last]))[0])

    def segments(self) -> list[tuple[float, float]]:
        """The stretches between cuts, as (start, end) in seconds since ``t0``."""
        edges = [self.first, *(v for g in self.gaps for v in (g.start, g.end)), self.last]
        return [(edges[i] - self.t0, edges[i + 1] - self.t0) for i in range(0, len(edges), 2)]

    def ticks(self, lo: float, hi: float) -> tuple[list[float], list[str]]:
        """Tick positions (x) and labels (real seconds) for the view ``lo``..``hi`` in x.

        Each stretch between cuts gets round ticks in proportion to its width, and a stretch after a
        cut is labelled at its start (where time jumps); a tick too close to a kept one is dropped,
        a stretch's start winning over a plain tick.
        """
        from matplotlib.ticker import MaxNLocator  # noqa: PLC0415  drawn only with a chart

        width = max(hi - lo, 1e-9)
        fine = max(self.real(hi) - self.real(lo), 1e-6) / 100  # a stretch's start: to a hundredth of the view
        kept: list[tuple[float, str, bool]] = []  # (x, label, a stretch's start)
        far = 0.0
        named: set[float] = set()  # the far bases already written out in a label
        for k, (s, e) in enumerate(self.segments()):
            xs0, xs1 = (float(v) for v in self.x(np.array([s, e]) + self.t0))
            a, b = max(xs0, lo), min(xs1, hi)
            if b < a:
                continue
            ra = s if a == xs0 else self.real(a)  # the stretch's own ends, exactly (no round trip through x)
            rb = e if b == xs1 else self.real(b)
            # a stretch far from the origin (after a silence of days or years) counts from its own start:
            # "+20" after "5.8 years" reads; "184280760" does not
            if k and s >= FAR_S and not far:
                far = s  # the first stretch that far away: later stretches count from its start too
            base = far
            slack = 1e-9 * max(abs(ra - base), abs(rb - base), 1.0)
            n = round(_TICKS * (b - a) / width)
            values = ([float(v) + base for v in MaxNLocator(nbins=n, steps=[1, 2, 2.5, 5, 10]).tick_values(ra - base, rb - base)
                       if ra - base - slack <= v <= rb - base + slack] if n >= 1 and rb > ra else [])
            step = min((v2 - v1 for v1, v2 in itertools.pairwise(values)), default=max(rb - ra, 1e-6))
            starts = [s] if k and xs0 >= lo else []
            for v in sorted({*starts, *values}):
                x = float(self.x(np.array([v + self.t0]))[0])
                start = v in starts
                if kept and x - kept[-1][0] < 0.08 * width:
                    if not start or kept[-1][2]:
                        continue
                    kept.pop()
                if base:
                    text = span_text(v) if v == base else "+" + _tick_text(v - base, max(fine, step / 10) if start else step)
                    if v != base and base not in named:  # its "5.8 years" was crowded out: a bare "+20" says nothing
                        text = f"{span_text(base)} {text}"
                    named.add(base)
                else:
                    text = _tick_text(v, max(fine, step / 10) if start else step)
                kept.append((x, text, start))
        return [x for x, _, _ in kept], [t for _, t, _ in kept]

    def apply(self, ax: Any) -> None:
        """Put real-time ticks on ``ax`` for its current view and mark the cuts inside it."""
        from matplotlib.ticker import FixedFormatter, FixedLocator  # noqa: PLC0415

        lo, hi = ax.get_xlim()
        xs, labels = self.ticks(lo, hi)
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_major_formatter(FixedFormatter(labels))
        self.mark(ax)

    def mark(self, ax: Any) -> None:
        """Draw each cut inside the view as a hatched band labelled with the silence's length."""
        lo, hi = ax.get_xlim()
        for g in self.gaps:
            left = float(self.x(np.array([g.start]))[0])
            if not lo <= left < hi:  # a chart of one flow that ended before the silence: nothing was cut
                continue
            ax.axvspan(left, left + self.break_w, facecolor="white", edgecolor="0.4", hatch="//", linewidth=0.5,
                       zorder=3)
            ax.text(left + self.break_w / 2, 0.5, f"// {span_text(g.seconds)} silent //",
                    transform=ax.get_xaxis_transform(), rotation=90, ha="center", va="center", fontsize=7, color="0.2",
                    zorder=4, bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})


def _tick_text(v: float, step: float) -> str:
    """A tick's label with as many decimals as its spacing needs (``0``, ``2.5``, ``0.125``, ``59.3``)."""
    digits = min(max(0, -math.floor(math.log10(step)) + (0 if step >= 1 else 1)), 6) if step > 0 else 3
    text = f"{v:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
