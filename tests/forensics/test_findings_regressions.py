"""Regression tests for findings bugs seen on lab captures (each test names the bug it pins)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import jsonschema

from netghost.forensics import analyze_capture, build_findings, build_semantic, load_schema
from tests.forensics.pcapwriter import (
    ACK,
    FIN,
    PSH,
    RST,
    SYN,
    Capture,
    ether,
    icmp_message,
    ipv4_packet,
    tcp_segment,
)

C, S = "10.0.1.5", "10.0.2.4"
MSS1460 = struct.pack("!BBH", 2, 4, 1460)


def _findings(cap: Capture, tmp_path: Path) -> list[dict[str, Any]]:
    return build_findings(analyze_capture(cap.write(tmp_path / "t.pcap")))


def _kinds(found: list[dict[str, Any]]) -> list[str]:
    return [f["kind"] for f in found]


def _one(found: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    hits = [f for f in found if f["kind"] == kind]
    assert len(hits) == 1, _kinds(found)
    return hits[0]


def _open(cap: Capture, t: float, sport: int, dport: int = 443, isn_c: int = 1000, isn_s: int = 5000) -> None:  # noqa: PLR0917  test helper
    cap.tcp(t, C, S, sport, dport, isn_c, 0, SYN, options=MSS1460)
    cap.tcp(t + 0.01, S, C, dport, sport, isn_s, isn_c + 1, SYN | ACK, options=MSS1460)
    cap.tcp(t + 0.02, C, S, sport, dport, isn_c + 1, isn_s + 1, ACK)


def _exchange(cap: Capture, t: float, sport: int, n: int, dport: int = 443) -> None:
    """A healthy connection: handshake, ``n`` acknowledged 100-byte requests, FIN close."""
    _open(cap, t, sport, dport)
    seq = 1001
    for i in range(n):
        cap.tcp(t + 0.03 + i * 0.01, C, S, sport, dport, seq, 5001, PSH | ACK, b"q" * 100)
        cap.tcp(t + 0.035 + i * 0.01, S, C, dport, sport, 5001, seq + 100, ACK)
        seq += 100
    cap.tcp(t + 0.5, C, S, sport, dport, seq, 5001, FIN | ACK)
    cap.tcp(t + 0.51, S, C, dport, sport, 5001, seq + 1, FIN | ACK)
    cap.tcp(t + 0.52, C, S, sport, dport, seq + 1, 5002, ACK)


def test_syn_retries_are_not_data_retransmissions(tmp_path: Path) -> None:
    """Bug: 53 unanswered connections × 4 SYNs made "72.6% of all TCP data segments are retransmissions"."""
    cap = Capture()
    syn_frames = []
    for k in range(53):
        for j, dt in enumerate((0.0, 1.0, 3.0, 7.0)):
            fr = cap.tcp(k * 0.1 + dt, C, S, 41000 + k, 6379, 9000 + k, 0, SYN)
            if k == 0 and j < 4:
                syn_frames.append(fr)
    for k in range(3):
        _exchange(cap, 20.0 + k, 42000 + k, 20, dport=443)
    found = _findings(cap, tmp_path)
    assert found[0]["kind"] == "syn_no_answer"
    assert "SYN to 10.0.2.4:6379 retried 4× on 53 connections with no answer → silently dropped" in found[0]["title"]
    assert found[0]["evidence"]["frames"][:4] == syn_frames
    assert not [f for f in found if f["kind"].startswith("retransmissions")], [f["title"] for f in found]


def test_retried_syn_on_a_lossy_flow_is_not_counted_in_its_rate(tmp_path: Path) -> None:
    """SYN retried twice, then 30 data segments of which 3 retransmitted: 3 of 33, not 5 of 35."""
    cap = Capture()
    cap.tcp(0.0, C, S, 40000, 443, 1000, 0, SYN, options=MSS1460)
    cap.tcp(1.0, C, S, 40000, 443, 1000, 0, SYN, options=MSS1460)
    cap.tcp(3.0, C, S, 40000, 443, 1000, 0, SYN, options=MSS1460)
    cap.tcp(3.01, S, C, 443, 40000, 5000, 1001, SYN | ACK, options=MSS1460)
    cap.tcp(3.02, C, S, 40000, 443, 1001, 5001, ACK)
    seq, t, retr = 1001, 3.1, []
    for i in range(30):
        cap.tcp(t, C, S, 40000, 443, seq, 5001, PSH | ACK, b"d" * 200)
        if i % 10 == 4:
            retr.append(cap.tcp(t + 0.3, C, S, 40000, 443, seq, 5001, PSH | ACK, b"d" * 200))
            t += 0.3
        cap.tcp(t + 0.01, S, C, 443, 40000, 5001, seq + 200, ACK)
        seq += 200
        t += 0.02
    f = _one(_findings(cap, tmp_path), "retransmissions")
    assert f["metrics"]["retransmissions"] == 3 and f["metrics"]["data_segments"] == 33
    assert f["title"].startswith("9.1% retransmissions on tcp/0 (10.0.1.5:40000 ↔ 10.0.2.4:443), 3 of 33 data segments")
    assert f["evidence"]["frames"] == retr


def test_fin_retransmissions_count_as_data(tmp_path: Path) -> None:
    cap = Capture()
    _open(cap, 0.0, 40000)
    seq = 1001
    for i in range(30):
        cap.tcp(0.1 + i * 0.01, C, S, 40000, 443, seq, 5001, PSH | ACK, b"x" * 50)
        cap.tcp(0.105 + i * 0.01, S, C, 443, 40000, 5001, seq + 50, ACK)
        seq += 50
    fins = [cap.tcp(1.0 + dt, C, S, 40000, 443, seq, 5001, FIN | ACK) for dt in (0.0, 0.2, 0.6, 1.4)]
    f = _one(_findings(cap, tmp_path), "retransmissions")
    assert f["metrics"] == {"retransmissions": 3, "data_segments": 34, "rate": round(3 / 34, 4)}
    assert f["evidence"]["frames"] == fins[1:]


def _linux_pmtu_flow(cap: Capture, t: float, sport: int, *, acked_later: bool = False) -> dict[str, list[int]]:
    """Client sends a 64-byte request (ACKed); the server answers with 10 × 1448 bytes, retransmits the
    first with RTO backoff (0.2, 0.4, 0.8, 1.6 s) and never gets an ACK for it (unless ``acked_later``)."""
    _open(cap, t, sport, 6379)
    req = cap.tcp(t + 0.03, C, S, sport, 6379, 1001, 5001, PSH | ACK, b"r" * 64)
    big = [cap.tcp(t + 0.031, S, C, 6379, sport, 5001 + i * 1448, 1065, ACK, b"B" * 1448) for i in range(10)]
    copies = [big[0]]
    rto = 0.2
    at = t + 0.031
    for _ in range(4):
        at += rto
        copies.append(cap.tcp(at, S, C, 6379, sport, 5001, 1065, ACK, b"B" * 1448))
        rto *= 2
    if acked_later:
        cap.tcp(at + 0.01, C, S, sport, 6379, 1065, 5001 + 14480, ACK)
    return {"request": [req], "copies": copies}


def test_pmtu_black_hole_at_the_sender_without_icmp(tmp_path: Path) -> None:
    """Bug: the 50%-retransmission rule never fired on a real Linux sender (~35% here)."""
    cap = Capture()
    fr = _linux_pmtu_flow(cap, 0.0, 40000)
    found = _findings(cap, tmp_path)
    f = _one(found, "pmtu_suspect")
    assert found[0] is f and f["severity"] == "high"
    assert f["title"] == ("PMTU black hole suspected on tcp/0 (10.0.1.5:40000 ↔ 10.0.2.4:6379) (large segments of "
                          "1448 bytes never acknowledged; small ones pass)")
    assert set(fr["copies"]) <= set(f["evidence"]["frames"])
    assert f["metrics"]["max_retransmissions"] == 4 and f["metrics"]["segment_bytes"] == 1448
    assert f["flows"] == ["tcp/0"]
    assert not [g for g in found if g["kind"].startswith("retransmissions")]


def test_pmtu_black_hole_cites_icmp_next_hop_mtu(tmp_path: Path) -> None:
    """An ICMP frag-needed that quotes a NAT'ed copy of the flow still gives its MTU to the finding."""
    cap = Capture()
    _linux_pmtu_flow(cap, 0.0, 40000)
    quoted = ipv4_packet("192.0.2.10", "198.51.100.7", 6, tcp_segment(6379, 61000, 1, 1, ACK))[:28]
    icmp = cap.add(0.05, ether(ipv4_packet("10.0.0.1", S, 1, icmp_message(3, 4, 1400, quoted))))
    found = _findings(cap, tmp_path)
    f = _one(found, "pmtu_suspect")
    assert f["title"].endswith("small ones pass); ICMP fragmentation-needed cites next-hop MTU 1400")
    assert f["metrics"]["mtu"] == 1400 and icmp in f["evidence"]["frames"]
    assert "pmtu_frag_needed" not in _kinds(found)


