"""Findings on the lab's synthesized captures: the right TOP finding per scenario, specific and evidenced.

The lab (``netghost.lab``) synthesizes the packets each VM's NIC would see in a faulted world; the
product forensics package never imports it, only this test does. Ground truth (which flow is faulted)
comes from ``scenarios/answers/<name>.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from netghost.forensics import analyze_capture, build_semantic, load_schema
from netghost.forensics.compare import build_compare_semantic
from netghost.forensics.decode import format_addr
from netghost.forensics.engine import Analysis
from netghost.forensics.findings import SEVERITIES
from netghost.lab.synth import synthesize_capture
from netghost.lab.world import SCENARIO_DIR, World, load_world

T0 = 1_795_000_000.0
WINDOW = 60.0
WARNING = SEVERITIES.index("low")

# scenario -> (kind of the top finding on the client capture, phrases its title must contain)
TOP = {
    "nsg-deny": ("syn_no_answer", ["SYN to {server}", "retried", "with no answer → silently dropped"]),
    "service-down": ("syn_rejected_rst", ["SYN to {server}", "RST from the server port", "→ nothing listening"]),
    "middlebox-rst": ("rst_injected", ["RST mid-stream", "{server}", "with TTL", "→ injected by a middlebox"]),
    "dns-nxdomain": ("dns_nxdomain", ["DNS NXDOMAIN for {qname}", "→ name not in the zone"]),
    "path-packet-loss": ("retransmissions", ["% retransmissions on tcp/", "{server}", "data segments → loss on the path"]),
    "pmtu-blackhole": ("pmtu_suspect", ["PMTU black hole suspected", "{server}", "never", "small ones pass"]),
}


_CACHE: dict[tuple[str, str], tuple[Analysis, dict[str, Any]]] = {}


@pytest.fixture(scope="module")
def cap_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lab-captures")


def _analyse(cap_dir: Path, world: World, vm: str) -> tuple[Analysis, dict[str, Any]]:
    key = (world.name, vm)
    if key not in _CACHE:
        path = cap_dir / f"{world.name}-{vm}.pcap"
        path.write_bytes(synthesize_capture(world, vm, T0, T0 + WINDOW))
        a = analyze_capture(path)
        _CACHE[key] = (a, build_semantic(a, path.stat().st_size))
    return _CACHE[key]


def _faulted_flow(world: World, name: str) -> tuple[str, str | None, str, int, str]:
    """(client VM, server VM, server IP the client dials, port, server name) of the scenario's flow."""
    answer = json.loads((SCENARIO_DIR / "answers" / f"{name}.json").read_text(encoding="utf-8"))
    flow_name = answer["affected_flow"] or world.spec.traffic[0].name
    flow = next(t for t in world.spec.traffic if t.name == flow_name)
    outcome = world.flow_outcome(flow)
    server = world.vm(flow.server)
    return flow.client, server.name if server else None, outcome.server_ip or world.endpoint_ip(flow.server), flow.port, \
        flow.server_name


def _frames_touch(a: Analysis, frames: list[int], ip: str) -> bool:
    c = a.cols
    return any(ip in (format_addr(c.src_hi[f - 1], c.src_lo[f - 1]), format_addr(c.dst_hi[f - 1], c.dst_lo[f - 1]))
               for f in frames)


