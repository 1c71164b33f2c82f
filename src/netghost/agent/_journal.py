"""The conversation's own hash-chained log: ``ghost_turns_{sid}.jsonl`` in the audit directory.

The shell's audit and the task registry hold every command and task; what they cannot hold is the
conversation around them: what the user asked, what the model said and called, which tool result went
back with which ``_meta``, and the orchestrator calls. This log holds exactly that, as governance WAL
records (seq, hashes, a MAC per record, a signed checkpoint), so ``--resume`` rebuilds the whole
conversation from the audit trail alone and the RCA can count and pin it like the other two logs.

Record kinds (``kind``): ``user_turn`` (the user's text, redacted), ``model_turn`` (the model's parts,
with the shell's next seq so a crash mid-turn can be matched against the shell's audit),
``shell_call`` (which ``audit_id`` answered a call, and the ``_meta`` added), ``orchestrator_call``
(the request, the response, the shell audit ids it caused, the ``_meta``), ``user_choice``
([C]ontinue / [D]one / extend), ``session_event`` (started, resumed, interrupted, rca_written) and
``chart_drawn`` (the sha256 of a chart page the engine drew for the HTML RCA, with the run's audit id).
Raw command output is never written here: a shell result is rebuilt from the shell's audit record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netghost.agent._untrusted import scrub
from netghost.governance import WalWriter

__all__ = ["Journal", "journal_path", "scrub"]


def journal_path(audit_dir: Path, session_id: str) -> Path:
    """``<audit_dir>/ghost_turns_{session_id}.jsonl``."""
    return audit_dir / f"ghost_turns_{session_id}.jsonl"


class Journal:
    """The one writer of a session's conversation log.

    Raises:
        WalLockedError: another process holds this session (two ``--resume`` of one session).
        WalError: the log does not match its checkpoint (tampered): the caller reports it.
    """

    def __init__(self, audit_dir: Path, session_id: str) -> None:
        self.session_id = session_id
        self.path = journal_path(audit_dir, session_id)
        self._writer = WalWriter(self.path)

    def write(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Append one record of ``kind`` (every string redacted); return it as stored."""
        return self._writer.append({"v": 1, "kind": kind, "session_id": self.session_id, **scrub(fields)})

    @property
    def writer(self) -> WalWriter:
        """The log's writer (the LLM gateway appends its one record per call here)."""
        return self._writer

    def close(self) -> None:
        """Release the log."""
        self._writer.close()
