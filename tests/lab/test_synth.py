"""Synthesized captures: bit-valid libpcap, deterministic, coherent at both ends, windowed whole."""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from netghost.errors import LabError
from netghost.forensics import analyze_capture, build_semantic
from netghost.lab.az._capture_store import EMPTY_PCAP, synthesize
from netghost.lab.synth import MAX_SYNTH_S, capture_packets, synthesize_capture
from netghost.lab.synth._packets import observed, transit
from netghost.lab.synth._pcap import PCAP_HEADER, TcpOpts, checksum, encode_ipv4, tcp_segment, udp_datagram
from netghost.lab.world import SCENARIO_DIR, World, load_world, world_from_yaml

T0 = 1_795_000_000.0


def _records(data: bytes) -> list[tuple[float, bytes]]:
    out, pos = [], 24
    while pos < len(data):
        sec, usec, incl, orig = struct.unpack_from("<IIII", data, pos)
        assert incl == orig
        out.append((sec + usec / 1e6, data[pos + 16:pos + 16 + incl]))
        pos += 16 + incl
    assert pos == len(data)
    return out


def test_pcap_header_is_classic_microsecond_ethernet() -> None:
    magic, major, minor, zone, sigfigs, snaplen, link = struct.unpack("<IHHiIII", PCAP_HEADER)
    assert (magic, major, minor, zone, sigfigs, link) == (0xA1B2C3D4, 2, 4, 0, 0, 1)
    assert snaplen >= 65535 and PCAP_HEADER == EMPTY_PCAP


def test_checksums_verify_like_a_receiver_would() -> None:
    opts = TcpOpts(mss=1460, wscale=7, sack_perm=True, ts=(1000, 0))
    seg = tcp_segment("10.1.1.4", "10.1.2.4", 40000, 6379, seq=1, ack=0, flags=0x02, win=64240, opts=opts, payload=b"")
    pseudo = bytes([10, 1, 1, 4, 10, 1, 2, 4, 0, 6]) + struct.pack("!H", len(seg))
    assert checksum(pseudo + seg) == 0
    assert (seg[12] >> 4) * 4 == 40  # 20 + MSS 4 + SACK-perm/TS 12 + NOP/WS 4
    ip = encode_ipv4("10.1.1.4", "10.1.2.4", 6, seg, ident=7, ttl=64, df=True)
    assert checksum(ip[:20]) == 0 and ip[6] & 0x40
    udp = udp_datagram("10.1.1.4", "168.63.129.16", 5353, 53, b"abc")
    pseudo = bytes([10, 1, 1, 4, 168, 63, 129, 16, 0, 17]) + struct.pack("!H", len(udp))
    assert checksum(pseudo + udp) == 0


def test_every_frame_checksums_and_times_are_ordered() -> None:
    world = load_world("path-packet-loss")
    recs = _records(synthesize_capture(world, "web-vm-01", T0, T0 + 30))
    assert len(recs) > 500
    assert [t for t, _ in recs] == sorted(t for t, _ in recs)
    assert all(T0 <= t <= T0 + 30 for t, _ in recs)
    for _, frame in recs:
        if frame[12:14] != b"\x08\x00":
            continue
        ihl = (frame[14] & 0x0F) * 4
        assert checksum(frame[14:14 + ihl]) == 0
        total = struct.unpack("!H", frame[16:18])[0]
        l4 = frame[14 + ihl:14 + total]
        pseudo = frame[26:34] + bytes([0, frame[23]]) + struct.pack("!H", len(l4))
        assert checksum(pseudo + l4) == 0


def test_deterministic_for_the_same_world_vm_and_window() -> None:
    world = load_world("healthy")
    first = synthesize_capture(world, "web-vm-01", T0, T0 + 20)
    assert first == synthesize_capture(load_world("healthy"), "WEB-VM-01", T0, T0 + 20)
    assert first != synthesize_capture(world, "web-vm-01", T0 + 100, T0 + 120)


def test_both_ends_see_the_same_packets_except_losses() -> None:
    world = load_world("path-packet-loss")
    client = capture_packets(world, "web-vm-01", T0 - 30, T0 + 70)  # a wider window holds every server exchange
    server = capture_packets(world, "redis-primary", T0, T0 + 40)
    sent = {(p.ident, p.l4) for _, p, out in observed(client, "10.1.1.4") if out and p.dst == "10.1.2.4"}
    got = {(p.ident, p.l4) for _, p, out in observed(server, "10.1.2.4") if not out and p.src == "10.1.1.4"}
    assert len(got) > 100
    assert got < sent  # identical IP IDs and TCP bytes; the server side only lacks what the path lost
    replies_sent = {(p.ident, p.l4) for _, p, out in observed(server, "10.1.2.4") if out and p.dst == "10.1.1.4"}
    replies_got = {(p.ident, p.l4) for _, p, out in observed(client, "10.1.1.4") if not out and p.src == "10.1.2.4"}
    assert replies_sent - replies_got  # server segments lost on the way back
    lost_ttl = {p.ttl - p.hops for _, p, out in observed(server, "10.1.2.4") if not out and p.src == "10.1.1.4"}
    assert lost_ttl == {63}  # one routed hop (fw-vm-01) between the subnets


