"""SafeExecShell: classify → gate (HITL) → execute → redact + truncate → audit, one record per call.

The single door through which the Brain and the orchestrator run processes (ARCHITECTURE.md "The Safe-Exec
Shell"). Every ``execute()`` call appends exactly one hash-chained record to
``{audit_dir}/shell_audit_{session_id}.jsonl`` *before* it returns, whatever happened (blocked, denied,
abandoned, timed out, not found, or an internal failure), because the RCA cites commands by ``audit_id``.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from netghost.contracts.audit import ShellAuditRecord
from netghost.errors import PlanTokenMismatchError, ShellError
from netghost.governance.plan_token import compute_plan_token, verify_plan_token
from netghost.governance.wal import WalWriter
from netghost.shell.classify import Classification, classify
from netghost.shell.gate import GateOutcome, HitlCallback, ask_human, build_shell_request, shell_plan
from netghost.shell.redact import redact
from netghost.shell.run import RunResult, run_argv, scrub_env
from netghost.shell.truncate import truncate

if TYPE_CHECKING:
    from netghost.shell.org_policy import OrgPolicy

__all__ = ["SafeExecShell"]

_PRECUT_CHARS = 1_000_000
_ANSI_SEQ = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_C0 = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
Classifier = Callable[[str, "OrgPolicy | None"], Classification]


class _SharedWriters:
    """One WalWriter (and one lock) per audit file in this process, shared by every shell of that session.

    WalWriter takes an exclusive lock per file, so two shells of the same session must share one writer
    rather than each opening their own; the per-file lock serialises their ``execute()`` calls so that the
    ``seq`` an ``audit_id`` is built from is the ``seq`` the WAL assigns.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[Path, tuple[WalWriter, threading.RLock, int]] = {}

    def acquire(self, path: Path) -> tuple[WalWriter, threading.RLock]:
        with self._lock:
            entry = self._open.get(path)
            if entry is None or entry[0].closed:
                entry = (WalWriter(path), threading.RLock(), 0)
            writer, lock, refs = entry
            self._open[path] = (writer, lock, refs + 1)
            return writer, lock

    def release(self, path: Path) -> None:
        with self._lock:
            entry = self._open.get(path)
            if entry is None:
                return
            writer, lock, refs = entry
            if refs <= 1:
                with lock:
                    writer.close()
                del self._open[path]
            else:
                self._open[path] = (writer, lock, refs - 1)


_WRITERS = _SharedWriters()


