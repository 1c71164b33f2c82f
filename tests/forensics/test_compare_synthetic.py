"""Synthetic two-point pairs with known faults: NAT, TTL hops, DSCP bleaching, MSS clamping, loss both
ways, clock offset, injected RST then a blocked flow, and a pair that shares nothing.

Each scenario writes both captures with the team's pcap writer, so the engine's real reader and
decoder run; every expected frame number is the writer's own return value.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from netghost.errors import CaptureFormatError
from netghost.forensics.compare import (
    build_compare_semantic,
    compare_captures,
    load_compare_schema,
    run_compare,
    write_compare_outputs,
)
from netghost.forensics.compare._report import capture_stem
from netghost.forensics.engine import analyze_capture
from netghost.forensics.report import MAX_SUMMARY_LINES, load_schema
from tests.forensics.pcapwriter import ACK, PSH, RST, SYN, Capture, ether, ipv4_packet, tcp_segment

Ep = tuple[str, int]
C, S = ("10.0.0.4", 50000), ("10.0.2.4", 6379)
C_NAT = ("10.1.0.9", 40000)
T0 = 1_700_000_000.0


def add(cap: Capture, ts: float, src: Ep, dst: Ep, flags: int, seq: int, ack: int, *, data: bytes = b"",  # noqa: PLR0917  header fields in wire order
        ident: int = 1, ttl: int = 64, dscp: int = 0, mss: int | None = None) -> int:
    opts = struct.pack("!BBH", 2, 4, mss) if mss is not None else b""
    ip = bytearray(ipv4_packet(src[0], dst[0], 6, tcp_segment(src[1], dst[1], seq, ack, flags, 65535, data, opts),
                               ttl=ttl, ident=ident))
    ip[1] = dscp << 2
    return cap.add(ts, ether(bytes(ip)))


class Path2:
    """One TCP flow seen at A (client side) and B (server side) with a NAT, a hop and a clock offset."""

    def __init__(self, *, nat: bool = True, offset: float = 2.0, delay: float = 0.005) -> None:
        self.a, self.b = Capture(), Capture()
        self.nat, self.offset, self.delay = nat, offset, delay
        self.pending: list[tuple[float, int, Any]] = []

    def c2s(self, t: float, flags: int, seq: int, ack: int, *, reach_b: bool = True, **kw: Any) -> tuple[int, int | None]:
        mss_a, mss_b = kw.pop("mss_a", None), kw.pop("mss_b", None)
        fa = add(self.a, T0 + t, C, S, flags, seq, ack, ttl=64, dscp=46, mss=mss_a, **kw)
        fb = None
        if reach_b:
            fb = add(self.b, T0 + t + self.delay + self.offset, C_NAT if self.nat else C, S, flags, seq, ack, ttl=63,
                     dscp=0, mss=mss_b, **kw)
        return fa, fb

    def s2c(self, t: float, flags: int, seq: int, ack: int, *, reach_a: bool = True, **kw: Any) -> tuple[int | None, int]:
        fb = add(self.b, T0 + t + self.offset, S, C_NAT if self.nat else C, flags, seq, ack, ttl=64, **kw)
        fa = add(self.a, T0 + t + self.delay, S, C, flags, seq, ack, ttl=63, **kw) if reach_a else None
        return fa, fb


def _validate(doc: dict[str, Any]) -> None:
    jsonschema.validate({k: v for k, v in doc.items() if k != "comparison"}, load_schema())
    jsonschema.validate(doc["comparison"], load_compare_schema())


@pytest.fixture
def nat_pair(tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    p = Path2()
    cs, ss = 1000, 9000
    p.c2s(0.000, SYN, cs, 0, ident=100, mss_a=1460, mss_b=1360)
    p.s2c(0.010, SYN | ACK, ss, cs + 1, ident=500, mss=1400)
    p.c2s(0.020, ACK, cs + 1, ss + 1, ident=101)
    p.c2s(0.030, PSH | ACK, cs + 1, ss + 1, data=b"SET a 1\r\n", ident=102)
    lost_a, _ = p.c2s(0.031, PSH | ACK, cs + 10, ss + 1, data=b"SET b 2\r\n", ident=103, reach_b=False)
    p.s2c(0.040, ACK, ss + 1, cs + 10, ident=501)
    _, lost_b = p.s2c(0.041, PSH | ACK, ss + 1, cs + 10, data=b"+OK\r\n", ident=502, reach_a=False)
    p.c2s(0.250, PSH | ACK, cs + 10, ss + 1, data=b"SET b 2\r\n", ident=104)  # retransmission: new IP ID
    p.s2c(0.260, PSH | ACK, ss + 1, cs + 19, data=b"+OK\r\n", ident=503)  # s2c retransmission
    p.s2c(0.261, PSH | ACK, ss + 6, cs + 19, data=b"+OK\r\n", ident=504)
    p.c2s(0.270, ACK, cs + 19, ss + 11, ident=105)
    a = p.a.write(tmp_path / "src-vm.pcap")
    b = p.b.write(tmp_path / "dst-vm.pcapng", "pcapng")
    return a, b, {"lost_a": lost_a, "lost_b": lost_b}


def test_nat_ttl_dscp_mss_loss_and_offset(nat_pair: tuple[Path, Path, dict[str, Any]]) -> None:
    a, b, exp = nat_pair
    comp = compare_captures(a, b)
    assert comp["shared"]
    assert comp["lost"]["a_to_b"]["frames"] == [exp["lost_a"]]
    assert comp["lost"]["b_to_a"]["frames"] == [exp["lost_b"]]
    assert comp["injected"]["at_a"]["count"] == comp["injected"]["at_b"]["count"] == 0
    assert comp["blocked"]["at_a"]["count"] == comp["blocked"]["at_b"]["count"] == 0
    assert comp["clock_offset_ms"] == pytest.approx(2000.0, abs=0.01)
    assert comp["delay_ms"]["a_to_b"]["min"] == pytest.approx(5.0, abs=0.01)
    assert comp["delay_ms"]["b_to_a"]["median"] == pytest.approx(5.0, abs=0.01)
    (flow,) = comp["per_flow"]
    assert flow["one_way_delay_ms"] == pytest.approx(5.0, abs=0.01)
    assert (flow["client"], flow["server"]) == ("10.0.0.4:50000", "10.0.2.4:6379")
    assert flow["directions"]["c2s"]["upstream"] == "A"
    assert flow["directions"]["s2c"]["upstream"] == "B"
    m = comp["modified"]
    assert m["ttl"]["hops"] == {"1": comp["matched_packets"]}
    assert m["dscp"]["transitions"] == {"46->0": 5}
    assert [(e["mss_a"], e["mss_b"]) for e in m["mss_clamped"]["examples"]] == [(1460, 1360)]
    assert m["nat"]["rewritten_packets"] == comp["matched_packets"] == 9
    assert m["nat"]["mappings"][0]["a"] == "10.0.0.4:50000 > 10.0.2.4:6379"
    assert m["nat"]["mappings"][0]["b"] == "10.1.0.9:40000 > 10.0.2.4:6379"


def test_nat_pair_findings_and_outputs(nat_pair: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    a, b, exp = nat_pair
    res = write_compare_outputs(a, b, semantic_dir=tmp_path / "sem", report_dir=tmp_path / "rep")
    stem = f"{capture_stem(a)}_vs_{capture_stem(b)}"
    assert stem == "src-vm_vs_dst-vm"
    assert sorted(p.name for p in res.written) == sorted(
        [f"{stem}_semantic.json", f"{stem}_forensic_report.md", f"{stem}_executive_summary.md"])
    doc = json.loads((tmp_path / "sem" / f"{stem}_semantic.json").read_text())
    _validate(doc)
    kinds = {f["kind"]: f for f in doc["findings"]}
    lost = kinds["lost_a_to_b"]
    assert lost["title"] == "1 packet(s) left A for 10.0.2.4:6379 and never reached B → dropped between the capture points"
    assert lost["evidence"]["frames"] == [exp["lost_a"]]
    assert kinds["lost_b_to_a"]["evidence"]["frames"] == [exp["lost_b"]]
    assert kinds["lost_b_to_a"]["metrics"]["point"] == "B"
    assert "MSS 1460 at A became 1360 at B" in kinds["mss_clamped"]["title"]
    assert "46->0" in kinds["dscp_rewritten"]["title"]
    assert "10.1.0.9:40000" in kinds["nat_rewrite"]["title"]
    assert [f["id"] for f in doc["findings"]] == [f"F{i}" for i in range(1, len(doc["findings"]) + 1)]
    summary = (tmp_path / "rep" / f"{stem}_executive_summary.md").read_text()
    assert len(summary.splitlines()) <= MAX_SUMMARY_LINES
    assert "Clock offset (B − A): +2000.000 ms." in summary
    report = (tmp_path / "rep" / f"{stem}_forensic_report.md").read_text()
    assert report.index("## Executive Summary") < report.index("## Findings") < report.index("## Comparison detail")
    assert "## Point A: src-vm.pcap" in report and "## Point B: dst-vm.pcapng" in report


def test_injected_rst_then_blocked_flow(tmp_path: Path) -> None:
    p = Path2(nat=False, offset=-0.5, delay=0.002)
    cs, ss = 7000, 3000
    p.c2s(0.000, SYN, cs, 0, ident=10)
    p.s2c(0.010, SYN | ACK, ss, cs + 1, ident=20)
    p.c2s(0.020, ACK, cs + 1, ss + 1, ident=11)
    p.c2s(0.030, PSH | ACK, cs + 1, ss + 1, data=b"GET /\r\n", ident=12)
    p.s2c(0.040, ACK, ss + 1, cs + 8, ident=21)
    # the middlebox forges a RST "from the client" towards the server, seen only at B, with a foreign TTL
    rst_b = add(p.b, T0 + 0.0425 + p.offset, C, S, RST | ACK, cs + 8, ss + 1, ttl=50, ident=999)
    cut = [p.c2s(0.050, PSH | ACK, cs + 8, ss + 1, data=b"more\r\n", ident=13, reach_b=False)[0],
           p.c2s(0.300, PSH | ACK, cs + 8, ss + 1, data=b"more\r\n", ident=14, reach_b=False)[0],
           p.c2s(0.900, PSH | ACK, cs + 8, ss + 1, data=b"more\r\n", ident=15, reach_b=False)[0]]
    a, b = p.a.write(tmp_path / "a.pcap"), p.b.write(tmp_path / "b.pcap")
    comp = compare_captures(a, b)
    assert comp["injected"]["at_b"]["frames"] == [rst_b]
    (inj,) = comp["injected_packets"]
    assert (inj["point"], inj["frame"], inj["tcp_flags"], inj["ttl"], inj["usual_ttl"]) == ("B", rst_b, "RST+ACK", 50, 63)
    assert comp["blocked"]["at_b"]["frames"] == cut
    assert comp["lost"]["a_to_b"]["count"] == 0
    assert comp["clock_offset_ms"] == pytest.approx(-500.0, abs=0.01)
    an_a, an_b = analyze_capture(a), analyze_capture(b)
    doc, _ = build_compare_semantic(an_a, an_b)
    _validate(doc)
    top = doc["findings"][0]
    assert top["kind"] == "injected_rst"
    assert top["evidence"]["frames"] == [rst_b]
    assert "TTL 50" in top["title"] and "injected by a middlebox between A and B" in top["title"]
    blocked = next(f for f in doc["findings"] if f["kind"] == "flow_blocked")
    assert blocked["evidence"]["frames"] == cut
    assert f"after the injected RST (B frame {rst_b})" in blocked["title"]


def test_single_trailing_drop_is_lost_not_blocked(tmp_path: Path) -> None:
    p = Path2(nat=False, offset=0.0)
    p.c2s(0.000, SYN, 1, 0, ident=1)
    p.s2c(0.010, SYN | ACK, 1, 2, ident=2)
    p.c2s(0.020, ACK, 2, 2, ident=3)
    last, _ = p.c2s(0.030, ACK, 2, 2, data=b"x", ident=4, reach_b=False)
    comp = compare_captures(p.a.write(tmp_path / "a.pcap"), p.b.write(tmp_path / "b.pcap"))
    assert comp["lost"]["a_to_b"]["frames"] == [last]
    assert comp["blocked"]["at_b"]["count"] == 0


def test_no_shared_traffic(nat_pair: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    a, _, _ = nat_pair
    other = Capture()
    other.tcp(T0, "192.168.1.1", "192.168.1.2", 1234, 80, 5, 0, SYN)
    b = other.write(tmp_path / "other.pcap")
    res = write_compare_outputs(a, b, semantic_dir=tmp_path, report_dir=tmp_path)
    comp = res.doc["comparison"]
    assert not comp["shared"]
    assert comp["matched_packets"] == 0
    assert comp["note"] and "share no packet" in comp["note"]
    assert comp["flows"]["only_a"] == 1 and comp["flows"]["only_b"] == 1
    assert comp["clock_offset_ms"] is None
    _validate(res.doc)
    assert res.doc["findings"][0]["kind"] == "no_shared_traffic"
    summary = (tmp_path / "src-vm_vs_other_executive_summary.md").read_text()
    assert "share no packet" in summary
    # nothing to compare, so each point's own verdict is given: B's lone unanswered SYN is its finding
    own = summary.split("## What each point shows on its own\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split("`")[1] for line in own][:1] == ["src-vm.pcap"] and own[-1].startswith("- Point B `other.pcap`: ")
    assert all(line.startswith(("- Point A `src-vm.pcap`: ", "- Point B `other.pcap`: ")) for line in own)


def test_empty_capture_compares_without_error(nat_pair: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    a, _, _ = nat_pair
    empty = Capture().write(tmp_path / "empty.pcap")
    for x, y in ((a, empty), (empty, a), (empty, empty)):
        res = write_compare_outputs(x, y, semantic_dir=tmp_path, report_dir=tmp_path)
        _validate(res.doc)
        assert not res.doc["comparison"]["shared"]


def test_identical_captures_match_everything(nat_pair: tuple[Path, Path, dict[str, Any]]) -> None:
    a, _, _ = nat_pair
    comp = compare_captures(a, a)
    assert comp["matched_packets"] == comp["points"]["a"]["ip_packets"]
    assert comp["match_rate"] == {"a": 1.0, "b": 1.0}
    for key in ("lost", "injected", "blocked", "unmatched"):
        assert all(v["count"] == 0 for v in comp[key].values())
    assert comp["clock_offset_ms"] == 0.0


def test_ip_id_rewrite_is_tolerated(tmp_path: Path) -> None:
    """A NAT that also rewrites the IP ID: matched by the TCP second pass, reported as modified."""
    a, b = Capture(), Capture()
    for k in range(6):
        t = T0 + k * 0.01
        args = (6, PSH | ACK, 100 + k * 10, 1) if k % 2 == 0 else (7, ACK, 1, 100 + k * 10)
        src, dst = (C, S) if k % 2 == 0 else (S, C)
        add(a, t, src, dst, args[1], args[2], args[3], data=b"d" * args[0] if k % 2 == 0 else b"", ident=10 + k)
        add(b, t + (0.003 if k % 2 == 0 else -0.003), src, dst, args[1], args[2], args[3],
            data=b"d" * args[0] if k % 2 == 0 else b"", ident=5000 + k)
    comp = compare_captures(a.write(tmp_path / "a.pcap"), b.write(tmp_path / "b.pcap"))
    assert comp["matched_packets"] == 6
    assert comp["modified"]["ip_id"]["rewritten_packets"] == 6
    assert comp["lost"]["a_to_b"]["count"] == comp["injected"]["at_b"]["count"] == 0


def test_not_a_capture_raises_capture_format_error(nat_pair: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    a, _, _ = nat_pair
    junk = tmp_path / "notes.txt"
    junk.write_text("not a capture\n" * 10)
    with pytest.raises(CaptureFormatError):
        write_compare_outputs(a, junk, semantic_dir=tmp_path, report_dir=tmp_path)
    with pytest.raises(CaptureFormatError):
        compare_captures(tmp_path / "missing.pcap", a)
    assert not list(tmp_path.glob("*_vs_*"))  # nothing half-written


def test_run_compare_cli_contract(nat_pair: tuple[Path, Path, dict[str, Any]], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    a, b, _ = nat_pair

    def ns(**kw: Any) -> argparse.Namespace:
        base = {"capture": str(a), "compare": str(b), "semantic_dir": str(tmp_path / "s"), "report_dir": str(tmp_path / "r"),
                "format": "md,json", "narrative": False}
        return argparse.Namespace(**(base | kw))

    assert run_compare(ns()) == 0
    out = capsys.readouterr().out
    assert "src-vm.pcap vs dst-vm.pcapng: 9 packets matched, lost A→B 1" in out
    assert out.count("wrote ") == 3
    assert run_compare(ns(compare=str(tmp_path / "nope.pcap"))) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pcap-forensics: error: ")
    assert run_compare(ns(format="md,pdf")) == 2
    assert "unknown --format pdf" in capsys.readouterr().err
    assert run_compare(ns(narrative=True, format="json")) == 0
    assert "no Gemini credentials" in capsys.readouterr().err


def test_syn_retries_that_never_reach_b_are_lost(tmp_path: Path) -> None:
    """A healthy flow orients the pair; a second connection's SYNs all die between A and B."""
    p = Path2(nat=False, offset=0.0, delay=0.004)
    p.c2s(0.000, SYN, 10, 0, ident=1)
    p.s2c(0.010, SYN | ACK, 50, 11, ident=2)
    p.c2s(0.020, ACK, 11, 51, ident=3)
    p.c2s(0.030, PSH | ACK, 11, 51, data=b"ping", ident=4)
    p.s2c(0.040, PSH | ACK, 51, 15, data=b"pong", ident=5)
    red = ("10.0.2.4", 6380)
    syns = [add(p.a, T0 + t, C, red, SYN, 777, 0, ident=100 + k) for k, t in enumerate((0.05, 1.05, 3.05))]
    add(p.b, T0 + 3.5, S, C, ACK, 55, 15, ident=6)  # B keeps recording past the SYNs (window check)
    add(p.a, T0 + 3.504, S, C, ACK, 55, 15, ident=6)
    comp = compare_captures(p.a.write(tmp_path / "a.pcap"), p.b.write(tmp_path / "b.pcap"))
    assert comp["lost"]["a_to_b"]["frames"] == syns
    assert comp["flows"]["only_a"] == 1
    doc, _ = build_compare_semantic(analyze_capture(tmp_path / "a.pcap"), analyze_capture(tmp_path / "b.pcap"))
    lost = next(f for f in doc["findings"] if f["kind"] == "lost_a_to_b")
    assert lost["title"].startswith("3 packet(s) left A for 10.0.2.4:6380 and never reached B")
    assert lost["evidence"]["frames"] == syns