def test_window_keeps_connections_whole(tmp_path: Path) -> None:
    world = load_world("healthy")
    path = tmp_path / "w.pcap"
    path.write_bytes(synthesize_capture(world, "redis-primary", T0 + 3.3, T0 + 33.3))
    assert all(T0 + 3.3 <= t <= T0 + 33.3 for t, _ in _records(path.read_bytes()))
    sem = build_semantic(analyze_capture(path))
    assert sem["summary"]["tcp_conversations"] > 10
    assert set(sem["summary"]["conn_states"]) == {"SF"}  # no connection cut at either edge


def test_healthy_conversations_are_complete_with_linux_options(tmp_path: Path) -> None:
    world = load_world("healthy")
    path = tmp_path / "h.pcap"
    path.write_bytes(synthesize_capture(world, "web-vm-01", T0, T0 + 60))
    sem = build_semantic(analyze_capture(path))
    assert set(sem["summary"]["conn_states"]) == {"SF"}
    redis = [f for f in sem["flows"] if f["server"] == "10.1.2.4:6379"]
    assert redis and all(f["mss"] == {"c": 1460, "s": 1460} and f["wscale"] == {"c": 7, "s": 7} for f in redis)
    assert all(f["fin"] == {"c": 1, "s": 1} and f["syn"] == 1 for f in redis)
    assert sem["summary"]["l3"].get("arp", 0) >= 1
    assert sem["summary"]["udp_packets"] > 0


def test_syn_retries_back_off_exponentially() -> None:
    world = load_world("nsg-deny")
    pkts = capture_packets(world, "web-vm-01", T0, T0 + 60)
    syns: dict[int, list[float]] = {}
    for p in pkts:
        if p.proto == 6 and p.dst == "10.1.2.4":
            sport = struct.unpack("!H", p.l4[:2])[0]
            syns.setdefault(sport, []).append(p.t)
    assert syns
    for times in syns.values():
        gaps = [round(b - a, 3) for a, b in itertools.pairwise(times)]
        assert gaps == [1.0, 2.0, 4.0]
    assert not [p for p in pkts if p.src == "10.1.2.4" and p.proto == 6 and p.dst == "10.1.1.4"]


def test_unknown_vm_and_stopped_vm() -> None:
    world = load_world("healthy")
    with pytest.raises(LabError, match="no VM named"):
        synthesize_capture(world, "nope", T0, T0 + 1)
    with pytest.raises(LabError, match="before it starts"):
        synthesize_capture(world, "web-vm-01", T0, T0 - 1)
    dead = load_world("udr-dead-appliance")
    stopped = next(vm for vm in dead.spec.vms if vm.power_state != "running")
    assert synthesize_capture(dead, stopped.name, T0, T0 + 60) == PCAP_HEADER


def test_capture_store_seam_uses_the_synthesizer() -> None:
    world = load_world("service-down")
    body = synthesize(world, "web-vm-01", T0, T0 + 10)
    assert body != EMPTY_PCAP and body == synthesize_capture(world, "web-vm-01", T0, T0 + 10)


def test_capture_lifecycle_blob_carries_the_fault(make_lab: Callable[..., object], tmp_path: Path) -> None:
    lab = make_lab("service-down")
    blob = "https://forensicssa.blob.core.windows.net/captures/cap1.cap"
    res = lab.az(f"network watcher packet-capture create -g prod-rg --vm web-vm-01 -n cap1 "  # type: ignore[attr-defined]
                 f"--storage-account forensicssa --storage-path {blob} --time-limit 30 -o json")
    assert res.code == 0, res.err
    lab.state.advance_clock(40)  # type: ignore[attr-defined]
    res = lab.az("network watcher packet-capture show-status -l eastus -n cap1 "  # type: ignore[attr-defined]
                 "--query packetCaptureStatus -o tsv")
    assert res.out.strip() == "Stopped"
    dest = tmp_path / "cap1.cap"
    res = lab.az(f"storage blob download --account-name forensicssa -c captures -n cap1.cap "  # type: ignore[attr-defined]
                 f"-f {dest} --auth-mode login -o none")
    assert res.code == 0, res.err
    sem = build_semantic(analyze_capture(dest))
    assert sem["summary"]["decode_issues"] == {}
    assert "syn_rejected_rst" in {f["kind"] for f in sem["findings"]}


def test_middlebox_resets_reach_both_ends_but_neither_sent_one() -> None:
    world = load_world("middlebox-rst")
    for vm, ip in (("web-vm-01", "10.1.1.4"), ("redis-primary", "10.1.2.4")):
        seen = observed(capture_packets(world, vm, T0, T0 + 60), ip)
        rst_in = [p for _, p, out in seen if not out and p.proto == 6 and p.l4[13] & 0x04]
        rst_out = [p for _, p, out in seen if out and p.proto == 6 and p.l4[13] & 0x04]
        assert rst_in and not rst_out
        assert {(p.ttl, p.ident, p.df) for p in rst_in} == {(255, 0, False)}