class SafeExecShell:
    """Run single commands under classification, human approval and a hash-chained audit.

    Args:
        session_id: Names the audit file and prefixes every ``audit_id``.
        hitl_callback: ``callback(ApprovalRequest) -> HitlDecision``; asked only about RISKY commands.
        audit_dir: Directory of ``shell_audit_{session_id}.jsonl`` (created 0700 if missing).
        timeout_s: Wall-clock limit per command; the whole process group is killed on expiry.
        policy: An organisation policy (``load_org_policy``) applied by the classifier.
        path: A ``PATH`` for children (the lab puts its simulator first); inherited PATH when None.
        env: Variables to set for children on top of the scrubbed inherited environment.
        cwd: Working directory for children (the current directory when None).
        classifier: Replaces :func:`netghost.shell.classify.classify` (tests, alternative policies).

    Raises:
        ShellError: ``session_id`` is not a safe file-name component or ``timeout_s`` is not positive.
        WalLockedError: another process holds this session's audit file.
    """

    def __init__(  # noqa: PLR0917  positional order is the contract's SafeExecShell signature
        self,
        session_id: str,
        hitl_callback: HitlCallback,
        audit_dir: str | os.PathLike[str] = "./audit/",
        timeout_s: float = 30.0,
        policy: OrgPolicy | None = None,
        path: str | None = None,
        env: Mapping[str, str] | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        classifier: Classifier | None = None,
    ) -> None:
        if not _SESSION_ID.match(session_id):
            raise ShellError(f"session_id {session_id!r} must be 1-128 of [A-Za-z0-9_.-]")
        if not timeout_s > 0:
            raise ShellError(f"timeout_s must be positive, got {timeout_s!r}")
        if classifier is None:
            classifier = classify
        self.session_id = session_id
        self.hitl_callback = hitl_callback
        self.timeout_s = float(timeout_s)
        self.policy = policy
        self.cwd = str(Path(cwd).resolve()) if cwd is not None else os.getcwd()
        self.audit_path = Path(audit_dir).resolve() / f"shell_audit_{session_id}.jsonl"
        self._classify = classifier
        self._env = scrub_env(path=path, extra=env)
        self._writer, self._lock = _WRITERS.acquire(self.audit_path)
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------------------

    def close(self) -> None:
        """Release this shell's hold on the audit file (the last holder closes it)."""
        if not self._closed:
            self._closed = True
            _WRITERS.release(self.audit_path)

    def __enter__(self) -> SafeExecShell:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the one public operation ----------------------------------------------------------------------

    def execute(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Classify, gate, run and audit one command; return seed 001's Tool 1 response.

        Args:
            request: ``{"command": str, "reasoning": str}`` (``reasoning`` may be omitted).

        Returns:
            The response dict (see ``netghost.contracts.shell.ShellResponse``); always audited first.

        Raises:
            KeyboardInterrupt: Ctrl-C while the command ran; the record (``exec_error``) is written first.
            ShellError: the request is not a mapping with a string ``command``, or the shell is closed.
            WalError: the audit record could not be written (the command's outcome is then unknown to
                the audit, so it must not be reported as success).
        """
        if self._closed:
            raise ShellError("this SafeExecShell is closed")
        if not isinstance(request, Mapping) or not isinstance(request.get("command"), str):
            raise ShellError('execute() takes {"command": str, "reasoning": str}')
        reasoning = request.get("reasoning") or ""
        if not isinstance(reasoning, str):
            raise ShellError("reasoning must be a string")
        with self._lock:
            start = time.perf_counter()
            seq = self._writer.next_seq
            record = _Outcome(self, request["command"], reasoning, seq)
            interrupted: KeyboardInterrupt | None = None
            try:
                self._decide_and_run(record)
            except KeyboardInterrupt as exc:  # Ctrl-C while a command runs: audit it, then let it through
                record.fail("exec_error", "interrupted (Ctrl-C); the command's process group was killed")
                interrupted = exc
            except Exception as exc:  # an internal failure is still one audited, failed command
                record.fail("exec_error", f"internal error: {type(exc).__name__}: {exc}")
            record.fields["duration_ms"] = round((time.perf_counter() - start) * 1000.0, 3)
            payload = ShellAuditRecord.model_validate(record.fields).model_dump(mode="json")
            stored = self._writer.append(payload)
        if interrupted is not None:
            raise interrupted
        if stored["seq"] != seq:
            raise ShellError(f"audit seq {stored['seq']} != expected {seq}: the audit file is shared")
        return record.response()

    # -- steps -----------------------------------------------------------------------------------------

    def _decide_and_run(self, out: _Outcome) -> None:
        cls = self._classify(out.command, self.policy)
        out.classified(cls)
        if cls.verdict == "FORBIDDEN":
            out.block(cls.error or "forbidden_command")
            return
        plan = shell_plan(cls.argv, cwd=self.cwd, session_id=self.session_id, seq=out.seq)
        if cls.verdict == "SAFE":
            out.fields["action"] = "auto_approved"
            self._run(out, plan, compute_plan_token(plan))
            return
        request = build_shell_request(
            plan,
            command=out.fields["command"],
            reasoning=out.fields["reasoning"],
            risk=out.fields["risk_reason"],
            requested_at=_now(),
            context={
                "classification": cls.verdict,
                "tier": cls.tier,
                "environment": cls.environment,
                "session_id": self.session_id,
                "argv": [redact(a).text for a in cls.argv],
                "audit_id": out.audit_id,
                "policy_rule": cls.policy_rule,
            },
        )
        out.fields["plan_token"] = request.plan_token
        gate: GateOutcome = ask_human(self.hitl_callback, request, now=_now)
        if gate.response is None:
            out.deny("user_abandoned", None, note=f"approval abandoned: {gate.abandoned}; treat as denied")
            return
        response = gate.response
        if response.decision == "deny":
            out.deny("user_denied", response.reason or None)
            return
        if response.decision == "approve":
            out.fields["action"] = "user_approved"
            self._run(out, plan, response.plan_token)
            return
        new_command = str((response.modified_plan or {}).get("command", ""))
        out.fields["modified_command"] = redact(new_command).text
        # The human's reason for the change travels in denial_reason (the one free-text field the AI reads).
        out.fields["denial_reason"] = redact(response.reason).text if response.reason else None
        new_cls = self._classify(new_command, self.policy)
        out.classified(new_cls, modified=True)
        if new_cls.verdict == "FORBIDDEN":
            out.block(new_cls.error or "forbidden_command")
            return
        # The human typed this command: RISKY counts as approved by them. It gets its own plan-token.
        out.fields["action"] = "user_modified"
        new_plan = shell_plan(new_cls.argv, cwd=self.cwd, session_id=self.session_id, seq=out.seq)
        out.fields["plan_token"] = compute_plan_token(new_plan)
        self._run(out, new_plan, out.fields["plan_token"], command=new_command)

    def _run(self, out: _Outcome, plan: dict[str, Any], token: str, command: str | None = None) -> None:
        out.fields["plan_token"] = token
        argv = list(plan["argv"])
        # Re-hash exactly what is about to run; any drift from the approved plan refuses to execute.
        try:
            verify_plan_token(shell_plan(argv, cwd=self.cwd, session_id=self.session_id, seq=out.seq), token)
        except PlanTokenMismatchError as exc:
            out.fail("plan_token_mismatch", str(exc))
            return
        if not argv:
            out.fail("parse_error", "the classifier returned no argv to run")
            return
        result = run_argv(argv, timeout_s=self.timeout_s, env=self._env, cwd=self.cwd)
        out.ran(result, command or out.command)


def _now() -> datetime:
    return datetime.now(UTC)


def _strip_controls(text: str) -> str:
    """Drop colour codes and other terminal control characters (after redaction, which reads through them).

    The output goes to a model and may be echoed to the user's terminal; escape sequences there could
    rewrite what the user sees.
    """
    text = _ANSI_SEQ.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _C0.sub("", text)


def _precut(text: str) -> str:
    """Cut huge output to its first and last ~512 KB (at line ends) before redaction.

    Nobody sees the removed middle (truncation would drop it anyway), and redacting megabytes of text
    would cost seconds. JSON larger than this is then truncated as text (head and tail).
    """
    if len(text) <= _PRECUT_CHARS:
        return text
    half = _PRECUT_CHARS // 2
    head = text[:half].rsplit("\n", 1)[0]
    tail = text[-half:].split("\n", 1)[-1]
    cut = text.count("\n") - head.count("\n") - tail.count("\n")
    return f"{head}\n... [{cut} lines not captured: output too large] ...\n{tail}"


class _Outcome:
    """The record under construction; the response is derived from it so the two cannot disagree."""

    def __init__(self, shell: SafeExecShell, command: str, reasoning: str, seq: int) -> None:
        self.command = command
        self.reasoning = reasoning
        self.seq = seq
        self.audit_id = f"{shell.session_id}_{seq:03d}"
        self.fields: dict[str, Any] = {
            "v": 1,
            "kind": "shell_command",
            "audit_id": self.audit_id,
            "session_id": shell.session_id,
            "command": redact(command).text,
            "reasoning": redact(reasoning).text,
            "classification": "FORBIDDEN",
            "tier": 0,
            "risk_reason": "",
            "environment": "local",
            "action": "blocked",
            "status": "error",
            "exit_code": None,
            "error": None,
            "output": "",
            "stderr": "",
            "output_metadata": {
                "truncation_applied": False,
                "original_lines": 0,
                "shown_lines": 0,
                "format": "text",
                "redactions": 0,
            },
            "denial_reason": None,
            "modified_command": None,
            "plan_token": None,
            "policy_hash": None,
            "policy_rule": None,
            "duration_ms": 0.0,
        }

    def classified(self, cls: Classification, *, modified: bool = False) -> None:
        reason = cls.reason if not modified else f"modified by the human: {cls.reason}"
        self.fields.update(
            classification=cls.verdict,
            tier=cls.tier,
            risk_reason=redact(reason).text,
            environment=cls.environment,
            policy_hash=cls.policy_hash,
            policy_rule=cls.policy_rule,
        )

    def block(self, error: str) -> None:
        self.fields.update(status="denied", action="blocked", error=error, plan_token=None)

    def deny(self, action: str, reason: str | None, note: str = "") -> None:
        self.fields.update(status="denied", action=action, denial_reason=reason, stderr=note)
        if reason is not None:
            self.fields["denial_reason"] = redact(reason).text

    def fail(self, error: str, message: str) -> None:
        self.fields.update(status="error", error=error, stderr=redact(message).text)

    def ran(self, result: RunResult, command: str) -> None:
        out = redact(_precut(result.stdout), command=command)
        err = redact(_precut(result.stderr), command=command)
        shown = truncate(_strip_controls(out.text))
        # stderr gets a quarter of the budget: it explains a failure, the answer is in stdout.
        shown_err = truncate(_strip_controls(err.text), max_lines=50, max_tokens=1_000)
        self.fields.update(
            status="completed" if result.error is None else "error",
            exit_code=result.exit_code,
            error=result.error,
            output=shown.text,
            stderr=shown_err.text,
            output_metadata={
                "truncation_applied": shown.truncation_applied or shown_err.truncation_applied,
                "original_lines": len(result.stdout.splitlines()),
                "shown_lines": shown.shown_lines,
                "format": shown.format,
                "redactions": out.count + err.count,
            },
        )

    def response(self) -> dict[str, Any]:
        keys = (
            "status", "classification", "action", "output", "stderr", "exit_code", "error", "audit_id",
            "tier", "risk_reason", "environment", "output_metadata", "plan_token", "denial_reason",
        )  # fmt: skip
        return {k: self.fields[k] for k in keys}