def test_pmtu_black_hole_at_the_receiver(tmp_path: Path) -> None:
    """The client never sees the big segments: the server's seq jumps 10 × 1448 and is never ACKed."""
    cap = Capture()
    _open(cap, 0.0, 40000, 6379)
    cap.tcp(0.03, C, S, 40000, 6379, 1001, 5001, PSH | ACK, b"r" * 64)
    cap.tcp(0.23, C, S, 40000, 6379, 1001, 5001, PSH | ACK, b"r" * 64)
    jump = cap.tcp(0.231, S, C, 6379, 40000, 5001 + 14480, 1065, ACK)
    cap.tcp(20.0, C, S, 40000, 6379, 1065, 5001, FIN | ACK)
    cap.tcp(20.001, S, C, 6379, 40000, 5001 + 14480, 1066, ACK)
    found = _findings(cap, tmp_path)
    f = _one(found, "pmtu_suspect")
    assert found[0] is f
    assert "large segments of ~1460 bytes never arrive: 14480 bytes from 10.0.2.4:6379 missing" in f["title"]
    assert f["metrics"]["missing_bytes"] == 14480 and jump in f["evidence"]["frames"]
    assert not [g for g in found if g["kind"].startswith("retransmissions")]


def test_loss_that_recovers_is_not_a_black_hole(tmp_path: Path) -> None:
    cap = Capture()
    _linux_pmtu_flow(cap, 0.0, 40000, acked_later=True)
    assert "pmtu_suspect" not in _kinds(_findings(cap, tmp_path))


