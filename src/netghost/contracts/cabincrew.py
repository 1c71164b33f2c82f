"""CabinCrew wire models (seed 004): approvals, workflow WAL entries, state, artifacts, audit events.

The seed names these shapes but leaves their fields open; the fields here follow its §7 (approval
bound to the plan-token), §9 (artifact roles), §10 (audit events) and §11.1 (WorkflowStateRecord and
WAL entry contents). Wire strings are the seed's words in snake_case (``workflow_started``,
``require_approval``, ``evidence``...). Every model forbids unknown fields so a typo on the wire is
an error, not silently dropped data.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer


def _wal_ts(moment: datetime) -> str:
    """Serialise as the WAL writes ``ts`` (microseconds, ``Z``), so re-saving never changes a hash."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


WalTimestamp = Annotated[datetime, PlainSerializer(_wal_ts, return_type=str, when_used="json")]
"""A ``datetime`` that dumps to JSON exactly as :func:`netghost.governance.wal.format_ts` wrote it."""

__all__ = [
    "ApprovalDecision",
    "ApprovalRecord",
    "ApprovalRequest",
    "ApprovalResponse",
    "ArtifactManifest",
    "ArtifactRecord",
    "ArtifactRole",
    "AuditEvent",
    "AuditEventType",
    "PolicyEvaluation",
    "PolicyOutcome",
    "WalEntry",
    "WalEntryType",
    "WorkflowState",
    "WorkflowStateRecord",
]

PolicyOutcome = Literal["allow", "warn", "deny", "require_approval"]
"""§6 preflight outcomes, verbatim."""

ApprovalDecision = Literal["approve", "deny", "modify"]

ArtifactRole = Literal["evidence", "state", "log"]
"""§9 artifact roles, verbatim."""

WalEntryType = Literal[
    "workflow_started",
    "step_started",
    "step_completed",
    "policy_evaluated",
    "approval_requested",
    "approval_received",
    "artifact_created",
    "plan_token_verified",
    "workflow_completed",
    "workflow_failed",
]
"""§11.1 WAL entry types, plus ``plan_token_verified`` (§4.2/§10 make the check auditable)."""

WorkflowState = Literal[
    "flight_plan",
    "preflight",
    "approval_required",
    "awaiting_approval",
    "cleared",
    "taking_off",
    "took_off",
    "auditing",
    "audited",
    "completed",
    "denied",
    "rejected",
    "failed",
]
"""States of the §2 lifecycle. ``denied``/``rejected`` are the written-ahead halts before ``failed``."""

AuditEventType = Literal[
    "engine_launch",
    "engine_completion",
    "governance_decision",
    "approval_request",
    "approval_response",
    "gateway_evaluation",
    "plan_token_creation",
    "plan_token_verification",
    "take_off_execution",
    "artifact_registration",
    "audit_recording",
    "workflow_completion",
    "workflow_failure",
    "workflow_halt",
]
"""§10's list of audited moments, plus failures and halts (§11.2, §12 record every error)."""


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ApprovalRequest(_Wire):
    """§7: what a human is asked to approve, bound to the plan-token of the exact plan."""

    plan_token: str
    what: str
    why: str
    risk: str
    requested_at: datetime
    context: dict[str, Any] = Field(default_factory=dict)


class ApprovalResponse(_Wire):
    """§7: a human decision. It answers only the plan-token it names."""

    plan_token: str
    decision: ApprovalDecision
    reason: str = ""
    modified_plan: Any | None = None
    decided_at: datetime

    def answers(self, request: ApprovalRequest) -> bool:
        """True when this response is about ``request``'s plan-token and nothing else."""
        return self.plan_token == request.plan_token


class ApprovalRecord(_Wire):
    """A request and (once given) its response, as kept in the WorkflowStateRecord (§11.1)."""

    request: ApprovalRequest
    response: ApprovalResponse | None = None


class ArtifactRecord(_Wire):
    """One registered file of a workspace (§9): where, how big, its hash and its role."""

    path: str = Field(description="path relative to the workspace's artifacts/ directory, '/' separated")
    sha256: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    size: int = Field(ge=0)
    role: ArtifactRole
    created_at: datetime
    description: str = ""


class ArtifactManifest(_Wire):
    """The ``artifact.json`` of a workspace: every registered artifact, at most once per path."""

    v: Literal[1] = 1
    artifacts: list[ArtifactRecord] = Field(default_factory=list)


class PolicyEvaluation(_Wire):
    """One preflight decision with the hash of the policy set that produced it (§6)."""

    outcome: PolicyOutcome
    reasons: list[str] = Field(default_factory=list)
    policy_hash: str
    facts_sha256: str
    evaluated_at: datetime


class WalEntry(_Wire):
    """One stored line of a workflow WAL (§11.1); ``seq``/``ts``/hashes are added by the WAL writer."""

    v: Literal[1] = 1
    workflow_id: str
    entry_type: WalEntryType
    data: dict[str, Any] = Field(default_factory=dict)
    seq: int = Field(ge=1)
    ts: WalTimestamp
    prev_sha256: str | None
    sha256: str


class WorkflowStateRecord(_Wire):
    """The whole durable state of one workflow, rebuilt by replaying its WAL entries (§11.1)."""

    v: Literal[1] = 1
    workflow_id: str
    state: WorkflowState
    plan_token: str
    plan: Any | None = None
    created_at: datetime
    updated_at: datetime
    completed_steps: list[str] = Field(default_factory=list)
    pending_steps: list[str] = Field(default_factory=list)
    approvals: list[ApprovalRecord] = Field(default_factory=list)
    artifacts: list[ArtifactRecord] = Field(default_factory=list)
    policy_results: list[PolicyEvaluation] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    token_verified: bool = False
    failure_reason: str | None = None
    last_seq: int = 0


class AuditEvent(_Wire):
    """An audit event (§10); its JSON Schema is ``audit-event.schema.json``."""

    v: Literal[1] = 1
    event_type: AuditEventType
    workflow_id: str
    ts: WalTimestamp
    outcome: str | None = None
    plan_token: str | None = None
    wal_seq: int | None = None
    details: dict[str, Any] = Field(default_factory=dict)
