"""What every stage of a task shares: configuration, the shell, the registry, and one guarded ``run``.

:meth:`Runtime.run` is the only place a command leaves the orchestrator. It checks, in order, that
the task's stored plan still hashes to its plan-token and that the argv is a member of that plan,
then calls ``shell.execute({"command", "reasoning"})`` with a reasoning that carries the
investigation context, records the shell's ``audit_id`` in the task, and judges the response:
``ok`` (completed, exit 0), ``failed`` (completed, exit != 0: az's own error text is in ``stderr``),
``denied`` (``user_denied``, ``user_abandoned`` or ``blocked``: which one is kept) or ``error`` (the
shell could not run it: timeout, not found, exec error). The orchestrator never starts a process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from netghost.contracts import DecidedBy, StorageAuthMode, TaskRecord, TaskState
from netghost.errors import PlanViolation
from netghost.orchestrator import _commands as cmd
from netghost.orchestrator._budgets import Budgets
from netghost.orchestrator._plan import MAX_CAPTURE_BYTES, bindings, is_member, plan_token
from netghost.orchestrator._registry import Registry
from netghost.orchestrator._states import step

__all__ = [
    "Config",
    "PlanViolation",
    "Ran",
    "Runtime",
    "ShellLike",
    "parse_json",
]


SEED_MAX_POLLS = 20
"""Seed 000's ``max_polls`` (about 8.5 minutes of backoff): the least budget a task gets."""


class ShellLike(Protocol):
    """What the orchestrator needs of the Safe-Exec Shell: ``execute({command, reasoning}) -> dict``."""

    def execute(self, request: Mapping[str, Any]) -> dict[str, Any]: ...




def _utcnow() -> datetime:
    """Wall time. ``time.time`` is looked up at each call, so a test that replaces it drives this default."""
    return datetime.fromtimestamp(time.time(), UTC)


def _sleep(seconds: float) -> None:
    """Really sleep: every path that does not inject a sleeper (the real cloud) waits between polls.

    ``time.sleep`` is looked up at each call (not bound at import), so a test that records it checks the
    default a user gets.
    """
    time.sleep(seconds)


@dataclass
class Config:
    """Seed 000 "Configuration", plus what the real CLI and the tests need (see CloudOrchestrator).

    ``max_polls`` ``None`` (the default) sizes each task's poll budget from its capture's time limit
    (:meth:`poll_budget`); a number is used as it is. ``poll_margin_s`` is how long past the time limit
    polling waits for Azure to report the capture stopped before the task is TIMED_OUT.
    """

    max_polls: int | None = None
    initial_poll_interval: float = 5.0
    max_poll_interval: float = 30.0
    local_capture_dir: str = "/tmp/captures"
    storage_container: str = "captures"
    capture_name_prefix: str = "ghost"
    poll_burst_limit: float = 45.0
    local_artifact_max_age_days: float = 7.0
    storage_auth_mode: StorageAuthMode = "login"
    engine_command: tuple[str, ...] = ("pcap-forensics",)
    capture_limit_bytes: int = 104857600
    max_capture_bytes: int = MAX_CAPTURE_BYTES
    download_retry_delay_s: float = 5.0
    scan_azure_orphans: bool = True
    poll_margin_s: float = 120.0
    clock: Callable[[], datetime] = _utcnow
    sleeper: Callable[[float], None] = _sleep
    clock_scale: float = 1.0
    """Cloud seconds per wall second (the lab's clock runs faster): what a person is shown of a task's
    duration or of the next poll is divided by it, so it is wall time; the task records keep the cloud's."""
    budgets: Budgets = field(default_factory=Budgets.defaults)
    """The session's budgets; the capture ones are enforced at preflight (``capture.rego``)."""

    def poll_budget(self, duration_s: float) -> int:
        """How many polls a capture of ``duration_s`` may take: the configured ``max_polls``, or enough for
        the backoff schedule to cover the time limit plus the margin twice over (a Brain that calls
        check_task again at once polls at once), and never fewer than the seed's 20.

        The count only guards against a runaway (a sleeper that does not sleep, a Brain in a tight loop):
        the budget that ends a healthy task is its time window (:func:`netghost.orchestrator._polling`).
        """
        if self.max_polls is not None:
            return self.max_polls
        window, waited, polls = duration_s + self.poll_margin_s, 0.0, 0
        while waited < window:
            polls += 1
            waited += max(min(self.initial_poll_interval * 2 ** min(polls - 1, 60), self.max_poll_interval), 1.0)
        return max(SEED_MAX_POLLS, 2 * polls + 2)


Outcome = Literal["ok", "failed", "denied", "error"]
_REFUSED = {"user_denied": "denied", "user_abandoned": "abandoned", "blocked": "blocked"}


@dataclass(frozen=True)
class Ran:
    """A judged shell response."""

    outcome: Outcome
    response: dict[str, Any]

    @property
    def output(self) -> str:
        return str(self.response.get("output") or "")

    @property
    def stderr(self) -> str:
        return str(self.response.get("stderr") or "")

    @property
    def exit_code(self) -> int | None:
        code = self.response.get("exit_code")
        return code if isinstance(code, int) else None

    @property
    def action(self) -> str:
        return str(self.response.get("action") or "")

    @property
    def decided_by(self) -> str | None:
        """Who decided, in the words the shell's lines use (None for a response that does not say)."""
        try:
            return DecidedBy.model_validate(self.response["decided_by"]).label()
        except (KeyError, TypeError, ValueError):
            return None

    def decision(self) -> str:
        """A refusal in words, naming who made it, as the shell's decision lines do: ``denied by the human at
        the terminal (reason: "change freeze")``, ``blocked by policy forbidden_tier``."""
        verb = _REFUSED.get(self.action, self.action.replace("_", " ") or "not decided")
        who = self.decided_by
        reason = self.response.get("denial_reason")
        return verb + (f" by {who}" if who else "") + (f' (reason: "{reason}")' if reason else "")

    def error_text(self) -> str:
        """First meaningful line of what went wrong (az's ``ERROR:`` line, the denial and who made it ...)."""
        if self.outcome == "denied":
            who = self.decided_by
            reason = self.response.get("denial_reason")
            return f"{self.action}" + (f" by {who}" if who else "") + (f": {reason}" if reason else "")
        text = self.stderr.strip() or str(self.response.get("error") or "") or self.output.strip()
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip() != "ERROR:"]
        return lines[0].removeprefix("ERROR: ") if lines else f"exit {self.exit_code}"


