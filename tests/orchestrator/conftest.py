"""Fixtures: a lab world, a clock that moves lab time instead of sleeping, scripted HITL, two shells.

``InProcessShell`` runs the *same* lab world and its injectable cloud faults as the real shell
does, without one process per command (one lab ``az`` process costs ~1.4 s on this machine): the
real classifier decides SAFE/RISKY/FORBIDDEN, RISKY commands ask the scripted human, ``az`` runs the
lab simulator in-process (``run_az``), the engine runs its CLI ``main`` in-process and ``rm`` unlinks.
The few end-to-end tests use the real :class:`SafeExecShell` on the lab's ``bin/`` PATH.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from netghost.contracts.cabincrew import ApprovalRequest
from netghost.forensics.cli import main as engine_main
from netghost.lab import init_state, lab_path_env
from netghost.lab.az import run_az
from netghost.lab.state import LabState
from netghost.orchestrator import CloudOrchestrator
from netghost.redact import PathContext
from netghost.shell import HitlDecision, SafeExecShell, classify

START = datetime(2026, 11, 22, 5, 0, 0, tzinfo=UTC)


@dataclass
class Clock:
    """Orchestrator time; ``sleep`` moves it and the lab clock together (tests never sleep)."""

    lab: LabState
    now_dt: datetime = START
    slept: list[float] = field(default_factory=list)

    def now(self) -> datetime:
        return self.now_dt

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        self.now_dt += timedelta(seconds=seconds)
        self.lab.advance_clock(seconds)


@dataclass
class Hitl:
    """Scripted human: answers from ``script`` (by a substring of the command), else approves."""

    script: dict[str, HitlDecision] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    def __call__(self, request: ApprovalRequest) -> HitlDecision:
        self.asked.append(request.what)
        for needle, decision in self.script.items():
            if needle in request.what:
                return decision
        return HitlDecision.approve()


@dataclass
class InProcessShell:
    """Classifier + scripted gate + the lab in-process; the response carries the shell's fields."""

    env: dict[str, str]
    hitl: Hitl
    calls: list[str] = field(default_factory=list)
    fail_engine: bool = False
    seq: int = 0
    cwd: str | None = None  # the session directory the engine's outputs must stay in (issue 28)

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        command = request["command"]
        self.calls.append(command)
        self.seq += 1
        base: dict[str, Any] = {"audit_id": f"t_{self.seq:03d}", "command": command, "output": "", "stderr": "",
                                "exit_code": None, "error": None, "denial_reason": None}
        cls = classify(command, local=PathContext(cwd=self.cwd) if self.cwd else None)
        if cls.verdict == "FORBIDDEN":
            return {**base, "status": "denied", "action": "blocked", "error": "forbidden_command"}
        action = "auto_approved"
        if cls.verdict == "RISKY":
            decision = self.hitl(ApprovalRequest(plan_token="sha256:" + "0" * 64, what=command,
                                                 why=request.get("reasoning", ""), risk=cls.reason,
                                                 requested_at=START))
            if decision.decision == "deny":
                return {**base, "status": "denied", "action": "user_denied", "denial_reason": decision.reason or None}
            action = "user_approved"
        code, out, err = self._run(list(cls.argv))
        return {**base, "status": "completed", "action": action, "exit_code": code, "output": out, "stderr": err}

    def _run(self, argv: list[str]) -> tuple[int, str, str]:
        if argv[0] == "az":
            return run_az(argv[1:], self.env)
        if argv[0] == "rm":
            Path(argv[-1]).unlink(missing_ok=True)
            return 0, "", ""
        if argv[0] == "pcap-forensics":
            if self.fail_engine:
                return 2, "", "pcap-forensics: error: simulated engine crash\n"
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = engine_main(argv[1:])
                except SystemExit as exc:  # argparse's usage error: the process would exit with it
                    code = exc.code if isinstance(exc.code, int) else 2
            return code, out.getvalue(), err.getvalue()
        return 127, "", f"{argv[0]}: not found\n"


@dataclass
class Lab:
    root: Path
    state: LabState
    env: dict[str, str]
    clock: Clock
    hitl: Hitl
    shell: InProcessShell

    def orchestrator(self, session: str = "s1", shell: Any = None, **config: Any) -> CloudOrchestrator:
        defaults: dict[str, Any] = {"local_capture_dir": str(self.root / "captures"), "clock": self.clock.now,
                                    "sleeper": self.clock.sleep, "console": _quiet()}
        defaults.update(config)
        return CloudOrchestrator(shell or self.shell, session, task_dir=str(self.root / "audit"), **defaults)

    def captures(self) -> list[str]:
        return [rec["name"] for rec in self.state.captures().values()]

    def blobs(self) -> list[str]:
        return [b for containers in self.state.storage().values() for blobs in containers.values() for b in blobs]


def _quiet() -> Any:
    from rich.console import Console

    return Console(file=io.StringIO(), width=100)


def request(target: str = "web-vm-01", **params: Any) -> dict[str, Any]:
    parameters = {"duration_seconds": 60, "storage_account": "forensicssa", "resource_group": "prod-rg", **params}
    return {"intent": "capture_traffic", "target": target, "parameters": parameters,
            "investigation_context": "web-vm-01 cannot reach redis-primary:6379"}


def make_lab(root: Path, scenario: str = "nsg-deny") -> Lab:
    state = init_state(root / "lab", scenario, lab_start=START.timestamp())
    env = {"NETGHOST_LAB_STATE": str(state.root)}
    clock = Clock(state)
    hitl = Hitl()
    return Lab(root, state, env, clock, hitl, InProcessShell(env, hitl, cwd=str(root)))


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return make_lab(tmp_path)


@pytest.fixture
def real_shell_factory(tmp_path: Path) -> Iterator[Callable[[Lab], SafeExecShell]]:
    """A real SafeExecShell on the lab's bin/ PATH (plus this interpreter's bin for pcap-forensics)."""
    shells: list[SafeExecShell] = []

    def make(lab: Lab) -> SafeExecShell:
        env = lab_path_env(lab.state.root, base=os.environ)
        parts = env["PATH"].split(os.pathsep)
        path = os.pathsep.join([parts[0], str(Path(sys.executable).parent), *parts[1:]])
        shell = SafeExecShell("s1", lab.hitl, audit_dir=lab.root / "audit", path=path,
                              env={k: v for k, v in env.items() if k.startswith("NETGHOST_LAB")}, cwd=lab.root)
        shells.append(shell)
        return shell

    yield make
    for shell in shells:
        shell.close()
