"""Brain → Orchestrator requests (seed 000 "Brain-Orchestrator Interface Contract").

``orchestrate(request)`` dispatches on ``intent``; the union below is discriminated on that field so an
unknown intent fails with a single clear error (the orchestrator answers it with ``unknown_intent``)
and each intent carries exactly the fields the seed's intent table requires, nothing else.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from netghost.contracts.base import WireModel
from netghost.contracts.task import CaptureTrafficParameters

__all__ = [
    "INTENTS",
    "CancelTaskRequest",
    "CaptureTrafficRequest",
    "CheckTaskRequest",
    "CleanupTaskRequest",
    "Intent",
    "ListTasksRequest",
    "OrchestratorRequest",
    "parse_orchestrator_request",
]

Intent = Literal["capture_traffic", "check_task", "cancel_task", "list_tasks", "cleanup_task"]
INTENTS: tuple[str, ...] = ("capture_traffic", "check_task", "cancel_task", "list_tasks", "cleanup_task")


class CaptureTrafficRequest(WireModel):
    """Start a capture on one target, or on two with ``"source_vm to dest_vm"`` (dual-end)."""

    intent: Literal["capture_traffic"]
    target: str = Field(min_length=1)
    parameters: CaptureTrafficParameters
    investigation_context: str | None = None


class CheckTaskRequest(WireModel):
    """Poll a task and advance it as far as it can go within one burst."""

    intent: Literal["check_task"]
    task_id: str = Field(min_length=1)


class CancelTaskRequest(WireModel):
    """Cancel a pending or running task; ``reason`` is seed 001 Tool 4's optional audit note."""

    intent: Literal["cancel_task"]
    task_id: str = Field(min_length=1)
    reason: str | None = None


class ListTasksRequest(WireModel):
    """Return every task of the session plus the orphans found at start-up."""

    intent: Literal["list_tasks"]


class CleanupTaskRequest(WireModel):
    """Run the cleanup plan of a completed, failed or abandoned task."""

    intent: Literal["cleanup_task"]
    task_id: str = Field(min_length=1)


OrchestratorRequest = Annotated[
    CaptureTrafficRequest | CheckTaskRequest | CancelTaskRequest | ListTasksRequest | CleanupTaskRequest,
    Field(discriminator="intent"),
]

@functools.cache
def _request_adapter() -> TypeAdapter[OrchestratorRequest]:
    """Built on first use, not at import (each lab shim process imports the contracts and never parses one)."""
    return TypeAdapter(OrchestratorRequest)


def parse_orchestrator_request(data: Mapping[str, Any]) -> OrchestratorRequest:
    """Validate a request dict into the model of its intent.

    Args:
        data: The dict the Brain (or the agent loop) passed to ``orchestrate()``.

    Raises:
        pydantic.ValidationError: For an unknown or missing ``intent`` (error type
            ``union_tag_invalid`` / ``union_tag_not_found``), a missing required field
            (``missing``) or an unknown field (``extra_forbidden``).
    """
    return _request_adapter().validate_python(data)
