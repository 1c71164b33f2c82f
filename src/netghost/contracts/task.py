"""The Task Registry record (seed 000 "Task Registry Schema") and the values it is built from.

One record is appended to ``orchestrator_tasks_{session_id}.jsonl`` per state transition, holding the
full task; readers keep the last record per ``task_id``. The registry goes through the governance WAL,
so a stored line additionally carries ``seq``/``ts``/``prev_sha256``/``sha256``
(:class:`StoredTaskRecord`).

Seed 002 shows an abbreviated registry record (no ``session_id``, ``target``, ``parameters`` ...) and
spells one timestamp ``last_polled`` where seed 000 says ``last_poll``. Both examples must validate, so
only the fields every example carries are required and ``last_polled`` is kept as a separate optional
key (writers use ``last_poll``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from netghost.contracts.base import IsoTimestamp, WireModel
from netghost.contracts.chain import ChainFields

__all__ = [
    "CAPTURE_MAX_DURATION_SECONDS",
    "IN_FLIGHT_TASK_STATES",
    "TASK_RECORD_VERSION",
    "TERMINAL_TASK_STATES",
    "CaptureTrafficParameters",
    "CleanupStatus",
    "CleanupStep",
    "DenialAction",
    "StorageAuthMode",
    "StoredTaskRecord",
    "TargetType",
    "TaskRecord",
    "TaskState",
    "TaskTimestamps",
]

CAPTURE_MAX_DURATION_SECONDS = 300
"""Seed 001 Tool 2: "Capture duration in seconds. Default 60. Max 300." """


class TaskState(StrEnum):
    """Every state of the seed 000 lifecycle state machine (values are the wire strings)."""

    CREATED = "CREATED"
    DETECTING = "DETECTING"
    APPROVED = "APPROVED"
    PROVISIONING = "PROVISIONING"
    WAITING = "WAITING"
    DOWNLOADING = "DOWNLOADING"
    ANALYZING = "ANALYZING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    TIMED_OUT = "TIMED_OUT"
    CLEANING_UP = "CLEANING_UP"
    DONE = "DONE"
    ABANDONED = "ABANDONED"


TERMINAL_TASK_STATES: frozenset[TaskState] = frozenset(
    {TaskState.DONE, TaskState.CANCELLED, TaskState.ABANDONED}
)
"""Seed 000: "Terminal states: DONE, CANCELLED, ABANDONED" (FAILED/TIMED_OUT still go to CLEANING_UP)."""

IN_FLIGHT_TASK_STATES: frozenset[TaskState] = frozenset(
    {TaskState.CREATED, TaskState.DETECTING, TaskState.APPROVED, TaskState.PROVISIONING, TaskState.WAITING,
     TaskState.DOWNLOADING, TaskState.ANALYZING}
)
"""States a capture is still on its way in: ``check_task`` answers ``task_pending``, a crash or an internal
error can leave a task here mid-way, and a resume reconciles it through ``check_task`` (never re-creates)."""

CleanupStatus = Literal["pending", "completed", "partial", "skipped"]
"""Seed 000 response table; ``None`` on the wire means cleanup was not attempted yet."""

TargetType = Literal["vm", "vmss", "aks"]
StorageAuthMode = Literal["login", "key"]
DenialAction = Literal["user_denied", "user_abandoned", "blocked"]
"""Why a gated command did not run: a human said no, the gate failed closed, or it was FORBIDDEN."""

TASK_RECORD_VERSION: Literal[2] = 2
"""Version 2 adds what the real azure-cli needs (location, VM id, storage path, auth mode), the task's
CabinCrew plan, workspace and artifact hashes, and the named failure / Azure stop reasons. A version 1
record is read as is: every new field is optional."""


class CaptureTrafficParameters(WireModel):
    """The ``parameters`` object of a ``capture_traffic`` request, stored verbatim in the task.

    ``storage_account`` and ``resource_group`` are required (seed 000 intent table; a request without
    ``storage_account`` is answered with ``missing_parameter``). ``duration_seconds`` defaults to 60 and
    is capped at 300 as seed 001 Tool 2 says; ``storage_auth_mode`` is Tool 2's optional switch.
    """

    duration_seconds: int = Field(default=60, ge=1, le=CAPTURE_MAX_DURATION_SECONDS)
    storage_account: str = Field(min_length=1)
    resource_group: str = Field(min_length=1)
    storage_auth_mode: StorageAuthMode | None = None


class CleanupStep(WireModel):
    """One ``{command, executed}`` entry of a task's cleanup plan (built before the first resource)."""

    command: str
    executed: bool = False


