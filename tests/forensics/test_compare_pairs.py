"""Two-point truth: the comparison against pair_truth.json (made by tests/data/pairs/make_pair.py).

The corpus pair is checked as shipped, and fresh pairs are derived from the same real capture A with
other seeds, loss rates and injected-RST counts, so the result cannot be tuned to one file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from netghost.forensics.compare import compare_captures

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
A = PAIRS / "chrissanders_ppa2e_http_espn_A.pcap"
B = PAIRS / "chrissanders_ppa2e_http_espn_B.pcap"


def _check_truth(comp: dict[str, Any], truth: dict[str, Any]) -> dict[str, Any]:
    lost = comp["lost"]["a_to_b"]
    blocked = comp["blocked"]["at_b"]
    assert not lost["frames_truncated"] and not blocked["frames_truncated"]
    missing_at_b = set(lost["frames"]) | set(blocked["frames"])
    truth_missing = set(truth["dropped_frames_a"]) | set(truth["blocked_frames_a"])
    assert missing_at_b == truth_missing
    # categories: isolated drops vs. the tail cut after the injected RST
    assert lost["frames"] == truth["dropped_frames_a"]
    assert blocked["frames"] == truth["blocked_frames_a"]
    injected = {p["frame"] for p in comp["injected_packets"] if p["point"] == "B"}
    assert {i["frame_b"] for i in truth["injected_rst"]} == injected == set(comp["injected"]["at_b"]["frames"])
    for p in comp["injected_packets"]:
        assert p["tcp_flags"] == "RST+ACK"
        assert p["direction"] == "c2s"
    assert comp["lost"]["b_to_a"]["count"] == 0
    assert comp["injected"]["at_a"]["count"] == 0
    per = {frozenset((f["client"], f["server"])): f for f in comp["per_flow"]}
    errs = []
    for f in truth["flows"]:
        got = per[frozenset((f["client"], f["server"]))]
        errs.append(abs(got["one_way_delay_ms"] - f["one_way_delay_ms"]))
    assert max(errs) < 1.0
    assert abs(comp["clock_offset_ms"]) < 1.0
    return {"dropped": len(truth["dropped_frames_a"]), "blocked": len(truth["blocked_frames_a"]),
            "injected": len(truth["injected_rst"]), "flows": len(errs), "max_delay_err_ms": round(max(errs), 3)}


def test_corpus_pair_matches_truth(capsys: pytest.CaptureFixture[str]) -> None:
    truth = json.loads((PAIRS / (B.name + ".pair_truth.json")).read_text())
    row = _check_truth(compare_captures(A, B), truth)
    with capsys.disabled():
        print(f"\npair truth {B.name}: {row}")


@pytest.mark.parametrize("case", [(1, 0.05, 2, 25.0), (42, 0.1, 1, 3.0), (99, 0.0, 3, 40.0)])
def test_derived_pairs_match_truth(tmp_path: Path, case: tuple[int, float, int, float],
                                   capsys: pytest.CaptureFixture[str]) -> None:
    seed, loss, rst_flows, delay_ms = case
    b = tmp_path / "B.pcap"
    subprocess.run([sys.executable, str(PAIRS / "make_pair.py"), str(A), str(b), "--seed", str(seed), "--loss", str(loss),
                    "--rst-flows", str(rst_flows), "--delay-ms", str(delay_ms)], check=True, capture_output=True)
    truth = json.loads((tmp_path / "B.pcap.pair_truth.json").read_text())
    row = _check_truth(compare_captures(A, b), truth)
    with capsys.disabled():
        print(f"\npair truth seed={seed} loss={loss} rst={rst_flows} delay={delay_ms}: {row}")


def test_real_pair_ip_ttl_clock_offset_and_hop() -> None:
    """Two real probes (Chris Sanders' ip_ttl source/dest): unsynchronised clocks, one router between."""
    comp = compare_captures(PAIRS / "chrissanders_ip_ttl_source.pcapng", PAIRS / "chrissanders_ip_ttl_dest.pcapng")
    assert comp["matched_packets"] == 2
    # ((t_B1 - t_A1) + (t_B2 - t_A2)) / 2 from the four timestamps, and half their difference
    assert comp["clock_offset_ms"] == pytest.approx(-48851.314, abs=0.002)
    (flow,) = comp["per_flow"]
    assert flow["one_way_delay_ms"] == pytest.approx(0.492, abs=0.002)
    assert (flow["directions"]["c2s"]["upstream"], flow["directions"]["s2c"]["upstream"]) == ("A", "B")
    assert comp["modified"]["ttl"]["hops"] == {"1": 2}
    assert comp["modified"]["ttl"]["raised_packets"] == 0


def test_real_pair_dns_recursion_flow_only_at_server() -> None:
    """Client-side and server-side captures of a recursive DNS query: the upstream query is B-only."""
    comp = compare_captures(PAIRS / "chrissanders_dns_recursivequery_client.pcapng",
                            PAIRS / "chrissanders_dns_recursivequery_server.pcapng")
    assert comp["shared"] and comp["matched_packets"] == 2
    assert comp["flows"]["only_b"] == 1
    assert comp["flows_only"]["b"] == ["udp 172.16.0.102:62570 > 4.2.2.1:53 (B only)"]
    # identical timestamps at both points: no measurable delay, so no lost/injected verdicts
    assert comp["delay_ms"]["a_to_b"]["samples"] == comp["delay_ms"]["b_to_a"]["samples"] == 0
    assert comp["lost"]["a_to_b"]["count"] == comp["injected"]["at_b"]["count"] == 0


def test_roles_swapped_mirror_the_result() -> None:
    """B given as the first capture: the same facts, seen from the other side."""
    truth = json.loads((PAIRS / (B.name + ".pair_truth.json")).read_text())
    comp = compare_captures(B, A)
    assert comp["lost"]["b_to_a"]["frames"] == truth["dropped_frames_a"]
    assert comp["blocked"]["at_a"]["frames"] == truth["blocked_frames_a"]
    assert comp["injected"]["at_a"]["frames"] == [truth["injected_rst"][0]["frame_b"]]
    (inj,) = comp["injected_packets"]
    assert (inj["point"], inj["frame"], inj["tcp_flags"]) == ("A", truth["injected_rst"][0]["frame_b"], "RST+ACK")
    assert comp["lost"]["a_to_b"]["count"] == comp["injected"]["at_b"]["count"] == 0
