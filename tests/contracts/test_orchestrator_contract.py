"""Request/response variants the seeds describe without a full example: list with orphans, paired,
fallback, cancelled, timed out; and the request models for every intent."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from netghost.contracts import (
    INTENTS,
    TERMINAL_TASK_STATES,
    AbandonedTaskOrphan,
    CancelTaskRequest,
    CaptureResult,
    CaptureTrafficRequest,
    CheckTaskRequest,
    CleanupTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    NeedsCleanupOrphan,
    OrchestratorErrorResponse,
    SingleEndFallbackResult,
    StaleLocalFileOrphan,
    TaskCancelledResponse,
    TaskCompletedResponse,
    TaskFailedResponse,
    TaskPendingResponse,
    TaskRecord,
    TaskState,
    TaskTimedOutResponse,
    UntrackedAzureOrphan,
    parse_orchestrator_request,
    parse_orchestrator_response,
)

TASK_ID = "ghost_web-vm-01_20250115T143200"


def _task(state: str, **extra: Any) -> dict[str, Any]:
    return {
        "task_id": TASK_ID,
        "session_id": "ghost_20250114_090000",
        "intent": "capture_traffic",
        "state": state,
        "timestamps": {"created": "2025-01-14T09:00:00Z"},
        **extra,
    }


def test_list_tasks_response_with_every_orphan_kind_round_trips() -> None:
    document = {
        "tasks": [_task("WAITING"), _task("COMPLETED", cleanup_status="pending")],
        "orphans": [
            {
                "kind": "abandoned_task",
                "task_id": TASK_ID,
                "session_id": "ghost_20250114_090000",
                "state": "WAITING",
            },
            {"kind": "needs_cleanup", "task_id": TASK_ID, "state": "COMPLETED", "cleanup_status": "pending"},
            {"kind": "untracked_azure", "name": "ghost_db-01_20250101T000000", "resource_group": "prod-rg"},
            {
                "kind": "stale_local_file",
                "path": "/tmp/captures/ghost_x.pcap",
                "artifact": "capture",
                "age_days": 9.5,
            },
        ],
        "message": "4 orphaned resources from previous sessions",
    }
    parsed = parse_orchestrator_response(document)
    assert isinstance(parsed, ListTasksResponse)
    kinds = [type(o) for o in parsed.orphans]
    assert kinds == [AbandonedTaskOrphan, NeedsCleanupOrphan, UntrackedAzureOrphan, StaleLocalFileOrphan]
    assert parsed.model_dump(mode="json", exclude_unset=True) == document
    assert isinstance(parsed.tasks[0], TaskRecord)


def test_orphan_kind_must_be_known() -> None:
    with pytest.raises(ValidationError):
        parse_orchestrator_response({"tasks": [], "orphans": [{"kind": "ghost", "task_id": "x"}]})


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        ("task_pending", TaskPendingResponse),
        ("task_completed", TaskCompletedResponse),
        ("task_cancelled", TaskCancelledResponse),
        ("task_timed_out", TaskTimedOutResponse),
    ],
)
def test_each_status_resolves_to_its_model(status: str, cls: type) -> None:
    document = {"task_id": TASK_ID, "status": status, "state": "CANCELLED", "message": "m"}
    parsed = parse_orchestrator_response(document)
    assert type(parsed) is cls
    assert parsed.model_dump(mode="json", exclude_unset=True) == document


def test_timed_out_response_with_cleanup_and_error_detail() -> None:
    document = {
        "task_id": TASK_ID,
        "status": "task_timed_out",
        "state": "TIMED_OUT",
        "error_detail": "Azure operation did not complete within polling window.",
        "cleanup_status": "completed",
        "poll_count": 20,
        "max_polls": 20,
        "elapsed_seconds": 515.0,
        "message": "Capture timed out. Cloud resources cleaned up.",
    }
    parsed = parse_orchestrator_response(document)
    assert isinstance(parsed, TaskTimedOutResponse)
    assert parsed.model_dump(mode="json", exclude_unset=True) == document


def test_fallback_and_plain_results_are_told_apart_by_mode() -> None:
    fallback = parse_orchestrator_response(
        {
            "task_id": TASK_ID,
            "status": "task_completed",
            "state": "COMPLETED",
            "result": {"mode": "single_end_fallback", "report_path": "/r.md"},
        }
    )
    assert isinstance(fallback, TaskCompletedResponse)
    assert isinstance(fallback.result, SingleEndFallbackResult)
    plain = parse_orchestrator_response(
        {
            "task_id": TASK_ID,
            "status": "task_completed",
            "state": "COMPLETED",
            "result": {"report_path": "/r.md"},
        }
    )
    assert isinstance(plain, TaskCompletedResponse)
    assert not isinstance(plain.result, SingleEndFallbackResult)


def test_error_response_with_task_id_and_loop_meta() -> None:
    document = {
        "status": "error",
        "error": "unknown_task",
        "task_id": "ghost_nope_20250101T000000",
        "message": "No task found with ID: ghost_nope_20250101T000000",
    }
    parsed = parse_orchestrator_response(document)
    assert isinstance(parsed, OrchestratorErrorResponse)
    assert parsed.model_dump(mode="json", exclude_unset=True) == document


def test_internal_error_response_names_the_exception_and_the_task() -> None:
    """``orchestrate()`` never raises: an unexpected exception becomes ``internal_error``."""
    document = {
        "status": "error",
        "error": "internal_error",
        "task_id": TASK_ID,
        "message": "internal error: RuntimeError: boom; task recorded FAILED (internal_error)",
    }
    parsed = parse_orchestrator_response(document)
    assert isinstance(parsed, OrchestratorErrorResponse) and parsed.error == "internal_error"


def test_every_seed_intent_has_a_request_model() -> None:
    examples = {
        "capture_traffic": {
            "intent": "capture_traffic",
            "target": "web-vm-01 to redis-primary",
            "parameters": {"storage_account": "sa", "resource_group": "rg"},
        },
        "check_task": {"intent": "check_task", "task_id": TASK_ID},
        "cancel_task": {"intent": "cancel_task", "task_id": TASK_ID, "reason": "pivot"},
        "list_tasks": {"intent": "list_tasks"},
        "cleanup_task": {"intent": "cleanup_task", "task_id": TASK_ID},
    }
    classes = {
        "capture_traffic": CaptureTrafficRequest,
        "check_task": CheckTaskRequest,
        "cancel_task": CancelTaskRequest,
        "list_tasks": ListTasksRequest,
        "cleanup_task": CleanupTaskRequest,
    }
    assert set(examples) == set(INTENTS)
    for intent, document in examples.items():
        parsed = parse_orchestrator_request(document)
        assert type(parsed) is classes[intent]
        assert parsed.model_dump(mode="json", exclude_unset=True) == document
    capture = parse_orchestrator_request(examples["capture_traffic"])
    assert isinstance(capture, CaptureTrafficRequest)
    assert capture.parameters.duration_seconds == 60  # seed 001 Tool 2 default


@pytest.mark.parametrize("intent", ["check_task", "cancel_task", "cleanup_task"])
def test_task_intents_require_a_task_id(intent: str) -> None:
    with pytest.raises(ValidationError):
        parse_orchestrator_request({"intent": intent})
    with pytest.raises(ValidationError):
        parse_orchestrator_request({"intent": intent, "task_id": ""})


def test_state_machine_values_and_terminal_states() -> None:
    assert {s.value for s in TaskState} == {
        "CREATED", "DETECTING", "APPROVED", "PROVISIONING", "WAITING", "DOWNLOADING", "ANALYZING",
        "COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT", "CLEANING_UP", "DONE", "ABANDONED",
    }  # fmt: skip
    assert {s.value for s in TERMINAL_TASK_STATES} == {"DONE", "CANCELLED", "ABANDONED"}


def test_task_record_version_1_lines_are_still_read() -> None:
    """A registry written before version 2 stays readable: every v2 field is optional."""
    record = TaskRecord.model_validate(dict(_task("WAITING"), v=1))
    assert record.v == 1 and record.location is None and record.plan is None


def test_task_record_full_dump_carries_version_and_defaults() -> None:
    record = TaskRecord.model_validate(_task("CREATED"))
    full = record.model_dump(mode="json")
    assert full["v"] == 2
    assert full["cleanup_plan"] == [] and full["shell_audit_ids"] == [] and full["cleanup_status"] is None
    assert full["artifact_hashes"] == {} and full["create_issued"] is False
    assert TaskRecord.model_validate(full) == record
    with pytest.raises(ValidationError):
        TaskRecord.model_validate(dict(full, v=3))
    with pytest.raises(ValidationError):
        TaskRecord.model_validate(dict(full, intent="check_task"))


# Seed 001 §1 lists, per tool, the response keys the Brain reads; each must exist on the model that
# carries that status (wire names, so aliases count).
_TOOL_RESPONSE_KEYS = {
    "capture_traffic": (
        ["task_pending", "task_completed", "task_failed", "task_cancelled"],
        ["status", "task_id", "state", "message"],
    ),
    "check_task": (
        ["task_pending", "task_completed", "task_failed", "task_timed_out"],
        ["status", "state", "poll_count", "max_polls", "elapsed_seconds", "result", "cleanup_status"],
    ),
    "cancel_task": (
        ["task_cancelled", "task_completed"],
        ["status", "state", "cleanup_status", "error_detail"],
    ),
    "cleanup_task": (["task_completed"], ["status", "state", "cleanup_status"]),
}
_STATUS_MODELS: dict[str, type] = {
    "task_pending": TaskPendingResponse,
    "task_completed": TaskCompletedResponse,
    "task_failed": TaskFailedResponse,
    "task_cancelled": TaskCancelledResponse,
    "task_timed_out": TaskTimedOutResponse,
}


@pytest.mark.parametrize("tool", sorted(_TOOL_RESPONSE_KEYS))
def test_seed_001_tool_response_keys_exist(tool: str) -> None:
    statuses, keys = _TOOL_RESPONSE_KEYS[tool]
    for status in statuses:
        model = _STATUS_MODELS[status]
        wire = {f.alias or name for name, f in model.model_fields.items()}
        assert set(keys) <= wire, f"{tool}/{status} lacks {set(keys) - wire}"
    error_wire = set(OrchestratorErrorResponse.model_fields)
    assert {"status", "error", "message"} <= error_wire


def test_check_task_result_carries_the_three_seed_paths() -> None:
    seed = {"local_pcap_path", "semantic_json_path", "report_path"}
    assert seed <= set(CaptureResult.model_fields)
    assert set(CaptureResult.model_fields) - seed == {"mode", "artifact_hashes", "stop_reason", "instance_pcap_paths", "fleet_report_path"}
