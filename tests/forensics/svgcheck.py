"""How much of each plot a chart's data covers, measured from the SVG alone.

The charts tag every plot area ``ghost-axes-*`` and every data series ``ghost-data-*`` (context such as
the receive-window line is ``ghost-aux-*`` and not measured). matplotlib writes absolute coordinates
(path vertices, ``<use x= y=>`` for markers), so the data's box and how it spreads over the plot are
read straight from the document, the way a person sees it: a series squeezed into a sliver by an
uncut silence, or flattened by another series' scale, covers little of its plot.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

SVG = "{http://www.w3.org/2000/svg}"
_NUM = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_CHART = re.compile(r'<svg class="chart".*?</svg>', re.S)
COLUMNS = 20


@dataclass
class Plot:
    """One plot area of a chart and the data drawn in it (SVG user units, y downwards)."""

    chart: str
    kind: str  # seq, retrans, rtt, delay (the chart's tag)
    box: tuple[float, float, float, float]  # x0, y0, x1, y1
    points: list[tuple[float, float]] = field(default_factory=list)
    aux: list[tuple[float, float]] = field(default_factory=list)  # context series (receive window, all segments)
    ticks: dict[str, float] = field(default_factory=dict)  # x tick label -> its x

    @property
    def reach(self) -> float:
        """How high above the plot's bottom the data reaches, as a share of its height (a series
        flattened by another's scale, or by an outlier, stays low)."""
        ys = [y for _, y in self._inside()]
        return (self.box[3] - min(ys)) / (self.box[3] - self.box[1]) if ys else 0.0

    def raised_columns(self, series: str = "data") -> float:
        """Share of the plot's :data:`COLUMNS` columns where ``series`` (data or aux) rises above the
        plot's bottom edge (a histogram's empty bins lie on it)."""
        x0, _, x1, y1 = self.box
        pts = self.points if series == "data" else self.aux
        cols = {min(max(int((x - x0) / (x1 - x0) * COLUMNS), 0), COLUMNS - 1) for x, y in pts if y < y1 - 0.5}
        return len(cols) / COLUMNS

    def _inside(self) -> list[tuple[float, float]]:
        x0, y0, x1, y1 = self.box
        return [(min(max(x, x0), x1), min(max(y, y0), y1)) for x, y in self.points]

    @property
    def width_share(self) -> float:
        """Share of the plot's width between the leftmost and rightmost data point."""
        xs = [x for x, _ in self._inside()]
        return (max(xs) - min(xs)) / (self.box[2] - self.box[0]) if xs else 0.0

    @property
    def height_share(self) -> float:
        """Share of the plot's height between the lowest and highest data point."""
        ys = [y for _, y in self._inside()]
        return (max(ys) - min(ys)) / (self.box[3] - self.box[1]) if ys else 0.0

    @property
    def one_level(self) -> bool:
        """All data at one height (e.g. equal RTTs): a line across the plot, not a flattened series."""
        ys = [y for _, y in self.points]
        return bool(ys) and max(ys) - min(ys) < 1.0

    @property
    def column_share(self) -> float:
        """Share of the plot's width, in :data:`COLUMNS` columns, holding some data point."""
        x0, _, x1, _ = self.box
        cols = {min(int((x - x0) / (x1 - x0) * COLUMNS), COLUMNS - 1) for x, _ in self._inside()}
        return len(cols) / COLUMNS


def charts_in(page: str) -> list[str]:
    """Every chart's ``<svg>`` in an HTML page."""
    return _CHART.findall(page)


def _coords(el: ET.Element) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for node in el.iter():
        if node.tag == f"{SVG}path" and node.get("d"):
            nums = [float(v) for v in _NUM.findall(node.get("d") or "")]
            out += list(zip(nums[0::2], nums[1::2], strict=False))
        elif node.tag == f"{SVG}use" and node.get("x") is not None:
            out.append((float(node.get("x") or 0), float(node.get("y") or 0)))
        elif node.tag == f"{SVG}image":
            x, y = float(node.get("x") or 0), float(node.get("y") or 0)
            out += [(x, y), (x + float(node.get("width") or 0), y + float(node.get("height") or 0))]
    return out


def plots(svg: str) -> list[Plot]:
    """The tagged plot areas of one chart, each with its data points, its context series (those on a
    twin axis included: each goes to the plot whose box holds most of its points) and its x ticks."""
    root = ET.fromstring(svg)
    label = root.get("aria-label") or ""
    out: list[Plot] = []
    aux: list[list[tuple[float, float]]] = []
    for axes in root.iter(f"{SVG}g"):
        if not re.fullmatch(r"axes_\d+", axes.get("id") or ""):
            continue
        aux += [_coords(g) for g in axes.iter(f"{SVG}g") if (g.get("id") or "").startswith("ghost-aux-")]
        patch = next((g for g in axes.iter(f"{SVG}g") if (g.get("id") or "").startswith("ghost-axes-")), None)
        if patch is None:  # a twin axis: its series are context, measured with the main one's plot
            continue
        xs, ys = zip(*_coords(patch), strict=True)
        kind = (patch.get("id") or "").rsplit("-", 1)[-1]
        plot = Plot(label, kind, (min(xs), min(ys), max(xs), max(ys)))
        for g in axes.iter(f"{SVG}g"):
            gid = g.get("id") or ""
            if gid.startswith("ghost-data-"):
                plot.points += _coords(g)
            elif re.fullmatch(r"xtick_\d+", gid):
                where = next((u.get("x") for u in g.iter(f"{SVG}use")), None)
                text = "".join(t.text or "" for t in g.iter(f"{SVG}text")).strip()
                if where is not None and text:
                    plot.ticks[text] = float(where)
        out.append(plot)
    for pts in aux:
        def held(p: Plot, pts: list[tuple[float, float]] = pts) -> int:
            x0, y0, x1, y1 = p.box
            return sum(x0 - 1 <= x <= x1 + 1 and y0 - 1 <= y <= y1 + 1 for x, y in pts)
        if out and pts:
            max(out, key=held).aux += pts
    return out
