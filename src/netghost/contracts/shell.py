"""The Safe-Exec Shell's request and response (seed 001 Tool 1 plus ARCHITECTURE.md's fields).

``SafeExecShell.execute({"command", "reasoning"})`` is the single door to process execution for the
Brain and the orchestrator alike, so its result shape is shared by the agent loop (which forwards it to
Gemini), the orchestrator (which reads ``status``/``exit_code``/``output``) and the audit record.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from netghost.contracts.base import WireModel
from netghost.contracts.meta import ToolResultMeta

__all__ = [
    "OutputFormat",
    "OutputMetadata",
    "ShellAction",
    "ShellClassification",
    "ShellEnvironment",
    "ShellErrorCode",
    "ShellRequest",
    "ShellResponse",
    "ShellStatus",
]

ShellStatus = Literal["completed", "denied", "error"]
ShellClassification = Literal["SAFE", "RISKY", "FORBIDDEN"]
ShellAction = Literal[
    "auto_approved", "user_approved", "user_denied", "user_modified", "user_abandoned", "blocked"
]
"""Seed 001 Tool 1 lists the first four; ``user_abandoned`` (fail-closed HITL) comes from seed 001 §9 and
ARCHITECTURE.md, ``blocked`` (FORBIDDEN, never offered to a human) from the lead's API contract."""
ShellEnvironment = Literal["local", "azure"]
ShellErrorCode = Literal[
    "timeout",
    "forbidden_command",
    "not_a_single_command",
    "parse_error",
    "command_not_found",
    "plan_token_mismatch",
    "exec_error",
    "bad_request",
]
OutputFormat = Literal["json", "table", "text"]


class ShellRequest(WireModel):
    """What the Brain (``run_shell_cmd``) and the orchestrator send: one command and why."""

    command: str = Field(description="A single command; no chaining, no sudo, no redirection.")
    reasoning: str = Field(description="Shown to the user during HITL review and written to the audit.")


class OutputMetadata(WireModel):
    """How ``output`` was cut and cleaned, so the Brain knows to narrow a query instead of retrying."""

    truncation_applied: bool
    original_lines: int = Field(ge=0)
    shown_lines: int = Field(ge=0)
    format: OutputFormat
    redactions: int = Field(ge=0)


class ShellResponse(WireModel):
    """The dict ``SafeExecShell.execute`` returns (every key always present).

    ``meta`` (wire name ``_meta``) is never set by the shell; the agent loop adds it before the result
    goes back to Gemini, and validating the augmented result with this same model keeps that step typed.
    """

    status: ShellStatus
    classification: ShellClassification
    action: ShellAction
    output: str
    stderr: str
    exit_code: int | None
    error: ShellErrorCode | None
    audit_id: str = Field(description='"{session_id}_{seq:03d}", e.g. "ghost_20250115_143022_007"')
    tier: int = Field(ge=0, le=3)
    risk_reason: str
    environment: ShellEnvironment
    output_metadata: OutputMetadata
    plan_token: str | None
    denial_reason: str | None
    meta: ToolResultMeta | None = Field(default=None, alias="_meta")
