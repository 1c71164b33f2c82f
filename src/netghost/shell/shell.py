"""SafeExecShell: classify → gate (HITL) → execute → redact + truncate → audit, one record per call.

The single door through which the Brain and the orchestrator run processes (ARCHITECTURE.md "The Safe-Exec
Shell"). Every ``execute()`` call appends exactly one hash-chained record to
``{audit_dir}/shell_audit_{session_id}.jsonl`` *before* it returns, whatever happened (blocked, denied,
abandoned, timed out, not found, or an internal failure), because the RCA cites commands by ``audit_id``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from netghost.contracts.audit import ShellAuditRecord
from netghost.contracts.shell import ShellErrorCode
from netghost.errors import PlanTokenMismatchError, ShellError
from netghost.governance.plan_token import compute_plan_token, verify_plan_token
from netghost.governance.wal import WalWriter
from netghost.shell.classify import Classification, classify
from netghost.shell.gate import GateOutcome, HitlCallback, ask_human, build_shell_request, shell_plan
from netghost.shell.redact import redact, redact_argv, redact_command
from netghost.shell.run import RunResult, run_argv, scrub_env
from netghost.shell.truncate import truncate

if TYPE_CHECKING:
    from netghost.shell.org_policy import OrgPolicy

__all__ = ["SafeExecShell"]

_PRECUT_CHARS = 1_000_000
_ANSI_SEQ = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_C0 = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_BAD_FIELD = 2_000
Classifier = Callable[[str, "OrgPolicy | None"], Classification]
# The wire contract's error code for a malformed request; "exec_error" until the contract lists it.
BAD_REQUEST = "bad_request" if "bad_request" in get_args(ShellErrorCode) else "exec_error"


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
        self._inflight = self.audit_path.with_name(self.audit_path.name + ".inflight")
        self._writer, self._lock = _WRITERS.acquire(self.audit_path)
        self._closed = False
        with self._lock:
            self._recover_inflight()

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

        The audit invariant: every call appends exactly one WAL record, and no command runs unless its
        record can be written. Before a process starts, (1) every string of the record is surrogate-free
        and the record has been validated and serialised, and (2) a provisional copy ("outcome unknown")
        is fsync'ed to ``<audit file>.inflight``; if either fails the command does not run. After the run
        the real record replaces it. If that append fails (disk error) or the process dies in between,
        the next shell that opens the session appends the provisional record, so the call is still
        audited exactly once.

        Args:
            request: ``{"command": str, "reasoning": str}`` (``reasoning`` may be omitted). A malformed
                request is audited and answered as ``status="error"``, ``error="bad_request"``.

        Returns:
            The response dict (see ``netghost.contracts.shell.ShellResponse``); always audited first.

        Raises:
            KeyboardInterrupt: Ctrl-C while the command ran; the record (``exec_error``) is written first.
                Likewise any other BaseException (SystemExit ...) raised while deciding or running.
            ShellError: the shell is closed.
            WalError: the audit record could not be written (see the invariant above).
        """
        if self._closed:
            raise ShellError("this SafeExecShell is closed")
        command, reasoning, problem = _read_request(request)
        with self._lock:
            self._recover_inflight()
            start = time.perf_counter()
            seq = self._writer.next_seq
            record = _Outcome(self, command, reasoning, seq)
            raised: BaseException | None = None
            try:
                if problem is not None:
                    record.fail(BAD_REQUEST, f"bad_request: {problem}")
                else:
                    self._decide_and_run(record)
            except Exception as exc:  # an internal failure is still one audited, failed command
                record.fail("exec_error", f"internal error: {type(exc).__name__}: {_clean(str(exc))}")
            except BaseException as exc:  # Ctrl-C, SystemExit ...: audit it, then let it through
                record.fail(
                    "exec_error",
                    f"interrupted ({type(exc).__name__}); the command's process group was killed",
                )
                raised = exc
            record.fields["duration_ms"] = round((time.perf_counter() - start) * 1000.0, 3)
            stored = self._writer.append(record.payload())
            with contextlib.suppress(OSError):  # a stale copy is skipped on recovery (its seq is taken)
                self._inflight.unlink(missing_ok=True)
        if raised is not None:
            raise raised
        if stored["seq"] != seq:
            raise ShellError(f"audit seq {stored['seq']} != expected {seq}: the audit file is shared")
        return record.response()

    def _write_inflight(self, out: _Outcome) -> None:
        """Durably note, before a process starts, that this call ran and its outcome is not known yet."""
        provisional = _Outcome.copy_fields(out)
        provisional.update(
            status="error",
            error="exec_error",
            stderr="outcome unknown: the shell stopped before the command's audit record was written",
        )
        data = json.dumps(
            ShellAuditRecord.model_validate(provisional).model_dump(mode="json"), ensure_ascii=False
        )
        fd = os.open(self._inflight, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def _recover_inflight(self) -> None:
        """Append the provisional record of a call whose real record never reached the WAL."""
        try:
            data = json.loads(self._inflight.read_text(encoding="utf-8"))
        except OSError:  # none (the usual case), or unreadable: nothing to recover here
            return
        except ValueError:  # torn write before the command could start: nothing ran
            self._inflight.unlink(missing_ok=True)
            return
        seq = int(str(data.get("audit_id", "_0")).rsplit("_", 1)[-1] or 0)
        if seq >= self._writer.next_seq:  # the real record is not in the WAL
            self._writer.append(data)
        self._inflight.unlink(missing_ok=True)

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
                "argv": out.shown_argv,
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
        new_command = _clean(str((response.modified_plan or {}).get("command", "")))
        out.fields["modified_command"] = redact(new_command).text
        # The human's reason for the change travels in denial_reason (the one free-text field the AI reads).
        out.fields["denial_reason"] = redact(_clean(response.reason)).text if response.reason else None
        new_cls = self._classify(new_command, self.policy)
        out.classified(new_cls, modified=True)
        out.fields["modified_command"] = redact_command(new_command, new_cls.argv)
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
        if self._writer.closed:
            raise ShellError("the audit file is closed; refusing to run a command that cannot be audited")
        self._write_inflight(out)  # raises (and nothing runs) if the record cannot be written
        result = run_argv(argv, timeout_s=self.timeout_s, env=self._env, cwd=self.cwd)
        out.ran(result, command or out.command)


def _clean(text: str) -> str:
    """``text`` without lone surrogates (U+FFFD instead): they cannot be encoded into the audit file.

    Done before classification, so the classifier judges exactly what is recorded and run (U+FFFD is
    non-ASCII, which the parser rejects in a command).
    """
    return _SURROGATE.sub("\ufffd", text)


def _read_request(request: object) -> tuple[str, str, str | None]:
    """(command, reasoning, problem) from a request; ``problem`` is None when it is well formed."""
    if not isinstance(request, Mapping):
        return "", "", f"execute() takes a mapping, got {type(request).__name__}"
    command: object = request.get("command")
    reasoning: object = request.get("reasoning")
    if reasoning is None:
        reasoning = ""
    problem = None
    if not isinstance(command, str):
        problem = f"command must be a string, got {type(command).__name__}"
    elif not isinstance(reasoning, str):
        problem = f"reasoning must be a string, got {type(reasoning).__name__}"
    shown_command = command if isinstance(command, str) else ("" if command is None else repr(command))
    shown_reasoning = reasoning if isinstance(reasoning, str) else repr(reasoning)
    if problem is not None:
        shown_command, shown_reasoning = shown_command[:_MAX_BAD_FIELD], shown_reasoning[:_MAX_BAD_FIELD]
    return _clean(shown_command), _clean(shown_reasoning), problem


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
        self.shown_argv: list[str] = []
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
        reason = _clean(cls.reason if not modified else f"modified by the human: {cls.reason}")
        if not modified and cls.argv:
            # What the human approves and the audit keeps: every argv element, only secret values masked.
            self.shown_argv = [_clean(a) for a in redact_argv(cls.argv)[0]]
            self.fields["command"] = shlex.join(self.shown_argv)
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
        self.fields.update(status="error", error=error, stderr=redact(_clean(message)).text)

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

    @staticmethod
    def copy_fields(out: _Outcome) -> dict[str, Any]:
        return json.loads(json.dumps(out.fields))  # type: ignore[no-any-return]

    def payload(self) -> dict[str, Any]:
        """The validated record; if validation fails, a minimal error record that always validates."""
        try:
            return ShellAuditRecord.model_validate(self.fields).model_dump(mode="json")
        except ValueError as exc:
            self.fields.update(
                status="error",
                error="exec_error",
                stderr=_clean(f"internal error: the audit record did not validate: {exc}")[:_MAX_BAD_FIELD],
                classification="FORBIDDEN"
                if self.fields.get("classification") not in ("SAFE", "RISKY")
                else self.fields["classification"],
            )
            fallback = {**self.fields}
            for key in ("command", "reasoning", "risk_reason", "output", "stderr"):
                fallback[key] = _clean(str(fallback.get(key) or ""))
            return ShellAuditRecord.model_validate(fallback).model_dump(mode="json")

    def response(self) -> dict[str, Any]:
        keys = (
            "status", "classification", "action", "output", "stderr", "exit_code", "error", "audit_id",
            "tier", "risk_reason", "environment", "output_metadata", "plan_token", "denial_reason",
        )  # fmt: skip
        return {k: self.fields[k] for k in keys}
