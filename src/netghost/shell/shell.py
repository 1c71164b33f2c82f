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
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
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
from netghost.redact import PathContext, credential_context, redact, redact_command
from netghost.shell.az_scope import learn_scope
from netghost.shell.classify import Classification, EgressScope, OrgPolicy, classify
from netghost.shell.confine import LabConfinement
from netghost.shell.engine import engine_argv
from netghost.shell.exec import RunResult, child_environments, run_argv
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
from netghost.shell.readcache import ReadCache
from netghost.shell.record import BAD_REQUEST, Outcome, clean, read_request

__all__ = ["SafeExecShell"]

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
Classifier = Callable[[str, OrgPolicy | None], Classification]
"""A replacement classifier (tests, alternative policies): ``(command, policy) -> Classification``."""


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
        scope: Where network probes may go automatically (:class:`EgressScope`; default: the private
            address space, private names and Azure endpoints). The agent widens it with the hosts its
            problem statement names (``shell.scope = shell.scope.with_text(intent)``).
        learn_scope: Widen the scope with what bare az reads print (VNet prefixes, private DNS zones,
            private endpoints, the subscription's public IPs and storage endpoints; see ``az_scope``).
        on_notice: receives each one-line notice the caller should show (a provisional record found
            beside the audit file was refused: forged, altered, replayed or unsealed); they are also
            kept in :attr:`notices`.
        confinement: a sealed lab (:class:`~netghost.shell.confine.LabConfinement`): every command is judged after
            classification and the verdict recorded; one the lab does not simulate runs only when a person
            approves it (a SAFE one is asked too), whatever an automatic approver answers.
        read_cache: the session's read cache (:class:`~netghost.shell.readcache.ReadCache`); a default one
            (60 s) when None. ``ReadCache(ttl_s=0)`` keeps nothing.
        parallel_reads: False runs :meth:`execute_many`'s requests one after the other (a benchmark's
            sequential baseline); the audit is the same either way.

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
        scope: EgressScope | None = None,
        learn_scope: bool = False,
        on_notice: Callable[[str], None] | None = None,
        confinement: LabConfinement | None = None,
        read_cache: ReadCache | None = None,
        parallel_reads: bool = True,
    ) -> None:
        if not _SESSION_ID.match(session_id):
            raise ShellError(f"session_id {session_id!r} must be 1-128 of [A-Za-z0-9_.-]", field="session_id")
        for name, value in (("timeout_s", timeout_s), ("approval_timeout_s", approval_timeout_s)):
            if not value > 0:
                raise ShellError(f"{name} must be positive, got {value!r}", field=name)
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
        self.read_cache = read_cache if read_cache is not None else ReadCache()
        self.parallel_reads = parallel_reads
        self._inflight = provisional_path(self.audit_path)
        self.scope = scope if scope is not None else EgressScope()
        self.learn_scope = learn_scope
        # Where relative paths, `~` and the credential-naming variables point for the commands this shell
        # runs: its cwd, and the children's environment over this process's (the audit key's variable).
        self.local: PathContext = credential_context({**os.environ, **self._env}, cwd=self.cwd)
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

    def execute_many(self, requests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Run several commands (one model turn's), the ones that need nobody's approval concurrently.

        Each request gets the audit id (seq) of its place in ``requests`` and its record is appended in that
        order, so the chain is the same whatever finishes first; the responses come back in call order.
        A maximal run of consecutive requests that are SAFE and need no person (well formed, SAFE, and
        simulated in a sealed lab) runs at once; any other request (RISKY, FORBIDDEN, malformed) goes
        through :meth:`execute` alone, in its place, after everything before it has finished and before
        anything after it starts: an approval is asked one at a time and a RISKY command never runs beside
        anything. Every call is noted in flight (one provisional file: the first pending record, then the
        others) before its process starts, and the file is rewritten after each append, so a crash at any
        point leaves each call audited exactly once.

        Raises:
            KeyboardInterrupt: Ctrl-C while the batch ran; the running reads finish (bounded by
                ``timeout_s``) and every call is audited first.
            ShellError, WalError: as :meth:`execute`.
        """
        if self._closed:
            raise ShellError("this SafeExecShell is closed")
        wanted = [read_request(r) for r in requests]
        responses: list[dict[str, Any]] = []
        with self._lock:
            self._recover_inflight()
            index = 0
            while index < len(wanted):
                group: list[_Prepared] = []
                while index < len(wanted):
                    ready = self._prepare_auto(*wanted[index], self._writer.next_seq + len(group))
                    if ready is None:
                        break
                    group.append(ready)
                    index += 1
                if group:
                    responses.extend(self._run_group(group))
                if index < len(wanted):
                    responses.append(self.execute(requests[index]))
                    index += 1
        return responses

    @property
    def batches_reads(self) -> bool:
        """True when reads given together run at once and repeated ones are answered from the read cache
        (callers prefetch independent reads only then: otherwise it would read twice)."""
        return self.parallel_reads and self.read_cache.ttl_s > 0

    def runs_unasked(self, command: str) -> bool:
        """Would :meth:`execute_many` run ``command`` without asking anybody (SAFE, and simulated in a sealed
        lab)? A hint for callers grouping a turn's calls; the shell decides again when it runs them."""
        _, _, problem = read_request({"command": command})
        return self._prepare_auto(clean(command), "", problem, 0) is not None

    def _prepare_auto(self, command: str, reasoning: str, problem: str | None, seq: int) -> _Prepared | None:
        """The record and plan of a request that runs without anybody's approval, or None (it goes alone)."""
        if problem is not None:
            return None
        try:
            cls = self.classify(command)
        except Exception:  # a classifier defect: execute() audits it as an internal error, alone
            return None
        if cls.verdict != "SAFE" or not cls.argv:
            return None
        verdict = self._confine(_to_run(cls.argv))  # as execute(): what really runs is judged
        if verdict is not None and not verdict.simulated:
            return None
        out = Outcome(self.session_id, command, reasoning, seq, client=self.client)
        out.classified(cls, executed=engine_argv(cls.argv))
        out.confined(verdict)
        out.fields["action"] = "auto_approved"
        out.decided(_rules(cls, "safe_tier"))
        plan = shell_plan(_to_run(cls.argv), cwd=self.cwd, session_id=self.session_id, seq=seq)
        out.fields["plan_token"] = compute_plan_token(plan)
        return _Prepared(out, list(plan["argv"]), time.perf_counter(), self._cache_key(cls))

    def _cache_key(self, cls: Classification) -> str | None:
        """The read-cache key of a command the classifier calls cacheable (SAFE, a stable az read), else None."""
        if cls.verdict != "SAFE" or not getattr(cls, "cacheable", False) or not cls.argv:
            return None
        return ReadCache.key(cls.argv, self.cwd, self._envs.for_program(list(cls.argv)))

    def _serve(self, out: Outcome, key: str) -> bool:
        """Answer ``out`` from the read cache if it holds this read (its own record, naming the source)."""
        hit = self.read_cache.get(key)
        if hit is None:
            return False
        out.served(hit.source, hit.fields)
        return True

    def _keep(self, out: Outcome, key: str | None) -> None:
        if key is not None and out.fields.get("cached_from") is None:
            self.read_cache.put(key, out.audit_id, out.fields)

    def _run_group(self, group: list[_Prepared]) -> list[dict[str, Any]]:
        """Run ``group`` concurrently; append its records in order, rewriting the in-flight note after each."""
        if self._writer.closed:
            raise ShellError("the audit file is closed; refusing to run commands that cannot be audited",
                             path=self.audit_path)
        for p in group:  # answered from the read cache: known before anything runs
            p.cached = p.key is not None and self._serve(p.out, p.key)
        if len(group) == 1 or not self.parallel_reads:  # nothing to overlap, or asked not to
            return [self._finish_alone(p) for p in group]
        pending = [p.out.payload() if p.cached else _provisional(p.out) for p in group]
        failed = self._note_in_flight(group, pending)
        if failed is not None:
            return failed
        raised: BaseException | None = None
        with ThreadPoolExecutor(max_workers=len(group), thread_name_prefix="shell-read") as pool:
            futures = [None if p.cached else
                       pool.submit(_timed_run, p.argv, self.timeout_s, self._envs.for_program(p.argv), self.cwd)
                       for p in group]
            responses: list[dict[str, Any]] = []
            for i, (p, future) in enumerate(zip(group, futures, strict=True)):
                if future is None:
                    p.out.fields["duration_ms"] = round((time.perf_counter() - p.start) * 1000.0, 3)
                    responses.append(self._append(p, last=i == len(group) - 1, rest=pending[i + 1:]))
                    continue
                result, ended, interrupt = _outcome_of(future)
                if interrupt is not None:  # Ctrl-C while waiting: the reads finish (bounded), all are audited
                    raised = raised or interrupt
                    result, ended, _ = _outcome_of(future)
                if isinstance(result, Exception):  # an internal failure is one audited, failed call
                    p.out.fail("exec_error", f"internal error: {type(result).__name__}: {clean(str(result))}")
                else:
                    p.out.ran(result, p.out.command)
                    self._keep(p.out, p.key)
                    self._learn(p.argv, result)
                p.out.fields["duration_ms"] = round((ended - p.start) * 1000.0, 3)
                responses.append(self._append(p, last=i == len(group) - 1, rest=pending[i + 1:]))
        if raised is not None:
            raise raised
        return responses

    def _note_in_flight(self, group: list[_Prepared], pending: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """Note ``group``'s calls in flight before any starts; None when noted, else their audited failures.

        Raises:
            KeyboardInterrupt: Ctrl-C while noting (likewise any other BaseException); each call of the
                group is audited first (nothing started), as :meth:`execute` does.
        """
        try:
            write_provisional(self._writer, pending[0], session_id=self.session_id, then=pending[1:])
        except Exception as exc:  # nothing started: each call is one audited failure, as in execute()
            for p in group:
                p.out.fail("exec_error", f"internal error: {type(exc).__name__}: {clean(str(exc))}")
            return [self._append(p, last=i == len(group) - 1) for i, p in enumerate(group)]
        except BaseException as exc:  # Ctrl-C before anything started: each call audited, then it goes on
            for p in group:
                if not p.cached:
                    p.out.fail("exec_error", f"interrupted ({type(exc).__name__}) before the command started")
            for i, p in enumerate(group):
                self._append(p, last=i == len(group) - 1)
            raise
        return None

    def _finish_alone(self, p: _Prepared) -> dict[str, Any]:
        if p.cached or (p.key is not None and self._serve(p.out, p.key)):
            p.out.fields["duration_ms"] = round((time.perf_counter() - p.start) * 1000.0, 3)
            return self._append(p, last=True)
        try:
            self._write_inflight(p.out)
            result = run_argv(p.argv, timeout_s=self.timeout_s, env=self._envs.for_program(p.argv), cwd=self.cwd)
            p.out.ran(result, p.out.command)
            self._keep(p.out, p.key)
            self._learn(p.argv, result)
        except Exception as exc:
            p.out.fail("exec_error", f"internal error: {type(exc).__name__}: {clean(str(exc))}")
        p.out.fields["duration_ms"] = round((time.perf_counter() - p.start) * 1000.0, 3)
        return self._append(p, last=True)

    def _append(self, p: _Prepared, *, last: bool, rest: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
        """Append ``p``'s record; then note the calls still in flight (``rest``) or remove the note."""
        stored = self._writer.append(p.out.payload())
        if stored["seq"] != p.out.seq:
            raise ShellError(f"audit seq {stored['seq']} != expected {p.out.seq}: the audit file is shared",
                             path=self.audit_path)
        if rest and not last:
            write_provisional(self._writer, rest[0], session_id=self.session_id, then=rest[1:])
        else:
            with contextlib.suppress(OSError):
                self._inflight.unlink(missing_ok=True)
        return p.out.response()

    def _write_inflight(self, out: Outcome) -> None:
        """Durably note, before a process starts, that this call ran and its outcome is not known yet.

        The note is sealed with the audit key and bound to this session, this log, the next seq and the
        current head, so recovery can tell it from a file planted in the audit directory.
        """
        write_provisional(self._writer, _provisional(out), session_id=self.session_id)

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

    def classify(self, command: str) -> Classification:
        """The verdict this shell would give ``command`` now (its policy, scope and working directory)."""
        if self._classify is not None:
            return self._classify(command, self.policy)
        return classify(command, self.policy, scope=self.scope, local=self.local)

    def _confine(self, argv: tuple[str, ...] | list[str]) -> Confinement | None:
        if self.confinement is None:
            return None
        return self.confinement.judge(argv, search_path=self._env.get("PATH"), cwd=self.cwd)

    def _decide_and_run(self, out: Outcome) -> None:
        cls = self.classify(out.command)
        out.classified(cls, executed=engine_argv(cls.argv))
        if cls.verdict == "FORBIDDEN":
            out.block(cls.error or "forbidden_command")
            out.decided(_rules(cls, "forbidden_tier"))
            return
        verdict = self._confine(_to_run(cls.argv))
        out.confined(verdict)
        needs_person = verdict is not None and not verdict.simulated
        plan = shell_plan(_to_run(cls.argv), cwd=self.cwd, session_id=self.session_id, seq=out.seq)
        if cls.verdict == "SAFE" and not needs_person:
            out.fields["action"] = "auto_approved"
            out.decided(_rules(cls, "safe_tier"))
            out.fields["plan_token"] = compute_plan_token(plan)
            key = self._cache_key(cls)
            if key is not None and self._serve(out, key):
                return
            self._run(out, plan, out.fields["plan_token"])
            self._keep(out, key)
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
        new_cls = self.classify(new_command)
        out.classified(new_cls, modified=True, executed=engine_argv(new_cls.argv))
        out.fields["modified_command"] = redact_command(new_command, new_cls.argv)
        if new_cls.verdict == "FORBIDDEN":
            out.block(new_cls.error or "forbidden_command")
            return
        new_verdict = self._confine(_to_run(new_cls.argv))
        if new_verdict is not None:
            out.confined(new_verdict)
            if not new_verdict.simulated and not decider.is_person:
                self._refuse_unconfined(out, new_verdict, decider)
                return
        # The human typed this command: RISKY counts as approved by them. It gets its own plan-token.
        out.fields["action"] = "user_modified"
        new_plan = shell_plan(_to_run(new_cls.argv), cwd=self.cwd, session_id=self.session_id, seq=out.seq)
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
        if out.fields["action"] != "auto_approved":  # an approved command may change what the reads said
            self.read_cache.clear()
        result = run_argv(argv, timeout_s=self.timeout_s, env=self._envs.for_program(argv), cwd=self.cwd)
        out.ran(result, command or out.command)
        self._learn(argv, result)

    def _learn(self, argv: Sequence[str], result: RunResult) -> None:
        """Widen the egress scope with what a bare az read printed (when this shell learns)."""
        if self.learn_scope and result.error is None and result.exit_code == 0:
            self.scope = learn_scope(self.scope, argv, result.stdout)


def _to_run(argv: tuple[str, ...]) -> tuple[str, ...]:
    """What actually runs for ``argv``: the installed forensics engine for its spellings, else ``argv``."""
    resolved = engine_argv(argv)
    return tuple(resolved) if resolved is not None else argv


@dataclass
class _Prepared:
    """A request that runs without approval: its record so far, the argv and when it was taken up."""

    out: Outcome
    argv: list[str]
    start: float
    key: str | None = None
    """Its read-cache key (None: not a cacheable read)."""
    cached: bool = False


def _provisional(out: Outcome) -> dict[str, Any]:
    """``out`` as its "outcome unknown" record (what recovery appends if the real one never comes)."""
    provisional = Outcome.copy_fields(out)
    provisional.update(
        status="error",
        error="exec_error",
        stderr="outcome unknown: the shell stopped before the command's audit record was written",
    )
    return ShellAuditRecord.model_validate(provisional).model_dump(mode="json")


def _outcome_of(future: Future[tuple[RunResult, float]]) -> tuple[RunResult | Exception, float, BaseException | None]:
    """(the run's result or its internal failure, when it ended, a Ctrl-C that came while waiting)."""
    try:
        result, ended = future.result()
    except Exception as exc:  # reported as the call's failure
        return exc, time.perf_counter(), None
    except BaseException as exc:  # KeyboardInterrupt, SystemExit: the caller waits again, then re-raises
        return exc if isinstance(exc, Exception) else RuntimeError("interrupted"), time.perf_counter(), exc
    return result, ended, None


def _timed_run(argv: list[str], timeout_s: float, env: Mapping[str, str], cwd: str) -> tuple[RunResult, float]:
    return run_argv(argv, timeout_s=timeout_s, env=env, cwd=cwd), time.perf_counter()


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
