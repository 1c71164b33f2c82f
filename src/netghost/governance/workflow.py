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
from typing import Any

from netghost.contracts.cabincrew import (
    ApprovalRecord,
    ApprovalRequest,
    ApprovalResponse,
    ArtifactRecord,
    AuditEvent,
    AuditEventType,
    PolicyEvaluation,
    WalEntry,
    WalEntryType,
    WorkflowState,
    WorkflowStateRecord,
)
from netghost.errors import ArtifactError, PlanTokenMismatchError, WalCorruptError, WorkflowError
from netghost.governance.approval import check_response
from netghost.governance.artifacts import validate_artifacts
from netghost.governance.plan_token import compute_plan_token
from netghost.governance.policy import PolicyEngine
from netghost.governance.wal import WalWriter, read_wal, verify
from netghost.governance.workspace import Workspace

__all__ = [
    "LIFECYCLE",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "AuditSink",
    "EventKey",
    "Workflow",
    "WorkflowTransitionError",
    "audit_event_for",
    "replay_workflows",
    "step",
]

EventKey = tuple[WalEntryType, str | None]
"""An entry type and its qualifier (step name, policy outcome or approval decision)."""

AuditSink = Callable[[AuditEvent], None]

LIFECYCLE: tuple[str, ...] = ("flight_plan", "preflight", "approval", "take_off", "audit", "completion")
"""The §2 stages, in order (``approval`` only when preflight requires it)."""

TERMINAL_STATES: frozenset[WorkflowState] = frozenset({"completed", "failed"})

_FAIL: EventKey = ("workflow_failed", None)

TRANSITIONS: Mapping[WorkflowState | None, Mapping[EventKey, WorkflowState]] = {
    None: {("workflow_started", None): "flight_plan"},
    "flight_plan": {
        ("step_started", "flight_plan"): "flight_plan",
        ("artifact_created", None): "flight_plan",
        ("step_completed", "flight_plan"): "preflight",
        _FAIL: "failed",
    },
    "preflight": {
        ("policy_evaluated", "allow"): "cleared",
        ("policy_evaluated", "warn"): "cleared",
        ("policy_evaluated", "require_approval"): "approval_required",
        ("policy_evaluated", "deny"): "denied",
        _FAIL: "failed",
    },
    "approval_required": {("approval_requested", None): "awaiting_approval", _FAIL: "failed"},
    "awaiting_approval": {
        ("approval_received", "approve"): "cleared",
        ("approval_received", "modify"): "cleared",
        ("approval_received", "deny"): "rejected",
        _FAIL: "failed",
    },
    "cleared": {
        ("plan_token_verified", "ok"): "cleared",
        ("plan_token_verified", "mismatch"): "cleared",
        ("step_started", "take_off"): "taking_off",
        _FAIL: "failed",
    },
    "taking_off": {
        ("artifact_created", None): "taking_off",
        ("step_completed", "take_off"): "took_off",
        _FAIL: "failed",
    },
    "took_off": {
        ("artifact_created", None): "took_off",
        ("step_started", "audit"): "auditing",
        _FAIL: "failed",
    },
    "auditing": {("step_completed", "audit"): "audited", _FAIL: "failed"},
    "audited": {("workflow_completed", None): "completed", _FAIL: "failed"},
    "denied": {_FAIL: "failed"},
    "rejected": {_FAIL: "failed"},
    "completed": {},
    "failed": {},
}
"""state -> {event -> next state}. Anything absent is illegal. ``denied``/``rejected`` are the
written-ahead halts that the engine immediately follows with ``workflow_failed``."""

_PENDING: Mapping[WorkflowState, tuple[str, ...]] = {
    "flight_plan": LIFECYCLE,
    "preflight": LIFECYCLE[1:],
    "approval_required": LIFECYCLE[2:],
    "awaiting_approval": LIFECYCLE[2:],
    "cleared": LIFECYCLE[3:],
    "taking_off": LIFECYCLE[3:],
    "took_off": LIFECYCLE[4:],
    "auditing": LIFECYCLE[4:],
    "audited": LIFECYCLE[5:],
}


