"""Rebuild the conversation from the audit trail alone (``--resume``, seed 003 §6).

The journal (``ghost_turns_{sid}.jsonl``) gives the order: the user's turns, the model's turns, and which
tool result answered which call. A shell result is rebuilt from the shell's own audit record (the journal
holds only its ``audit_id``); an orchestrator result is in the journal. A turn the process died in has
calls without results: a ``run_shell_cmd`` whose command appears in the shell audit after the turn began
gets that record (it ran, or its outcome is unknown: the shell's in-flight record says so); any other
gets an ``interrupted`` result, so the model decides again with the facts. The shell's in-flight record
is read from ``<audit>.inflight`` when the shell has not appended it yet (it does so when it next opens
the session, which is after the rebuild): a command killed while it ran is never called "not run". Only
an authentic one is read (sealed with the audit key, for this session and the log's next record): a
forged or replayed file never reaches the model (the shell then refuses it and says so).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netghost.agent.brains import FunctionCall, FunctionResponse, Message, Part
from netghost.governance import pending_record, read_wal
from netghost.orchestrator import budget_message

__all__ = ["RESPONSE_FIELDS", "Rebuilt", "rebuild", "response_from_record", "shell_records"]

RESPONSE_FIELDS = ("status", "classification", "action", "output", "stderr", "exit_code", "error", "audit_id",
                   "tier", "risk_reason", "environment", "output_metadata", "plan_token", "denial_reason",
                   "decided_by")
INTERRUPTED = {"status": "error", "error": "interrupted",
               "message": "The session stopped before this call ran. Issue it again if it is still needed."}


def response_from_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The ``shell.execute()`` response a stored shell audit record stands for."""
    return {k: record.get(k) for k in RESPONSE_FIELDS}


@dataclass
class Rebuilt:
    """The conversation, and how the session had ended (if it had)."""

    history: list[Message] = field(default_factory=list)
    completion: dict[str, Any] | None = None
    done: bool = False
    interrupted_calls: list[str] = field(default_factory=list)


class _Builder:
    def __init__(self, shell: list[dict[str, Any]]) -> None:
        self.shell = shell
        self.by_id = {str(r.get("audit_id")): r for r in shell}
        self.out = Rebuilt()
        self.calls: tuple[FunctionCall, ...] = ()
        self.answers: dict[int, FunctionResponse] = {}
        self.after: str | None = None

    def flush(self) -> None:
        if not self.calls:
            return
        parts: list[Part] = []
        used: set[str] = set()
        for index, call in enumerate(self.calls):
            if call.name == "complete_investigation" and index not in self.answers:
                continue
            answer = self.answers.get(index) or self._recover(call, used)
            parts.append(Part(response=answer))
        if parts:
            self.out.history.append(Message("user", tuple(parts)))
        self.calls, self.answers = (), {}

    def _recover(self, call: FunctionCall, used: set[str]) -> FunctionResponse:
        if call.name == "run_shell_cmd":
            start = _seq(self.after)
            for record in self.shell:
                rid = str(record.get("audit_id"))
                if _seq(rid) > start and rid not in used and record.get("command") == call.args.get("command"):
                    used.add(rid)
                    return FunctionResponse(call.name, response_from_record(record), call.id)
        self.out.interrupted_calls.append(call.name)
        return FunctionResponse(call.name, dict(INTERRUPTED), call.id)

    def feed(self, record: Mapping[str, Any]) -> None:
        kind = record.get("kind")
        if kind == "user_turn":
            self.flush()
            self.out.history.append(Message.user_text(str(record.get("text", ""))))
        elif kind == "model_turn":
            self.flush()
            message = Message.from_json(record["message"])
            self.out.history.append(message)
            self.calls = tuple(p.call for p in message.parts if p.call is not None)
            self.after = record.get("after_audit_id")
            self.out.done = False
            done = next((c for c in self.calls if c.name == "complete_investigation" and c.error is None), None)
            self.out.completion = dict(done.args) if done is not None else None
        elif kind in ("shell_call", "orchestrator_call", "invalid_call", "refused_call"):
            self._answer(record)
        elif kind == "budget_refused" and record.get("budget") == "calls_per_turn":
            self._refused(record)
        elif kind == "user_choice":
            self.out.done = record.get("choice") in ("done", "generate")

    def _answer(self, record: Mapping[str, Any]) -> None:
        index = int(record.get("index", 0))
        name = str(record.get("name"))
        if record.get("kind") == "shell_call":
            stored = self.by_id.get(str(record.get("audit_id")))
            response = response_from_record(stored) if stored else {
                "status": "error", "error": "audit_record_missing", "audit_id": record.get("audit_id")}
        else:
            response = dict(record.get("response") or {})
        if record.get("meta"):
            response["_meta"] = dict(record["meta"])
        call_id = record.get("call_id")
        self.answers[index] = FunctionResponse(name, response, str(call_id) if call_id else None)
        if record.get("kind") == "invalid_call" and name == "complete_investigation":
            self.out.completion = None  # its arguments were refused: the investigation did not end there


    def _refused(self, record: Mapping[str, Any]) -> None:
        """The calls of a turn past its calls_per_turn budget: answered with the same refusal as when it ran."""
        limit, count = int(record.get("limit", 0)), int(record.get("count", 0))
        for item in record.get("refused") or []:
            name = str(item.get("name"))
            refusal = {"status": "error", "error": "budget_exceeded", "tool": name, "budget": "calls_per_turn",
                       "limit": limit, "count": count,
                       "message": budget_message("calls_per_turn", limit, count, "This call was not run.")}
            call_id = item.get("call_id")
            self.answers[int(item.get("index", 0))] = FunctionResponse(name, refusal, str(call_id) if call_id else None)


def _seq(audit_id: str | None) -> int:
    try:
        return int(str(audit_id).rsplit("_", 1)[-1])
    except ValueError:
        return 0


def shell_records(shell_audit: Path) -> list[dict[str, Any]]:
    """The shell audit's records, and the authentic in-flight ("outcome unknown") record the shell has
    not appended yet."""
    records = read_wal(shell_audit).records if shell_audit.exists() else []
    session_id = shell_audit.name.removeprefix("shell_audit_").removesuffix(".jsonl")
    pending = pending_record(shell_audit, records, session_id=session_id)
    if pending is not None:
        records.append(pending)
    return records


def rebuild(journal: Path, shell_audit: Path) -> Rebuilt:
    """The conversation as it stood when the session stopped (see the module docstring)."""
    shell = shell_records(shell_audit)
    builder = _Builder(shell)
    for record in read_wal(journal).records if journal.exists() else []:
        builder.feed(record)
    builder.flush()
    return builder.out
