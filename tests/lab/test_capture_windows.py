"""Two capture sessions created a few real seconds apart (the two ends of a dual-end capture) capture the
same traffic during their common window, as Azure's do, however fast the lab clock runs; sessions far
apart keep their own windows. Also the clock's reading at wall speed that measures that distance."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from netghost.forensics.compare import compare_captures, compare_findings
from netghost.lab.clock import LabClock

from .conftest import Lab

CREATE = ("network watcher packet-capture create -g prod-rg -n {name} --vm {vm} --storage-account forensicssa "
          "--storage-path https://forensicssa.blob.core.windows.net/captures/{name}.cap --time-limit 60")


def _wall_passes(lab: Lab, seconds: float) -> None:
    """Let ``seconds`` of real time pass without sleeping: the clock's wall anchor moves back by that much
    (what the clock reads is then what it would read ``seconds`` later)."""
    clock = lab.state.clock()
    clock.wall_anchor -= seconds
    lab.state.save_clock(clock)


def _blob(lab: Lab, name: str, tmp_path: Path) -> Path:
    lab.state.advance_clock(3 * 3600)  # both sessions long stopped
    out = tmp_path / f"{name}.cap"
    got = lab.az(f"storage blob download --account-name forensicssa -c captures -n {name}.cap -f {out} --auth-mode login")
    assert got.code == 0, got.err
    return out


def _sessions(lab: Lab) -> dict[str, dict[str, Any]]:
    return {rec["name"]: rec for rec in lab.state.captures().values()}


def test_the_two_ends_of_a_dual_end_capture_share_their_common_window(make_lab: Callable[..., Lab],
                                                                    tmp_path: Path) -> None:
    lab = make_lab("path-packet-loss", scale=60.0)
    assert lab.az(CREATE.format(name="client_end", vm="web-vm-01")).code == 0
    _wall_passes(lab, 20.0)  # the agent's own steps between the two creates: real seconds
    assert lab.az(CREATE.format(name="server_end", vm="redis-primary")).code == 0
    a, b = _sessions(lab)["client_end"], _sessions(lab)["server_end"]
    assert b["created"] - a["created"] >= 20 * 60  # 20 lab minutes at this scale: their own starts never overlap...
    gap = b["created_steady"] - a["created_steady"]  # ...but 20 real seconds (and the az call's own time)
    assert 20.0 <= gap < 45.0
    assert b["data_start"] - a["data_start"] == pytest.approx(gap)  # on the wire, as in Azure
    comp = compare_captures(_blob(lab, "client_end", tmp_path), _blob(lab, "server_end", tmp_path))
    assert comp["shared"] and comp["matched_packets"] > 100
    pa, pb = comp["points"]["a"], comp["points"]["b"]
    overlap = min(pa["last_ts"], pb["last_ts"]) - max(pa["first_ts"], pb["first_ts"])
    assert overlap == pytest.approx(60.0 - gap, abs=5.0)  # a 60 s window each, started ``gap`` apart
    assert comp["clock_offset_ms"] is not None and abs(comp["clock_offset_ms"]) < 5.0  # one clock, as NTP keeps it


def test_sessions_created_far_apart_keep_their_own_windows(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("path-packet-loss", scale=60.0)
    assert lab.az(CREATE.format(name="first", vm="web-vm-01")).code == 0
    _wall_passes(lab, 90.0)  # the first would have stopped by then even at wall speed
    assert lab.az(CREATE.format(name="later", vm="redis-primary")).code == 0
    lab.state.advance_clock(600)  # explicit waiting counts at full length
    assert lab.az(CREATE.format(name="much_later", vm="web-vm-01")).code == 0
    for rec in _sessions(lab).values():
        assert rec["data_start"] == pytest.approx(rec["created"] + 1.0)  # its own start (STARTUP_S after created)


def test_a_lab_at_wall_speed_places_every_window_at_its_own_start(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("path-packet-loss", scale=1.0)
    assert lab.az(CREATE.format(name="one", vm="web-vm-01")).code == 0
    _wall_passes(lab, 20.0)
    assert lab.az(CREATE.format(name="two", vm="redis-primary")).code == 0
    for rec in _sessions(lab).values():
        assert rec["data_start"] == pytest.approx(rec["created"] + 1.0, abs=0.05)


def test_the_clock_at_wall_speed_counts_real_time_and_jumps_but_not_the_scale() -> None:
    wall = [1000.0]
    clock = LabClock.start(lab_start=5000.0, scale=60.0, wall=lambda: wall[0])
    wall[0] += 10
    assert (clock.now(), clock.at_wall_speed()) == (5600.0, 5010.0)
    clock.advance(65)
    assert (clock.now(), clock.at_wall_speed()) == (5665.0, 5075.0)
    clock.rescale(1.0)  # continuous across a change of scale
    wall[0] += 5
    assert (clock.now(), clock.at_wall_speed()) == (5670.0, 5080.0)
    again = LabClock.from_json(json.loads(json.dumps(clock.to_json())), wall=lambda: wall[0])
    assert (again.now(), again.at_wall_speed()) == (5670.0, 5080.0)
    old = {k: v for k, v in clock.to_json().items() if k != "hurried"}  # a state written before the field
    assert LabClock.from_json(old, wall=lambda: wall[0]).at_wall_speed() == clock.now()


def test_captures_that_missed_each_other_say_so_and_never_blame_the_path(make_lab: Callable[..., Lab],
                                                                        tmp_path: Path) -> None:
    lab = make_lab("path-packet-loss", scale=60.0)
    assert lab.az(CREATE.format(name="early", vm="web-vm-01")).code == 0
    lab.state.advance_clock(600)  # ten minutes later: the first window long closed
    assert lab.az(CREATE.format(name="late", vm="redis-primary")).code == 0
    comp = compare_captures(_blob(lab, "early", tmp_path), _blob(lab, "late", tmp_path))
    assert not comp["shared"] and comp["matched_packets"] == 0
    assert "windows never overlapped" in comp["note"] and "says nothing about the path" in comp["note"]
    findings = compare_findings(comp)
    assert findings and all(f["severity"] == "info" for f in findings)  # a note, never a fault of the network
    text = json.dumps([comp, findings]).lower()
    assert "not the same path" not in text and "routed around" not in text
