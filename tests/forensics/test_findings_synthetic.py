"""Synthetic truth: captures built with one known fault each; the finding and its evidence frames are checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netghost.forensics import analyze_capture, build_findings
from tests.forensics.pcapwriter import (
    ACK,
    FIN,
    PSH,
    RST,
    SYN,
    Capture,
    dns_message,
    ether,
    icmp_message,
    ipv4_packet,
    tcp_segment,
    udp_datagram,
)

C, S = "10.0.1.5", "10.0.2.4"


def _findings(cap: Capture, tmp_path: Path) -> list[dict[str, Any]]:
    return build_findings(analyze_capture(cap.write(tmp_path / "t.pcap")))


def _one(found: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    hits = [f for f in found if f["kind"] == kind]
    assert hits, [f["kind"] for f in found]
    return hits[0]


def _handshake(cap: Capture, t: float = 0.0, sport: int = 40000, dport: int = 443, isn_c: int = 1000,  # noqa: PLR0917  test helper
               isn_s: int = 5000) -> None:
    cap.tcp(t, C, S, sport, dport, isn_c, 0, SYN)
    cap.tcp(t + 0.01, S, C, dport, sport, isn_s, isn_c + 1, SYN | ACK)
    cap.tcp(t + 0.02, C, S, sport, dport, isn_c + 1, isn_s + 1, ACK)


def test_syn_retried_without_answer_is_silent_drop(tmp_path: Path) -> None:
    cap = Capture()
    frames = [cap.tcp(t, C, S, 40000, 6379, 777, 0, SYN) for t in (0.0, 1.0, 3.0)]
    f = _one(_findings(cap, tmp_path), "syn_no_answer")
    assert "10.0.2.4:6379" in f["title"]
    assert "retried 3×" in f["title"]
    assert "silently dropped" in f["title"]
    assert f["evidence"]["frames"] == frames
    assert f["severity"] == "high"


def test_rst_from_server_port_means_nothing_listening(tmp_path: Path) -> None:
    cap = Capture()
    syn = cap.tcp(0.0, C, S, 40001, 8080, 10, 0, SYN)
    rst = cap.tcp(0.001, S, C, 8080, 40001, 0, 11, RST | ACK)
    f = _one(_findings(cap, tmp_path), "syn_rejected_rst")
    assert "10.0.2.4:8080" in f["title"]
    assert "nothing listening" in f["title"]
    assert f["evidence"]["frames"] == [syn, rst]


def test_midstream_rst_with_odd_ttl_is_injected(tmp_path: Path) -> None:
    cap = Capture()
    _handshake(cap)
    cap.tcp(0.03, C, S, 40000, 443, 1001, 5001, PSH | ACK, b"x" * 100)
    normal = cap.tcp(0.04, S, C, 443, 40000, 5001, 1101, PSH | ACK, b"y" * 200, ttl=64)
    cap.tcp(0.05, C, S, 40000, 443, 1101, 5201, ACK)
    rst = cap.tcp(0.06, S, C, 443, 40000, 5201, 1101, RST | ACK, ttl=51)
    f = _one(_findings(cap, tmp_path), "rst_injected")
    assert "TTL 51" in f["title"]
    assert "uses 64" in f["title"]
    assert "middlebox" in f["title"]
    assert rst in f["evidence"]["frames"]
    assert f["evidence"]["frames"][0] <= normal or 2 in f["evidence"]["frames"]


def test_pmtu_black_hole(tmp_path: Path) -> None:
    cap = Capture()
    _handshake(cap)
    seg = tcp_segment(40000, 443, 1001, 5001, ACK, data=b"z" * 1448)
    pkt = ipv4_packet(C, S, 6, seg)
    first = cap.add(0.03, ether(pkt))
    icmp = cap.add(0.031, ether(ipv4_packet("10.0.0.1", C, 1, icmp_message(3, 4, 1400, pkt[:28]))))
    r1 = cap.add(0.3, ether(pkt))
    r2 = cap.add(0.9, ether(pkt))
    f = _one(_findings(cap, tmp_path), "pmtu_blackhole")
    assert "next-hop MTU 1400" in f["title"]
    assert f["metrics"]["mtu"] == 1400
    assert {icmp, r1, r2} <= set(f["evidence"]["frames"])
    assert first not in f["evidence"]["frames"]


def test_retransmission_rate_means_path_loss(tmp_path: Path) -> None:
    cap = Capture()
    _handshake(cap)
    seq = 1001
    retrans = []
    t = 0.1
    for i in range(40):
        cap.tcp(t, C, S, 40000, 443, seq, 5001, ACK, b"d" * 100)
        if i % 10 == 9:
            retrans.append(cap.tcp(t + 0.25, C, S, 40000, 443, seq, 5001, ACK, b"d" * 100))
            t += 0.3
        cap.tcp(t + 0.01, S, C, 443, 40000, 5001, seq + 100, ACK)
        seq += 100
        t += 0.02
    f = _one(_findings(cap, tmp_path), "retransmissions")
    assert f["title"].startswith("9.1% retransmissions on tcp/0")
    assert "loss on the path" in f["title"]
    assert f["evidence"]["frames"] == retrans


def _dns(cap: Capture, t: float, qid: int, name: str, rcode: int | None) -> tuple[int, int | None]:
    q = cap.add(t, ether(ipv4_packet(C, "10.0.0.53", 17, udp_datagram(5353 + qid, 53, dns_message(qid, name)))))
    if rcode is None:
        return q, None
    r = cap.add(t + 0.002, ether(ipv4_packet("10.0.0.53", C, 17, udp_datagram(53, 5353 + qid,
                                                                              dns_message(qid, name, True, rcode)))))
    return q, r


def test_dns_nxdomain_names_the_missing_name(tmp_path: Path) -> None:
    cap = Capture()
    _dns(cap, 0.0, 1, "ok.example", 0)
    _q, r = _dns(cap, 1.0, 2, "redis.internal", 3)
    a = analyze_capture(cap.write(tmp_path / "d.pcap"))
    assert a.dns["rcode_counts"] == {"NoError": 1, "NXDomain": 1}
    f = _one(build_findings(a), "dns_nxdomain")
    assert "redis.internal" in f["title"]
    assert "not in the zone" in f["title"]
    assert f["evidence"]["frames"] == [r]


def test_dns_unanswered_and_servfail(tmp_path: Path) -> None:
    cap = Capture()
    q, _ = _dns(cap, 0.0, 3, "db.corp", None)
    _, r = _dns(cap, 1.0, 4, "api.corp", 2)
    found = _findings(cap, tmp_path)
    assert _one(found, "dns_unanswered")["evidence"]["frames"] == [q]
    assert _one(found, "dns_servfail")["evidence"]["frames"] == [r]


def test_icmp_unreachable_codes_attribute_the_inner_flow(tmp_path: Path) -> None:
    cap = Capture()
    inner = ipv4_packet(C, S, 17, udp_datagram(5000, 161, b"q"))
    port = cap.add(0.0, ether(ipv4_packet(S, C, 1, icmp_message(3, 3, 0, inner[:28]))))
    inner_t = ipv4_packet(C, S, 6, tcp_segment(40000, 22, 1, 0, SYN))
    admin = cap.add(1.0, ether(ipv4_packet("10.0.0.1", C, 1, icmp_message(3, 13, 0, inner_t[:28]))))
    found = _findings(cap, tmp_path)
    p = _one(found, "icmp_icmp_3_3")
    assert "UDP 10.0.1.5:5000 -> 10.0.2.4:161" in p["title"]
    assert p["evidence"]["frames"] == [port]
    ad = _one(found, "icmp_icmp_3_13")
    assert "firewall" in ad["title"]
    assert "TCP 10.0.1.5:40000 -> 10.0.2.4:22" in ad["title"]
    assert ad["evidence"]["frames"] == [admin]
    assert ad["severity"] == "high"


def test_zero_window_points_at_the_receiver(tmp_path: Path) -> None:
    cap = Capture()
    _handshake(cap)
    cap.tcp(0.03, S, C, 443, 40000, 5001, 1001, PSH | ACK, b"x" * 1000)
    zw = cap.tcp(0.04, C, S, 40000, 443, 1001, 6001, ACK, win=0)
    f = _one(_findings(cap, tmp_path), "zero_window")
    assert f["title"].startswith("10.0.1.5:40000 advertised a zero receive window")
    assert f["evidence"]["frames"] == [zw]


def test_clean_connection_has_no_findings_and_sf_state(tmp_path: Path) -> None:
    cap = Capture()
    _handshake(cap)
    cap.tcp(0.03, C, S, 40000, 443, 1001, 5001, PSH | ACK, b"GET")
    cap.tcp(0.04, S, C, 443, 40000, 5001, 1004, PSH | ACK, b"OK")
    cap.tcp(0.05, C, S, 40000, 443, 1004, 5003, FIN | ACK)
    cap.tcp(0.06, S, C, 443, 40000, 5003, 1005, FIN | ACK)
    cap.tcp(0.07, C, S, 40000, 443, 1005, 5004, ACK)
    a = analyze_capture(cap.write(tmp_path / "ok.pcap"))
    assert build_findings(a) == []
    assert a.streams.conn_state.tolist() == [3]  # SF
    assert abs(float(a.streams.irtt[0]) - 0.02) < 1e-6


def test_fast_retransmission_after_three_dup_acks(tmp_path: Path) -> None:
    cap = Capture()
    _handshake(cap)
    cap.tcp(0.100, S, C, 443, 40000, 5001, 1001, ACK, b"a" * 100)
    cap.tcp(0.101, S, C, 443, 40000, 5201, 1001, ACK, b"c" * 100)  # 5101 lost
    d = [cap.tcp(0.102 + k / 1000, C, S, 40000, 443, 1001, 5101, ACK) for k in range(3)]
    fast = cap.tcp(0.106, S, C, 443, 40000, 5101, 1001, ACK, b"b" * 100)
    a = analyze_capture(cap.write(tmp_path / "f.pcap"))
    assert a.flag_frames("lost_segment") == [5]
    assert a.flag_frames("duplicate_ack") == d[1:]
    assert a.flag_frames("fast_retransmission") == [fast]
    assert a.flag_frames("retransmission") == [fast]


def test_flow_history_and_reset_attribution(tmp_path: Path) -> None:
    from netghost.forensics import build_semantic

    cap = Capture()
    _handshake(cap)
    cap.tcp(0.03, C, S, 40000, 443, 1001, 5001, PSH | ACK, b"x" * 10)
    cap.tcp(0.04, S, C, 443, 40000, 5001, 1011, PSH | ACK, b"y" * 10)
    rst = cap.tcp(0.05, C, S, 40000, 443, 1011, 5011, RST | ACK)
    refused_syn = cap.tcp(1.0, C, S, 40001, 81, 7, 0, SYN)
    cap.tcp(1.001, S, C, 81, 40001, 0, 8, RST | ACK)
    sem = build_semantic(analyze_capture(cap.write(tmp_path / "h.pcap")))
    flows = {f["id"]: f for f in sem["flows"]}
    assert flows["tcp/0"]["history"] == "ShADdR"  # the responder never sent a pure ACK
    assert flows["tcp/0"]["conn_state"] == "RSTO"
    assert flows["tcp/0"]["reset_by"] == "client"
    assert flows["tcp/0"]["first_rst_frame"] == rst
    assert flows["tcp/1"]["history"] == "Sr"
    assert flows["tcp/1"]["conn_state"] == "REJ"
    assert flows["tcp/1"]["first_frame"] == refused_syn


def test_dns_over_tcp_and_ipv6_icmpv6_packet_too_big(tmp_path: Path) -> None:
    import struct

    from tests.forensics.pcapwriter import ipv6_packet

    cap = Capture()
    q = dns_message(77, "svc.corp")
    r = dns_message(77, "svc.corp", response=True, rcode=5)
    _handshake(cap, dport=53)
    cap.tcp(0.03, C, S, 40000, 53, 1001, 5001, PSH | ACK, struct.pack("!H", len(q)) + q)
    refused = cap.tcp(0.04, S, C, 53, 40000, 5001, 1001 + 2 + len(q), PSH | ACK, struct.pack("!H", len(r)) + r)
    a6, b6 = "2001:db8::5", "2001:db8::9"
    inner = ipv6_packet(a6, b6, 6, tcp_segment(40002, 443, 1, 0, ACK, data=b"x" * 1400))
    ptb = cap.add(0.05, ether(ipv6_packet("2001:db8::1", a6, 58, icmp_message(2, 0, 1280, inner[:48])), 0x86DD))
    a = analyze_capture(cap.write(tmp_path / "d6.pcap"))
    assert a.dns["rcode_counts"] == {"Refused": 1}
    f = _one(build_findings(a), "dns_refused")
    assert "svc.corp" in f["title"] and f["evidence"]["frames"] == [refused]
    assert a.icmp["icmpv6_type_code_counts"] == {"2/0": 1}
    err = a.icmp["errors"][0]
    assert err["mtu"] == 1280
    assert err["inner_flow"] == "TCP 2001:db8::5:40002 -> 2001:db8::9:443"
    assert err["frames"] == [ptb]
    found = build_findings(a)
    assert _one(found, "pmtu_frag_needed")["metrics"]["mtu"] == 1280


def test_port_scan_is_named_and_not_reported_as_outage(tmp_path: Path) -> None:
    cap = Capture()
    t = 0.0
    for port in range(1000, 1030):
        cap.tcp(t, C, S, 50000, port, 99, 0, SYN)
        if port == 1022:
            cap.tcp(t + 0.001, S, C, port, 50000, 7000, 100, SYN | ACK)
        elif port % 5 == 0:
            cap.tcp(t + 0.001, S, C, port, 50000, 0, 100, RST | ACK)
        t += 0.01
    found = _findings(cap, tmp_path)
    f = _one(found, "port_scan")
    assert f["title"] == "10.0.1.5 probed 30 ports of 10.0.2.4 (SYN scan): 1 open (1022), 6 closed (RST), 23 filtered (no answer)"
    assert f["evidence"]["frames"][0] == 1
    assert not [g for g in found if g["kind"] in ("syn_no_answer", "syn_rejected_rst")]


def test_one_fault_class_cannot_crowd_out_the_others(tmp_path: Path) -> None:
    cap = Capture()
    for h in range(6):
        for t in (0.0, 1.0):
            cap.tcp(h + t, C, f"10.9.0.{h + 1}", 41000 + h, 6379, 5, 0, SYN)
    _, nx = _dns(cap, 9.0, 9, "gone.corp", 3)
    found = _findings(cap, tmp_path)
    kinds = [f["kind"] for f in found]
    assert kinds.count("syn_no_answer") == 4  # three shown + one folded "... and 3 more"
    folded = [f for f in found if f["metrics"].get("folded")]
    assert folded[0]["title"] == "… and 3 more 'syn_no_answer' findings like the above"
    assert len(folded[0]["evidence"]["frames"]) == 3
    assert _one(found, "dns_nxdomain")["evidence"]["frames"] == [nx]


def test_capture_duplicates_are_not_reported_as_path_loss(tmp_path: Path) -> None:
    cap = Capture()
    _handshake(cap)
    seq = 1001
    for i in range(30):
        seg = ether(ipv4_packet(C, S, 6, tcp_segment(40000, 443, seq, 5001, ACK, data=b"d" * 100), ident=100 + i))
        cap.add(0.1 + i * 0.01, seg)
        cap.add(0.1 + i * 0.01 + 0.00002, seg)  # the SPAN port shows every packet twice
        cap.tcp(0.105 + i * 0.01, S, C, 443, 40000, 5001, seq + 100, ACK)
        seq += 100
    a = analyze_capture(cap.write(tmp_path / "dup.pcap"))
    assert a.flag_counts()["retransmission"] == 30  # tshark's view: every copy is a retransmission
    found = build_findings(a)
    f = _one(found, "capture_duplicates")
    assert f["metrics"]["duplicates"] == 30
    assert f["evidence"]["frames"][0] == 5
    assert not [g for g in found if g["kind"].startswith("retransmissions")]