class WorkflowTransitionError(WorkflowError):
    """Raised when an entry is not allowed in the workflow's current state."""

    def __init__(self, workflow_id: str, from_state: str | None, event: EventKey, detail: str = "") -> None:
        name = event[0] + (f"({event[1]})" if event[1] else "")
        msg = f"workflow {workflow_id}: {name} is not allowed in state {from_state}"
        super().__init__(msg + (f": {detail}" if detail else ""))
        self.workflow_id = workflow_id
        self.from_state = from_state
        self.event = event


def _qualifier(entry: WalEntry) -> str | None:
    return _qualify(entry.entry_type, entry.data)


def _qualify(entry_type: str, data: Mapping[str, Any]) -> str | None:
    if entry_type in ("step_started", "step_completed"):
        return str(data.get("step"))
    if entry_type == "policy_evaluated":
        return str(data.get("evaluation", {}).get("outcome"))
    if entry_type == "approval_received":
        return str(data.get("response", {}).get("decision"))
    if entry_type == "plan_token_verified":
        return "ok" if data.get("ok") is True else "mismatch"
    return None


def step(record: WorkflowStateRecord | None, entry: WalEntry) -> WorkflowStateRecord:
    """Apply one WAL entry to a workflow's state and return the new state (pure).

    Args:
        record: the state so far (``None`` before ``workflow_started``).
        entry: the next entry of this workflow.

    Raises:
        WorkflowTransitionError: the entry is out of order, names another workflow, answers
            another plan-token, or starts take-off without a verified plan-token.
    """
    current: WorkflowState | None = record.state if record is not None else None
    key: EventKey = (entry.entry_type, _qualifier(entry))
    wid = entry.workflow_id

    def illegal(detail: str = "") -> WorkflowTransitionError:
        return WorkflowTransitionError(wid, current, key, detail)

    target = TRANSITIONS.get(current, {}).get(key)
    if target is None:
        raise illegal()
    data = entry.data
    if record is None:
        token = data.get("plan_token")
        if not isinstance(token, str):
            raise illegal("workflow_started without a plan_token")
        return WorkflowStateRecord(
            workflow_id=wid,
            state=target,
            plan_token=token,
            plan=data.get("plan"),
            created_at=entry.ts,
            updated_at=entry.ts,
            pending_steps=list(_PENDING["flight_plan"]),
            last_seq=entry.seq,
        )
    if wid != record.workflow_id:
        raise illegal(f"entry belongs to workflow {wid}, not {record.workflow_id}")
    if entry.seq <= record.last_seq:
        raise illegal(f"seq {entry.seq} does not follow {record.last_seq}")

    new = record.model_copy(deep=True)
    new.state = target
    new.updated_at = entry.ts
    new.last_seq = entry.seq
    etype = entry.entry_type
    if etype == "step_completed":
        new.completed_steps.append(str(data["step"]))
    elif etype == "artifact_created":
        new.artifacts.append(ArtifactRecord.model_validate(data["artifact"]))
    elif etype == "policy_evaluated":
        evaluation = PolicyEvaluation.model_validate(data["evaluation"])
        new.policy_results.append(evaluation)
        new.completed_steps.append("preflight")
        if evaluation.outcome == "warn":
            new.warnings.extend(evaluation.reasons)
    elif etype == "approval_requested":
        request = ApprovalRequest.model_validate(data["request"])
        if request.plan_token != record.plan_token:
            raise illegal("the request is not bound to the workflow's plan-token")
        new.approvals.append(ApprovalRecord(request=request))
    elif etype == "approval_received":
        response = ApprovalResponse.model_validate(data["response"])
        pending = new.approvals[-1] if new.approvals else None
        if pending is None or pending.response is not None or not response.answers(pending.request):
            raise illegal("the response does not answer the pending request's plan-token")
        pending.response = response
        if response.decision in ("approve", "modify"):
            new.completed_steps.append("approval")
        if response.decision == "modify":
            if response.modified_plan is None:
                raise illegal("a 'modify' decision must carry the modified plan")
            new.plan = response.modified_plan
            new.plan_token = compute_plan_token(response.modified_plan)
            new.token_verified = False
    elif etype == "plan_token_verified":
        new.token_verified = key[1] == "ok" and data.get("expected") == record.plan_token
    elif etype == "step_started" and key[1] == "take_off" and not record.token_verified:
        raise illegal("take-off before the plan-token was verified")
    elif etype == "workflow_completed":
        new.completed_steps.append("completion")
    elif etype == "workflow_failed":
        new.failure_reason = str(data.get("reason", "unknown"))
    new.pending_steps = list(_PENDING.get(target, ()))
    if target == "cleared" and "approval" in new.pending_steps:
        new.pending_steps.remove("approval")
    return new