def parse_json(text: str) -> Any:
    """az's ``-o json`` output, or None when it is not JSON (truncated, empty)."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def _judge(response: dict[str, Any]) -> Outcome:
    action = response.get("action")
    if action in ("user_denied", "user_abandoned", "blocked"):
        return "denied"
    if response.get("status") == "completed":
        return "ok" if response.get("exit_code") == 0 else "failed"
    return "error"


@dataclass
class Runtime:
    """The orchestrator's collaborators, shared by every stage."""

    shell: ShellLike
    session_id: str
    registry: Registry
    config: Config
    say: Callable[[str], None]
    progress: Callable[[str | None], None] = field(default=lambda _text: None)
    shell_calls: int = 0
    touched: list[str] = field(default_factory=list)
    """Tasks saved since the current request began (an internal error fails what it interrupted)."""

    def now(self) -> datetime:
        return self.config.clock()

    def save(self, record: TaskRecord) -> TaskRecord:
        if record.task_id not in self.touched:
            self.touched.append(record.task_id)
        return self.registry.save(record)

    def move(self, record: TaskRecord, to_state: TaskState, **updates: Any) -> TaskRecord:
        """Step the record (transition table) and append it to the registry before anything else."""
        return self.save(step(record, to_state, now=self.now(), **updates))

    def workdir(self, record: TaskRecord) -> Path:
        return Path(record.workspace or self.config.local_capture_dir) / "artifacts"

    def reasoning(self, record: TaskRecord, what: str) -> str:
        context = record.investigation_context.strip()
        return f"{what} Task {record.task_id}." + (f" Investigation: {context}" if context else "")

    def check_plan(self, record: TaskRecord, argv: Sequence[str]) -> None:
        """Refuse a command outside the plan, or any command once the plan-token broke.

        Raises:
            PlanViolation: ``plan_token_mismatch`` or ``not_in_plan``.
        """
        if record.plan is None or record.plan_token is None:
            raise PlanViolation(record.task_id, "plan_token_mismatch", "the task record carries no plan")
        if plan_token(record.task_id, record.plan) != record.plan_token:
            raise PlanViolation(record.task_id, "plan_token_mismatch",
                                "the stored plan no longer hashes to the task's plan-token")
        bound = bindings(record.task_id, record.location, record.storage_path, record.storage_container,
                         record.local_pcap_path)
        if not is_member(argv, record.plan, bound):
            raise PlanViolation(record.task_id, "not_in_plan", f"command is not in the task's plan: {cmd.render(argv)}")

    def run(self, record: TaskRecord, argv: Sequence[str], what: str) -> tuple[TaskRecord, Ran]:
        """Run one planned command through the shell; returns the record (with the audit id) and the verdict.

        Raises:
            PlanViolation: the command is not in the plan or the plan-token broke (nothing ran).
        """
        self.check_plan(record, argv)
        response = self.shell.execute({"command": cmd.render(argv), "reasoning": self.reasoning(record, what)})
        self.shell_calls += 1
        audit_id = response.get("audit_id")
        if isinstance(audit_id, str):
            record = record.model_copy(update={"shell_audit_ids": [*record.shell_audit_ids, audit_id]})
        return record, Ran(_judge(response), response)

    def prefetch(self, record: TaskRecord, argvs: Sequence[Sequence[str]], what: str) -> TaskRecord:
        """Run several planned SAFE reads at once so the checks that follow find them in the shell's read cache.

        Why: the preflight's checks are independent reads asked one after the other (each a round trip to
        ARM); issued together they cost one. Each check still runs its own command, which the shell answers
        from its cache (audited with ``cached_from``), so the checks, their order and their stop reasons stay
        the same. Only when the shell batches reads (parallel and cached); a command outside the plan is
        skipped, not refused (its check refuses it as before).
        """
        if not getattr(self.shell, "batches_reads", False):
            return record
        bound = bindings(record.task_id, record.location, record.storage_path, record.storage_container,
                         record.local_pcap_path)
        planned = [list(a) for a in argvs if record.plan is not None and is_member(a, record.plan, bound)]
        if len(planned) < 2:
            return record
        many = getattr(self.shell, "execute_many", None)
        if many is None:
            return record
        responses = many([{"command": cmd.render(a), "reasoning": self.reasoning(record, what)}
                                             for a in planned])
        self.shell_calls += len(planned)
        ids = [str(r["audit_id"]) for r in responses if isinstance(r.get("audit_id"), str)]
        return record.model_copy(update={"shell_audit_ids": [*record.shell_audit_ids, *ids]})

    def run_free(self, argv: Sequence[str], reasoning: str) -> Ran:
        """A command outside any task's plan: the start-up orphan sweep's reads, and the deletes of an orphan
        that has no task (``clean_orphan``: only what detection found, each RISKY delete through the gate)."""
        response = self.shell.execute({"command": cmd.render(argv), "reasoning": reasoning})
        self.shell_calls += 1
        return Ran(_judge(response), response)
