"""A task the session's end cancels (Ctrl-C while it polls, an error) reads as cancelled, not as analysed.

Cleanup moves every task to DONE (seed 000: CANCELLED -> CLEANING_UP -> DONE), so the state alone cannot
tell a capture Ctrl-C stopped from one that was analysed. The record keeps ``failure_reason``
``cancelled`` and its ``error_detail`` names the session's end as the cause; the model's ``cancel_task``
cannot claim that cause (its reason is its own text, recorded as the Brain's).
"""

from __future__ import annotations

from netghost.agent._leftovers import state_label
from netghost.orchestrator._responses import outcome_state, status_of

from .conftest import Lab, request

CAUSE = "the session was interrupted (Ctrl-C)"


def test_a_task_cancelled_by_the_session_end_says_so_after_its_cleanup(lab: Lab) -> None:
    orch = lab.orchestrator()
    started = orch.orchestrate(request())
    assert started["state"] in ("PROVISIONING", "WAITING"), started
    answer = orch.cancel_at_session_end(started["task_id"], CAUSE)
    record = orch.rt.registry.get(started["task_id"])
    assert record is not None
    assert (record.state.value, record.cleanup_status) == ("DONE", "completed")  # cleaned up, as any cancellation
    assert record.failure_reason == "cancelled" and record.semantic_json_path is None and record.report_path is None
    assert record.error_detail is not None and CAUSE in record.error_detail and "Brain" not in record.error_detail
    assert status_of(record) == "task_cancelled" and outcome_state(record).value == "CANCELLED"
    assert answer["status"] == "task_cancelled" and CAUSE in answer["message"]
    assert state_label(record.model_dump(mode="json")) == "DONE (cancelled)"
    assert lab.captures() == []  # nothing left running in the cloud


def test_the_models_cancel_cannot_claim_the_session_end(lab: Lab) -> None:
    orch = lab.orchestrator()
    started = orch.orchestrate(request())
    orch.orchestrate({"intent": "cancel_task", "task_id": started["task_id"], "reason": CAUSE})
    record = orch.rt.registry.get(started["task_id"])
    assert record is not None and record.error_detail == f"cancelled by the Brain: {CAUSE}"


def test_session_end_cancel_of_an_ended_or_unknown_task_changes_nothing(lab: Lab) -> None:
    orch = lab.orchestrator()
    failed = orch.orchestrate(request(target="nope-vm"))
    before = orch.rt.registry.get(failed["task_id"])
    again = orch.cancel_at_session_end(failed["task_id"], CAUSE)
    assert "nothing to cancel" in again["message"] and orch.rt.registry.get(failed["task_id"]) == before
    unknown = orch.cancel_at_session_end("ghost_no_such_task", CAUSE)
    assert unknown["status"] == "error" and unknown["error"] == "unknown_task"


def test_a_completed_task_reads_as_done_alone() -> None:
    assert state_label({"state": "DONE", "failure_reason": None}) == "DONE"
    assert state_label({"state": "DONE", "failure_reason": "max_polls_exceeded"}) == "DONE (max_polls_exceeded)"
    assert state_label({"state": "WAITING", "failure_reason": None}) == "WAITING"
