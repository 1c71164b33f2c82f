"""Two captures that share no packet: the comparison says why in terms of the two capture windows, and never
lets "the windows missed each other" head a report whose points show a fault on their own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from netghost.forensics.compare import write_compare_outputs
from tests.forensics.pcapwriter import ACK, SYN, Capture

T0 = 1_700_000_000.0


def _client_side(t0: float) -> Capture:
    """Point A: a SYN to the server retried three times with no answer (A's own finding is high)."""
    cap = Capture()
    for dt in (0.0, 1.0, 3.0):
        cap.tcp(t0 + dt, "10.1.1.4", "10.1.2.4", 41000, 6379, 777, 0, SYN)
    return cap


def _server_side(t0: float) -> Capture:
    """Point B: another, healthy connection to the same server."""
    cap = Capture()
    cap.tcp(t0, "10.1.1.4", "10.1.2.4", 41500, 6379, 5, 0, SYN)
    cap.tcp(t0 + 0.001, "10.1.2.4", "10.1.1.4", 6379, 41500, 90, 6, SYN | ACK)
    cap.tcp(t0 + 0.002, "10.1.1.4", "10.1.2.4", 41500, 6379, 6, 91, ACK)
    return cap


def _compare(tmp_path: Path, b_start: float) -> tuple[dict[str, Any], str]:
    a = _client_side(T0).write(tmp_path / "client.pcap")
    b = _server_side(b_start).write(tmp_path / "server.pcap")
    res = write_compare_outputs(a, b, semantic_dir=tmp_path, report_dir=tmp_path)
    return res.doc, (tmp_path / "client_vs_server_executive_summary.md").read_text()


def test_windows_that_never_overlapped_say_so_and_never_blame_the_path(tmp_path: Path) -> None:
    doc, summary = _compare(tmp_path, T0 + 1200)
    comp = doc["comparison"]
    assert not comp["shared"]
    (f,) = [x for x in doc["findings"] if x["kind"] == "no_shared_traffic"]
    assert f["severity"] == "info" and f["metrics"]["time_overlap"] is False
    assert f["metrics"]["overlap_s"] == pytest.approx(-1197.0)
    assert "do not overlap (B started 19 min 57 s after A ended)" in f["title"]
    assert "windows never overlapped" in comp["note"]
    assert "A captured 22:13:20–22:13:23 UTC, B 22:33:20–22:33:20 UTC" in comp["note"]  # each point's own clock
    for text in (f["title"], comp["note"], summary):
        assert "not the same path" not in text and "not the same time" not in text
    # the report's headline is what the points show, not the missed windows
    assert doc["findings"][0]["kind"] == "syn_no_answer"
    assert "**Most likely issue:** SYN to 10.1.2.4:6379 retried 3×" in summary.replace("\\", "")


def test_windows_that_overlap_yet_share_nothing_point_at_the_traffic(tmp_path: Path) -> None:
    doc, _ = _compare(tmp_path, T0 + 0.5)
    (f,) = [x for x in doc["findings"] if x["kind"] == "no_shared_traffic"]
    assert f["severity"] == "medium" and f["metrics"]["time_overlap"] is True
    assert "although both captured for the same" in f["title"]
    assert "windows overlap for" in doc["comparison"]["note"] and "capture filter" in doc["comparison"]["note"]


def test_a_point_that_captured_nothing_is_named(tmp_path: Path) -> None:
    a = _client_side(T0).write(tmp_path / "client.pcap")
    b = Capture().write(tmp_path / "server.pcap")
    doc = write_compare_outputs(a, b, semantic_dir=tmp_path, report_dir=tmp_path).doc
    (f,) = [x for x in doc["findings"] if x["kind"] == "no_shared_traffic"]
    assert "point B captured no packet" in f["title"] and f["severity"] == "info"


