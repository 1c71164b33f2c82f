"""The task lifecycle: seed 000's transition table as data, and a pure step over TaskRecord.

:data:`ROWS` holds every row of the seed's "State Transition Table" verbatim (from, to, trigger),
followed by the rows this product adds, each saying why (``seed=False``). :data:`TRANSITIONS` is the
table folded into ``from -> allowed targets``. :func:`step` is the only way a record changes state:
it refuses an edge that is not in the table with :class:`TaskTransitionError`, stamps the
transition's timestamp from the ``now`` it is given (never from the wall clock) and returns a new
record; it performs no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from netghost.contracts import IN_FLIGHT_TASK_STATES, TaskRecord, TaskState
from netghost.errors import TaskTransitionError

__all__ = [
    "OUTCOME_STATES",
    "ROWS",
    "TRANSITIONS",
    "TaskTransitionError",
    "Transition",
    "step",
]

S = TaskState




@dataclass(frozen=True)
class Transition:
    """One row: ``seed`` rows are seed 000's table verbatim; the others are ours, with the reason."""

    from_state: TaskState
    to_state: TaskState
    trigger: str
    seed: bool = True


ROWS: tuple[Transition, ...] = (
    Transition(S.CREATED, S.DETECTING, "Task registered"),
    Transition(S.DETECTING, S.DETECTING, "Target type detected, verifying storage"),
    Transition(S.DETECTING, S.APPROVED, "Target type detected and storage verified"),
    Transition(S.DETECTING, S.FAILED, "Detection failed (resource not found)"),
    Transition(S.DETECTING, S.FAILED, "Storage inaccessible (permission denied, account not found)"),
    Transition(S.APPROVED, S.PROVISIONING, "User approves HITL"),
    Transition(S.APPROVED, S.CANCELLED, "User denies HITL"),
    Transition(S.PROVISIONING, S.WAITING, "Azure returns provisioning ID"),
    Transition(S.WAITING, S.WAITING, "Poll returns Running/Creating"),
    Transition(S.WAITING, S.DOWNLOADING, "Poll returns Succeeded/Stopped"),
    Transition(S.WAITING, S.FAILED, "Poll returns Failed"),
    Transition(S.WAITING, S.TIMED_OUT, "Max polls exceeded"),
    Transition(S.DOWNLOADING, S.ANALYZING, "Blob downloaded"),
    Transition(S.DOWNLOADING, S.FAILED, "Download failed (after retry)"),
    Transition(S.ANALYZING, S.COMPLETED, "PCAP Engine finished"),
    Transition(S.ANALYZING, S.FAILED, "PCAP Engine error"),
    Transition(S.COMPLETED, S.CLEANING_UP, "Cleanup initiated"),
    Transition(S.FAILED, S.CLEANING_UP, "Cleanup initiated"),
    Transition(S.TIMED_OUT, S.CLEANING_UP, "Cleanup initiated"),
    Transition(S.CANCELLED, S.DONE, "No cleanup needed"),
    Transition(S.CLEANING_UP, S.DONE, "All cleanup commands executed"),
    # ---- ours ----------------------------------------------------------------------------
    Transition(S.PROVISIONING, S.FAILED,
               "create exited non-zero (NetworkWatcherNotEnabled, quota ...): the diagram's PROVISIONING "
               "-> FAILED, which the table leaves out", seed=False),
    Transition(S.APPROVED, S.FAILED,
               "the plan-token of the record no longer matches (a restart that finds the create never "
               "reached Azure asks the human to approve it again instead)", seed=False),
    Transition(S.DOWNLOADING, S.CANCELLED, "User denies HITL (download): seed 000 Error Handling", seed=False),
    Transition(S.DOWNLOADING, S.COMPLETED,
               "dual-end: download done, analysis deferred until the partner completes (seed 000 "
               "Dual-End rule 3)", seed=False),
    Transition(S.COMPLETED, S.ANALYZING, "dual-end: both ends downloaded, or the partner failed (fallback)",
               seed=False),
    Transition(S.CANCELLED, S.CLEANING_UP,
               "cancel_task after resources exist: seed 000 Cleanup Triggers (cleanup for any resource "
               "already created)", seed=False),
    Transition(S.DONE, S.CLEANING_UP, "a cleanup that was partial (a delete denied) is retried", seed=False),
    *(Transition(s, S.CANCELLED, "cancel_task on an active task", seed=False)
      for s in (S.CREATED, S.DETECTING, S.PROVISIONING, S.WAITING, S.ANALYZING)),
    *(Transition(s, S.FAILED, "the record's plan-token no longer matches its plan: halted", seed=False)
      for s in (S.CREATED, S.PROVISIONING, S.ANALYZING)),
    *(Transition(s, S.FAILED, "an unexpected exception interrupted the request (orchestrate never raises): "
                 "failure_reason internal_error, then the automatic cleanup", seed=False)
      for s in sorted(IN_FLIGHT_TASK_STATES, key=list(TaskState).index)),
    Transition(S.CLEANING_UP, S.DONE, "an unexpected exception interrupted the cleanup: DONE with cleanup "
               "partial, which cleanup_task retries", seed=False),
)

TRANSITIONS: Mapping[TaskState, frozenset[TaskState]] = {
    state: frozenset(r.to_state for r in ROWS if r.from_state == state) for state in TaskState
}

OUTCOME_STATES: frozenset[TaskState] = frozenset({S.COMPLETED, S.FAILED, S.TIMED_OUT, S.CANCELLED})
"""States that end the capture itself (cleanup may follow); ``duration_seconds`` is set on entry."""

_STAMP: Mapping[TaskState, str] = {
    S.APPROVED: "approved",
    S.PROVISIONING: "provisioned",
    S.COMPLETED: "completed",
    S.CLEANING_UP: "cleanup_started",
    S.DONE: "cleanup_completed",
}


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def step(record: TaskRecord, to_state: TaskState, *, now: datetime, **updates: Any) -> TaskRecord:
    """Move ``record`` to ``to_state`` and apply ``updates``; return the new record.

    Args:
        record: the task as it is.
        to_state: the state to enter; the edge must be in :data:`TRANSITIONS`.
        now: the instant of the transition (from the orchestrator's injected clock).
        **updates: other TaskRecord fields to set in the same step.

    Raises:
        TaskTransitionError: the edge is not in the table.
    """
    if to_state not in TRANSITIONS[record.state]:
        raise TaskTransitionError(record.task_id, record.state.value, to_state.value)
    stamps = record.timestamps.model_copy(
        update={_STAMP[to_state]: _iso(now)} if to_state in _STAMP else {}
    )
    fields: dict[str, Any] = {"state": to_state, "timestamps": stamps, **updates}
    if to_state in OUTCOME_STATES and record.duration_seconds is None:
        fields["duration_seconds"] = max(0.0, (now - _parse(record.timestamps.created)).total_seconds())
    return record.model_copy(update=fields)
