"""One function call -> ``shell.execute()`` or ``orchestrator.orchestrate()`` (seed 001 §4 dispatch).

The agent never runs a process itself: ``run_shell_cmd`` goes to the Safe-Exec Shell, the four task
tools to the Cloud Orchestrator. :class:`WatchedShell` stands between both of them and the real shell,
so the loop sees every shell call the orchestrator makes too (the console line, the audit id, and the
human's denial reason, which an orchestrator response does not carry).

A capture's target must be a resource the investigation has read (:class:`ReadLog`: it appeared in the
output of an ``az`` read of this session that succeeded, and not because the command's own ``--query``
wrote it); otherwise a person is asked (:func:`target_gate`), and ``--yes`` or no terminal refuses it.
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from netghost.agent._tools import HYPOTHESIS_ARGS
from netghost.contracts import (
    CancelTaskArgs,
    CaptureTrafficArgs,
    CheckTaskArgs,
    CleanupTaskArgs,
    DecidedBy,
    RunShellCmdArgs,
)
from netghost.redact import clean_json
from netghost.shell import HitlCallback, ask_about

__all__ = [
    "ORCHESTRATOR_TOOLS",
    "Dispatched",
    "Dispatcher",
    "EndsTasks",
    "OrchestratorLike",
    "ReadLog",
    "ShellLike",
    "TargetCheck",
    "WatchedShell",
    "capture_targets",
    "describe",
    "split_args",
    "target_gate",
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


@runtime_checkable
class EndsTasks(Protocol):
    """An orchestrator that can cancel a task because the session is ending, saying so in its record."""

    def cancel_at_session_end(self, task_id: str, cause: str) -> dict[str, Any]:
        """Cancel ``task_id`` because of ``cause`` (the agent's words); never raises."""
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
        self._seen(request, response)
        return response

    def execute_many(self, requests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """``shell.execute_many(requests)`` (SAFE reads at once, results in call order), each remembered.

        A shell without it (a test's stand-in) runs them one after the other.
        """
        many = getattr(self.shell, "execute_many", None)
        responses = list(many(requests)) if many is not None else [self.shell.execute(r) for r in requests]
        for request, response in zip(requests, responses, strict=True):
            self._seen(request, response)
        return responses

    @property
    def batches_reads(self) -> bool:
        """The shell's :attr:`~netghost.shell.SafeExecShell.batches_reads` (False for a shell without it)."""
        return bool(getattr(self.shell, "batches_reads", False))

    def runs_unasked(self, command: str) -> bool:
        """Would the shell run ``command`` without asking anybody (it alone decides, again, when it runs)?"""
        check = getattr(self.shell, "runs_unasked", None)
        return bool(check(command)) if check is not None else False

    def _seen(self, request: Mapping[str, Any], response: dict[str, Any]) -> None:
        command = str(request.get("command", ""))
        self.calls.append((command, response))
        self.last_audit_id = str(response.get("audit_id") or self.last_audit_id or "") or None
        if self.on_result is not None:
            self.on_result(command, response)


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
            if response.get("status") == "denied" and response.get("action") in ("user_denied", "user_abandoned"):
                return command, response.get("denial_reason"), str(response.get("audit_id") or "")
        return "", None, ""


class ReadLog:
    """What the investigation has read of the cloud: the outputs of this session's ``az`` reads that succeeded.

    Why not any output: a name is easy to make a tool print (``dig NAME`` echoes it, an error message quotes
    it, ``--query "'NAME'"`` is a JMESPath literal). A read counts when ``az`` completed with exit 0, and a
    name counts as read only when it appears as a whole word in that output and not in the command's own
    ``--query`` (nor, for an ARM id, anywhere but the output).
    """

    def __init__(self) -> None:
        self._reads: list[tuple[str, str]] = []

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> ReadLog:
        """A log seeded from a session's shell audit records (a resumed session's earlier runs)."""
        log = cls()
        for record in records:
            log.note(str(record.get("command", "")), record)
        return log

    def note(self, command: str, response: Mapping[str, Any]) -> None:
        """Remember one shell result if it is a successful ``az`` read."""
        if response.get("status") != "completed" or response.get("exit_code") != 0:
            return
        try:
            argv = shlex.split(command)
        except ValueError:
            return
        if not argv or argv[0] != "az" or response.get("environment") not in (None, "azure"):
            return
        # every --query value (argparse takes an abbreviation like --que too): JMESPath can write any literal
        query = " ".join(v for k, v in itertools.pairwise(argv) if _is_query(k))
        query += " " + " ".join(w.split("=", 1)[1] for w in argv if "=" in w and _is_query(w.split("=", 1)[0]))
        self._reads.append((query.lower(), str(response.get("output") or "").lower()))

    def has_read(self, name: str) -> bool:
        """Did ``name`` appear in a read's output (as a whole word), not written there by its own ``--query``?"""
        wanted = name.strip().lower()
        if not wanted:
            return False
        word = re.compile(r"(?<![a-z0-9_.\-])" + re.escape(wanted) + r"(?![a-z0-9_.\-])")
        return any(word.search(output) and wanted not in query for query, output in self._reads)


def _is_query(option: str) -> bool:
    return len(option) > 3 and "--query".startswith(option)


def capture_targets(target: str) -> list[str]:
    """The VMs a ``capture_traffic`` target names (``"A"`` or ``"A to B"``, as the orchestrator splits it)."""
    return [t.strip() for t in target.split(" to ")]


TargetCheck = Callable[[list[str], Mapping[str, Any]], tuple[bool, DecidedBy | None, str]]
"""``check(targets, request) -> (may_capture, who_decided, why)``; who is None when nobody had to be asked."""


def target_gate(callback: HitlCallback, reads: ReadLog, *, session_id: str, now: Callable[[], datetime],
                timeout_s: float, say: Callable[[str], None]) -> TargetCheck:
    """The check the dispatcher runs before a capture: targets read before pass; any other is asked of a person.

    The question goes through the shell's gate (plan-token, deadline, fail closed) with ``needs_person``
    set, so ``--yes`` refuses it and so does the closed gate; only a person's approval lets it through.
    """
    asked = 0

    def check(targets: list[str], request: Mapping[str, Any]) -> tuple[bool, DecidedBy | None, str]:
        nonlocal asked
        unread = [t for t in targets if not reads.has_read(t)]
        if not unread:
            return True, None, ""
        asked += 1
        why = (f"capture target {', '.join(repr(t) for t in unread)} never appeared in this investigation's cloud "
               "reads: a capture on a resource the investigation has not read needs a person's approval")
        plan = {"tool": "capture_traffic", "targets": targets, "session_id": session_id, "question": asked}
        gate = ask_about(callback, plan, what=describe("capture_traffic", request), why=why,
                         risk=f"Starts a packet capture on {', '.join(targets)} in Azure (billed, reads traffic).",
                         context={"classification": "RISKY", "tier": 2, "environment": "azure",
                                  "needs_person": why, "approval_timeout_s": timeout_s}, now=now,
                         timeout_s=timeout_s)
        who = gate.decided_by
        approved = gate.response is not None and gate.response.decision == "approve" and who is not None and \
            who.is_person
        label = who.label() if who is not None else "nobody"
        say(f"[Ghost Agent] capture on {', '.join(unread)} {'approved' if approved else 'refused'} by {label}: "
            f"{why}")
        reason = gate.response.reason if gate.response is not None and gate.response.reason else gate.abandoned
        return approved, who, why + (f" ({reason})" if reason and not approved else "")

    return check


class Dispatcher:
    """Maps the five dispatchable tools to the shell and the orchestrator (complete_investigation is the loop's).

    Args:
        shell: the watched shell.
        orchestrator: the orchestrator.
        target_check: asked before every ``capture_traffic`` (None: no check, for tests of the dispatch only).
    """

    def __init__(self, shell: WatchedShell, orchestrator: OrchestratorLike,
                 target_check: TargetCheck | None = None) -> None:
        self.shell = shell
        self.orchestrator = orchestrator
        self.target_check = target_check

    def shell_request(self, name: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
        """The shell request of a ``run_shell_cmd`` call the shell would run unasked, else None.

        Such calls of one turn may run together (:meth:`call_reads`); any other goes through :meth:`call`.
        """
        if name != "run_shell_cmd":
            return None
        try:
            request = RunShellCmdArgs.model_validate(split_args(args)[0]).to_request().model_dump()
        except ValidationError:
            return None
        return request if self.shell.runs_unasked(str(request.get("command", ""))) else None

    def call_reads(self, requests: Sequence[dict[str, Any]]) -> list[Dispatched]:
        """Run several :meth:`shell_request` requests at once; one :class:`Dispatched` each, in call order."""
        self.shell.mark()
        responses = self.shell.execute_many(requests)
        return [Dispatched("shell", clean_json(dict(result)), dict(request),
                           [(str(request.get("command", "")), result)])
                for request, result in zip(requests, responses, strict=True)]

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
        if name == "capture_traffic" and self.target_check is not None:
            targets = capture_targets(str(request.get("target", "")))
            allowed, who, why = self.target_check(targets, request)
            if not allowed:
                refusal: dict[str, Any] = {"status": "error", "error": "capture_target_unread", "tool": name, "targets": targets,
                           "message": f"Capture refused: {why}. Read the resource first (e.g. az vm show) if it "
                                      "belongs to the complaint."}
                if who is not None:
                    refusal["decided_by"] = who.model_dump(mode="json")
                return Dispatched("refused", refusal, request)
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
