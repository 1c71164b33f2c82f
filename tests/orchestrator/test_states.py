"""Seed 000 "State Transition Table": every row is an edge step() takes; anything else is a typed error."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from netghost.contracts import TaskRecord, TaskState, TaskTimestamps
from netghost.orchestrator import ROWS, TRANSITIONS, TaskTransitionError, step

T0 = datetime(2025, 1, 15, 14, 32, tzinfo=UTC)
SEED_ROWS = [r for r in ROWS if r.seed]


def _task(state: TaskState) -> TaskRecord:
    return TaskRecord(task_id="ghost_web-vm-01_20250115T143200", intent="capture_traffic", state=state,
                      timestamps=TaskTimestamps(created="2025-01-15T14:32:00Z"))


def test_the_table_holds_all_21_seed_rows() -> None:
    assert len(SEED_ROWS) == 21
    assert {r.from_state for r in SEED_ROWS} == set(TaskState) - {TaskState.DONE, TaskState.ABANDONED}


@pytest.mark.parametrize("row", SEED_ROWS, ids=lambda r: f"{r.from_state}->{r.to_state}:{r.trigger}")
def test_seed_transition_row(row: object) -> None:
    from_state, to_state = row.from_state, row.to_state  # type: ignore[attr-defined]
    moved = step(_task(from_state), to_state, now=T0 + timedelta(seconds=90))
    assert moved.state == to_state
    if to_state in (TaskState.COMPLETED, TaskState.FAILED, TaskState.TIMED_OUT, TaskState.CANCELLED):
        assert moved.duration_seconds == 90.0


@pytest.mark.parametrize("row", [r for r in ROWS if not r.seed], ids=lambda r: f"{r.from_state}->{r.to_state}")
def test_added_rows_say_why(row: object) -> None:
    assert len(row.trigger) > 20  # type: ignore[attr-defined]
    assert step(_task(row.from_state), row.to_state, now=T0).state == row.to_state  # type: ignore[attr-defined]


@pytest.mark.parametrize(("from_state", "to_state"), [
    (TaskState.CREATED, TaskState.PROVISIONING), (TaskState.WAITING, TaskState.COMPLETED),
    (TaskState.DONE, TaskState.WAITING), (TaskState.APPROVED, TaskState.DOWNLOADING),
    (TaskState.ABANDONED, TaskState.WAITING),
])
def test_illegal_transition_is_a_typed_error(from_state: TaskState, to_state: TaskState) -> None:
    assert to_state not in TRANSITIONS[from_state]
    with pytest.raises(TaskTransitionError) as info:
        step(_task(from_state), to_state, now=T0)
    assert (info.value.from_state, info.value.to_state) == (from_state.value, to_state.value)


def test_step_stamps_times_from_the_given_now_and_is_pure() -> None:
    before = _task(TaskState.DETECTING)
    after = step(before, TaskState.APPROVED, now=T0, target_type="vm")
    assert after.timestamps.approved == "2025-01-15T14:32:00Z" and after.target_type == "vm"
    assert before.state == TaskState.DETECTING and before.timestamps.approved is None
