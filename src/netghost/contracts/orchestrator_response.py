"""Orchestrator → Brain responses (seed 000 "Response", "Dual-End Capture", "Error Handling").

Task responses are discriminated on ``status`` (``task_pending`` ... ``error``, the seed's strings).
The paired and single-end-fallback variants are not new statuses: a *paired* response is a task
response with ``paired_task`` set, and a *fallback* is ``task_completed`` whose ``result`` carries
``mode: "single_end_fallback"``. ``list_tasks`` answers ``{tasks, orphans}`` without a ``status``
(seed 003), so the response union tells it apart by shape.

``message`` and ``investigation_context`` are optional because seed 002's completed example and the
seeds' inline error examples omit them; ``task_id`` and ``state`` are always required on task
responses (the orchestrator creates and saves a task before it can report on it).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, TypeAdapter

from netghost.contracts.base import WireModel
from netghost.contracts.meta import ToolResultMeta
from netghost.contracts.orphans import Orphan
from netghost.contracts.task import CleanupStatus, DenialAction, TaskRecord, TaskState

__all__ = [
    "CaptureResult",
    "ListTasksResponse",
    "OrchestratorErrorCode",
    "OrchestratorErrorResponse",
    "OrchestratorResponse",
    "PairedTaskStatus",
    "SingleEndFallbackResult",
    "TaskCancelledResponse",
    "TaskCompletedResponse",
    "TaskFailedResponse",
    "TaskPendingResponse",
    "TaskResponseStatus",
    "TaskTimedOutResponse",
    "parse_orchestrator_response",
]

TaskResponseStatus = Literal[
    "task_pending", "task_completed", "task_failed", "task_cancelled", "task_timed_out", "error"
]

OrchestratorErrorCode = Literal[
    "unknown_task", "unknown_intent", "missing_parameter", "invalid_parameter", "internal_error"
]
"""The first three are the seeds'; ``invalid_parameter`` (e.g. ``duration_seconds`` > 300) is ours,
because the seeds give no code for a parameter that is present but out of range. ``internal_error``
is ours too: ``orchestrate()`` never raises (seed 000), so an unexpected exception becomes this
response, with the exception's type and message, and the task it interrupted is recorded FAILED."""


class CaptureResult(WireModel):
    """File paths a finished task produced (single-end or comparison analysis).

    Beyond the seed's three paths: ``mode`` (``single`` or ``compare``), the SHA-256 of every artifact
    (verified before analysis: the chain of custody the RCA cites) and Azure's ``stopReason``.
    """

    local_pcap_path: str | None = None
    semantic_json_path: str | None = None
    report_path: str | None = None
    mode: Literal["single", "compare"] | None = None
    artifact_hashes: dict[str, str] | None = None
    stop_reason: str | None = None
    instance_pcap_paths: list[str] | None = None
    """A scale-set target: every instance's capture file, by instance id (``local_pcap_path`` is the first)."""
    fleet_report_path: str | None = None
    """A scale-set target: the fleet report ranking the instances (the executive summary points to it too)."""


class SingleEndFallbackResult(WireModel):
    """Result of a paired task whose partner failed: single-end analysis of the surviving capture."""

    mode: Literal["single_end_fallback"]
    report_path: str
    semantic_json_path: str | None = None
    local_pcap_path: str | None = None
    artifact_hashes: dict[str, str] | None = None
    stop_reason: str | None = None
    instance_pcap_paths: list[str] | None = None
    fleet_report_path: str | None = None


class PairedTaskStatus(WireModel):
    """The partner's status, reported alongside a dual-end task.

    ``state`` is how the partner's capture ended (``FAILED``, ``TIMED_OUT``, ``CANCELLED``,
    ``COMPLETED``) even after its cleanup moved it to ``DONE``, as seed 000's fallback example shows;
    ``cleanup_status`` says whether that cleanup ran.
    """

    task_id: str
    state: TaskState
    poll_count: int | None = Field(default=None, ge=0)
    error_detail: str | None = None
    cleanup_status: CleanupStatus | None = None


