"""The tools an MCP client sees: the seed's declarations, minus what only the agent's loop reads.

``run_shell_cmd``, ``capture_traffic``, ``check_task``, ``cancel_task`` and ``cleanup_task`` are the
agent's own declarations (``netghost.contracts.TOOL_DECLARATIONS``, seed 001 §1), word for word, so a
client's model reads the same restrictions the Gemini brain reads. Two changes, both narrowing: the
hypothesis-reporting arguments are dropped (only the agent's loop keeps a hypothesis log) and unknown
arguments are refused (``additionalProperties: false``, as the contracts' models forbid extra fields).
``complete_investigation`` is not offered: it ends the agent's own loop. ``list_tasks`` is seed 000's
fifth intent, which the agent calls at startup and which an outside agent needs to find its tasks.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from netghost.contracts import (
    HYPOTHESIS_ARGS,
    CancelTaskArgs,
    CaptureTrafficArgs,
    CheckTaskArgs,
    CleanupTaskArgs,
    RunShellCmdArgs,
    tool_declaration,
)

__all__ = ["ARG_MODELS", "MCP_TOOL_NAMES", "tool_schemas"]

ARG_MODELS: dict[str, type[BaseModel]] = {
    "run_shell_cmd": RunShellCmdArgs,
    "capture_traffic": CaptureTrafficArgs,
    "check_task": CheckTaskArgs,
    "cancel_task": CancelTaskArgs,
    "cleanup_task": CleanupTaskArgs,
}
"""Each seed tool and the contract model its arguments are validated against before dispatch."""

MCP_TOOL_NAMES: tuple[str, ...] = (*ARG_MODELS, "list_tasks")

_LIST_TASKS: dict[str, Any] = {
    "name": "list_tasks",
    "description": (
        "List the capture tasks of this session with their state, and the orphaned resources found at\n"
        "start-up (ghost_* captures, blobs and local files left by earlier sessions). Read-only."
    ),
    "parameters_json_schema": {"type": "object", "properties": {}, "required": []},
}


def _strip(decl: dict[str, Any]) -> dict[str, Any]:
    schema = decl["parameters_json_schema"]
    props = {k: v for k, v in schema["properties"].items() if k not in HYPOTHESIS_ARGS}
    return {
        "name": decl["name"],
        "description": decl["description"],
        "input_schema": {"type": "object", "properties": props, "required": list(schema["required"]),
                         "additionalProperties": False},
    }


def tool_schemas() -> list[dict[str, Any]]:
    """``{name, description, input_schema}`` of every tool, in the seed's order, ``list_tasks`` last."""
    return [_strip(tool_declaration(name)) for name in ARG_MODELS] + [_strip(_LIST_TASKS)]
