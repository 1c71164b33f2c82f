"""One line of ``shell_audit_{session_id}.jsonl``: the shell's record of a single ``execute()`` call.

:class:`ShellAuditRecord` is the payload the shell hands to ``WalWriter.append`` (the lead's API
contract lists its fields exactly); :class:`StoredShellAuditRecord` is the line as stored, with the
WAL's chain fields. The RCA generator and ``ghost-agent audit verify`` read the stored form.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from netghost.contracts.base import WireModel
from netghost.contracts.chain import ChainFields
from netghost.contracts.shell import (
    Confinement,
    DecidedBy,
    OutputMetadata,
    ShellAction,
    ShellClassification,
    ShellEnvironment,
    ShellErrorCode,
)

__all__ = ["AuditClient", "ProvisionalRejectedRecord", "ShellAuditRecord", "StoredShellAuditRecord"]

_ABSENT_WHEN_NONE = ("client", "decided_by", "confinement")
"""Optional fields written only when set, so older records keep their exact bytes (and hashes)."""


class AuditClient(WireModel):
    """Who asked for the command when it came through a protocol face (the MCP server), not the agent.

    ``name`` and ``version`` are what the client declared when it connected (MCP ``clientInfo``); they
    are claims, not an identity, and are recorded so a reviewer can tell which agent drove each call.
    """

    via: Literal["mcp"]
    name: str
    version: str


class ShellAuditRecord(WireModel):
    """Everything needed to cite a command as evidence (``audit_id``) without re-running it.

    ``command`` is the redacted command the AI asked for; when the human modified it,
    ``modified_command`` holds what actually ran. ``output``/``stderr`` are redacted and truncated
    exactly as the Brain saw them, so the audit never holds a secret the Brain could not see.
    """

    v: Literal[1]
    kind: Literal["shell_command"]
    audit_id: str
    session_id: str
    command: str
    reasoning: str
    classification: ShellClassification
    tier: int = Field(ge=0, le=3)
    risk_reason: str
    environment: ShellEnvironment
    action: ShellAction
    status: Literal["completed", "denied", "error"]
    exit_code: int | None
    error: ShellErrorCode | None
    output: str
    stderr: str
    output_metadata: OutputMetadata
    denial_reason: str | None
    modified_command: str | None
    plan_token: str | None
    policy_hash: str | None
    policy_rule: str | None
    duration_ms: float = Field(ge=0)
    client: AuditClient | None = None
    """Set only for calls that came through the MCP server; absent (not null) otherwise, so records
    written before this field existed and records of the agent's own calls keep their exact bytes."""
    decided_by: DecidedBy | None = None
    """Who decided (a human at the terminal, ``--yes``, an MCP client's elicitation, a policy). Every record
    the shell writes now carries it; absent only in records written before it existed."""
    confinement: Confinement | None = None
    """A sealed lab's verdict on the command (simulated or not); absent outside a sealed lab."""

    @model_serializer(mode="wrap")
    def _drop_absent_optionals(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in _ABSENT_WHEN_NONE:
            if key in data and data[key] is None:
                del data[key]
        return data


class ProvisionalRejectedRecord(WireModel):
    """A provisional ("outcome unknown") record found beside the shell's audit file that was refused.

    The shell notes each call in ``<audit file>.inflight`` before its process starts and appends that
    note after a crash. A note that is forged, altered, replayed from another session or position, or
    unsealed is not appended; this record takes its place in the chain, saying why. It holds nothing
    the file claimed (that text is hostile): the file itself is kept aside under ``file``, identified by
    its hash.
    """

    v: Literal[1]
    kind: Literal["provisional_rejected"]
    audit_id: str
    session_id: str
    status: Literal["error"] = "error"
    error: Literal["provisional_rejected"] = "provisional_rejected"
    """``status``/``error`` as a shell record spells a failure, so readers that list the shell's records
    (the RCA's evidence table) show this one as what it is rather than as a blank row."""
    reason: str
    file: str | None = Field(description="where the refused file was moved aside (None: it could not be)")
    file_sha256: str | None
    file_bytes: int = Field(ge=0)


class StoredShellAuditRecord(ShellAuditRecord, ChainFields):
    """A shell audit line as the WAL stores it (payload + ``seq``/``ts``/``prev_sha256``/``sha256``)."""
