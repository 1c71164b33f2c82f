"""The audit record of one ``execute()`` call, and the request/output hygiene that feeds it.

Why a separate module: :mod:`netghost.shell.shell` orders the steps (classify, gate, run, audit); this
module decides what each step writes into the record, so the record and the response dict derived from it
cannot disagree, and every string in them is redacted, surrogate-free and free of terminal controls.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from netghost.contracts import Confinement, DecidedBy, ShellAuditRecord
from netghost.redact import mask_argv_secrets, redact, redact_argv
from netghost.shell.classify import Classification
from netghost.shell.exec import RunResult
from netghost.shell.truncate import truncate

__all__ = ["BAD_REQUEST", "Outcome", "clean", "read_request"]

_PRECUT_CHARS = 1_000_000
_ANSI_SEQ = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_C0 = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_BAD_FIELD = 2_000
BAD_REQUEST = "bad_request"
"""The wire contract's error code for a malformed request (audited and answered, never raised)."""


def clean(text: str) -> str:
    """``text`` without lone surrogates (U+FFFD instead): they cannot be encoded into the audit file.

    Done before classification, so the classifier judges exactly what is recorded and run (U+FFFD is
    non-ASCII, which the parser rejects in a command).
    """
    return _SURROGATE.sub("\ufffd", text)


def read_request(request: object) -> tuple[str, str, str | None]:
    """(command, reasoning, problem) from a request; ``problem`` is None when it is well formed."""
    if not isinstance(request, Mapping):
        return "", "", f"execute() takes a mapping, got {type(request).__name__}"
    command: object = request.get("command")
    reasoning: object = request.get("reasoning")
    if reasoning is None:
        reasoning = ""
    problem = None
    if not isinstance(command, str):
        problem = f"command must be a string, got {type(command).__name__}"
    elif not isinstance(reasoning, str):
        problem = f"reasoning must be a string, got {type(reasoning).__name__}"
    shown_command = command if isinstance(command, str) else ("" if command is None else repr(command))
    shown_reasoning = reasoning if isinstance(reasoning, str) else repr(reasoning)
    if problem is not None:
        shown_command, shown_reasoning = shown_command[:_MAX_BAD_FIELD], shown_reasoning[:_MAX_BAD_FIELD]
    return clean(shown_command), clean(shown_reasoning), problem


def _strip_controls(text: str) -> str:
    """Drop colour codes and other terminal control characters (after redaction, which reads through them).

    The output goes to a model and may be echoed to the user's terminal; escape sequences there could
    rewrite what the user sees.
    """
    text = _ANSI_SEQ.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _C0.sub("", text)


def _precut(text: str) -> str:
    """Cut huge output to its first and last ~512 KB (at line ends) before redaction.

    Nobody sees the removed middle (truncation would drop it anyway), and redacting megabytes of text
    would cost seconds. JSON larger than this is then truncated as text (head and tail).
    """
    if len(text) <= _PRECUT_CHARS:
        return text
    half = _PRECUT_CHARS // 2
    head = text[:half].rsplit("\n", 1)[0]
    tail = text[-half:].split("\n", 1)[-1]
    cut = text.count("\n") - head.count("\n") - tail.count("\n")
    return f"{head}\n... [{cut} lines not captured: output too large] ...\n{tail}"


def _masked(argv: Sequence[str]) -> list[str]:
    return [clean(a) for a in mask_argv_secrets(redact_argv(argv)[0])]


