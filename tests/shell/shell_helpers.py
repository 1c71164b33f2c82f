"""Helpers for shell tests: a recording HITL callback and a small table classifier.

The table classifier stands in for netghost.shell.classify only where a test needs a verdict that the real
policy would not give for a harmless local command (e.g. RISKY ``sleep``); audit and end-to-end tests use
the real classifier.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
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
