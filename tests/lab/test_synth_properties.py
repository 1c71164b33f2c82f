"""Property tests: any loss rate and message sizes give bit-valid captures and coherent views."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netghost.forensics import analyze_capture, build_semantic
from netghost.lab.synth import capture_packets, synthesize_capture
from netghost.lab.synth._packets import observed
from netghost.lab.world import SCENARIO_DIR, World, world_from_yaml

T0 = 1_795_000_000.0
_BASE = yaml.safe_load((SCENARIO_DIR / "path-packet-loss.yaml").read_text(encoding="utf-8"))


def _world(loss: float, request: int, response: int) -> World:
    data = yaml.safe_load(yaml.safe_dump(_BASE))
    data["name"] = f"prop-{loss}-{request}-{response}"
    data["traffic"][0].update(request_bytes=request, response_bytes=response, requests_per_minute=30)
    data["fault"]["params"]["loss_rate"] = loss
    return world_from_yaml(yaml.safe_dump(data))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(loss=st.sampled_from([0.0, 0.01, 0.1, 0.3]), request=st.integers(0, 4000), response=st.integers(0, 120_000),
       offset=st.floats(0, 600))
def test_any_loss_and_size_gives_valid_coherent_captures(tmp_path: Path, loss: float, request: int, response: int,
                                                         offset: float) -> None:
    world = _world(loss, request, response)
    start = T0 + offset
    path = tmp_path / "c.pcap"
    path.write_bytes(synthesize_capture(world, "web-vm-01", start, start + 20))
    sem = build_semantic(analyze_capture(path))
    assert sem["summary"]["decode_issues"] == {}
    assert sem["summary"]["rst_packets"] == 0
    if loss == 0.0:
        assert not any(sem["summary"]["tcp_analysis"].values()), sem["summary"]["tcp_analysis"]
    client = capture_packets(world, "web-vm-01", start - 40, start + 60)
    server = capture_packets(world, "redis-primary", start, start + 20)
    sent = {(p.ident, p.l4) for _, p, out in observed(client, "10.1.1.4") if out and p.dst == "10.1.2.4"}
    got = {(p.ident, p.l4) for _, p, out in observed(server, "10.1.2.4") if not out and p.src == "10.1.1.4"}
    assert got <= sent