def test_ipv6_pair_without_ip_id(tmp_path: Path) -> None:
    """IPv6 has no IP ID: the TCP pass on seq/ack/payload still matches, copies of a pure ACK pair in order."""
    from tests.forensics.pcapwriter import ipv6_packet

    c6, s6 = "2001:db8::4", "2001:db8:2::4"
    a, b = Capture(), Capture()
    frames_a = []
    for k in range(8):
        c2s = k % 2 == 0
        # requests advance seq; the server's ACKs all acknowledge 1 (identical duplicate ACKs)
        seg = tcp_segment(40000, 443, 1 + 5 * (k // 2), 9, PSH | ACK, 65535, b"q" * 5) if c2s else \
            tcp_segment(443, 40000, 9, 1, ACK)
        fr = ether(ipv6_packet(c6, s6, 6, seg) if c2s else ipv6_packet(s6, c6, 6, seg), ethertype=0x86DD)
        frames_a.append(a.add(T0 + k * 0.01, fr))
        if k != 4:  # the third request is lost between A and B
            b.add(T0 + k * 0.01 + (0.002 if c2s else -0.002), fr)
    comp = compare_captures(a.write(tmp_path / "a6.pcap"), b.write(tmp_path / "b6.pcap"))
    assert comp["matched_packets"] == 7
    assert comp["lost"]["a_to_b"]["frames"] == [frames_a[4]]
    assert comp["per_flow"][0]["client"] == "[2001:db8::4]:40000"
    assert comp["per_flow"][0]["one_way_delay_ms"] == pytest.approx(2.0, abs=0.01)


def test_analyze_hook_is_used(nat_pair: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    a, b, _ = nat_pair
    seen: list[Path] = []

    def tracking(p: Path) -> Any:
        seen.append(p)
        return analyze_capture(p)

    write_compare_outputs(a, b, semantic_dir=tmp_path, report_dir=tmp_path, formats={"json"}, analyze=tracking)
    assert seen == [a, b]


def test_truncated_capture_is_compared_up_to_the_cut(nat_pair: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    a, b, _ = nat_pair
    data = a.read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) - 30])  # the last record loses its tail
    res = write_compare_outputs(cut, b, semantic_dir=tmp_path, report_dir=tmp_path, formats={"json"})
    assert any(n.startswith("A: ") and "cut" in n for n in res.notices)
    comp = res.doc["comparison"]
    assert comp["points"]["a"]["packets"] == 9  # 10 frames written, the 10th cut
    assert comp["matched_packets"] == 8
    assert comp["sent_upstream"] == {"a_to_b": 5, "b_to_a": 5}
    _validate(res.doc)
