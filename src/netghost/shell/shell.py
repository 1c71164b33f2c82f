"""SafeExecShell: classify → gate (HITL) → execute → redact + truncate → audit, one record per call.

The single door through which the Brain and the orchestrator run processes (ARCHITECTURE.md "The Safe-Exec
Shell"). Every ``execute()`` call appends exactly one hash-chained record to
``{audit_dir}/shell_audit_{session_id}.jsonl`` *before* it returns, whatever happened (blocked, denied,
abandoned, timed out, not found, or an internal failure), because the RCA cites commands by ``audit_id``.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from netghost.contracts import Confinement, DecidedBy, ProvisionalRejectedRecord, ShellAuditRecord
from netghost.errors import PlanTokenMismatchError, ShellError
from netghost.governance import (
    WalWriter,
    compute_plan_token,
    provisional_path,
    recover_provisional,
    verify_plan_token,
    write_provisional,
)
from netghost.redact import redact, redact_command
from netghost.shell.classify import Classification, OrgPolicy, classify
from netghost.shell.confine import LabConfinement
from netghost.shell.exec import child_environments, run_argv
from netghost.shell.gate import (
    DEFAULT_APPROVAL_TIMEOUT_S,
    GateOutcome,
    HitlCallback,
    Waiter,
    ask_human,
    build_shell_request,
    fail_closed,
    shell_plan,
)
from netghost.shell.record import BAD_REQUEST, Outcome, clean, read_request

__all__ = ["SafeExecShell"]

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
Classifier = Callable[[str, OrgPolicy | None], Classification]


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
        env: Variables to set for children on top of the scrubbed inherited environment (a credential
            variable among them, e.g. ``AZURE_CONFIG_DIR``, reaches only the programs ``child_env.toml``
            gives it to).
        cwd: Working directory for children (the current directory when None).
        classifier: Replaces :func:`netghost.shell.classify.classify` (tests, alternative policies).
        approval_timeout_s: How long the human has to answer one approval prompt; no answer by then is
            ``denied`` / ``user_abandoned`` ("approval timed out"), audited like any other outcome.
        approval_wait: ``wait(answered_event, timeout_s) -> bool`` replacing ``Event.wait`` (tests drive
            the timeout with it instead of sleeping).
        client: ``{"via": "mcp", "name", "version"}`` of the protocol client this shell serves (the MCP
            server passes what the client declared); recorded in every audit record it writes.
        on_notice: receives each one-line notice the caller should show (a provisional record found
            beside the audit file was refused: forged, altered, replayed or unsealed); they are also
            kept in :attr:`notices`.
        confinement: a sealed lab (:class:`~netghost.shell.confine.LabConfinement`): every command is judged after
            classification and the verdict recorded; one the lab does not simulate runs only when a person
            approves it (a SAFE one is asked too), whatever an automatic approver answers.

    Raises:
        ShellError: ``session_id`` is not a safe file-name component, or ``timeout_s`` or
            ``approval_timeout_s`` is not positive.
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
        approval_timeout_s: float = DEFAULT_APPROVAL_TIMEOUT_S,
        approval_wait: Waiter | None = None,
        client: Mapping[str, str] | None = None,
        on_notice: Callable[[str], None] | None = None,
        confinement: LabConfinement | None = None,
    ) -> None:
        if not _SESSION_ID.match(session_id):
            raise ShellError(f"session_id {session_id!r} must be 1-128 of [A-Za-z0-9_.-]", field="session_id")
        for name, value in (("timeout_s", timeout_s), ("approval_timeout_s", approval_timeout_s)):
            if not value > 0:
                raise ShellError(f"{name} must be positive, got {value!r}", field=name)
        if classifier is None:
            classifier = classify
        self.session_id = session_id
        self.hitl_callback = hitl_callback
        self.timeout_s = float(timeout_s)
        self.approval_timeout_s = float(approval_timeout_s)
        self._approval_wait = approval_wait
        self.client = dict(client) if client is not None else None
        self.confinement = confinement
        self.policy = policy
        self.cwd = str(Path(cwd).resolve()) if cwd is not None else os.getcwd()
        self.audit_path = Path(audit_dir).resolve() / f"shell_audit_{session_id}.jsonl"
        self._classify = classifier
        self._envs = child_environments(path=path, extra=env)
        self._env = dict(self._envs.common)
        """What every child gets; the Azure identity's variables reach ``az`` only (``child_env.toml``)."""
        self.notices: list[str] = []
        """One line per refused provisional record (see ``on_notice``)."""
        self._on_notice = on_notice
        self._inflight = provisional_path(self.audit_path)
        self._writer, self._lock = _WRITERS.acquire(self.audit_path)
        self._closed = False
        try:
            with self._lock:
                self._recover_inflight()
        except BaseException:
            self.close()
            raise

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
        command, reasoning, problem = read_request(request)
        with self._lock:
            self._recover_inflight()
            start = time.perf_counter()
            seq = self._writer.next_seq
            record = Outcome(self.session_id, command, reasoning, seq, client=self.client)
            raised: BaseException | None = None
            try:
                if problem is not None:
                    record.fail(BAD_REQUEST, f"bad_request: {problem}")
                    record.decided(_policy("bad_request", problem))
                else:
                    self._decide_and_run(record)
            except Exception as exc:  # an internal failure is still one audited, failed command
                record.fail("exec_error", f"internal error: {type(exc).__name__}: {clean(str(exc))}")
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
            raise ShellError(
                f"audit seq {stored['seq']} != expected {seq}: the audit file is shared", path=self.audit_path
            )
        return record.response()

    def _write_inflight(self, out: Outcome) -> None:
        """Durably note, before a process starts, that this call ran and its outcome is not known yet.

        The note is sealed with the audit key and bound to this session, this log, the next seq and the
        current head, so recovery can tell it from a file planted in the audit directory.
        """
        provisional = Outcome.copy_fields(out)
        provisional.update(
            status="error",
            error="exec_error",
            stderr="outcome unknown: the shell stopped before the command's audit record was written",
        )
        record = ShellAuditRecord.model_validate(provisional).model_dump(mode="json")
        write_provisional(self._writer, record, session_id=self.session_id)

    def _recover_inflight(self) -> None:
        """Append the provisional record of a call whose real record never reached the WAL, if authentic.

        A forged, altered, replayed or unsealed one is not appended: it is moved aside, a
        ``provisional_rejected`` record says so in the chain, and the one-line notice goes to
        :attr:`notices` and ``on_notice``.
        """
        recovery = recover_provisional(self._writer, session_id=self.session_id, check=self._check_provisional)
        if recovery.rejection is None:
            return
        rejection = recovery.rejection
        seq = self._writer.next_seq
        self._writer.append(
            ProvisionalRejectedRecord(
                v=1,
                kind="provisional_rejected",
                audit_id=f"{self.session_id}_{seq:03d}",
                session_id=self.session_id,
                reason=rejection.reason,
                file=rejection.moved_to.name if rejection.moved_to is not None else None,
                file_sha256=rejection.file_sha256 or None,
                file_bytes=rejection.size,
            ).model_dump(mode="json")
        )
        self.notices.append(rejection.notice)
        if self._on_notice is not None:
            self._on_notice(rejection.notice)

    def _check_provisional(self, record: dict[str, Any], seq: int) -> str | None:
        """An authentic provisional record must still be this session's shell record for ``seq``."""
        try:
            parsed = ShellAuditRecord.model_validate(record)
        except ValidationError:
            return "its record is not a shell audit record"
        if parsed.session_id != self.session_id or parsed.audit_id != f"{self.session_id}_{seq:03d}":
            return f"its record is {parsed.audit_id} of session {parsed.session_id}, not record {seq} of this one"
        return None

    # -- steps -----------------------------------------------------------------------------------------

    def _confine(self, argv: tuple[str, ...] | list[str]) -> Confinement | None:
        if self.confinement is None:
            return None
        return self.confinement.judge(argv, search_path=self._env.get("PATH"), cwd=self.cwd)

    def _decide_and_run(self, out: Outcome) -> None:
        cls = self._classify(out.command, self.policy)
        out.classified(cls)
        if cls.verdict == "FORBIDDEN":
            out.block(cls.error or "forbidden_command")
            out.decided(_rules(cls, "forbidden_tier"))
            return
        verdict = self._confine(cls.argv)
        out.confined(verdict)
        needs_person = verdict is not None and not verdict.simulated
        plan = shell_plan(cls.argv, cwd=self.cwd, session_id=self.session_id, seq=out.seq)
        if cls.verdict == "SAFE" and not needs_person:
            out.fields["action"] = "auto_approved"
            out.decided(_rules(cls, "safe_tier"))
            self._run(out, plan, compute_plan_token(plan))
            return
        asked_at = _now()
        request = build_shell_request(
            plan,
            command=out.fields["command"],
            reasoning=out.fields["reasoning"],
            risk=out.fields["risk_reason"],
            requested_at=asked_at,
            context={
                "classification": cls.verdict,
                "tier": cls.tier,
                "environment": cls.environment,
                "session_id": self.session_id,
                "argv": out.shown_argv,
                "audit_id": out.audit_id,
                "policy_rule": cls.policy_rule,
                "approval_timeout_s": self.approval_timeout_s,
                "approval_deadline": (asked_at + timedelta(seconds=self.approval_timeout_s)).isoformat(),
                # a sealed lab: this command would run for real; only a person may approve it
                "needs_person": redact(verdict.reason).text if needs_person and verdict is not None else None,
            },
        )
        out.fields["plan_token"] = request.plan_token
        gate: GateOutcome = ask_human(
            self.hitl_callback, request, now=_now, timeout_s=self.approval_timeout_s, wait=self._approval_wait
        )
        decider = gate.decided_by or fail_closed(gate.abandoned or "no decision")
        out.decided(decider)
        if gate.response is None:
            out.deny("user_abandoned", None, note=f"approval abandoned: {gate.abandoned}; treat as denied")
            return
        response = gate.response
        if response.decision == "deny":
            out.deny("user_denied", response.reason or None)
            return
        if needs_person and not decider.is_person and verdict is not None:
            self._refuse_unconfined(out, verdict, decider)
            return
        if response.decision == "approve":
            out.fields["action"] = "user_approved"
            self._run(out, plan, response.plan_token)
            return
        new_command = clean(str((response.modified_plan or {}).get("command", "")))
        out.fields["modified_command"] = redact(new_command).text
        # The human's reason for the change travels in denial_reason (the one free-text field the AI reads).
        out.fields["denial_reason"] = redact(clean(response.reason)).text if response.reason else None
        new_cls = self._classify(new_command, self.policy)
        out.classified(new_cls, modified=True)
        out.fields["modified_command"] = redact_command(new_command, new_cls.argv)
        if new_cls.verdict == "FORBIDDEN":
            out.block(new_cls.error or "forbidden_command")
            return
        new_verdict = self._confine(new_cls.argv)
        if new_verdict is not None:
            out.confined(new_verdict)
            if not new_verdict.simulated and not decider.is_person:
                self._refuse_unconfined(out, new_verdict, decider)
                return
        # The human typed this command: RISKY counts as approved by them. It gets its own plan-token.
        out.fields["action"] = "user_modified"
        new_plan = shell_plan(new_cls.argv, cwd=self.cwd, session_id=self.session_id, seq=out.seq)
        out.fields["plan_token"] = compute_plan_token(new_plan)
        self._run(out, new_plan, out.fields["plan_token"], command=new_command)

    def _refuse_unconfined(self, out: Outcome, verdict: Confinement, decider: DecidedBy) -> None:
        """A sealed lab's refusal: an unsimulated command was approved by someone who is not a person."""
        out.deny("user_denied", f"{verdict.reason}; only a person at the terminal may approve that, not "
                                f"{decider.label()}: refused (sealed lab)")
        out.decided(_policy("sealed_lab", f"{decider.label()} approved a command the lab does not simulate"))

    def _run(self, out: Outcome, plan: dict[str, Any], token: str, command: str | None = None) -> None:
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
            raise ShellError(
                "the audit file is closed; refusing to run a command that cannot be audited",
                argv=argv,
                path=self.audit_path,
            )
        self._write_inflight(out)  # raises (and nothing runs) if the record cannot be written
        result = run_argv(argv, timeout_s=self.timeout_s, env=self._envs.for_program(argv), cwd=self.cwd)
        out.ran(result, command or out.command)


def _now() -> datetime:
    return datetime.now(UTC)


def _policy(name: str, detail: str | None = None) -> DecidedBy:
    return DecidedBy(kind="policy", name=name, detail=detail)


def _rules(cls: Classification, tier: str) -> DecidedBy:
    """The policy that decided a SAFE or FORBIDDEN verdict: an organisation rule, else the built-in tiers
    (with the learned stage's verdict, ``onnx:...``, as detail: it only tightens, it never decides SAFE)."""
    rule = cls.policy_rule
    if rule and not rule.startswith("onnx:"):
        return _policy("org_policy", rule)
    return _policy(tier, rule)
