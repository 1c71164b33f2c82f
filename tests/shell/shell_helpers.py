"""Helpers for shell tests: a recording HITL callback and a small table classifier.

The table classifier stands in for netghost.shell.classify only where a test needs a verdict that the real
policy would not give for a harmless local command (e.g. RISKY ``sleep``); audit and end-to-end tests use
the real classifier.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netghost.governance.approval import ApprovalRequest
from netghost.shell import HitlDecision

SAFE = {"echo", "true", "printf", "pwd"}
FORBIDDEN = {"sudo", "su", "mkfs"}


@dataclass(frozen=True)
class FakeClassification:
    verdict: str
    tier: int
    reason: str
    argv: tuple[str, ...]
    environment: str = "local"
    error: str | None = None
    policy_hash: str | None = None
    policy_rule: str | None = None


def table_classify(command: str, policy: Any = None) -> FakeClassification:
    try:
        argv = tuple(shlex.split(command))
    except ValueError:
        return FakeClassification("FORBIDDEN", 0, "does not parse", (), error="parse_error")
    if not argv or any(ch in command for ch in ";|&`$<>"):
        return FakeClassification("FORBIDDEN", 0, "one simple command only", (), error="not_a_single_command")
    env = "azure" if argv[0] == "az" else "local"
    if argv[0] in FORBIDDEN:
        return FakeClassification("FORBIDDEN", 0, f"{argv[0]} is never run", argv, env, "forbidden_command")
    if argv[0] in SAFE:
        return FakeClassification("SAFE", 1, "read-only diagnostic", argv, env)
    return FakeClassification("RISKY", 3, f"{argv[0]} is not on the allowlist", argv, env)


@dataclass
class Recorder:
    """A HITL callback that returns queued answers (or raises queued exceptions) and records requests."""

    answers: list[Any] = field(default_factory=list)
    requests: list[ApprovalRequest] = field(default_factory=list)

    def __call__(self, request: ApprovalRequest) -> HitlDecision:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer  # type: ignore[no-any-return]


# The fake `az`: logs "start NAME t pid" (NAME: the value of -n), sleeps 0.4 s (60 s when NAME has "slow"),
# prints "read NAME", logs "end NAME t"; any az command (a delete too) does the same.
_FAKE_AZ = """#!/bin/sh
name=""
for a in "$@"; do [ "$prev" = "-n" ] && name="$a"; prev="$a"; done
echo "start $name $(date +%s.%N) $$" >> "{log}"
case "$name" in *slow*) sleep 60;; *) sleep 0.4;; esac
echo "read $name"
echo "end $name $(date +%s.%N)" >> "{log}"
"""


def fake_az(tmp_path: Path) -> tuple[str, Path]:
    """A PATH whose ``az`` is the slow fake, and the log it stamps."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    az = bin_dir / "az"
    az.write_text(_FAKE_AZ.format(log=log), encoding="utf-8")
    az.chmod(0o755)
    return os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]), log


def call_events(log: Path) -> dict[str, dict[str, float]]:
    """name -> {"start": t, "end": t, "pid": p} from the fake's own stamps."""
    out: dict[str, dict[str, float]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        kind, name, stamp, *pid = line.split()
        out.setdefault(name, {})[kind] = float(stamp)
        if pid:
            out[name]["pid"] = float(pid[0])
    return out