class Outcome:
    """The record under construction; the response is derived from it so the two cannot disagree."""

    def __init__(
        self, session_id: str, command: str, reasoning: str, seq: int, client: Mapping[str, str] | None = None
    ) -> None:
        self.command = command
        self.reasoning = reasoning
        self.seq = seq
        self.audit_id = f"{session_id}_{seq:03d}"
        self.shown_argv: list[str] = []
        self.fields: dict[str, Any] = {
            "v": 1,
            "kind": "shell_command",
            "audit_id": self.audit_id,
            "session_id": session_id,
            "command": redact(command).text,
            "reasoning": redact(reasoning).text,
            "classification": "FORBIDDEN",
            "tier": 0,
            "risk_reason": "",
            "environment": "local",
            "action": "blocked",
            "status": "error",
            "exit_code": None,
            "error": None,
            "output": "",
            "stderr": "",
            "output_metadata": {
                "truncation_applied": False,
                "original_lines": 0,
                "shown_lines": 0,
                "format": "text",
                "redactions": 0,
            },
            "denial_reason": None,
            "modified_command": None,
            "plan_token": None,
            "policy_hash": None,
            "policy_rule": None,
            "duration_ms": 0.0,
            "decided_by": None,
            "confinement": None,
        }
        if client is not None:  # absent, not null, for the agent's own calls
            self.fields["client"] = dict(client)

    def decided(self, by: DecidedBy) -> None:
        """Record who decided this command's fate (the last decider wins: the lab confinement's refusal overrides)."""
        data = by.model_dump(mode="json")
        for key in ("name", "detail"):  # a callback's text: redacted and surrogate-free like every other field
            if isinstance(data.get(key), str):
                data[key] = redact(clean(data[key])).text or "?"
        self.fields["decided_by"] = data

    def confined(self, verdict: Confinement | None) -> None:
        """Record a sealed lab's verdict on the command (None outside a sealed lab)."""
        self.fields["confinement"] = verdict.model_dump(mode="json") if verdict is not None else None

    def classified(
        self, cls: Classification, *, modified: bool = False, executed: Sequence[str] | None = None
    ) -> None:
        """Record a verdict. ``executed`` is the argv that will really run when the shell resolves the
        command to an installed program (the forensics engine): the human approves it and the audit keeps it."""
        reason = clean(cls.reason if not modified else f"modified by the human: {cls.reason}")
        if not modified and cls.argv:
            # What the human approves and the audit keeps: every argv element, only secret values masked
            # (the redactor's findings, then the values the classifier judged secret wherever they sit).
            self.shown_argv = _masked(cls.argv)
            self.fields["command"] = shlex.join(self.shown_argv)
        if executed is not None:
            self.shown_argv = _masked(executed)
            self.fields["executed"] = shlex.join(self.shown_argv)
        elif modified:
            self.fields.pop("executed", None)
        self.fields.update(
            classification=cls.verdict,
            tier=cls.tier,
            risk_reason=redact(reason).text,
            environment=cls.environment,
            policy_hash=cls.policy_hash,
            policy_rule=cls.policy_rule,
        )

    def block(self, error: str) -> None:
        self.fields.update(status="denied", action="blocked", error=error, plan_token=None)

    def deny(self, action: str, reason: str | None, note: str = "") -> None:
        self.fields.update(
            status="denied", action=action, denial_reason=None, stderr=redact(clean(note)).text
        )
        if reason is not None:
            self.fields["denial_reason"] = redact(clean(reason)).text

    def fail(self, error: str, message: str) -> None:
        self.fields.update(status="error", error=error, stderr=redact(clean(message)).text)

    def served(self, source: str, fields: Mapping[str, Any]) -> None:
        """The answer of record ``source`` served again from the read cache (nothing ran)."""
        self.fields.update({k: json.loads(json.dumps(v)) for k, v in fields.items()})
        self.fields["cached_from"] = source

    def ran(self, result: RunResult, command: str) -> None:
        out = redact(_precut(result.stdout), command=command)
        err = redact(_precut(result.stderr), command=command)
        shown = truncate(_strip_controls(out.text))
        # stderr gets a quarter of the budget: it explains a failure, the answer is in stdout.
        shown_err = truncate(_strip_controls(err.text), max_lines=50, max_tokens=1_000)
        self.fields.update(
            status="completed" if result.error is None else "error",
            exit_code=result.exit_code,
            error=result.error,
            output=shown.text,
            stderr=shown_err.text,
            output_metadata={
                "truncation_applied": shown.truncation_applied or shown_err.truncation_applied,
                "original_lines": len(result.stdout.splitlines()),
                "shown_lines": shown.shown_lines,
                "format": shown.format,
                "redactions": out.count + err.count,
            },
        )

    @staticmethod
    def copy_fields(out: Outcome) -> dict[str, Any]:
        return json.loads(json.dumps(out.fields))  # type: ignore[no-any-return]

    def payload(self) -> dict[str, Any]:
        """The validated record; if validation fails, a minimal error record that always validates."""
        try:
            return ShellAuditRecord.model_validate(self.fields).model_dump(mode="json")
        except ValueError as exc:
            self.fields.update(
                status="error",
                error="exec_error",
                stderr=clean(f"internal error: the audit record did not validate: {exc}")[:_MAX_BAD_FIELD],
                classification="FORBIDDEN"
                if self.fields.get("classification") not in ("SAFE", "RISKY")
                else self.fields["classification"],
            )
            fallback = {**self.fields}
            for key in ("command", "reasoning", "risk_reason", "output", "stderr"):
                fallback[key] = clean(str(fallback.get(key) or ""))
            return ShellAuditRecord.model_validate(fallback).model_dump(mode="json")

    def response(self) -> dict[str, Any]:
        keys = (
            "status", "classification", "action", "output", "stderr", "exit_code", "error", "audit_id",
            "tier", "risk_reason", "environment", "output_metadata", "plan_token", "denial_reason", "decided_by",
            "modified_command",
        )  # fmt: skip
        response = {k: self.fields[k] for k in keys}
        if self.fields.get("cached_from"):
            response["cached_from"] = self.fields["cached_from"]
        return response
