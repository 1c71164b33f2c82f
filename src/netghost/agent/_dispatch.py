"""One function call -> ``shell.execute()`` or ``orchestrator.orchestrate()`` (seed 001 §4 dispatch).

The agent never runs a process itself: ``run_shell_cmd`` goes to the Safe-Exec Shell, the four task
tools to the Cloud Orchestrator. :class:`WatchedShell` stands between both of them and the real shell,
so the loop sees every shell call the orchestrator makes too (the console line, the audit id, and the
human's denial reason, which an orchestrator response does not carry).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from netghost.agent._tools import HYPOTHESIS_ARGS
from netghost.contracts import (
    CancelTaskArgs,
    CaptureTrafficArgs,
    CheckTaskArgs,
    CleanupTaskArgs,
    RunShellCmdArgs,
)
from netghost.redact import clean_json

__all__ = [
    "ORCHESTRATOR_TOOLS",
    "Dispatched",
    "Dispatcher",
    "OrchestratorLike",
    "ShellLike",
    "WatchedShell",
    "describe",
    "split_args",
]

ORCHESTRATOR_TOOLS = ("capture_traffic", "check_task", "cancel_task", "cleanup_task")
_ARGS: dict[str, type[CaptureTrafficArgs | CheckTaskArgs | CancelTaskArgs | CleanupTaskArgs]] = {
    "capture_traffic": CaptureTrafficArgs, "check_task": CheckTaskArgs, "cancel_task": CancelTaskArgs,
         "cleanup_task": CleanupTaskArgs}


class ShellLike(Protocol):
    """What the agent and the orchestrator need of the shell."""

    def execute(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Run one command through classification, the gate and the audit."""
        ...


class OrchestratorLike(Protocol):
    """What the agent needs of the orchestrator."""

    def orchestrate(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Handle one request; never raises."""
        ...


ShellHook = Callable[[str, dict[str, Any]], None]


class WatchedShell:
    """The real shell, with every call seen: ``calls`` since the last :meth:`mark`, and a hook.

    Args:
        shell: the Safe-Exec Shell.
        on_result: called with (command, response) after each call (the console's ``[Shell]`` line).
    """

    def __init__(self, shell: ShellLike, on_result: ShellHook | None = None) -> None:
        self.shell = shell
        self.on_result = on_result
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.last_audit_id: str | None = None

    def mark(self) -> None:
        """Start a new window of :attr:`calls`."""
        self.calls = []

    def execute(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``shell.execute(request)``, remembered."""
        response = self.shell.execute(request)
        command = str(request.get("command", ""))
        self.calls.append((command, response))
        self.last_audit_id = str(response.get("audit_id") or self.last_audit_id or "") or None
        if self.on_result is not None:
            self.on_result(command, response)
        return response


def split_args(args: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the seed's arguments, the hypothesis-reporting arguments) of one call."""
    tool = {k: v for k, v in args.items() if k not in HYPOTHESIS_ARGS}
    extra = {k: v for k, v in args.items() if k in HYPOTHESIS_ARGS}
    return tool, extra


@dataclass
class Dispatched:
    """One call's outcome: the result for the Brain and what the loop needs to book it.

    ``kind`` is ``shell``, ``orchestrator`` or ``invalid`` (bad arguments / unknown tool: nothing ran).
    ``shell_calls`` are the (command, response) pairs of the shell calls it caused.
    """

    kind: str
    result: dict[str, Any]
    request: dict[str, Any] = field(default_factory=dict)
    shell_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def audit_ids(self) -> list[str]:
        """The shell audit ids this call produced, in order."""
        return [str(r["audit_id"]) for _, r in self.shell_calls if r.get("audit_id")]

    def denial(self) -> tuple[str, str | None, str]:
        """(command, denial reason, audit_id) of the shell call a human denied (the last one)."""
        for command, response in reversed(self.shell_calls):
            if response.get("status") == "denied":
                return command, response.get("denial_reason"), str(response.get("audit_id") or "")
        return "", None, ""


class Dispatcher:
    """Maps the five dispatchable tools to the shell and the orchestrator (complete_investigation is the loop's)."""

    def __init__(self, shell: WatchedShell, orchestrator: OrchestratorLike) -> None:
        self.shell = shell
        self.orchestrator = orchestrator

    def call(self, name: str, args: Mapping[str, Any]) -> Dispatched:
        """Validate the arguments against the contract and dispatch; never raises for bad input."""
        self.shell.mark()
        tool_args, _ = split_args(args)
        if name == "run_shell_cmd":
            try:
                shell_args = RunShellCmdArgs.model_validate(tool_args)
            except ValidationError as exc:
                return _invalid(name, exc)
            request = shell_args.to_request().model_dump()
            result = self.shell.execute(request)
            return Dispatched("shell", clean_json(dict(result)), request, list(self.shell.calls))
        model = _ARGS.get(name)
        if model is None:
            return Dispatched("invalid", {"status": "error", "error": "unknown_tool", "tool": name,
                                          "message": f"no function {name!r}: call one of the declared functions"})
        try:
            request = model.model_validate(tool_args).to_request().model_dump(mode="json", exclude_none=True)
        except ValidationError as exc:
            return _invalid(name, exc)
        result = self.orchestrator.orchestrate(request)
        return Dispatched("orchestrator", clean_json(dict(result)), request, list(self.shell.calls))


def _invalid(name: str, exc: ValidationError) -> Dispatched:
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or name}: {e['msg']}" for e in exc.errors())
    return Dispatched("invalid", {"status": "error", "error": "invalid_arguments", "tool": name,
                                  "message": problems})


def describe(name: str, request: Mapping[str, Any]) -> str:
    """A one-line description of a dispatched request (console and denial events)."""
    if name == "run_shell_cmd":
        return str(request.get("command", ""))
    words = [name] + [f"{k}={v}" for k, v in request.items() if k not in ("intent", "parameters")]
    return shlex.join(words) if len(words) < 6 else " ".join(words)
