"""HTML report: self-contained (inline SVG charts), the Markdown report's content; summary first, readable charts."""

from __future__ import annotations

import itertools
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from netghost.forensics.compare import write_compare_outputs
from netghost.forensics.engine import analyze_capture
from netghost.forensics.report import build_semantic, write_html_report
from netghost.forensics.report._charts import (
    TimeAxis,
    charts_available,
    rtt_samples,
    sequence_graph_svg,
    stream_data_segments,
    time_gaps,
    timeline_svg,
)
from netghost.forensics.report._html import (
    NO_MATPLOTLIB,
    chart_flow,
    markdown_to_html,
    render_html,
    worst_stream,
)
from tests.forensics.pcapwriter import ACK, PSH, SYN, Capture

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
A = PAIRS / "chrissanders_ppa2e_http_espn_A.pcap"
B = PAIRS / "chrissanders_ppa2e_http_espn_B.pcap"


class _Tags(HTMLParser):
    """Counts open/close tags so an unbalanced page fails."""

    VOID = frozenset({"meta", "img", "br", "hr", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.imgs: list[str] = []
        self.svgs: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a.get("src") or "")
        if tag == "svg":
            self.svgs.append(a.get("aria-label") or "")
        for k in ("src", "href"):
            if a.get(k) and not str(a[k]).startswith(("data:", "#")):
                self.external.append(str(a[k]))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def _parse(page: str) -> _Tags:
    t = _Tags()
    t.feed(page)
    assert not t.errors and not t.stack, (t.errors, t.stack)
    assert t.external == []  # self-contained: nothing fetched
    return t


@pytest.fixture(scope="module")
def espn() -> tuple[Any, dict[str, Any]]:
    an = analyze_capture(A)
    return an, build_semantic(an)


def test_single_capture_html_has_charts(espn: tuple[Any, dict[str, Any]], tmp_path: Path) -> None:
    assert charts_available()
    an, sem = espn
    out = tmp_path / "r.html"
    notices = write_html_report(out, sem, an)
    assert notices == []
    page = out.read_text()
    tags = _parse(page)
    assert tags.imgs == [] and len(tags.svgs) == 2  # inline SVG: text stays text, nothing to decode
    s = worst_stream(sem, an)
    assert s == sem["flows"][0]["stream"] and chart_flow(sem, an) == (s, True)
    assert f"Sequence graph of the worst flow that carried data, tcp/{s}" in page
    for f in sem["findings"]:
        assert f["id"] in page
    # summary first, then the charts, then the detail
    assert page.index("<h2>Executive Summary</h2>") < page.index("<h2>Charts</h2>") < page.index("<h2>Capture</h2>")
    # every time chart reads the capture's clock; the retransmission and RTT panels share one labelled axis
    assert page.count("seconds since the capture's first packet") == 2
    assert "time-gaps" not in page  # a 2 s capture has no gap to report


def test_without_matplotlib_says_so(espn: tuple[Any, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    assert not charts_available()
    an, sem = espn
    page, notices = render_html(sem, an)
    assert NO_MATPLOTLIB in page
    assert notices == ["--format html: " + NO_MATPLOTLIB]
    assert _parse(page).svgs == []
    assert "## " not in page and "<h2>Findings</h2>" in page  # report still complete


def test_compare_html_draws_impaired_flow(tmp_path: Path) -> None:
    res = write_compare_outputs(A, B, semantic_dir=tmp_path, report_dir=tmp_path, formats={"html"})
    (out,) = res.written
    assert out.name.endswith("_vs_chrissanders_ppa2e_http_espn_B_forensic_report.html")
    page = out.read_text()
    assert len(_parse(page).svgs) == 3
    assert "One-way delay between the capture points over time" in page
    inj = res.doc["comparison"]["injected_packets"][0]["flow"]
    assert f"Sequence graph of the worst flow that carried data, {inj}" in page
    assert "Injected between A and B" in page


def test_empty_capture_html(tmp_path: Path) -> None:
    an = analyze_capture(Capture().write(tmp_path / "e.pcap"))
    page, _ = render_html(build_semantic(an), an)
    assert "No traffic captured" in page
    assert _parse(page).svgs == []


def test_markdown_subset_is_escaped() -> None:
    html = markdown_to_html("# T <x>\n\n- **bold** `a<b`\n\n| h1 | h2 |\n|---|---|\n| <script> | 2 |\ntext & more")
    assert "<h1>T &lt;x&gt;</h1>" in html
    assert "<li><strong>bold</strong> <code>a&lt;b</code></li>" in html
    assert "<td>&lt;script&gt;</td>" in html and "<script>" not in html
    assert "<p>text &amp; more</p>" in html
    assert "---" not in html


def _rtt_flow(tmp_path: Path, isn: int) -> Any:
    cap = Capture()
    c, s = ("10.0.0.1", 40000), ("10.0.0.2", 80)
    t = 100.0
    cap.tcp(t, *c[:1], *s[:1], c[1], s[1], isn, 0, SYN)
    cap.tcp(t + 0.05, s[0], c[0], s[1], c[1], 5, isn + 1, SYN | ACK)
    cap.tcp(t + 0.10, c[0], s[0], c[1], s[1], isn + 1, 6, ACK)
    seq = isn + 1
    for k in range(5):
        t0 = t + 1 + k
        cap.tcp(t0, c[0], s[0], c[1], s[1], seq, 6, PSH | ACK, data=b"x" * 100)
        if k == 2:  # retransmitted after 0.3 s: Karn's rule drops both copies from the samples
            cap.tcp(t0 + 0.3, c[0], s[0], c[1], s[1], seq, 6, PSH | ACK, data=b"x" * 100)
            cap.tcp(t0 + 0.35, s[0], c[0], s[1], c[1], 6, seq + 100, ACK)
        else:
            cap.tcp(t0 + 0.05, s[0], c[0], s[1], c[1], 6, seq + 100, ACK)
        seq += 100
    return analyze_capture(cap.write(tmp_path / f"rtt{isn}.pcap"))


@pytest.mark.parametrize("isn", [1000, 0xFFFFFFFF - 250])  # the second wraps the sequence space mid-flow
def test_rtt_samples_and_sequence_graph(tmp_path: Path, isn: int) -> None:
    an = _rtt_flow(tmp_path, isn)
    ts, rtt = rtt_samples(an, 0, from_client=True)
    assert len(ts) == 4
    assert np.allclose(rtt, 0.05, atol=1e-5)
    assert rtt_samples(an, 0, from_client=False)[0].size == 0  # the server sends no data
    svg = sequence_graph_svg(an, 0, "seq", TimeAxis(an.cols.ts))
    assert svg.startswith('<svg class="chart" role="img" aria-label="seq" ')
    assert "retransmissions" in svg  # legend text is text (svg.fonttype none): searchable


def test_a_timeline_with_nothing_to_show_is_not_drawn_and_says_so(tmp_path: Path) -> None:
    cap = Capture()
    cap.tcp(1.0, "10.0.0.1", "10.0.0.2", 1, 2, 5, 0, SYN)  # one unanswered SYN: no retransmission, no RTT
    an = analyze_capture(cap.write(tmp_path / "syn.pcap"))
    svg, notes = timeline_svg(an, TimeAxis(an.cols.ts), 0)
    assert svg is None
    assert notes == ["Retransmissions: none in this capture.",
                     "RTT: no samples (no handshake or data was acknowledged)."]
    page, _ = render_html(build_semantic(an), an)
    assert '<p class="chart-none">Retransmissions: none in this capture.</p>' in page
    assert "Retransmissions over time" not in page  # never an empty frame with a title


def test_narrative_block_is_labelled_and_escaped(espn: tuple[Any, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # charts off: this test is about the text
    an, sem = espn
    page, _ = render_html(sem, an, narrative="Loss <b>between</b> A & B (F1).", model="gemini-2.5-flash")
    _parse(page)
    assert '<div class="narrative"><strong>Narrative (written by Gemini (gemini-2.5-flash)' in page
    assert "Loss &lt;b&gt;between&lt;/b&gt; A &amp; B (F1)." in page
    plain, _ = render_html(sem, an)
    assert 'class="narrative"' not in plain


def test_a_flow_that_never_carried_data_is_drawn_as_a_handshake_ladder(tmp_path: Path) -> None:
    cap = Capture()
    for k, t in enumerate((1.0, 2.0, 4.0)):  # one SYN, retried twice, never answered
        cap.tcp(t, "10.0.0.1", "10.0.0.2", 40000, 6379, 7, 0, SYN)
        del k
    an = analyze_capture(cap.write(tmp_path / "syn.pcap"))
    sem = build_semantic(an)
    assert chart_flow(sem, an) == (0, False)
    page, _ = render_html(sem, an)
    tags = _parse(page)
    assert "Handshake ladder of the worst flow, tcp/0 (no flow carried data)" in tags.svgs
    assert "Sequence graph" not in page  # never a sequence graph of nothing (a 0-1 byte axis)
    assert page.count("SYN (retransmission)") == 2


def _gap_capture(tmp_path: Path) -> Any:
    """A flow in 2016, then the same pair talking again in 2022: a six-year silence inside one file."""
    cap = Capture()
    for base in (1_460_000_000.0, 1_650_000_000.0):
        c, s = ("10.0.0.1", 40000 + int(base) % 7), ("10.0.0.2", 80)
        cap.tcp(base, c[0], s[0], c[1], s[1], 100, 0, SYN)
        cap.tcp(base + 0.01, s[0], c[0], s[1], c[1], 500, 101, SYN | ACK)
        cap.tcp(base + 0.02, c[0], s[0], c[1], s[1], 101, 501, ACK)
        cap.tcp(base + 0.03, c[0], s[0], c[1], s[1], 101, 501, PSH | ACK, data=b"x" * 200)
        cap.tcp(base + 0.04, s[0], c[0], s[1], c[1], 501, 301, ACK)
    return analyze_capture(cap.write(tmp_path / "gap.pcap"))


def test_a_six_year_gap_is_cut_from_the_axis_and_reported(tmp_path: Path) -> None:
    an = _gap_capture(tmp_path)
    (gap,) = time_gaps(an.cols.ts)
    assert gap.seconds == pytest.approx(190_000_000 - 0.04, abs=1e-3)
    axis = TimeAxis(an.cols.ts)
    assert float(axis.x(an.cols.ts).max()) < 1.0  # 0.08 s of activity, not a ×1e8 s axis
    page, _ = render_html(build_semantic(an), an)
    _parse(page)
    finding = re.search(r'<div class="finding" id="time-gaps">(.*?)</div>', page, flags=re.S)
    assert finding and "no packets for 6.0 years, from 2016-04-07" in finding.group(1)
    assert page.index('id="time-gaps"') < page.index("<h2>Charts</h2>")
    assert "6.0 years silent" in page  # the break is labelled on the chart itself
    assert "silences cut out" in page


def test_which_silences_are_cut() -> None:
    # bursts a minute apart: both silences cut, whatever their length in absolute terms
    bursts = np.concatenate([np.linspace(t, t + 1, 20) for t in (0.0, 60.0, 120.0)])
    assert [round(g.seconds) for g in time_gaps(bursts)] == [59, 59]
    assert time_gaps(np.array([0.0, 1.0, 2.0, 50.0, 51.0])) != []  # a 48 s pause in 51 s of capture: cut
    assert time_gaps(np.array([0.0, 10.0, 500.0, 505.0])) != []  # 490 s of 505: cut
    assert time_gaps(np.array([0.0, 70.0, 140.0, 210.0, 280.0])) == []  # regular polling: the rhythm itself
    assert time_gaps(np.array([0.0, 0.6, 1.8, 4.2, 9.0])) == []  # a retransmission timer doubling: the story
    assert time_gaps(np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.5])) == []  # under two seconds: never cut
    steady = np.arange(0.0, 600.0, 0.5)  # traffic all along with one 8 s pause: not worth a break
    assert time_gaps(np.r_[steady, steady[-1] + 8 + np.arange(0.0, 600.0, 0.5)]) == []


def test_the_axis_counts_real_seconds_across_cuts() -> None:
    ts = 1000.0 + np.concatenate([np.linspace(t, t + 1, 20) for t in (0.0, 60.0, 120.0)])
    axis = TimeAxis(ts)
    assert axis.extent < 4.0  # three one-second bursts and two narrow breaks
    for t in (1000.0, 1000.5, 1060.25, 1121.0):
        assert axis.real(float(axis.x(np.array([t]))[0])) == pytest.approx(t - 1000.0)
    xs, labels = axis.ticks(0.0, axis.extent)
    assert labels[0] == "0" and "60" in labels and "120" in labels  # each burst labelled with its real time
    assert all(b > a for a, b in itertools.pairwise(xs))  # left to right, never out of order


def test_the_flow_the_headline_finding_names_is_drawn_first(espn: tuple[Any, dict[str, Any]]) -> None:
    an, sem = espn
    ranked_first = sem["flows"][0]["stream"]
    other = next(f["stream"] for f in sem["flows"][1:] if stream_data_segments(an, f["stream"]) >= 3)
    assert chart_flow({**sem, "findings": [{"flows": [f"tcp/{other}"]}]}, an) == (other, True)
    assert chart_flow(sem, an) == (ranked_first, True)
