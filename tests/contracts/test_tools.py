"""The six Gemini tool argument shapes (seed 001 §1) and their mapping to shell/orchestrator requests."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from netghost.contracts import (
    TOOL_NAMES,
    CancelTaskArgs,
    CaptureTrafficArgs,
    CheckTaskArgs,
    CleanupTaskArgs,
    CompleteInvestigationArgs,
    RunShellCmdArgs,
    ToolErrorResult,
    parse_orchestrator_request,
)


def test_tool_names_are_the_seed_six_in_declaration_order() -> None:
    assert TOOL_NAMES == (
        "run_shell_cmd",
        "capture_traffic",
        "check_task",
        "cancel_task",
        "cleanup_task",
        "complete_investigation",
    )


def test_run_shell_cmd_requires_command_and_reasoning() -> None:
    args = RunShellCmdArgs.model_validate({"command": "dig example.com", "reasoning": "DNS check"})
    assert args.to_request().model_dump() == {"command": "dig example.com", "reasoning": "DNS check"}
    with pytest.raises(ValidationError):
        RunShellCmdArgs.model_validate({"command": "dig example.com"})


def test_capture_traffic_args_map_like_the_seed_dispatch() -> None:
    args = CaptureTrafficArgs.model_validate(
        {"target": "web-vm-01", "resource_group": "prod-rg", "storage_account": "forensics-sa"}
    )
    request = args.to_request().model_dump(mode="json", exclude_unset=True)
    assert request == {
        "intent": "capture_traffic",
        "target": "web-vm-01",
        "investigation_context": "",
        "parameters": {
            "resource_group": "prod-rg",
            "storage_account": "forensics-sa",
            "duration_seconds": 60,
        },
    }
    assert parse_orchestrator_request(request) == args.to_request()


def test_capture_traffic_auth_mode_travels_only_when_given() -> None:
    args = CaptureTrafficArgs(
        target="a to b",
        resource_group="rg",
        storage_account="sa",
        duration_seconds=300,
        storage_auth_mode="key",
    )
    parameters = args.to_request().model_dump(mode="json", exclude_unset=True)["parameters"]
    assert parameters == {
        "resource_group": "rg",
        "storage_account": "sa",
        "duration_seconds": 300,
        "storage_auth_mode": "key",
    }
    with pytest.raises(ValidationError):
        CaptureTrafficArgs(target="a", resource_group="rg", storage_account="sa", storage_auth_mode="sas")  # type: ignore[arg-type]


@pytest.mark.parametrize("missing", ["target", "resource_group", "storage_account"])
def test_capture_traffic_required_fields(missing: str) -> None:
    data = {"target": "vm", "resource_group": "rg", "storage_account": "sa"}
    del data[missing]
    with pytest.raises(ValidationError):
        CaptureTrafficArgs.model_validate(data)


def test_capture_duration_is_capped_at_300() -> None:
    with pytest.raises(ValidationError):
        CaptureTrafficArgs(target="vm", resource_group="rg", storage_account="sa", duration_seconds=301)


def test_task_tools_map_to_their_intents() -> None:
    assert CheckTaskArgs(task_id="t").to_request().model_dump() == {"intent": "check_task", "task_id": "t"}
    assert CleanupTaskArgs(task_id="t").to_request().model_dump() == {
        "intent": "cleanup_task",
        "task_id": "t",
    }
    assert CancelTaskArgs(task_id="t").to_request().model_dump(exclude_unset=True) == {
        "intent": "cancel_task",
        "task_id": "t",
    }
    assert CancelTaskArgs(task_id="t", reason="pivot").to_request().reason == "pivot"


def test_complete_investigation_args() -> None:
    args = CompleteInvestigationArgs.model_validate(
        {"confidence": "low", "root_cause_summary": "Investigation incomplete due to access restrictions."}
    )
    assert args.unverifiable_hypotheses == [] and args.recommended_actions == []
    with pytest.raises(ValidationError):
        CompleteInvestigationArgs.model_validate({"confidence": "certain", "root_cause_summary": "x"})
    with pytest.raises(ValidationError):
        CompleteInvestigationArgs.model_validate({"confidence": "high"})


def test_unknown_tool_result_shape() -> None:
    assert ToolErrorResult(status="error", error="unknown_tool", tool="rm_rf").model_dump() == {
        "status": "error",
        "error": "unknown_tool",
        "tool": "rm_rf",
    }
    with pytest.raises(ValidationError):
        ToolErrorResult.model_validate({"status": "error", "error": "unknown_intent", "tool": "x"})
