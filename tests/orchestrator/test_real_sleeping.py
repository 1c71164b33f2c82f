"""Polling sleeps on the real path, and a capture's poll budget is its time limit (issue 24, bug 1).

Outside the lab nothing injects a clock or a sleeper: the orchestrator must really sleep between polls
and count the real CLI's latency in its budget. These tests build the orchestrator with its *default*
configuration and record time only at the lowest level (``time.sleep``, ``time.time`` and
``time.monotonic`` replaced by one fake clock), so a default sleeper that does not sleep fails them. The
lab answers in-process on a frozen lab clock that follows the fake clock, and every az call costs
``LATENCY_S`` of it, as the real CLI's 3.5-6.6 s calls did.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from netghost.lab import init_state
from netghost.lab.state import LabState
from netghost.orchestrator import CloudOrchestrator

from .conftest import START, Hitl, InProcessShell, request

LATENCY_S = 5.0
BRAIN_TURN_S = 8.0


@dataclass
class FakeTime:
    """One clock behind ``time.time``, ``time.monotonic`` and ``time.sleep``; sleeping moves it."""

    now: float = START.timestamp()
    slept: list[float] = field(default_factory=list)

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now - START.timestamp() + 1000.0

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@dataclass
class SlowAzure:
    """The lab in-process, its clock kept on the fake clock, and ``LATENCY_S`` per az call."""

    inner: InProcessShell
    state: LabState
    fake: FakeTime
    synced: float = START.timestamp()
    commands: list[tuple[float, str]] = field(default_factory=list)
    stuck: bool = False
    """Azure never reports the capture stopped (show-status says Running whatever the time)."""

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        self.fake.now += LATENCY_S if request["command"].startswith("az ") else 0.0
        self.state.advance_clock(self.fake.now - self.synced)
        self.synced = self.fake.now
        self.commands.append((self.fake.now, request["command"]))
        response = self.inner.execute(request)
        if self.stuck and "show-status" in request["command"]:
            response["output"] = '{"packetCaptureStatus": "Running"}'
        return response


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SlowAzure, FakeTime]:
    fake = FakeTime()
    state = init_state(tmp_path / "lab", "nsg-deny", lab_start=START.timestamp(), scale=0.0)  # frozen: fake time moves it
    shell = SlowAzure(InProcessShell({"NETGHOST_LAB_STATE": str(state.root)}, Hitl()), state, fake)
    monkeypatch.setattr(time, "time", fake.time)
    monkeypatch.setattr(time, "monotonic", fake.monotonic)
    monkeypatch.setattr(time, "sleep", fake.sleep)
    return shell, fake


def _orchestrator(tmp_path: Path, shell: SlowAzure, **config: Any) -> CloudOrchestrator:
    """The default configuration: no clock, no sleeper (only where files go and a quiet console)."""
    return CloudOrchestrator(shell, "s1", task_dir=str(tmp_path / "audit"), local_capture_dir=str(tmp_path / "captures"),
                             console=Console(file=io.StringIO(), width=100), scan_azure_orphans=False, **config)


def _brain_polls(orch: CloudOrchestrator, fake: FakeTime, task_id: str) -> tuple[dict[str, Any], int]:
    """check_task until the task is no longer pending, a model turn between calls (bounded)."""
    for calls in range(1, 200):
        response = orch.orchestrate({"intent": "check_task", "task_id": task_id})
        if response["status"] != "task_pending":
            return response, calls
        fake.now += BRAIN_TURN_S
    raise AssertionError("the task never left task_pending")


def test_a_180_s_capture_completes_within_its_poll_budget_with_the_default_sleeper(
        tmp_path: Path, world: tuple[SlowAzure, FakeTime]) -> None:
    shell, fake = world
    orch = _orchestrator(tmp_path, shell)
    first = orch.orchestrate(request(duration_seconds=180))
    assert first["state"] == "PROVISIONING", first
    created = fake.now
    done, calls = _brain_polls(orch, fake, first["task_id"])
    assert done["status"] == "task_completed", done
    record = orch.rt.registry.get(first["task_id"])
    assert record is not None and record.poll_count <= record.max_polls
    assert sum(fake.slept) >= 90  # the waits between polls were slept, not skipped
    assert all(s in (5.0, 10.0, 20.0, 30.0) for s in fake.slept)
    polls = [t for t, c in shell.commands if "show-status" in c]
    assert polls[-1] >= created + 180  # it stopped because its time limit passed, not because polls ran out
    assert calls <= 10  # each check_task spent its burst polling (seed: 45 s), not one poll per model turn
    assert not any("packet-capture delete" in c for t, c in shell.commands if t < created + 180)
    orch.close()


def test_a_sleeper_that_does_not_sleep_fails_the_same_run(tmp_path: Path, world: tuple[SlowAzure, FakeTime]) -> None:
    """The check above can fail: the old default (a no-op sleeper) burns the poll budget before the time limit."""
    shell, fake = world
    orch = _orchestrator(tmp_path, shell, sleeper=lambda _s: None, max_polls=20)
    first = orch.orchestrate(request(duration_seconds=180))
    done, _ = _brain_polls(orch, fake, first["task_id"])
    assert (done["status"], orch.rt.registry.get(first["task_id"]).failure_reason) == (  # type: ignore[union-attr]
        "task_timed_out", "max_polls_exceeded")
    assert fake.slept == []
    orch.close()


def test_the_poll_budget_follows_the_time_limit_and_an_overdue_capture_times_out(
        tmp_path: Path, world: tuple[SlowAzure, FakeTime]) -> None:
    shell, fake = world
    orch = _orchestrator(tmp_path, shell)
    cfg = orch.rt.config
    assert cfg.poll_budget(60) == 20 and cfg.poll_budget(3600) > 2 * 3600 / 30  # an hour: 30 s polls, twice over
    shell.stuck = True
    first = orch.orchestrate(request(duration_seconds=180))
    created = fake.now
    done, _ = _brain_polls(orch, fake, first["task_id"])
    record = orch.rt.registry.get(first["task_id"])
    assert record is not None and (done["status"], record.failure_reason) == ("task_timed_out", "capture_overdue")
    assert fake.now >= created + 180 + cfg.poll_margin_s  # never before the time limit plus the margin
    assert record.poll_count < record.max_polls
    orch.close()

