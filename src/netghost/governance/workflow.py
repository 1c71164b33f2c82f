"""The CabinCrew workflow engine: flight-plan -> preflight -> approval -> take-off -> audit -> completion.

The order is a table (:data:`TRANSITIONS`) and a pure function (:func:`step`) that applies one WAL
entry to a :class:`WorkflowStateRecord`. :class:`Workflow` is the thin imperative shell around it:
each method first writes its entry to the WAL (write-ahead), then steps the in-memory record with
the very entry that was stored, so replaying the WAL after a restart rebuilds exactly the same state.

Typical use (the shell's RISKY command, the orchestrator's capture plan)::

    wf = Workflow.start(writer, plan, workflow_id="s1-007", clock=clock)
    evaluation = wf.preflight(engine, facts)           # allow | warn | deny | require_approval
    if wf.state == "approval_required":
        request = wf.request_approval(what=..., why=..., risk=...)
        wf.record_approval(ask_a_human(request))        # approve | deny | modify
    if wf.state == "cleared":
        result = wf.run_take_off(plan, lambda: run_it(plan))   # verify token, run, audit, complete

Anything out of order raises :class:`WorkflowTransitionError`; a take-off whose plan differs from
the approved plan-token is audited and raises :class:`~netghost.errors.PlanTokenMismatchError`.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from netghost.contracts import (
    ApprovalRequest,
    ApprovalResponse,
    ArtifactRecord,
    AuditEvent,
    PolicyEvaluation,
    WalEntry,
    WalEntryType,
    WorkflowState,
    WorkflowStateRecord,
)
from netghost.errors import ArtifactError, PlanTokenMismatchError, WalCorruptError, WorkflowError
from netghost.governance.approval import check_response
from netghost.governance.artifacts import bind_artifacts, validate_artifacts
from netghost.governance.plan_token import compute_plan_token
from netghost.governance.policy import PolicyEngine
from netghost.governance.transitions import (
    LIFECYCLE,
    REASONS,
    TERMINAL_STATES,
    TRANSITIONS,
    AuditSink,
    EventKey,
    ReceiptError,
    WorkflowTransitionError,
    audit_event_for,
    read_entries,
    receipt_problem,
    replay_workflows,
    step,
)
from netghost.governance.wal import WalWriter, read_wal, verify
from netghost.governance.workspace import Workspace

__all__ = [
    "LIFECYCLE",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "AuditSink",
    "EventKey",
    "ReceiptError",
    "Workflow",
    "WorkflowTransitionError",
    "audit_event_for",
    "replay_workflows",
    "step",
]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _already_ended(path: Path, workflow_id: str) -> bool:
    """Best effort on a broken WAL: does this workflow's last readable entry end it?"""
    ends = {"workflow_completed", "workflow_failed"}
    last = None
    for rec in read_wal(path).records:
        if rec.get("workflow_id") == workflow_id:
            last = rec.get("entry_type")
    return last in ends


