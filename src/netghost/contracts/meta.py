"""The ``_meta`` object the agent loop injects into a tool result before the Brain sees it.

Seed 001 §4 (denial detection) and §9 (shell timeout) add these keys to ``result["_meta"]``; the shell
and the orchestrator never write them. Every key is optional because each rule adds only its own.
"""

from __future__ import annotations

from pydantic import Field

from netghost.contracts.base import WireModel

__all__ = ["ToolResultMeta"]


class ToolResultMeta(WireModel):
    """Loop-added guidance for the Brain: why a command was denied and how close a hypothesis is to
    being marked UNVERIFIABLE."""

    denial_reason: str | None = None
    denial_count: int | None = Field(default=None, ge=0)
    pivot_instruction: str | None = None
    approaching_threshold: bool | None = None
    warning: str | None = None
    denial_threshold_reached: bool | None = None
    instruction: str | None = None
    timeout: bool | None = None
