"""In-process stand-ins for the loop's tests: a scripted brain, a shell and an orchestrator that answer
from tables, and a console that records what it was asked."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from netghost.agent.brains import FunctionCall, Message, ModelTurn, Part

NOW = datetime(2025, 1, 15, 14, 30, 22, tzinfo=UTC)


def call(name: str, **args: Any) -> FunctionCall:
    return FunctionCall(name, args)


def turn(*items: str | FunctionCall) -> ModelTurn:
    parts = tuple(Part(text=i) if isinstance(i, str) else Part(call=i) for i in items)
    return ModelTurn(parts=parts, finish_reason="STOP")


class ScriptedBrain:
    """Answers each turn from a list; records the history it was given each time."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self, turns: Sequence[ModelTurn | Callable[[Sequence[Message]], ModelTurn] | Exception]) -> None:
        self.turns = list(turns)
        self.seen: list[list[Message]] = []
        self.prompts: list[str] = []

    def next_turn(self, history: Sequence[Message], *, system_prompt: str) -> ModelTurn:
        self.seen.append(list(history))
        self.prompts.append(system_prompt)
        item = self.turns.pop(0)
        if isinstance(item, Exception):
            raise item
        return item(history) if callable(item) else item


def shell_result(command: str, seq: int, *, status: str = "completed", action: str = "auto_approved",
                 classification: str = "SAFE", output: str = "[]", exit_code: int | None = 0,
                 denial_reason: str | None = None, error: str | None = None) -> dict[str, Any]:
    return {"status": status, "classification": classification, "action": action, "output": output,
            "stderr": "", "exit_code": exit_code, "error": error, "audit_id": f"ghost_20250115_143022_{seq:03d}",
            "tier": 2, "risk_reason": "", "environment": "azure",
            "output_metadata": {"truncation_applied": False, "original_lines": 1, "shown_lines": 1,
                                "format": "json", "redactions": 0},
            "plan_token": None, "denial_reason": denial_reason}


class TableShell:
    """``execute`` answers by the first rule whose prefix the command starts with; denies what ``deny`` names."""

    def __init__(self, deny: Mapping[str, str] | None = None) -> None:
        self.deny = dict(deny or {})
        self.requests: list[dict[str, Any]] = []

    def execute(self, request: Mapping[str, Any]) -> dict[str, Any]:
        self.requests.append(dict(request))
        command = str(request["command"])
        seq = len(self.requests)
        for prefix, reason in self.deny.items():
            if command.startswith(prefix):
                return shell_result(command, seq, status="denied", action="user_denied", classification="RISKY",
                                    output="", exit_code=None, denial_reason=reason or None)
        return shell_result(command, seq)


class TableOrchestrator:
    def __init__(self, shell: Any, answers: Mapping[str, dict[str, Any]] | None = None) -> None:
        self.shell = shell
        self.answers = dict(answers or {})
        self.requests: list[dict[str, Any]] = []

    def orchestrate(self, request: Mapping[str, Any]) -> dict[str, Any]:
        self.requests.append(dict(request))
        if request["intent"] == "capture_traffic":
            r = self.shell.execute({"command": "az network watcher packet-capture create -n ghost_x",
                                    "reasoning": "capture"})
            if r["status"] == "denied":
                return {"status": "task_cancelled", "task_id": "ghost_vm_1", "state": "CANCELLED",
                        "denied_action": r["action"], "message": "denied"}
            return {"status": "task_pending", "task_id": "ghost_vm_1", "state": "WAITING", "message": "capturing"}
        return self.answers.get(request["intent"], {"status": "error", "error": "unknown", "message": "?"})


class RecordingUi:
    def __init__(self, answers: Sequence[str] = (), *, interactive: bool = False) -> None:
        self.interactive = interactive
        self.answers = list(answers)
        self.lines: list[str] = []

    def brain(self, text: str) -> None:
        self.lines.append(f"[Ghost Agent] {text}")

    def error(self, text: str) -> None:
        self.lines.append(f"[ERROR] {text}")

    def notice(self, text: str) -> None:
        self.lines.append(text)

    def choose(self, question: str, options: Mapping[str, str], default: str) -> str:
        self.lines.append(question)
        if self.interactive and self.answers:
            return self.answers.pop(0)
        return default

    def ask(self, prompt: str) -> str:
        self.lines.append(prompt)
        return self.answers.pop(0) if self.interactive and self.answers else ""
