"""What one ``ghost-agent mcp`` server is configured with (no SDK import: the CLI builds it cheaply)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the settings are built without importing the shell or the orchestrator
    from netghost.orchestrator import Budgets
    from netghost.shell import LabConfinement

__all__ = ["DEFAULT_APPROVAL_TIMEOUT_S", "McpSettings"]

DEFAULT_APPROVAL_TIMEOUT_S = 300.0
"""How long the human behind an MCP client has to answer one approval before it is denied."""


@dataclass
class McpSettings:
    """The server's settings; every MCP session gets its own shell and orchestrator built from them.

    Args:
        audit_dir: where the audit WAL, the task registry, captures and reports go.
        path: the shell children's PATH (a lab world puts its simulator first); inherited when None.
        env: variables set for children (the lab's).
        orchestrator: extra CloudOrchestrator settings (the lab's clock and sleeper).
        lab: the lab world's name, shown in the server's instructions.
        approval_timeout_s: how long an elicitation may take before the command is denied.
        session_prefix: the prefix of the session ids (audit ids are ``{session}_{seq:03d}``).
        confinement: the lab's confinement (``--lab``): only what the lab simulates runs without a person's approval.
        budgets: the sessions' budgets (the capture ones; None: the defaults).
    """

    audit_dir: Path
    path: str | None = None
    env: Mapping[str, str] | None = None
    orchestrator: dict[str, Any] = field(default_factory=dict)
    lab: str | None = None
    approval_timeout_s: float = DEFAULT_APPROVAL_TIMEOUT_S
    session_prefix: str = "ghost"
    confinement: LabConfinement | None = None
    budgets: Budgets | None = None
