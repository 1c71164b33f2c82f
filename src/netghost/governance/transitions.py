"""The CabinCrew workflow as data: the transition table and the pure ``step`` function.

``TRANSITIONS`` says which WAL entry may follow which state; :func:`step` applies one entry to a
:class:`WorkflowStateRecord` and never reads a clock or a file, so replaying a WAL is
deterministic. :mod:`netghost.governance.workflow` is the imperative shell that writes entries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netghost.contracts import (
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
from netghost.errors import ReceiptError, WorkflowTransitionError
from netghost.governance.plan_token import canonical_json, compute_plan_token
from netghost.governance.wal import read_wal

__all__ = [
    "LIFECYCLE",
    "REASONS",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "AuditSink",
    "EventKey",
    "ReceiptError",
    "WorkflowTransitionError",
    "audit_event_for",
    "qualify",
    "read_entries",
    "receipt_problem",
    "replay_workflows",
    "step",
]

REASONS: Mapping[str, str] = {"denied": "governance_denied", "rejected": "approval_rejected"}
"""failure_reason written after the ``denied`` and ``rejected`` halts."""

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


def receipt_problem(receipt: object) -> str | None:
    """Why an engine receipt is malformed (not a plain-JSON mapping), or None if it is fine."""
    if not isinstance(receipt, Mapping):
        return f"engine receipt is a {type(receipt).__name__}, not a mapping"
    try:
        canonical_json(dict(receipt))
    except (TypeError, ValueError) as exc:
        return f"engine receipt is not plain JSON: {exc}"
    return None


def _qualifier(entry: WalEntry) -> str | None:
    return qualify(entry.entry_type, entry.data)


def qualify(entry_type: str, data: Mapping[str, Any]) -> str | None:
    """The qualifier that selects a row of TRANSITIONS: step name, outcome, decision or ok/mismatch."""
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
    move = _Move(entry, (entry.entry_type, _qualifier(entry)), record.state if record is not None else None)
    target = TRANSITIONS.get(move.current, {}).get(move.key)
    if target is None:
        raise move.illegal()
    if record is None:
        return _started(move, target)
    _check_follows(record, move)
    new = record.model_copy(deep=True)
    new.state = target
    new.updated_at = entry.ts
    new.last_seq = entry.seq
    apply = _APPLY.get(entry.entry_type)
    if apply is not None:
        apply(new, record, move)
    new.pending_steps = _pending_steps(target)
    return new


@dataclass(frozen=True)
class _Move:
    """One entry being applied: the entry, its TRANSITIONS key and the state it leaves."""

    entry: WalEntry
    key: EventKey
    current: WorkflowState | None

    def illegal(self, detail: str = "") -> WorkflowTransitionError:
        """The error for this entry: out of order, or allowed by the table but not by the data."""
        return WorkflowTransitionError(self.entry.workflow_id, self.current, self.key, detail)


def _started(move: _Move, target: WorkflowState) -> WorkflowStateRecord:
    """The first state of a workflow, from its ``workflow_started`` entry."""
    entry = move.entry
    token = entry.data.get("plan_token")
    if not isinstance(token, str):
        raise move.illegal("workflow_started without a plan_token")
    return WorkflowStateRecord(
        workflow_id=entry.workflow_id,
        state=target,
        plan_token=token,
        plan=entry.data.get("plan"),
        created_at=entry.ts,
        updated_at=entry.ts,
        pending_steps=list(_PENDING["flight_plan"]),
        last_seq=entry.seq,
    )


def _check_follows(record: WorkflowStateRecord, move: _Move) -> None:
    """An entry must belong to this workflow and come after its last entry."""
    wid, seq = move.entry.workflow_id, move.entry.seq
    if wid != record.workflow_id:
        raise move.illegal(f"entry belongs to workflow {wid}, not {record.workflow_id}")
    if seq <= record.last_seq:
        raise move.illegal(f"seq {seq} does not follow {record.last_seq}")


def _pending_steps(target: WorkflowState) -> list[str]:
    """The lifecycle stages still ahead of a workflow in state ``target``."""
    pending = list(_PENDING.get(target, ()))
    if target == "cleared" and "approval" in pending:
        pending.remove("approval")
    return pending


# An applier records what its entry type adds to the state: ``new`` is a deep copy of ``before``
# whose state, time and seq already moved on.
_Apply = Callable[[WorkflowStateRecord, WorkflowStateRecord, _Move], None]


def _apply_step_started(new: WorkflowStateRecord, before: WorkflowStateRecord, move: _Move) -> None:
    if move.key[1] == "take_off" and not before.token_verified:
        raise move.illegal("take-off before the plan-token was verified")


def _apply_step_completed(new: WorkflowStateRecord, before: WorkflowStateRecord, move: _Move) -> None:
    data = move.entry.data
    new.completed_steps.append(str(data["step"]))
    if move.key[1] == "flight_plan" and isinstance(data.get("plan_token"), str):
        new.plan_token = data["plan_token"]  # created from the flight-plan's artifacts (§4.1)
        new.plan = data.get("plan")


def _apply_artifact_created(new: WorkflowStateRecord, before: WorkflowStateRecord, move: _Move) -> None:
    new.artifacts.append(ArtifactRecord.model_validate(move.entry.data["artifact"]))


def _apply_policy_evaluated(new: WorkflowStateRecord, before: WorkflowStateRecord, move: _Move) -> None:
    evaluation = PolicyEvaluation.model_validate(move.entry.data["evaluation"])
    new.policy_results.append(evaluation)
    new.completed_steps.append("preflight")
    if evaluation.outcome == "warn":
        new.warnings.extend(evaluation.reasons)


def _apply_approval_requested(new: WorkflowStateRecord, before: WorkflowStateRecord, move: _Move) -> None:
    request = ApprovalRequest.model_validate(move.entry.data["request"])
    if request.plan_token != before.plan_token:
        raise move.illegal("the request is not bound to the workflow's plan-token")
    new.approvals.append(ApprovalRecord(request=request))


def _apply_approval_received(new: WorkflowStateRecord, before: WorkflowStateRecord, move: _Move) -> None:
    response = ApprovalResponse.model_validate(move.entry.data["response"])
    pending = new.approvals[-1] if new.approvals else None
    if pending is None or pending.response is not None or not response.answers(pending.request):
        raise move.illegal("the response does not answer the pending request's plan-token")
    pending.response = response
    if response.decision in ("approve", "modify"):
        new.completed_steps.append("approval")
    if response.decision == "modify":
        if response.modified_plan is None:
            raise move.illegal("a 'modify' decision must carry the modified plan")
        new.plan = response.modified_plan
        new.plan_token = compute_plan_token(response.modified_plan)
        new.token_verified = False


def _apply_plan_token_verified(new: WorkflowStateRecord, before: WorkflowStateRecord, move: _Move) -> None:
    new.token_verified = move.key[1] == "ok" and move.entry.data.get("expected") == before.plan_token


def _apply_workflow_completed(new: WorkflowStateRecord, before: WorkflowStateRecord, move: _Move) -> None:
    new.completed_steps.append("completion")


def _apply_workflow_failed(new: WorkflowStateRecord, before: WorkflowStateRecord, move: _Move) -> None:
    new.failure_reason = str(move.entry.data.get("reason", "unknown"))


_APPLY: Mapping[WalEntryType, _Apply] = {
    "step_started": _apply_step_started,
    "step_completed": _apply_step_completed,
    "artifact_created": _apply_artifact_created,
    "policy_evaluated": _apply_policy_evaluated,
    "approval_requested": _apply_approval_requested,
    "approval_received": _apply_approval_received,
    "plan_token_verified": _apply_plan_token_verified,
    "workflow_completed": _apply_workflow_completed,
    "workflow_failed": _apply_workflow_failed,
}
"""entry type -> what it records in the state (``workflow_started`` begins one: :func:`_started`)."""


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
        event_type = "gateway_evaluation" if entry.data.get("source") == "gateway" else "governance_decision"
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
        plan_token=token if isinstance(token := entry.data.get("plan_token"), str) else None,
        wal_seq=entry.seq,
        details={"entry_type": entry.entry_type, **entry.data},
    )


def read_entries(path: Path) -> list[WalEntry]:
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
    for entry in read_entries(Path(path)):
        states[entry.workflow_id] = step(states.get(entry.workflow_id), entry)
    return states
