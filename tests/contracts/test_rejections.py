"""Invalid variants of the seeds' examples are rejected with the error a caller can act on."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from netghost import contracts

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden"
EXAMPLES: list[dict[str, Any]] = json.loads((GOLDEN_DIR / "index.json").read_text(encoding="utf-8"))[
    "examples"
]


def _golden(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN_DIR / name).read_text(encoding="utf-8"))
    return data


def _error_types(model: str, data: Any) -> set[str]:
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(contracts, model))
    with pytest.raises(ValidationError) as info:
        adapter.validate_python(data)
    return {error["type"] for error in info.value.errors()}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["file"] for e in EXAMPLES])
def test_unknown_top_level_field_is_rejected(example: dict[str, Any]) -> None:
    data = _golden(example["file"])
    data["surprise_field"] = "x"
    assert "extra_forbidden" in _error_types(example["model"], data)


@pytest.mark.parametrize(
    ("file", "path"),
    [
        ("000_task-registry-schema.json", ("timestamps",)),
        ("000_task-registry-schema.json", ("parameters",)),
        ("000_task-registry-schema.json", ("cleanup_plan", 0)),
        ("001_s8_session-state.json", ("hypothesis_log", 1)),
        ("001_s8_session-state.json", ("hypothesis_log", 1, "denial_events", 0)),
        ("001_s8_session-state.json", ("evidence_conflicts", 0)),
        ("000_interface-contract_response-completed.json", ("result",)),
        ("000_dual-end_paired-pending.json", ("paired_task",)),
        ("000_interface-contract_request.json", ("parameters",)),
    ],
)
def test_unknown_nested_field_is_rejected(file: str, path: tuple[str | int, ...]) -> None:
    example = next(e for e in EXAMPLES if e["file"] == file)
    data = _golden(file)
    target: Any = data
    for key in path:
        target = target[key]
    target["surprise_field"] = 1
    assert _error_types(example["model"], data) & {"extra_forbidden", "invalid_status"}


@pytest.mark.parametrize(
    "status", ["pending", "TASK_PENDING", "task_complete", "completed", "task_canceled", "failed", ""]
)
def test_wrong_status_string_is_rejected(status: str) -> None:
    data = _golden("000_interface-contract_response-pending.json")
    data["status"] = status
    assert "invalid_status" in _error_types("OrchestratorResponse", data)


@pytest.mark.parametrize("state", ["waiting", "RUNNING", "TIMEDOUT", "CANCELED", "Done"])
def test_wrong_state_string_is_rejected(state: str) -> None:
    response = _golden("000_interface-contract_response-pending.json")
    response["state"] = state
    assert "enum" in _error_types("OrchestratorResponse", response)
    record = _golden("000_task-registry-schema.json")
    record["state"] = state
    assert "enum" in _error_types("TaskRecord", record)


@pytest.mark.parametrize("intent", ["capture", "CHECK_TASK", "stop_task", "delete_everything", ""])
def test_unknown_intent_is_rejected_by_the_discriminator(intent: str) -> None:
    assert _error_types("OrchestratorRequest", {"intent": intent, "task_id": "t"}) == {"union_tag_invalid"}


def test_missing_intent_is_reported_as_such() -> None:
    assert _error_types("OrchestratorRequest", {"task_id": "t"}) == {"union_tag_not_found"}


def test_capture_without_storage_account_is_a_missing_field() -> None:
    """The orchestrator turns this into ``missing_parameter`` (seed 000 edge cases)."""
    data = _golden("000_interface-contract_request.json")
    del data["parameters"]["storage_account"]
    with pytest.raises(ValidationError) as info:
        contracts.parse_orchestrator_request(data)
    (error,) = info.value.errors()
    assert error["type"] == "missing"
    assert error["loc"] == ("capture_traffic", "parameters", "storage_account")


@pytest.mark.parametrize("duration", [0, -5, 301, 3600])
def test_capture_duration_outside_seed_range_is_rejected(duration: int) -> None:
    data = _golden("000_interface-contract_request.json")
    data["parameters"]["duration_seconds"] = duration
    assert _error_types("OrchestratorRequest", data) & {"greater_than_equal", "less_than_equal"}


def test_task_id_on_capture_and_investigation_context_on_check_are_rejected() -> None:
    """Each intent carries only the fields the seed's intent table gives it."""
    data = _golden("000_interface-contract_request.json")
    data["task_id"] = "ghost_x_20250115T143200"
    assert "extra_forbidden" in _error_types("OrchestratorRequest", data)
    check = {"intent": "check_task", "task_id": "t", "investigation_context": "why"}
    assert "extra_forbidden" in _error_types("OrchestratorRequest", check)


@pytest.mark.parametrize("code", ["not_found", "UNKNOWN_TASK", "unknown-intent"])
def test_unknown_error_code_is_rejected(code: str) -> None:
    data = _golden("000_error-handling_unknown-task.json")
    data["error"] = code
    assert "literal_error" in _error_types("OrchestratorResponse", data)


def test_task_response_without_task_id_is_rejected() -> None:
    """Seed 000 line 852's abbreviated ``{ status, state }`` is not a complete response."""
    data = {"status": "task_cancelled", "state": "CANCELLED"}
    assert _error_types("OrchestratorResponse", data) == {"missing"}


@pytest.mark.parametrize(
    "stamp",
    [
        "2025-01-15 14:32:00Z",
        "2025-01-15T14:32:00",
        "2025-13-15T14:32:00Z",
        "2025-02-30T00:00:00Z",
        "yesterday",
    ],
)
def test_malformed_timestamps_are_rejected(stamp: str) -> None:
    data = _golden("000_task-registry-schema.json")
    data["timestamps"]["approved"] = stamp
    assert _error_types("TaskRecord", data) & {"string_pattern_mismatch", "value_error"}


def test_fallback_result_needs_its_mode_and_report() -> None:
    data = _golden("000_dual-end_single-end-fallback.json")
    bad = copy.deepcopy(data)
    bad["result"]["mode"] = "comparison"
    with pytest.raises(ValidationError):
        contracts.parse_orchestrator_response(bad)
    bad = copy.deepcopy(data)
    del bad["result"]["report_path"]
    with pytest.raises(ValidationError):
        contracts.parse_orchestrator_response(bad)


@pytest.mark.parametrize(
    ("field", "value"),
    [("state", "MAYBE"), ("denial_count", -1), ("turn", "seven")],
)
def test_session_hypothesis_values_are_checked(field: str, value: Any) -> None:
    data = _golden("001_s8_session-state.json")
    if field == "turn":
        data["hypothesis_log"][1]["denial_events"][0]["turn"] = value
    else:
        data["hypothesis_log"][0][field] = value
    with pytest.raises(ValidationError):
        contracts.SessionState.model_validate(data)


def test_session_checksum_is_written_only_under_its_wire_name() -> None:
    data = _golden("001_s8_session-state.json")
    session = contracts.SessionState.model_validate(data)
    assert session.checksum == "a3f1e9d2b7c04581..."
    dumped = session.model_dump(mode="json")
    assert "_checksum" in dumped and "checksum" not in dumped
    both = dict(data, checksum="abc")
    with pytest.raises(ValidationError):
        contracts.SessionState.model_validate(both)
