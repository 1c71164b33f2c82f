"""``ghost_session.json`` (seed 001 §8): the crash-resume index of an investigation.

The file holds lightweight state only (hypotheses, denial counters, task ids); evidence lives in the
audit JSONL files. Its ``_checksum`` is what seed 001 §3 step 2 verifies on ``--resume``::

    stored_checksum = session_data.pop("_checksum", None)
    computed = sha256(json.dumps(session_data, sort_keys=True).encode()).hexdigest()

:func:`compute_session_checksum` reproduces that exactly (Python's default separators and
``ensure_ascii``), over the *parsed* file content, so the digest does not depend on how the file was
indented, and :func:`check_session_checksum` reports the comparison as a value.

That digest is unkeyed: whoever edits the file recomputes it, so it only catches accidents. What the
product trusts is the ``_seal`` (format ``v: 2``), an HMAC under the installation's audit key made by
``netghost.governance.seal_session`` and required on load; this module only leaves room for it
(:meth:`SessionState.to_file_dict` takes the sealing function, since the key is governance's).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from netghost.contracts.base import IsoTimestamp, WireModel

__all__ = [
    "CHECKSUM_KEY",
    "SEAL_FIELD",
    "DenialEvent",
    "EvidenceConflict",
    "Hypothesis",
    "HypothesisState",
    "SessionChecksumStatus",
    "SessionState",
    "check_session_checksum",
    "compute_session_checksum",
]

CHECKSUM_KEY = "_checksum"
SEAL_FIELD = "_seal"
SessionChecksumStatus = Literal["ok", "mismatch", "absent"]


class HypothesisState(StrEnum):
    """Seed 001 §6 denial-handling state machine (values are the wire strings)."""

    ACTIVE = "ACTIVE"
    DENIED_ONCE = "DENIED_ONCE"
    DENIED_TWICE = "DENIED_TWICE"
    CONTRADICTED = "CONTRADICTED"
    CONFIRMED = "CONFIRMED"
    REFUTED = "REFUTED"
    UNVERIFIABLE = "UNVERIFIABLE"


class DenialEvent(WireModel):
    """One HITL denial charged to a hypothesis."""

    turn: int = Field(ge=0)
    command: str
    denial_reason: str
    audit_id: str


class Hypothesis(WireModel):
    """One ``hypothesis_log`` entry; seed 003 lists only the first four fields, seed 001 all eight."""

    id: str
    description: str
    state: HypothesisState
    denial_count: int = Field(ge=0)
    created_at: IsoTimestamp | None = None
    resolved_at: IsoTimestamp | None = None
    resolving_audit_id: str | None = None
    denial_events: list[DenialEvent] = Field(default_factory=list)


class EvidenceConflict(WireModel):
    """Two results that contradict each other for one hypothesis, and how the Brain resolved it.

    The seed 001 §4 pseudocode appends a conflict without ``description`` and fills
    ``higher_fidelity_source``/``resolution`` later, so only the first two fields are required.
    """

    hypothesis_id: str
    conflicting_audit_ids: list[str]
    higher_fidelity_source: str | None = None
    resolution: Literal["CONFIRMED", "REFUTED"] | None = None
    description: str | None = None


class SessionState(WireModel):
    """The whole ``ghost_session.json``.

    ``manual_cleanup_pending`` is not in the §8 table but seed 001 §3 step 8 appends to
    ``ghost_session.json["manual_cleanup_pending"]``, so it is part of the file. ``audit_heads`` is
    ours: the signed head of each of the session's hash-chained logs (``shell``, ``orchestrator``,
    ``turns``) as last saved, so the file pins the end of the audit trail it indexes. ``rca_confidence``
    is ours too: the confidence the RCA shows (the model's claim capped by the RCA's claim checks).
    ``checksum`` (wire name ``_checksum``) and ``seal`` (``_seal``) are optional in the model so that the
    seed's own example validates; the loader refuses a file whose seal does not check before it gets here.
    ``v`` is 2 for files written sealed; 1 was the unsealed format.
    """

    v: Literal[1, 2] = 2
    session_id: str = Field(description="ghost_{YYYYMMDD}_{HHMMSS}")
    created_at: IsoTimestamp
    resumed_from: str | None = None
    model: str
    audit_dir: str = "./audit/"
    turn_count: int = Field(default=0, ge=0)
    rca_report_path: str | None = None
    hypothesis_log: list[Hypothesis] = Field(default_factory=list)
    denial_tracker: dict[str, int] = Field(default_factory=dict)
    consecutive_denial_counter: dict[str, int] = Field(default_factory=dict)
    active_hypothesis_ids: list[str] = Field(default_factory=list)
    active_task_ids: list[str] = Field(default_factory=list)
    evidence_conflicts: list[EvidenceConflict] = Field(default_factory=list)
    manual_cleanup_pending: list[str] = Field(default_factory=list)
    is_resume: bool = False
    audit_heads: dict[str, dict[str, Any]] = Field(default_factory=dict)
    rca_confidence: Literal["high", "medium", "low"] | None = Field(
        default=None, description="the confidence the RCA shows: the model's claim capped by the claim checks")
    checksum: str | None = Field(default=None, alias="_checksum")
    seal: str | None = Field(default=None, alias="_seal")

    def to_file_dict(self, seal: Callable[[Mapping[str, Any]], str] | None = None) -> dict[str, Any]:
        """The dict ``save_session()`` writes: every field, ``_seal`` when ``seal`` is given, then ``_checksum``.

        Args:
            seal: makes the ``_seal`` of the content (``netghost.governance.seal_session``); it is
                computed before the checksum, which then covers it, as the seed's recipe expects.
        """
        data = self.model_dump(mode="json", by_alias=True, exclude={"checksum", "seal"})
        if seal is not None:
            data[SEAL_FIELD] = seal(data)
        data[CHECKSUM_KEY] = compute_session_checksum(data)
        return data


def compute_session_checksum(data: Mapping[str, Any]) -> str:
    """SHA-256 hex digest of the session content without ``_checksum``, exactly as seed 001 §3 says.

    Args:
        data: The parsed session file (or a model dump); a ``_checksum`` key in it is ignored.

    Raises:
        TypeError: If ``data`` holds values that are not JSON-serialisable.
    """
    content = {key: value for key, value in data.items() if key != CHECKSUM_KEY}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def check_session_checksum(data: Mapping[str, Any]) -> SessionChecksumStatus:
    """Compare the stored ``_checksum`` with the content, as ``--resume`` does before loading.

    Args:
        data: The parsed session file.

    Returns:
        ``"absent"`` when the file has no (or a null) ``_checksum`` (the seed then skips the check),
        ``"ok"`` when it matches, ``"mismatch"`` otherwise (the caller offers Continue/Fresh/Abort).
    """
    stored = data.get(CHECKSUM_KEY)
    if stored is None:
        return "absent"
    return "ok" if stored == compute_session_checksum(data) else "mismatch"