def test_long_windows_are_capped() -> None:
    world = load_world("healthy")
    pkts = capture_packets(world, "redis-primary", T0, T0 + 18000)
    assert pkts and max(p.t for p in pkts) <= T0 + MAX_SYNTH_S


def _udp_world(listening: bool) -> World:
    data = yaml.safe_load((SCENARIO_DIR / "healthy.yaml").read_text(encoding="utf-8"))
    data["name"] = f"udp-{listening}"
    redis = next(vm for vm in data["vms"] if vm["name"] == "redis-primary")
    redis["services"].append({"port": 8125, "protocol": "Udp", "name": "statsd",
                              "state": "listening" if listening else "stopped"})
    data["traffic"] = [{"name": "metrics", "client": "web-vm-01", "server": "redis-primary", "port": 8125,
                        "protocol": "Udp", "requests_per_minute": 30, "request_bytes": 120, "response_bytes": 40}]
    return world_from_yaml(yaml.safe_dump(data))


def test_udp_flow_answered_or_port_unreachable(tmp_path: Path) -> None:
    for listening in (True, False):
        path = tmp_path / f"udp-{listening}.pcap"
        path.write_bytes(synthesize_capture(_udp_world(listening), "web-vm-01", T0, T0 + 60))
        sem = build_semantic(analyze_capture(path))
        assert sem["summary"]["decode_issues"] == {}
        kinds = {f["kind"] for f in sem["findings"]}
        if listening:
            assert sem["summary"]["icmp"] == {} and not kinds
        else:
            assert sem["summary"]["icmp"].get("3/3", 0) >= 20
            hits = [f for f in sem["findings"] if f["kind"] == "icmp_icmp_3_3"]
            assert hits and "10.1.2.4:8125" in hits[0]["title"]


def test_appliance_sees_transit_twice_and_forges_resets() -> None:
    world = load_world("middlebox-rst")
    pkts = capture_packets(world, "fw-vm-01", T0, T0 + 60)
    seen = transit(pkts, "10.0.100.4")
    forwarded = [(p, out, ttl) for _, p, out, ttl in seen if not p.forged]
    ins = {id(p): ttl for p, out, ttl in forwarded if not out}
    outs = {id(p): ttl for p, out, ttl in forwarded if out}
    assert ins and set(outs) <= set(ins)
    assert all(outs[k] == ins[k] - 1 for k in outs)
    forged = [p for _, p, out, _ in seen if p.forged]
    assert forged and all(out for _, p, out, _ in seen if p.forged)


def test_megabyte_transfer_is_clean_to_the_tshark_rules(tmp_path: Path) -> None:
    data = yaml.safe_load((SCENARIO_DIR / "healthy.yaml").read_text(encoding="utf-8"))
    data["traffic"][0].update(response_bytes=1_000_000, requests_per_minute=6)
    path = tmp_path / "big.pcap"
    path.write_bytes(synthesize_capture(world_from_yaml(yaml.safe_dump(data)), "web-vm-01", T0, T0 + 60))
    sem = build_semantic(analyze_capture(path))
    assert sem["summary"]["packets"] > 3000
    assert not any(sem["summary"]["tcp_analysis"].values()) and sem["findings"] == []


def test_capture_filters_snaplen_and_size_limit(tmp_path: Path) -> None:
    world = load_world("service-down")
    only_redis = [{"protocol": "TCP", "remoteIPAddress": "10.1.2.0-10.1.2.255", "remotePort": "6379;6380"}]
    path = tmp_path / "f.pcap"
    path.write_bytes(synthesize_capture(world, "web-vm-01", T0, T0 + 60, filters=only_redis, bytes_per_packet=64))
    recs = _records_snapped(path.read_bytes())
    assert recs and all(incl <= 64 <= orig or incl == orig <= 64 for incl, orig in recs)
    a = analyze_capture(path)
    sem = build_semantic(a)
    assert sem["summary"]["l3"] == {"ipv4": len(recs)} and sem["summary"]["udp_packets"] == 0
    assert {int(p) for p in a.cols.sport.tolist() + a.cols.dport.tolist()} >= {6379}
    assert {f["kind"] for f in sem["findings"]} == {"syn_rejected_rst"}
    capped = synthesize_capture(world, "web-vm-01", T0, T0 + 60, total_bytes=10_000)
    assert 9_000 < len(capped) <= 10_000
    assert synthesize_capture(world, "web-vm-01", T0, T0 + 60, filters=[{"protocol": "UDP", "localPort": "1"}]) \
        == PCAP_HEADER


def _records_snapped(data: bytes) -> list[tuple[int, int]]:
    out, pos = [], 24
    while pos < len(data):
        _, _, incl, orig = struct.unpack_from("<IIII", data, pos)
        out.append((incl, orig))
        pos += 16 + incl
    return out
