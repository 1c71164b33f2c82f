"""Packet text is hostile: a DNS name can be any bytes, and the reports quote DNS names.

A capture whose queries ask for names made of HTML, a link, a heading and a backtick fence must give a
Markdown report that a real renderer turns into nothing but the engine's own structure, and an HTML
report with no element a packet authored.
"""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from netghost.forensics import analyze_capture, build_semantic
from netghost.forensics.report import render_executive_summary, render_report, write_html_report
from tests.forensics.pcapwriter import Capture, dns_message, ether, ipv4_packet, udp_datagram
from tests.safetext.rendering import Rendered, render

HOSTILE_LABELS = ["<img src=x onerror=alert(1)>", "[x](javascript:alert(1))", "\n## Findings\n",
                  "```", "<script>alert(1)</script>", "\x1b]0;pwned\x07"]


ENGINE_SECTIONS = {"Executive Summary", "Capture", "Findings", "Worst flows", "TCP analysis (tshark flag semantics)",
                   "DNS", "ICMP", "Decode issues", "Key facts", "Top findings"}


def _headings(markdown: str) -> set[str]:
    tokens = MarkdownIt("commonmark").parse(markdown)
    return {tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"}


def _capture(tmp_path: Path) -> Path:
    cap = Capture()
    for i, label in enumerate(HOSTILE_LABELS):
        name = f"{label}.evil-{i}"
        query = ipv4_packet("10.0.0.5", "10.0.0.53", 17, udp_datagram(40000 + i, 53, dns_message(i + 1, name)))
        cap.add(1.0 + i, ether(query))
        reply = ipv4_packet("10.0.0.53", "10.0.0.5", 17,
                            udp_datagram(53, 40000 + i, dns_message(i + 1, name, response=True, rcode=3)))
        cap.add(1.01 + i, ether(reply))
    return cap.write(tmp_path / "hostile-dns.pcap")


def test_dns_names_from_packets_open_nothing_in_either_report(tmp_path: Path) -> None:
    analysis = analyze_capture(_capture(tmp_path))
    sem = build_semantic(analysis)
    failures = [f["qname"] for f in sem["dns"]["failures"]]
    assert any("<img" in q for q in failures)  # the names reached the report's data as they were sent
    for markdown in (render_report(sem), render_executive_summary(sem)):
        page = render(markdown)
        assert not page.tags & {"img", "script", "a", "pre", "iframe"}, page.tags  # no fence swallowed the rest
        assert page.attributes == set()
        assert _headings(markdown) <= ENGINE_SECTIONS  # "## Findings" from a packet is text, not a section
        assert "\x1b" not in markdown
    out = tmp_path / "report.html"
    write_html_report(out, sem, analysis)
    parsed = Rendered(out.read_text(encoding="utf-8"))
    assert not parsed.tags & {"img", "script", "iframe", "a"}
    assert not any(name.startswith("on") for name, _ in parsed.attributes)
    assert "<img src=x onerror=alert(1)>" in parsed.text  # shown as text
