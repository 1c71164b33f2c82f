"""Orphans reported by ``list_tasks`` (seed 000 "Orphan Detection", seed 001 §3 step 6).

The seeds name the buckets the CLI sorts orphans into (``abandoned_tasks``, ``needs_cleanup``,
``partially_cleaned``, ``untracked_azure``, ``stale_local_files``) but never show an orphan object, so
the shapes here are ours: one model per detection layer, tagged by ``kind`` (the singular of the seed's
bucket name). ``partially_cleaned`` is a CLI-side scan of ``tasks`` and has no orphan kind.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from netghost.contracts.base import WireModel
from netghost.contracts.task import CleanupStatus, TaskState

__all__ = [
    "AbandonedTaskOrphan",
    "NeedsCleanupOrphan",
    "Orphan",
    "StaleLocalFileOrphan",
    "UntrackedAzureOrphan",
]


class AbandonedTaskOrphan(WireModel):
    """Layer 1: a task left in a non-terminal state by a previous session."""

    kind: Literal["abandoned_task"]
    task_id: str
    session_id: str | None = None
    state: TaskState
    target: str | None = None


class NeedsCleanupOrphan(WireModel):
    """Layer 1: COMPLETED with cleanup ``pending``, or FAILED/TIMED_OUT never cleaned (``None``)."""

    kind: Literal["needs_cleanup"]
    task_id: str
    session_id: str | None = None
    state: TaskState
    cleanup_status: CleanupStatus | None = None


class UntrackedAzureOrphan(WireModel):
    """Layer 2: a ``ghost_*`` resource on Azure that no registry record knows."""

    kind: Literal["untracked_azure"]
    name: str
    resource_type: Literal["packet_capture", "storage_blob"] = "packet_capture"
    resource_group: str | None = None


class StaleLocalFileOrphan(WireModel):
    """Layer 3: a ``ghost_*`` file in the capture dir older than ``local_artifact_max_age_days``."""

    kind: Literal["stale_local_file"]
    path: str
    artifact: Literal["capture", "analysis"]
    age_days: float = Field(ge=0)


Orphan = Annotated[
    AbandonedTaskOrphan | NeedsCleanupOrphan | UntrackedAzureOrphan | StaleLocalFileOrphan,
    Field(discriminator="kind"),
]