class _TaskResponse(WireModel):
    """Fields shared by every task response (seed 000 response field table)."""

    task_id: str = Field(min_length=1)
    state: TaskState
    investigation_context: str | None = None
    paired_task: PairedTaskStatus | None = None
    result: CaptureResult | SingleEndFallbackResult | None = None
    cleanup_status: CleanupStatus | None = None
    error_detail: str | None = None
    failure_reason: str | None = None
    denied_action: DenialAction | None = None
    poll_count: int | None = Field(default=None, ge=0)
    max_polls: int | None = Field(default=None, ge=1)
    elapsed_seconds: float | None = Field(default=None, ge=0)
    duration_seconds: float | None = Field(default=None, ge=0)
    message: str = ""
    meta: ToolResultMeta | None = Field(default=None, alias="_meta")


class TaskPendingResponse(_TaskResponse):
    """Still running (or COMPLETED but waiting for its paired partner)."""

    status: Literal["task_pending"]


class TaskCompletedResponse(_TaskResponse):
    """Analysis done; ``result`` holds the artifact paths (or the single-end fallback)."""

    status: Literal["task_completed"]


class TaskFailedResponse(_TaskResponse):
    """Detection, provisioning, download or analysis failed; ``error_detail`` says which."""

    status: Literal["task_failed"]


class TaskCancelledResponse(_TaskResponse):
    """The user denied a HITL step or the Brain cancelled the task."""

    status: Literal["task_cancelled"]


class TaskTimedOutResponse(_TaskResponse):
    """``max_polls`` was reached before Azure reported completion."""

    status: Literal["task_timed_out"]


class OrchestratorErrorResponse(WireModel):
    """A request the orchestrator could not act on; no task state changed."""

    status: Literal["error"]
    error: OrchestratorErrorCode
    message: str = ""
    task_id: str | None = None
    meta: ToolResultMeta | None = Field(default=None, alias="_meta")


class ListTasksResponse(WireModel):
    """``list_tasks``: the latest record of each task of the session, plus start-up orphans."""

    tasks: list[TaskRecord]
    orphans: list[Orphan] = Field(default_factory=list)
    message: str = ""


def _response_tag(value: Any) -> str | None:
    """Route by ``status``; a status-less object with ``tasks`` is the list response."""
    if isinstance(value, Mapping):
        status = value.get("status")
        if status is None and "tasks" in value:
            return "list"
        return status if isinstance(status, str) else None
    if isinstance(value, ListTasksResponse):
        return "list"
    status = getattr(value, "status", None)
    return status if isinstance(status, str) else None


OrchestratorResponse = Annotated[
    Annotated[TaskPendingResponse, Tag("task_pending")]
    | Annotated[TaskCompletedResponse, Tag("task_completed")]
    | Annotated[TaskFailedResponse, Tag("task_failed")]
    | Annotated[TaskCancelledResponse, Tag("task_cancelled")]
    | Annotated[TaskTimedOutResponse, Tag("task_timed_out")]
    | Annotated[OrchestratorErrorResponse, Tag("error")]
    | Annotated[ListTasksResponse, Tag("list")],
    Discriminator(
        _response_tag,
        custom_error_type="invalid_status",
        custom_error_message="status must be one of the seed 000 response statuses",
    ),
]

@functools.cache
def _response_adapter() -> TypeAdapter[OrchestratorResponse]:
    """Built on first use, not at import (each lab shim process imports the contracts and never parses one)."""
    return TypeAdapter(OrchestratorResponse)


def parse_orchestrator_response(data: Mapping[str, Any]) -> OrchestratorResponse:
    """Validate a response dict into the model of its status.

    Args:
        data: The dict ``orchestrate()`` returned.

    Raises:
        pydantic.ValidationError: For an unknown ``status`` (error type ``invalid_status``), a missing
            required field or an unknown field.
    """
    return _response_adapter().validate_python(data)