@pytest.mark.parametrize("name", sorted(TOP))
def test_top_finding_on_the_client_capture(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    client, _, server_ip, port, qname = _faulted_flow(world, name)
    a, sem = _analyse(cap_dir, world, client)
    kind, phrases = TOP[name]
    top = sem["findings"][0]
    assert top["kind"] == kind, [f["title"] for f in sem["findings"][:4]]
    assert SEVERITIES.index(top["severity"]) >= SEVERITIES.index("medium")
    for phrase in phrases:
        assert phrase.format(server=f"{server_ip}:{port}", qname=qname) in top["title"], top["title"]
    frames = top["evidence"]["frames"]
    assert frames and all(1 <= f <= sem["summary"]["packets"] for f in frames)
    if kind == "dns_nxdomain":
        assert top["metrics"]["qname"] == qname
    else:
        assert _frames_touch(a, frames, server_ip)
        named = {fl["server"] for fl in sem["flows"] if fl["id"] in top["flows"]} | {top["metrics"].get("server")}
        assert f"{server_ip}:{port}" in named


@pytest.mark.parametrize("vm", ["web-vm-01", "redis-primary"])
def test_healthy_control_has_no_warning(cap_dir: Path, vm: str) -> None:
    _, sem = _analyse(cap_dir, load_world("healthy"), vm)
    assert sem["summary"]["tcp_conversations"] > 0
    assert [f["title"] for f in sem["findings"] if SEVERITIES.index(f["severity"]) >= WARNING] == []


def test_pmtu_black_hole_named_at_both_endpoints(cap_dir: Path) -> None:
    world = load_world("pmtu-blackhole")
    client, server, server_ip, port, _ = _faulted_flow(world, "pmtu-blackhole")
    assert server is not None
    for vm, side in ((client, "receiver"), (server, "sender")):
        _, sem = _analyse(cap_dir, world, vm)
        hits = [f for f in sem["findings"] if f["kind"] == "pmtu_suspect"]
        assert len(hits) == 1 and sem["findings"][0] is hits[0], vm
        f = hits[0]
        assert f["metrics"]["side"] == side and f["metrics"]["server"] == f"{server_ip}:{port}"
        assert f["metrics"]["segment_bytes"] >= 1400
        assert "large segments of" in f["title"] and "small ones pass" in f["title"]
        # the black hole explains the retransmissions: no second, vaguer "loss" finding
        assert not [g for g in sem["findings"] if g["kind"].startswith("retransmissions")], vm
    _, sem = _analyse(cap_dir, world, server)
    assert sem["findings"][0]["metrics"]["max_retransmissions"] >= 3


@pytest.mark.parametrize("name", ["healthy", "path-packet-loss", "middlebox-rst"])
def test_no_pmtu_claim_without_a_black_hole(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    client, server, *_ = _faulted_flow(world, name)
    for vm in filter(None, (client, server)):
        _, sem = _analyse(cap_dir, world, vm)
        assert not [f for f in sem["findings"] if f["kind"].startswith("pmtu")], (name, vm)


def test_silent_drop_stands_alone(cap_dir: Path) -> None:
    """SYN retries are the silent-drop finding, never also a retransmission-rate finding."""
    world = load_world("nsg-deny")
    client, *_ = _faulted_flow(world, "nsg-deny")
    _, sem = _analyse(cap_dir, world, client)
    assert [f["kind"] for f in sem["findings"] if f["severity"] != "info"] == ["syn_no_answer"]
    assert sem["findings"][0]["metrics"]["syn_attempts"] >= 2 * sem["findings"][0]["metrics"]["connections"]


def test_pmtu_evidence_agrees_with_the_two_point_comparison(cap_dir: Path) -> None:
    """Compare mode (server capture = A, client = B): the large segments the single-point finding cites
    are exactly packets that left A and never reached B; its small acknowledged segment is not."""
    world = load_world("pmtu-blackhole")
    client, server, *_ = _faulted_flow(world, "pmtu-blackhole")
    assert server is not None
    a, _ = _analyse(cap_dir, world, server)
    b, _ = _analyse(cap_dir, world, client)
    doc, _ = build_compare_semantic(a, b)
    jsonschema.validate(doc, load_schema())
    f = next(f for f in doc["findings"] if f["kind"] == "pmtu_suspect")
    assert f["metrics"]["point"] == "A"
    lost = doc["comparison"]["lost"]["a_to_b"]
    big = [fr for fr in f["evidence"]["frames"] if a.cols.paylen[fr - 1] >= 1400]
    small = [fr for fr in f["evidence"]["frames"] if 0 < a.cols.paylen[fr - 1] < 1400]
    assert len(big) >= 4 and small
    # the lost list is bounded (first frames in order); the evidence lies within the listed window
    assert max(big + small) <= max(lost["frames"]) or not lost["frames_truncated"]
    assert set(big) <= set(lost["frames"])
    assert not set(small) & set(lost["frames"])
