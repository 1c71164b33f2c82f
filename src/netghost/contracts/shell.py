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
    "PERSON_DECIDERS",
    "Confinement",
    "ConfinementKind",
    "DecidedBy",
    "DeciderKind",
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

DeciderKind = Literal["human", "flag", "mcp_elicitation", "policy", "callback"]
"""Who made a decision: a human at the terminal, a command-line flag (``--yes``), the human behind an MCP
client (elicitation), a policy (the SAFE/FORBIDDEN tiers, an organisation rule, the closed gate, the sealed
lab, fail-closed), or an approval callback that did not say who it is."""
PERSON_DECIDERS: frozenset[str] = frozenset({"human", "mcp_elicitation"})
"""The decider kinds that are a person: the only ones that may let an unsimulated program run in a lab."""


class DecidedBy(WireModel):
    """Who decided a command's fate (``action`` says what was decided; this says by whom).

    Why a field of its own: ``action`` keeps the seed's wire values (``user_approved`` ...), which cannot
    tell a human's approval from ``--yes`` or a policy; the audit, the RCA and the screen read this one.

    Attributes:
        kind: see :data:`DeciderKind`.
        name: ``terminal``; the flag (``--yes``); the MCP client's declared name; the policy
            (``safe_tier``, ``forbidden_tier``, ``org_policy``, ``closed_gate``, ``sealed_lab``,
            ``fail_closed``); or the callback's name.
        detail: what qualifies it: the lab world of ``--yes``, the client's version, the organisation
            rule, why the gate failed closed.
    """

    kind: DeciderKind
    name: str = Field(min_length=1, max_length=200)
    detail: str | None = Field(default=None, max_length=2000)

    @property
    def is_person(self) -> bool:
        """A human decided (at the terminal, or behind an MCP client's elicitation)."""
        return self.kind in PERSON_DECIDERS

    def label(self) -> str:
        """Who, in words for the screen and the RCA (``--yes (lab nsg-deny)``, ``the human at the terminal``)."""
        if self.kind == "human":
            return "the human at the terminal" if self.name == "terminal" else f"the human ({self.name})"
        if self.kind == "flag":
            return self.name + (f" ({self.detail})" if self.detail else "")
        if self.kind == "mcp_elicitation":
            return f"MCP client {self.name}{' ' + self.detail if self.detail else ''} (elicitation)"
        if self.kind == "policy":
            return f"policy {self.name}" + (f" ({self.detail})" if self.detail else "")
        return f"approval callback {self.name}"


ConfinementKind = Literal["lab_program", "engine", "session_read", "session_capture_removal", "unsimulated"]
"""What a sealed lab made of a command: one of the lab's own simulated programs, the product's forensics
engine, a read of the session's own outputs, the removal of the session's own capture file, or a program
the lab does not simulate (it would run for real on this machine)."""


class Confinement(WireModel):
    """A sealed lab's verdict on one command, recorded with it (absent outside a sealed lab).

    Attributes:
        scope: the sealed environment (``lab:nsg-deny``).
        simulated: True when the command stays inside the lab; False when it would touch the real machine
            (then only a person may approve it, and a SAFE command is asked too).
        kind: see :data:`ConfinementKind`.
        program: the file the program name resolved to through the shell's PATH (None: not found).
        reason: one line saying why.
    """

    scope: str
    simulated: bool
    kind: ConfinementKind
    program: str | None = None
    reason: str


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
    decided_by: DecidedBy | None = Field(default=None, description="who decided (absent in old records)")
    cached_from: str | None = Field(default=None, description="served from the session's read cache: the audit "
                                    "id of the record that produced this answer (absent when the command ran)")
    modified_command: str | None = Field(default=None, description="what ran instead, when the human modified "
                                                                   "the command (redacted); None otherwise")
    meta: ToolResultMeta | None = Field(default=None, alias="_meta")
