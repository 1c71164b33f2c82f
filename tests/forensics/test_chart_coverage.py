"""Every chart of every report on real captures shows its data, measured from the SVG alone.

The corpus captures (``tests/data/pcaps``), the two-point pair (``tests/data/pairs``) and captures of
the lab's worlds are rendered to HTML; each chart's plot areas are read back from the SVG
(:mod:`tests.forensics.svgcheck`) and must hold data (no empty chart), reach at least half the plot's
height (no series flattened by another's scale or an outlier) and, for the time series drawn to their
data (sequence graph, RTT, one-way delay), span at least half its width (no sliver beside an uncut
silence). The retransmission panel runs over the whole capture, so there the context line (all TCP
segments) must fill the axis: silences are cut. One synthetic capture in bursts a minute apart checks
that retransmissions are drawn at the tick of the time they happened.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from netghost.forensics import analyze_capture, build_semantic
from netghost.forensics.compare import write_compare_outputs
from netghost.forensics.engine import Analysis
from netghost.forensics.report._html import render_html
from netghost.lab.synth import synthesize_capture
from netghost.lab.world import load_world

from .pcapwriter import Capture
from .svgcheck import Plot, charts_in, plots

DATA = Path(__file__).resolve().parent.parent / "data"
CORPUS = sorted(p for p in (DATA / "pcaps").iterdir() if p.suffix in (".pcap", ".pcapng"))
LAB = (("path-packet-loss", "web-vm-01"), ("middlebox-rst", "web-vm-01"), ("healthy", "web-vm-01"),
       ("nsg-deny", "web-vm-01"))
T0 = 1_795_000_000.0
SYN, ACK, PSH = 0x02, 0x10, 0x08


def _page_plots(page: str) -> list[Plot]:
    found = []
    for svg in charts_in(page):
        ps = plots(svg)
        if not ps:  # a diagram, not a plot: a ladder of the flow's packets between its two ends
            assert "ladder" in svg[:300] and ">client<" in svg and ">server<" in svg, svg[:300]
            assert any(f">{flag}" in svg for flag in ("SYN", "RST", "ACK", "FIN")), "a ladder with no packet"
        found += ps
    return found


def _check(page: str, what: str, segments: int) -> list[Plot]:
    """The page's plots, each asserted to show its data."""
    found = _page_plots(page)
    for p in found:
        assert p.points, f"{what}: empty {p.kind} chart {p.chart!r}"
        labels = list(p.ticks)  # left to right; "+20" counts from a far stretch's start, named before it
        for i, text in enumerate(labels):
            if text.startswith("+"):
                assert any(re.search(r"\d (years|days|hours|min)\b", t) for t in labels[:i]), (what, p.kind, labels)
        assert p.reach >= 0.5, f"{what}: {p.kind} data flattened to {p.reach:.0%} of the height ({p.chart!r})"
        if p.kind in ("seq", "rtt", "delay"):
            assert p.width_share >= 0.5, f"{what}: {p.kind} data on {p.width_share:.0%} of the width ({p.chart!r})"
        elif p.kind == "retrans" and segments >= 100:  # enough traffic to judge: it fills the axis
            assert p.raised_columns("aux") >= 0.25, f"{what}: traffic on {p.raised_columns('aux'):.0%} of the axis"
        else:
            assert p.kind == "retrans", p.kind
    return found


def _tcp_segments(an: Analysis) -> int:
    return int(an.tcp_rows.size)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_corpus_capture_charts_show_their_data(path: Path) -> None:
    an = analyze_capture(path)
    page, _ = render_html(build_semantic(an), an)
    found = _check(page, path.name, _tcp_segments(an))
    if not _tcp_segments(an):  # nothing to draw: each chart is a sentence, never a frame
        assert found == [] and page.count('class="chart-none"') >= 2


@pytest.mark.parametrize(("world", "vm"), LAB, ids=str)
def test_lab_capture_charts_show_their_data(world: str, vm: str, tmp_path: Path) -> None:
    path = tmp_path / f"{world}.pcap"
    path.write_bytes(synthesize_capture(load_world(world), vm, T0, T0 + 60))
    an = analyze_capture(path)
    page, _ = render_html(build_semantic(an), an)
    assert _check(page, world, _tcp_segments(an))


def test_compare_report_charts_show_their_data(tmp_path: Path) -> None:
    res = write_compare_outputs(DATA / "pairs" / "chrissanders_ppa2e_http_espn_A.pcap",
                                DATA / "pairs" / "chrissanders_ppa2e_http_espn_B.pcap",
                                semantic_dir=tmp_path, report_dir=tmp_path, formats={"html"})
    (page,) = res.written
    kinds = [p.kind for p in _check(page.read_text(), "compare", 1000)]
    assert "delay" in kinds and "seq" in kinds


def test_retransmissions_are_drawn_at_the_time_they_happened(tmp_path: Path) -> None:
    cap = Capture()
    c, s = ("10.0.0.1", 40000), ("10.0.0.2", 443)
    for k, base in enumerate((0.0, 60.0, 120.0)):  # three one-second bursts a minute apart, one flow each
        port = c[1] + k
        cap.tcp(base, c[0], s[0], port, s[1], 100, 0, SYN)
        cap.tcp(base + 0.01, s[0], c[0], s[1], port, 500, 101, SYN | ACK)
        cap.tcp(base + 0.02, c[0], s[0], port, s[1], 101, 501, ACK)
        for i in range(20):
            seq = 101 + 100 * i
            t = base + 0.03 + 0.04 * i
            cap.tcp(t, c[0], s[0], port, s[1], seq, 501, PSH | ACK, data=b"x" * 100)
            if base == 60.0 and i == 10:  # the lost one, resent in the middle burst only
                cap.tcp(t + 0.02, c[0], s[0], port, s[1], seq, 501, PSH | ACK, data=b"x" * 100)
            cap.tcp(t + 0.03, s[0], c[0], s[1], port, 501, seq + 100, ACK)
    an = analyze_capture(cap.write(tmp_path / "bursts.pcap"))
    page, _ = render_html(build_semantic(an), an)
    (retrans,) = [p for p in _check(page, "bursts", _tcp_segments(an)) if p.kind == "retrans"]
    assert {"0", "60", "120"} <= set(retrans.ticks), retrans.ticks  # each burst labelled with its real time
    xs = [x for x, _ in retrans.points]
    x0, _, x1, _ = retrans.box
    bin_w = (x1 - x0) / 60
    assert min(xs) >= retrans.ticks["60"] - 2 * bin_w and max(xs) <= retrans.ticks["120"]  # in the middle burst
    assert retrans.ticks["60"] - x0 > 0.2 * (x1 - x0)  # not squeezed against an edge
    assert retrans.raised_columns("aux") >= 0.5  # the silences cut: traffic across the axis