class TaskTimestamps(WireModel):
    """ISO-8601 instants of each transition; ``None`` (or absent) for states not reached yet."""

    created: IsoTimestamp
    approved: IsoTimestamp | None = None
    provisioned: IsoTimestamp | None = None
    first_poll: IsoTimestamp | None = None
    last_poll: IsoTimestamp | None = None
    completed: IsoTimestamp | None = None
    cleanup_started: IsoTimestamp | None = None
    cleanup_completed: IsoTimestamp | None = None
    last_polled: IsoTimestamp | None = Field(
        default=None,
        description="Seed 002 spelling of last_poll; accepted on read, writers use last_poll.",
    )


class TaskRecord(WireModel):
    """The full task as stored in the Task Registry (seed 000 "Task Registry Schema").

    Fields the seed adds outside the schema table are here too, because readers of the registry need
    them: ``cleanup_status`` (seed 000 orphan detection reads it from registry records) and
    ``plan_token`` (ARCHITECTURE.md: the capture plan's token is stored in the task record).
    """

    v: Literal[1, 2] = TASK_RECORD_VERSION
    task_id: str = Field(min_length=1, description="ghost_{target}_{YYYYMMDDTHHMMSS}")
    session_id: str | None = None
    intent: Literal["capture_traffic"]
    target: str | None = None
    target_type: TargetType | None = None
    state: TaskState
    investigation_context: str = ""
    parameters: CaptureTrafficParameters | None = None
    azure_operation_id: str | None = None
    storage_account: str | None = None
    storage_container: str = "captures"
    storage_blob_name: str | None = None
    local_pcap_path: str | None = None
    semantic_json_path: str | None = None
    report_path: str | None = None
    paired_task_id: str | None = None
    cleanup_plan: list[CleanupStep] = Field(default_factory=list)
    cleanup_status: CleanupStatus | None = None
    poll_count: int = Field(default=0, ge=0)
    max_polls: int = Field(default=20, ge=1)
    shell_audit_ids: list[str] = Field(default_factory=list)
    timestamps: TaskTimestamps
    error_detail: str | None = None
    duration_seconds: float | None = Field(default=None, ge=0)
    plan_token: str | None = None
    # ---- version 2: what the real azure-cli and the CabinCrew plan need ----
    location: str | None = Field(default=None, description="the VM's region: -l of show-status/delete/list")
    vm_id: str | None = Field(default=None, description="full ARM id of the target, resolved in DETECTING")
    storage_path: str | None = Field(
        default=None, description="blob URL from the create output's storageLocation.storagePath"
    )
    storage_auth_mode: StorageAuthMode | None = None
    plan: list[list[str]] | None = Field(
        default=None, description="the task's whole command plan as argv templates; plan_token hashes it"
    )
    policy_outcome: Literal["allow", "warn", "deny", "require_approval"] | None = None
    policy_hash: str | None = None
    workspace: str | None = Field(default=None, description="root of the task's CabinCrew workspace")
    artifact_hashes: dict[str, str] = Field(
        default_factory=dict, description="artifact path (relative to the workspace) -> sha256:<hex>"
    )
    capture_status: str | None = Field(default=None, description="last packetCaptureStatus from show-status")
    stop_reason: str | None = Field(default=None, description="Azure's stopReason (TimeExceeded, Manual ...)")
    failure_reason: str | None = Field(
        default=None, description="named reason a task failed or stopped (vm_not_running, quota_exceeded ...)"
    )
    denied_action: DenialAction | None = None
    download_attempts: int = Field(default=0, ge=0)
    analysis_mode: Literal["single", "compare", "single_end_fallback"] | None = None
    create_issued: bool = Field(
        default=False, description="the create command was sent: a restart must ask Azure before creating again"
    )


class StoredTaskRecord(TaskRecord, ChainFields):
    """A registry line as the WAL stores it: the task plus its place in the hash chain."""
