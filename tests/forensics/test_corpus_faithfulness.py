"""Faithfulness: every count of every corpus truth file (tshark 4.0.17) vs the engine.

Tolerance per the issue: equal, or within 2 % (±1 for counts under 50). The per-file agreement
table is printed (``pytest -s`` or ``-rA`` shows it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netghost.forensics import FLAG_NAMES, analyze_capture
from netghost.forensics.report import build_semantic

PCAPS = Path(__file__).resolve().parents[1] / "data" / "pcaps"
TRUTHS = sorted(PCAPS.glob("*.tshark.json"))


def _close(ours: int, theirs: int) -> bool:
    if theirs < 50:
        return abs(ours - theirs) <= 1
    return abs(ours - theirs) <= 0.02 * theirs


def _pairs(truth: dict[str, Any], sem: dict[str, Any]) -> list[tuple[str, int, int]]:
    s = sem["summary"]
    t = truth["tcp"]
    pairs = [
        ("packets", s["packets"], truth["packet_count"]),
        ("tcp_conversations", s["tcp_conversations"], t["streams"]),
        ("rst_packets", s["rst_packets"], t["rst"]),
        ("syn_without_synack", s["syn_without_synack"], t["streams_syn_without_synack"]),
        ("dns.queries", s["dns"]["queries"], truth["dns"]["queries"]),
        ("dns.responses", s["dns"]["responses"], truth["dns"]["responses"]),
        ("dns.unanswered", s["dns"]["unanswered"], truth["dns"]["unanswered_queries_own_match"]),
        ("tcp.ack_rtt.count", s["ack_rtt"]["count"], t["ack_rtt_s"]["count"]),
    ]
    if t["ack_rtt_s"]["count"]:
        # microseconds, so the integer tolerance rule applies (tshark prints 6 decimals)
        for key in ("min", "median", "max"):
            pairs.append((f"tcp.ack_rtt.{key}_us", round(s["ack_rtt"][f"{key}_ms"] * 1000),
                          round(t["ack_rtt_s"][key] * 1e6)))
    pairs += [(f"tcp.{f}", s["tcp_analysis"][f], t["analysis_flag_counts"][f]) for f in FLAG_NAMES]
    for key, ours_map, their_map in (
        ("dns", s["dns_rcodes"], truth["dns"]["rcode_counts"]),
        ("icmp", s["icmp"], truth["icmp"]["type_code_counts"]),
        ("icmpv6", s["icmpv6"], truth["icmp"]["icmpv6_type_code_counts"]),
    ):
        for k in sorted(set(ours_map) | set(their_map)):
            pairs.append((f"{key}.{k}", ours_map.get(k, 0), their_map.get(k, 0)))
    return pairs


def _compare(truth_path: Path) -> tuple[int, int, list[str]]:
    truth = json.loads(truth_path.read_text())
    cap = truth_path.with_name(truth_path.name.removesuffix(".tshark.json"))
    sem = build_semantic(analyze_capture(cap))
    pairs = _pairs(truth, sem)
    bad = [f"{n}: ours {o} tshark {t}" for n, o, t in pairs if not _close(o, t)]
    exact = sum(1 for _, o, t in pairs if o == t)
    return exact, len(pairs), bad


def test_corpus_is_present() -> None:
    assert len(TRUTHS) >= 27


@pytest.mark.parametrize("truth_path", TRUTHS, ids=lambda p: p.name.removesuffix(".tshark.json"))
def test_counts_match_tshark(truth_path: Path) -> None:
    _exact, _total, bad = _compare(truth_path)
    assert not bad, bad


def test_agreement_table(capsys: pytest.CaptureFixture[str]) -> None:
    rows = []
    failing = 0
    for tp in TRUTHS:
        exact, total, bad = _compare(tp)
        failing += bool(bad)
        rows.append(f"{tp.name.removesuffix('.tshark.json')[:48]:<48} {exact:>3}/{total:<3} exact  "
                    f"{'PASS' if not bad else 'FAIL ' + '; '.join(bad)}")
    with capsys.disabled():
        print("\nfile                                             agreement   verdict")
        print("\n".join(rows))
        print(f"files passing: {len(TRUTHS) - failing}/{len(TRUTHS)}")
    assert failing == 0


def test_per_frame_flags_match_where_truth_lists_them() -> None:
    """Beyond counts: the flagged frame numbers equal tshark's for every flag of every file."""
    mismatches = []
    for tp in TRUTHS:
        truth = json.loads(tp.read_text())
        a = analyze_capture(tp.with_name(tp.name.removesuffix(".tshark.json")))
        for flag, frames in truth["tcp"]["analysis_flag_frames"].items():
            if len(frames) < 5000 and a.flag_frames(flag) != frames:
                mismatches.append(f"{tp.name}: {flag}")
    assert not mismatches
