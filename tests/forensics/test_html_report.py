"""HTML report: self-contained (inline PNG), the Markdown report's content, charts only with matplotlib."""

from __future__ import annotations

import base64
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from netghost.forensics.compare import write_compare_outputs
from netghost.forensics.engine import analyze_capture
from netghost.forensics.report import build_semantic, write_html_report
from netghost.forensics.report._charts import charts_available, rtt_samples, sequence_graph_png, timeline_png
from netghost.forensics.report._html import NO_MATPLOTLIB, markdown_to_html, render_html, worst_stream
from tests.forensics.pcapwriter import ACK, PSH, SYN, Capture

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
A = PAIRS / "chrissanders_ppa2e_http_espn_A.pcap"
B = PAIRS / "chrissanders_ppa2e_http_espn_B.pcap"
PNG = b"\x89PNG\r\n\x1a\n"


class _Tags(HTMLParser):
    """Counts open/close tags so an unbalanced page fails."""

    VOID = frozenset({"meta", "img", "br", "hr", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.imgs: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a.get("src") or "")
        for k in ("src", "href"):
            if a.get(k) and not str(a[k]).startswith("data:"):
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
    assert len(tags.imgs) == 2
    for src in tags.imgs:
        assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG)
    s = worst_stream(sem, an)
    assert s == sem["flows"][0]["stream"]
    assert f"Sequence graph of the worst flow, tcp/{s}" in page
    for f in sem["findings"]:
        assert f["id"] in page
    assert "<h2>Executive Summary</h2>" in page


def test_without_matplotlib_says_so(espn: tuple[Any, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    assert not charts_available()
    an, sem = espn
    page, notices = render_html(sem, an)
    assert NO_MATPLOTLIB in page
    assert notices == ["--format html: " + NO_MATPLOTLIB]
    assert _parse(page).imgs == []
    assert "## " not in page and "<h2>Findings</h2>" in page  # report still complete


def test_compare_html_draws_impaired_flow(tmp_path: Path) -> None:
    res = write_compare_outputs(A, B, semantic_dir=tmp_path, report_dir=tmp_path, formats={"html"})
    (out,) = res.written
    assert out.name.endswith("_vs_chrissanders_ppa2e_http_espn_B_forensic_report.html")
    page = out.read_text()
    assert len(_parse(page).imgs) == 3
    assert "One-way delay between the capture points over time" in page
    inj = res.doc["comparison"]["injected_packets"][0]["flow"]
    assert f"Sequence graph of the worst flow, {inj}" in page
    assert "Injected between A and B" in page


def test_empty_capture_html(tmp_path: Path) -> None:
    an = analyze_capture(Capture().write(tmp_path / "e.pcap"))
    page, _ = render_html(build_semantic(an), an)
    assert "No traffic captured" in page
    assert _parse(page).imgs == []


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
    assert sequence_graph_png(an, 0).startswith(PNG)


def test_timeline_without_rtt_samples(tmp_path: Path) -> None:
    cap = Capture()
    cap.tcp(1.0, "10.0.0.1", "10.0.0.2", 1, 2, 5, 0, SYN)  # one unanswered SYN: no RTT of any kind
    an = analyze_capture(cap.write(tmp_path / "syn.pcap"))
    assert timeline_png(an, 0).startswith(PNG)  # and no "no artists with labels" warning (warnings are errors)


def test_narrative_block_is_labelled_and_escaped(espn: tuple[Any, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # charts off: this test is about the text
    an, sem = espn
    page, _ = render_html(sem, an, narrative="Loss <b>between</b> A & B (F1).", model="gemini-2.5-flash")
    _parse(page)
    assert '<div class="narrative"><strong>Narrative (written by Gemini (gemini-2.5-flash)' in page
    assert "Loss &lt;b&gt;between&lt;/b&gt; A &amp; B (F1)." in page
    plain, _ = render_html(sem, an)
    assert 'class="narrative"' not in plain