_AUDIT_TYPE: Mapping[EventKey, AuditEventType] = {
    ("workflow_started", None): "plan_token_creation",
    ("step_started", "flight_plan"): "engine_launch",
    ("step_completed", "flight_plan"): "engine_completion",
    ("step_started", "take_off"): "take_off_execution",
    ("step_completed", "take_off"): "engine_completion",
    ("step_started", "audit"): "audit_recording",
    ("step_completed", "audit"): "audit_recording",
    ("approval_requested", None): "approval_request",
    ("artifact_created", None): "artifact_registration",
    ("workflow_completed", None): "workflow_completion",
    ("workflow_failed", None): "workflow_failure",
}


def audit_event_for(entry: WalEntry) -> AuditEvent:
    """The §10 audit event that a WAL entry stands for (one per transition)."""
    key = (entry.entry_type, _qualifier(entry))
    event_type: AuditEventType
    outcome: str | None = key[1]
    if entry.entry_type == "policy_evaluated":
        event_type = "governance_decision"
    elif entry.entry_type == "approval_received":
        event_type = "approval_response"
    elif entry.entry_type == "plan_token_verified":
        event_type = "plan_token_verification"
    else:
        event_type = _AUDIT_TYPE[key]
        outcome = "failed" if entry.entry_type == "workflow_failed" else "ok"
    return AuditEvent(
        event_type=event_type,
        workflow_id=entry.workflow_id,
        ts=entry.ts,
        outcome=outcome,
        plan_token=entry.data.get("plan_token") if entry.entry_type == "workflow_started" else None,
        wal_seq=entry.seq,
        details={"entry_type": entry.entry_type, **entry.data},
    )


def _entries(path: Path) -> list[WalEntry]:
    """Workflow entries of a WAL file (other record kinds sharing the file are ignored)."""
    return [
        WalEntry.model_validate(rec)
        for rec in read_wal(path).records
        if "entry_type" in rec and "workflow_id" in rec
    ]


