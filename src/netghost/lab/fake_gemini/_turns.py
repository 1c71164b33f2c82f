"""A scripted model turn and the wire bodies the fake server answers with.

A turn is what the model says next: some text, one or more function calls, or an HTTP error on
demand. Scripts are written either as :class:`FakeTurn` objects or as plain dicts (the JSON script
of ``python -m netghost.lab.fake_gemini``), so :func:`as_turn` accepts both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["STATUS_NAMES", "FakeCall", "FakeTurn", "as_turn", "error_body", "response_body"]

STATUS_NAMES: Mapping[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""HTTP status -> the google.rpc status name the Gemini API puts beside it."""

_TURN_KEYS = frozenset({"text", "calls", "call", "error", "message", "retry_after", "prompt_tokens",
                        "candidates_tokens", "finish_reason"})


@dataclass(frozen=True)
class FakeCall:
    """One function call the model makes: the declared function's name and its arguments."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FakeTurn:
    """One scripted answer: text and/or function calls, or an HTTP error (``error`` = its status).

    Token counts default to a deterministic estimate (a quarter of the characters) so tests can check
    that usage is passed on without scripting it.
    """

    text: str | None = None
    calls: tuple[FakeCall, ...] = ()
    error: int | None = None
    message: str | None = None
    retry_after: float | None = None
    prompt_tokens: int | None = None
    candidates_tokens: int | None = None
    finish_reason: str = "STOP"

    def __post_init__(self) -> None:
        if self.error is None and self.text is None and not self.calls:
            raise ValueError("a fake turn needs text, calls or an error")
        if self.error is not None and not 400 <= self.error <= 599:
            raise ValueError(f"a fake error must be an HTTP 4xx/5xx status, not {self.error}")

    @classmethod
    def say(cls, text: str, **kw: Any) -> FakeTurn:
        """A text-only turn."""
        return cls(text=text, **kw)

    @classmethod
    def call(cls, name: str, args: Mapping[str, Any] | None = None, /, **kw: Any) -> FakeTurn:
        """A turn with one function call (``FakeTurn.call("run_diagnostic", {"command": "..."})``)."""
        return cls(calls=(FakeCall(name, dict(args or {})),), **kw)

    @classmethod
    def fail(cls, status: int, message: str | None = None, *, retry_after: float | None = None) -> FakeTurn:
        """An HTTP error answer (429 RESOURCE_EXHAUSTED, 500, 503 ...), with an optional retry hint in seconds."""
        return cls(error=status, message=message, retry_after=retry_after)


def _call(raw: Any) -> FakeCall:
    if isinstance(raw, FakeCall):
        return raw
    if isinstance(raw, Mapping) and isinstance(raw.get("name"), str):
        return FakeCall(raw["name"], dict(raw.get("args") or {}))
    raise ValueError(f"a function call is {{'name': ..., 'args': {{...}}}}, not {raw!r}")


def as_turn(raw: FakeTurn | Mapping[str, Any]) -> FakeTurn:
    """A :class:`FakeTurn` from itself or from a script dict.

    Dict keys: ``text``; ``calls`` (a list of ``{"name", "args"}``) or ``call`` (one); ``error`` (an HTTP
    status) with ``message`` and ``retry_after``; ``prompt_tokens``/``candidates_tokens``; ``finish_reason``.

    Raises:
        ValueError: an unknown key or a malformed turn (a script mistake must not pass silently).
    """
    if isinstance(raw, FakeTurn):
        return raw
    if not isinstance(raw, Mapping):
        raise ValueError(f"a fake turn is a FakeTurn or a dict, not {type(raw).__name__}")
    unknown = set(raw) - _TURN_KEYS
    if unknown:
        raise ValueError(f"unknown fake-turn keys {sorted(unknown)}; allowed: {sorted(_TURN_KEYS)}")
    calls = [raw["call"]] if "call" in raw else list(raw.get("calls") or [])
    return FakeTurn(text=raw.get("text"), calls=tuple(_call(c) for c in calls), error=raw.get("error"),
                    message=raw.get("message"), retry_after=raw.get("retry_after"),
                    prompt_tokens=raw.get("prompt_tokens"), candidates_tokens=raw.get("candidates_tokens"),
                    finish_reason=raw.get("finish_reason", "STOP"))


def _parts(turn: FakeTurn) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"text": turn.text}] if turn.text is not None else []
    parts += [{"functionCall": {"name": c.name, "args": dict(c.args)}} for c in turn.calls]
    return parts


def _usage(turn: FakeTurn, request_chars: int, parts: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    prompt = turn.prompt_tokens if turn.prompt_tokens is not None else max(1, request_chars // 4)
    answer = turn.candidates_tokens
    if answer is None:
        answer = max(1, len(json.dumps(list(parts))) // 4)
    return {"promptTokenCount": prompt, "candidatesTokenCount": answer, "totalTokenCount": prompt + answer}


def response_body(turn: FakeTurn, *, request_chars: int, model_version: str, response_id: str,
                  stream: bool = False) -> list[dict[str, Any]]:
    """The GenerateContentResponse JSON for a non-error turn: one body, or one chunk per part when streaming.

    Every body (or the last chunk) carries ``usageMetadata`` and ``modelVersion``, as the API does.
    """
    parts = _parts(turn)
    usage = _usage(turn, request_chars, parts)
    chunks = [[p] for p in parts] if stream else [parts]
    out: list[dict[str, Any]] = []
    for i, chunk in enumerate(chunks):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": chunk}, "index": 0}
        last = i == len(chunks) - 1
        if last:
            candidate["finishReason"] = turn.finish_reason
        body: dict[str, Any] = {"candidates": [candidate], "modelVersion": model_version, "responseId": response_id}
        if last:
            body["usageMetadata"] = usage
        out.append(body)
    return out


def error_body(status: int, message: str, retry_after: float | None = None) -> dict[str, Any]:
    """The API's error JSON (``{"error": {"code", "message", "status"}}``), with a RetryInfo detail
    carrying ``retry_after`` the way the Gemini API tells a client how long to wait after a 429."""
    error: dict[str, Any] = {"code": status, "message": message, "status": STATUS_NAMES.get(status, "UNKNOWN")}
    if retry_after is not None:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                             "retryDelay": f"{retry_after:g}s"}]
    return {"error": error}