def test_dead_peer_is_not_a_black_hole(tmp_path: Path) -> None:
    """Big segments retransmitted with backoff but nothing small ever acknowledged: not a size problem."""
    cap = Capture()
    _open(cap, 0.0, 40000, 6379)
    at, rto = 0.03, 0.2
    for _ in range(5):
        cap.tcp(at, S, C, 6379, 40000, 5001, 1001, ACK, b"B" * 1448)
        at += rto
        rto *= 2
    assert "pmtu_suspect" not in _kinds(_findings(cap, tmp_path))


def test_injected_resets_are_grouped_per_server(tmp_path: Path) -> None:
    """Bug: one finding per connection, folded after 3 into a finding without the TTL metrics."""
    cap = Capture()
    rsts = []
    for k in range(6):
        sport = 40000 + k
        _open(cap, k * 1.0, sport, 6379)
        cap.tcp(k + 0.03, C, S, sport, 6379, 1001, 5001, PSH | ACK, b"q" * 10)
        cap.tcp(k + 0.04, S, C, 6379, sport, 5001, 1011, PSH | ACK, b"a" * 10)
        rsts.append(cap.tcp(k + 0.05, S, C, 6379, sport, 5011, 1011, RST | ACK, ttl=255))
    found = _findings(cap, tmp_path)
    f = _one(found, "rst_injected")
    assert f["title"] == ("RST mid-stream on 6 connections to 10.0.2.4:6379 with TTL 255 where the server always uses "
                          "64 → injected by a middlebox")
    assert f["metrics"]["rst_ttl"] == 255 and f["metrics"]["usual_ttl"] == 64 and f["metrics"]["connections"] == 6
    assert set(rsts) <= set(f["evidence"]["frames"])
    assert f["flows"] == [f"tcp/{k}" for k in range(6)]


def test_semantic_document_with_new_findings_validates(tmp_path: Path) -> None:
    cap = Capture()
    _linux_pmtu_flow(cap, 0.0, 40000)
    sem = build_semantic(analyze_capture(cap.write(tmp_path / "p.pcap")))
    jsonschema.validate(sem, load_schema())
    assert sem["findings"][0]["kind"] == "pmtu_suspect"


def test_icmp_black_hole_is_one_finding_per_server_and_mtu(tmp_path: Path) -> None:
    """A capture on the appliance sees the ICMP for every flow: one finding names them all, not one each."""
    cap = Capture()
    icmps, retrans = [], []
    for k in range(5):
        sport = 40000 + k
        _open(cap, k * 2.0, sport, 6379)
        pkt = ipv4_packet(S, C, 6, tcp_segment(6379, sport, 5001, 1001, ACK, data=b"z" * 1448))
        cap.add(k * 2.0 + 0.03, ether(pkt))
        icmps.append(cap.add(k * 2.0 + 0.031, ether(ipv4_packet("10.0.0.1", S, 1, icmp_message(3, 4, 1400, pkt[:28])))))
        retrans.append(cap.add(k * 2.0 + 0.3, ether(pkt)))
    found = _findings(cap, tmp_path)
    f = _one(found, "pmtu_blackhole")
    assert f["title"] == ("ICMP fragmentation-needed (next-hop MTU 1400) for 5 flows to 10.0.2.4:6379 and 5 large "
                          "segment(s) retransmitted → PMTU black hole")
    assert f["metrics"]["mtu"] == 1400 and f["metrics"]["connections"] == 5 and f["metrics"]["icmp_messages"] == 5
    assert set(icmps) <= set(f["evidence"]["frames"]) and retrans[0] in f["evidence"]["frames"]
    assert f["flows"] == [f"tcp/{k}" for k in range(5)]