def replay_workflows(path: str | Path) -> dict[str, WorkflowStateRecord]:
    """Rebuild every workflow's state from a WAL file, without writing anything.

    Raises:
        WorkflowTransitionError: an entry is out of order (the WAL is inconsistent).
        pydantic.ValidationError: an entry does not match the WalEntry contract.
    """
    states: dict[str, WorkflowStateRecord] = {}
    for entry in _entries(Path(path)):
        states[entry.workflow_id] = step(states.get(entry.workflow_id), entry)
    return states


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
            plan: the plain-JSON plan; its plan-token binds everything that follows. Include the
                hashes of flight-plan artifacts in it so the token covers them (§5).
            workflow_id: unique id within the WAL.
            clock: time source for requests and evaluations (the WAL has its own).
            audit_sink: receives an AuditEvent for every transition.
            artifacts: artifacts produced by the flight-plan, recorded as ``artifact_created``.
            record_plan: keep the plan itself in the WAL (lets a restart re-check its token).

        Raises:
            WorkflowTransitionError: ``workflow_id`` already exists in the WAL.
            TypeError: the plan is not plain JSON data.
        """
        if any(e.workflow_id == workflow_id for e in _entries(writer.path)):
            raise WorkflowTransitionError(workflow_id, "exists", ("workflow_started", None), "id already used")
        wf = cls(writer, None, workflow_id, clock=clock, audit_sink=audit_sink)
        token = compute_plan_token(plan)
        wf._write("workflow_started", {"plan_token": token, "plan": plan if record_plan else None})
        wf._write("step_started", {"step": "flight_plan", "mode": "flight-plan"})
        for artifact in artifacts:
            wf._write("artifact_created", {"artifact": artifact.model_dump(mode="json")})
        wf._write("step_completed", {"step": "flight_plan", "plan_token": token})
        return wf

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
            wf._halt("wal_corrupt", detail)
            raise WalCorruptError(str(writer.path), first.seq, detail)
        entries = [e for e in _entries(writer.path) if e.workflow_id == workflow_id]
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
            wf._write("workflow_failed", {"reason": _REASON[record.state], "detail": "completed after restart"})
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
        """Check the move against the table, append it (write-ahead), then apply it."""
        payload = {"v": 1, "workflow_id": self.workflow_id, "entry_type": entry_type, "data": dict(data)}
        current = self._record.state if self._record is not None else None
        key = (entry_type, _qualify(entry_type, data))
        if key not in TRANSITIONS.get(current, {}):
            raise WorkflowTransitionError(self.workflow_id, current, key)
        stored = WalEntry.model_validate(self._writer.append(payload))
        self._record = step(self._record, stored)
        event = audit_event_for(stored)
        self.audit_events.append(event)
        if self._sink is not None:
            self._sink(event)
        return stored

    def _halt(self, reason: str, detail: str) -> None:
        """Stop on inconsistent state: audit event, then a workflow_failed entry (§11.2)."""
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
        payload = {"v": 1, "workflow_id": self.workflow_id, "entry_type": "workflow_failed",
                   "data": {"reason": reason, "detail": detail}}
        stored = WalEntry.model_validate(self._writer.append(payload))
        self.audit_events.append(audit_event_for(stored))
        if self._sink is not None:
            self._sink(self.audit_events[-1])
        if self._record is not None and self._record.state not in TERMINAL_STATES:
            self._record = self._record.model_copy(update={"state": "failed", "failure_reason": reason})

    # ---- the lifecycle ---------------------------------------------------------------------

    def record_policy(self, evaluation: PolicyEvaluation) -> PolicyEvaluation:
        """Record a preflight decision made elsewhere and act on it (§6).

        allow/warn -> cleared for take-off (a warning is kept); require_approval -> paused;
        deny -> halted (``workflow_failed`` with reason ``governance_denied``).

        Raises:
            WorkflowTransitionError: not in the preflight state.
        """
        self._write("policy_evaluated", {"evaluation": evaluation.model_dump(mode="json")})
        if evaluation.outcome == "deny":
            self._write("workflow_failed", {"reason": _REASON["denied"], "detail": "; ".join(evaluation.reasons)})
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
            self._write("workflow_failed", {"reason": _REASON["rejected"], "detail": response.reason})
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
        """Record that the side effect finished (``step_completed`` take_off).

        Raises:
            WorkflowTransitionError: take-off was not started.
        """
        self._write("step_completed", {"step": "take_off", "result": dict(result or {})})

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
        self.complete_take_off(result)
        self.audit(workspace)
        self.complete()
        return result


_REASON: Mapping[str, str] = {"denied": "governance_denied", "rejected": "approval_rejected"}
