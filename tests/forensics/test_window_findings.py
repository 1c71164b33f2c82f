"""Receive-window findings: a sender that fills the receiver's window (tshark's ``tcp.analysis.window_full``)
becomes a finding whose count is tshark's, and a zero window stays its own finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netghost.forensics import analyze_capture, build_semantic
from tests.forensics.pcapwriter import ACK, SYN, Capture

PCAPS = Path(__file__).resolve().parents[1] / "data" / "pcaps"
C, S = "10.0.1.5", "10.0.2.4"
MSS = 1000


def _bulk(cap: Capture, rounds: int, window: int, sport: int = 40000, t0: float = 0.0,  # noqa: PLR0917  test helper
          per_round: int | None = None) -> None:
    """A client sending ``rounds`` rounds of MSS segments to a server that advertises ``window`` bytes and
    ACKs once a round: each round sends ``per_round`` segments, by default as many as the window allows."""
    isn_c, isn_s = 1000, 9000
    cap.tcp(t0, C, S, sport, 21, isn_c, 0, SYN, win=window)
    cap.tcp(t0 + 0.001, S, C, 21, sport, isn_s, isn_c + 1, SYN | ACK, win=window)
    cap.tcp(t0 + 0.002, C, S, sport, 21, isn_c + 1, isn_s + 1, ACK, win=window)
    seq, t = isn_c + 1, t0 + 0.01
    for _ in range(rounds):
        for _ in range(per_round or window // MSS):
            cap.tcp(t, C, S, sport, 21, seq, isn_s + 1, ACK, data=b"x" * MSS, win=window)
            seq += MSS
            t += 0.0001
        t += 0.02
        cap.tcp(t, S, C, 21, sport, isn_s + 1, seq, ACK, win=window)
        t += 0.0001


def _window_full(sem: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in sem["findings"] if f["kind"] == "window_full"]


def test_a_receiver_limited_transfer_is_a_window_full_finding_with_tsharks_count(tmp_path: Path) -> None:
    cap = Capture()
    _bulk(cap, rounds=30, window=4 * MSS)
    _bulk(cap, rounds=3, window=64 * MSS, sport=40001, t0=5.0, per_round=8)  # never fills its window
    sem = build_semantic(analyze_capture(cap.write(tmp_path / "ftp.pcap")))
    (f,) = _window_full(sem)
    assert sem["summary"]["tcp_analysis"]["window_full"] == 30  # the last segment of every round fills it
    assert f["metrics"]["count"] == 30
    assert f["severity"] == "medium" and "limited by the receiver's window" in f["title"]
    (d,) = f["metrics"]["by_flow"]  # the second flow never met a full window
    assert d["flow"] == f["flows"][0] == "tcp/0"
    assert (d["sender"], d["receiver"], d["count"], d["data_segments"]) == (f"{C}:40000", f"{S}:21", 30, 120)
    assert d["receiver_window_bytes"] == 4 * MSS
    assert f"{C}:40000 filled the receive window of {S}:21" in f["title"]
    assert len(f["evidence"]["frames"]) == 10


def test_a_window_reached_once_is_noted_not_alarmed(tmp_path: Path) -> None:
    cap = Capture()
    _bulk(cap, rounds=1, window=4 * MSS)
    _bulk(cap, rounds=20, window=64 * MSS, sport=40001, t0=5.0, per_round=8)
    (f,) = _window_full(build_semantic(analyze_capture(cap.write(tmp_path / "once.pcap"))))
    assert f["metrics"]["count"] == 1 and f["severity"] == "info"
    assert "limited" not in f["title"]


@pytest.mark.parametrize("pcap", sorted(p.name for p in PCAPS.iterdir() if p.suffix in (".pcap", ".pcapng")))
def test_window_full_counts_match_tshark_on_the_corpus(pcap: str) -> None:
    truth = json.loads((PCAPS / f"{pcap}.tshark.json").read_text())["tcp"]["analysis_flag_counts"]["window_full"]
    found = _window_full(build_semantic(analyze_capture(PCAPS / pcap)))
    assert sum(f["metrics"]["count"] for f in found) == truth
    assert len(found) == (1 if truth else 0)