class Workflow:
    """One running workflow: writes each transition to the WAL, then applies it with :func:`step`.

    Use :meth:`start` or :meth:`resume`; do not call the constructor directly.
    """

    def __init__(
        self,
        writer: WalWriter,
        record: WorkflowStateRecord | None,
        workflow_id: str,
        *,
        clock: Callable[[], datetime] | None = None,
        audit_sink: AuditSink | None = None,
    ) -> None:
        self._writer = writer
        self._record = record
        self.workflow_id = workflow_id
        self._clock = clock or (lambda: datetime.now(UTC))
        self._sink = audit_sink
        self._record_plan = record is None or record.plan is not None
        self.audit_events: list[AuditEvent] = []

    # ---- construction ----------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        writer: WalWriter,
        plan: Any,
        *,
        workflow_id: str,
        clock: Callable[[], datetime] | None = None,
        audit_sink: AuditSink | None = None,
        artifacts: Sequence[ArtifactRecord] = (),
        record_plan: bool = True,
    ) -> Workflow:
        """Record the flight-plan (its plan-token and any artifacts it produced) and stop before preflight.

        Args:
            writer: the WAL to write to (may be shared by many workflows).
            plan: the plain-JSON plan; its plan-token binds everything that follows. With
                ``artifacts``, the recorded plan is ``bind_artifacts(plan, artifacts)`` so the
                token also covers the artifacts' hashes and roles (§4.1, §5); take-off must then
                present ``bind_artifacts(plan, <the artifacts as they are now>)``.
            workflow_id: unique id within the WAL.
            clock: time source for requests and evaluations (the WAL has its own).
            audit_sink: receives an AuditEvent for every transition.
            artifacts: artifacts produced by the flight-plan, recorded as ``artifact_created``.
            record_plan: keep the plan itself in the WAL (lets a restart re-check its token).

        Raises:
            WorkflowTransitionError: ``workflow_id`` already exists in the WAL.
            TypeError: the plan is not plain JSON data.
        """
        wf = cls.begin(writer, plan, workflow_id=workflow_id, clock=clock, audit_sink=audit_sink,
                       record_plan=record_plan)
        wf.finish_flight_plan(artifacts=artifacts)
        return wf

    @classmethod
    def begin(
        cls,
        writer: WalWriter,
        intent: Any,
        *,
        workflow_id: str,
        clock: Callable[[], datetime] | None = None,
        audit_sink: AuditSink | None = None,
        record_plan: bool = True,
    ) -> Workflow:
        """Start a workflow whose flight-plan an engine still has to produce (§4.1).

        Writes ``workflow_started`` (with the token of ``intent``) and ``step_started``
        flight_plan; run the engine in flight-plan mode, then call :meth:`finish_flight_plan`.

        Raises:
            WorkflowTransitionError: ``workflow_id`` already exists in the WAL.
            TypeError: the intent is not plain JSON data.
        """
        if any(e.workflow_id == workflow_id for e in read_entries(writer.path)):
            raise WorkflowTransitionError(workflow_id, "exists", ("workflow_started", None), "id already used")
        wf = cls(writer, None, workflow_id, clock=clock, audit_sink=audit_sink)
        wf._record_plan = record_plan
        wf._write("workflow_started", {"plan_token": compute_plan_token(intent), "plan": intent if record_plan else None})
        wf._write("step_started", {"step": "flight_plan", "mode": "flight-plan"})
        return wf

    def finish_flight_plan(
        self,
        receipt: Mapping[str, Any] | None = None,
        *,
        artifacts: Sequence[ArtifactRecord] = (),
    ) -> str:
        """Record the flight-plan's receipt and artifacts and create the plan-token; return it.

        The plan becomes ``bind_artifacts(intent, artifacts)`` when artifacts were produced, so
        the token is generated from their hashes and roles (§4.1, §5).

        Raises:
            ReceiptError: the receipt is malformed (the workflow is failed first).
            WorkflowTransitionError: not in the flight-plan stage.
        """
        if self.state != "flight_plan":
            raise WorkflowTransitionError(self.workflow_id, self.state, ("step_completed", "flight_plan"))
        receipt = {} if receipt is None else receipt
        problem = receipt_problem(receipt)
        if problem is not None:
            self.fail("receipt_malformed", problem)
            raise ReceiptError(problem)
        for artifact in artifacts:
            self._write("artifact_created", {"artifact": artifact.model_dump(mode="json")})
        intent = self.record.plan
        plan = bind_artifacts(intent, artifacts) if artifacts else intent
        token = compute_plan_token(plan) if artifacts or intent is not None else self.record.plan_token
        self._write(
            "step_completed",
            {"step": "flight_plan", "plan_token": token, "plan": plan if self._record_plan else None,
             "receipt": dict(receipt)},
        )
        return token

    @classmethod
    def resume(
        cls,
        writer: WalWriter,
        workflow_id: str,
        *,
        clock: Callable[[], datetime] | None = None,
        audit_sink: AuditSink | None = None,
        workspace: Workspace | Path | None = None,
    ) -> Workflow:
        """Rebuild a workflow from its WAL after a restart (§11.2) and continue from there.

        Checks, in order: the whole file's chain, the legality of every entry, the stored plan's
        token, and (with ``workspace``) the artifact hashes. A pending approval stays pending.
        Any failure halts the workflow: an audit event, a ``workflow_failed`` entry, an exception.

        Raises:
            WalCorruptError: the chain is broken (the workflow is halted).
            WorkflowTransitionError: the entries are inconsistent (halted).
            PlanTokenMismatchError: the stored plan no longer hashes to its token (halted).
            ArtifactError: an artifact differs from its record (halted).
            WorkflowError: no such workflow in the WAL.
        """
        wf = cls(writer, None, workflow_id, clock=clock, audit_sink=audit_sink)
        report = verify(writer.path)
        if not report.ok:
            first = next(b for b in report.breaks if b.kind != "torn_tail")
            detail = f"{len(report.breaks)} break(s), first {first.kind} at seq {first.seq}: {first.detail}"
            wf._halt("wal_corrupt", detail, write=not _already_ended(writer.path, workflow_id))
            raise WalCorruptError(str(writer.path), first.seq, detail)
        entries = [e for e in read_entries(writer.path) if e.workflow_id == workflow_id]
        if not entries:
            raise WorkflowError(f"workflow {workflow_id} is not in {writer.path}")
        try:
            for entry in entries:
                wf._record = step(wf._record, entry)
        except WorkflowTransitionError as exc:
            wf._halt("wal_inconsistent", str(exc))
            raise
        record = wf.record
        if record.state in TERMINAL_STATES:
            return wf
        if record.plan is not None and compute_plan_token(record.plan) != record.plan_token:
            wf._halt("plan_token_mismatch", "the stored plan no longer hashes to its plan-token")
            raise PlanTokenMismatchError(record.plan_token, compute_plan_token(record.plan))
        if workspace is not None and record.artifacts:
            try:
                validate_artifacts(workspace, expected=record.artifacts)
            except ArtifactError as exc:
                wf._halt("artifact_invalid", str(exc))
                raise
        if record.state in ("denied", "rejected"):
            wf._write("workflow_failed", {"reason": REASONS[record.state], "detail": "completed after restart"})
        elif record.state == "flight_plan":
            wf.fail("flight_plan_interrupted", "the flight-plan did not finish before the restart")
        return wf

    # ---- state -----------------------------------------------------------------------------

    @property
    def record(self) -> WorkflowStateRecord:
        """The current WorkflowStateRecord (a copy is safe to keep)."""
        if self._record is None:
            raise WorkflowError(f"workflow {self.workflow_id} has not started")
        return self._record

    @property
    def state(self) -> WorkflowState:
        """The current state name."""
        return self.record.state

    @property
    def pending_request(self) -> ApprovalRequest | None:
        """The approval request waiting for a response, if any (survives restarts)."""
        if self._record is None or self.state != "awaiting_approval":
            return None
        return self.record.approvals[-1].request

    def _now(self) -> datetime:
        return self._clock()

    def _write(self, entry_type: WalEntryType, data: Mapping[str, Any]) -> WalEntry:
        """Dry-run the entry through :func:`step`, append it (write-ahead), then apply the stored entry.

        The dry run means an illegal entry is refused *before* it reaches the WAL, so the log
        never holds a transition that replay would reject.
        """
        payload = {"v": 1, "workflow_id": self.workflow_id, "entry_type": entry_type, "data": dict(data)}
        last_seq = self._record.last_seq if self._record is not None else 0
        provisional = WalEntry.model_validate(
            {**payload, "seq": last_seq + 1, "ts": _EPOCH, "prev_sha256": None, "sha256": ""}
        )
        step(self._record, provisional)
        stored = WalEntry.model_validate(self._writer.append(payload))
        self._record = step(self._record, stored)
        event = audit_event_for(stored)
        self.audit_events.append(event)
        if self._sink is not None:
            self._sink(event)
        return stored

    def _halt(self, reason: str, detail: str, *, write: bool = True) -> None:
        """Stop on inconsistent state: audit event, then a workflow_failed entry (§11.2).

        ``write=False`` only emits the audit event (the workflow already ended: a failure entry
        after its end would itself be an illegal transition).
        """
        event = AuditEvent(
            event_type="workflow_halt",
            workflow_id=self.workflow_id,
            ts=self._now(),
            outcome="halted",
            details={"reason": reason, "detail": detail},
        )
        self.audit_events.append(event)
        if self._sink is not None:
            self._sink(event)
        if not write:
            return
        payload = {"v": 1, "workflow_id": self.workflow_id, "entry_type": "workflow_failed",
                   "data": {"reason": reason, "detail": detail}}
        stored = WalEntry.model_validate(self._writer.append(payload))
        self.audit_events.append(audit_event_for(stored))
        if self._sink is not None:
            self._sink(self.audit_events[-1])
        if self._record is not None and self._record.state not in TERMINAL_STATES:
            self._record = self._record.model_copy(update={"state": "failed", "failure_reason": reason})

    # ---- the lifecycle ---------------------------------------------------------------------

    def record_policy(
        self, evaluation: PolicyEvaluation, *, source: Literal["preflight", "gateway"] = "preflight"
    ) -> PolicyEvaluation:
        """Record a preflight (or gateway, §8) decision made elsewhere and enforce it (§6).

        allow/warn -> cleared for take-off (a warning is kept); require_approval -> paused;
        deny -> halted (``workflow_failed`` with reason ``governance_denied`` or ``gateway_denied``).

        Raises:
            WorkflowTransitionError: not in the preflight state.
        """
        self._write("policy_evaluated", {"evaluation": evaluation.model_dump(mode="json"), "source": source})
        if evaluation.outcome == "deny":
            reason = "gateway_denied" if source == "gateway" else REASONS["denied"]
            self._write("workflow_failed", {"reason": reason, "detail": "; ".join(evaluation.reasons)})
        return evaluation

    def preflight(self, engine: PolicyEngine, facts: Mapping[str, Any]) -> PolicyEvaluation:
        """Evaluate the policies on ``facts`` and record the outcome (see :meth:`record_policy`).

        Raises:
            WorkflowTransitionError: not in the preflight state.
            PolicyError: the policies failed to evaluate.
        """
        if self.state != "preflight":
            raise WorkflowTransitionError(self.workflow_id, self.state, ("policy_evaluated", None))
        return self.record_policy(engine.evaluate(facts, now=self._now()))

    def request_approval(
        self, *, what: str, why: str, risk: str, context: Mapping[str, Any] | None = None
    ) -> ApprovalRequest:
        """Pause for a human: write an ApprovalRequest bound to the plan-token (§7).

        Raises:
            WorkflowTransitionError: preflight did not require approval.
        """
        request = ApprovalRequest(
            plan_token=self.record.plan_token,
            what=what,
            why=why,
            risk=risk,
            requested_at=self._now(),
            context=dict(context or {}),
        )
        self._write("approval_requested", {"request": request.model_dump(mode="json")})
        return request

    def record_approval(self, response: ApprovalResponse) -> WorkflowState:
        """Apply a human decision to the pending request and return the new state.

        approve -> cleared; modify -> cleared for the modified plan (its new plan-token);
        deny -> halted with reason ``approval_rejected``.

        Raises:
            ApprovalMismatchError: the response answers another plan-token (nothing is recorded).
            WorkflowTransitionError: no approval is pending.
        """
        request = self.pending_request
        if request is None:
            raise WorkflowTransitionError(self.workflow_id, self.state, ("approval_received", response.decision))
        check_response(request, response)
        self._write("approval_received", {"response": response.model_dump(mode="json")})
        if response.decision == "deny":
            self._write("workflow_failed", {"reason": REASONS["rejected"], "detail": response.reason})
        return self.state

    def take_off(self, plan: Any) -> None:
        """Recompute the plan-token of what is about to run and start take-off if it matches (§4.2, §5).

        Raises:
            PlanTokenMismatchError: the plan differs from the approved one (audited, workflow failed).
            WorkflowTransitionError: not cleared for take-off.
        """
        if self.state != "cleared":
            raise WorkflowTransitionError(self.workflow_id, self.state, ("step_started", "take_off"))
        expected = self.record.plan_token
        actual = compute_plan_token(plan)
        ok = hmac.compare_digest(expected, actual)
        self._write("plan_token_verified", {"ok": ok, "expected": expected, "actual": actual})
        if not ok:
            self._write("workflow_failed", {"reason": "plan_token_mismatch", "detail": f"expected {expected}, got {actual}"})
            raise PlanTokenMismatchError(expected, actual)
        self._write("step_started", {"step": "take_off", "mode": "take-off"})

    def record_artifact(self, artifact: ArtifactRecord) -> None:
        """Record an artifact produced during flight-plan or take-off (``artifact_created``).

        Raises:
            WorkflowTransitionError: not during flight-plan or take-off.
        """
        self._write("artifact_created", {"artifact": artifact.model_dump(mode="json")})

    def complete_take_off(self, result: Mapping[str, Any] | None = None) -> None:
        """Record the engine's receipt and that the side effect finished (``step_completed`` take_off).

        A receipt must be a plain-JSON mapping; anything else is malformed and stops the
        workflow (§12) before it is recorded as completed.

        Raises:
            ReceiptError: the receipt is malformed (the workflow is failed first).
            WorkflowTransitionError: take-off was not started.
        """
        receipt = {} if result is None else result
        problem = receipt_problem(receipt)
        if problem is not None:
            if self.state == "taking_off":
                self.fail("receipt_malformed", problem)
            raise ReceiptError(problem)
        self._write("step_completed", {"step": "take_off", "result": dict(receipt)})

    def audit(self, workspace: Workspace | Path | None = None) -> dict[str, Any]:
        """The audit stage: verify the WAL chain and (with a workspace) every artifact's hash.

        Returns the audit summary that is recorded with ``step_completed`` audit.

        Raises:
            WalCorruptError: the chain is broken (workflow failed).
            ArtifactError: an artifact is invalid (workflow failed).
            WorkflowTransitionError: take-off has not completed.
        """
        self._write("step_started", {"step": "audit"})
        report = verify(self._writer.path)
        if not report.ok:
            first = next(b for b in report.breaks if b.kind != "torn_tail")
            self.fail("wal_corrupt", f"{first.kind} at seq {first.seq}: {first.detail}")
            raise WalCorruptError(str(self._writer.path), first.seq, first.detail)
        checked = 0
        if workspace is not None:
            try:
                checked = len(validate_artifacts(workspace, expected=self.record.artifacts))
            except ArtifactError as exc:
                self.fail("artifact_invalid", str(exc))
                raise
        summary = {"chain_ok": True, "wal_records": report.records, "artifacts_verified": checked}
        self._write("step_completed", {"step": "audit", "summary": summary})
        return summary

    def complete(self, summary: Mapping[str, Any] | None = None) -> None:
        """Finish the workflow (``workflow_completed``).

        Raises:
            WorkflowTransitionError: the audit stage has not run.
        """
        self._write("workflow_completed", {"summary": dict(summary or {})})

    def fail(self, reason: str, detail: str = "") -> None:
        """End the workflow as failed, from any non-terminal state.

        Raises:
            WorkflowTransitionError: the workflow already ended.
        """
        self._write("workflow_failed", {"reason": reason, "detail": detail})

    def run_take_off(
        self,
        plan: Any,
        action: Callable[[], Mapping[str, Any]],
        *,
        workspace: Workspace | Path | None = None,
    ) -> Mapping[str, Any]:
        """Take-off, run ``action``, audit and complete, in order; any failure fails the workflow.

        Args:
            plan: the plan about to run (its token must match the approved one).
            action: performs the side effect and returns a plain-JSON result summary.
            workspace: when given, artifacts are verified during the audit stage.

        Raises:
            PlanTokenMismatchError: the plan differs from the approved one.
            Exception: whatever ``action`` raised (after recording ``workflow_failed``).
        """
        self.take_off(plan)
        try:
            result = action()
        except BaseException as exc:
            self.fail("take_off_error", f"{type(exc).__name__}: {exc}")
            raise
        self.complete_take_off(result)  # validates the receipt
        self.audit(workspace)
        self.complete()
        return result


