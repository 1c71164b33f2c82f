"""A raw reply: any status, headers and body bytes, sent as they are (the malformed-reply tests).

Why next to the scripted turns: a turn is what a well-behaved model says; a hostile model, a broken
proxy or a bad deploy answers with anything at all: an HTML error page with status 200, truncated JSON,
``args`` as a string, lone surrogates, a 10 MB body, a finish reason nobody has heard of, an SSE stream
cut in the middle. :class:`RawReply` sends exactly the bytes it is given, so the tests reach the real
google-genai SDK's parsing with every shape of answer, not only the ones our own code would produce.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RawReply", "as_raw", "sse_body"]

_RAW_KEYS = frozenset({"status", "json", "text", "base64", "content_type", "headers", "truncate_at", "chunked",
                       "encoding"})


@dataclass(frozen=True)
class RawReply:
    """One answer sent byte for byte.

    Attributes:
        body: the bytes sent.
        status: the HTTP status (200-599; 200 by default).
        content_type: the ``Content-Type`` header (``None`` sends none).
        headers: more headers.
        truncate_at: announce the whole body's ``Content-Length`` but send only this many bytes, then close
            the connection (a reply cut on the wire).
        chunked: send the body with ``Transfer-Encoding: chunked`` (no length known in advance).
    """

    body: bytes
    status: int = 200
    content_type: str | None = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    truncate_at: int | None = None
    chunked: bool = False

    def __post_init__(self) -> None:
        if not 200 <= self.status <= 599:  # a 1xx would leave the client waiting for the real answer
            raise ValueError(f"a raw reply's HTTP status is 200-599, not {self.status}")
        if self.truncate_at is not None and not 0 <= self.truncate_at <= len(self.body):
            raise ValueError(f"truncate_at {self.truncate_at} is outside the body (0-{len(self.body)})")

    @classmethod
    def json(cls, value: Any, *, status: int = 200, ensure_ascii: bool = False, **kw: Any) -> RawReply:
        """Any JSON value (NaN and Infinity allowed, as Python writes them), UTF-8 encoded.

        Lone surrogates in ``value`` are written as the invalid UTF-8 they would be on a broken wire
        (``ensure_ascii=False``) or as ``\\udXXX`` escapes (``ensure_ascii=True``)."""
        text = json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=True)
        return cls(text.encode("utf-8", "surrogatepass"), status=status, **kw)

    @classmethod
    def text(cls, value: str, *, status: int = 200, encoding: str = "utf-8",
             content_type: str | None = "text/plain", **kw: Any) -> RawReply:
        """A text body in any encoding (lone surrogates pass through as bytes, not as an error)."""
        errors = "surrogatepass" if encoding.replace("-", "").lower().startswith("utf") else "replace"
        return cls(value.encode(encoding, errors), status=status, content_type=content_type, **kw)


def sse_body(chunks: Sequence[Any], *, separator: str = "\r\n\r\n", raw_lines: Sequence[str] = ()) -> bytes:
    """A ``text/event-stream`` body: one ``data:`` event per chunk (a JSON value, or a str sent as is),
    then any ``raw_lines`` (comments, ``event:`` lines, a half event) exactly as given."""
    events = [f"data: {c if isinstance(c, str) else json.dumps(c)}{separator}" for c in chunks]
    return ("".join(events) + "".join(raw_lines)).encode("utf-8", "surrogatepass")


def as_raw(raw: Mapping[str, Any]) -> RawReply:
    """A :class:`RawReply` from a script dict's ``raw`` value.

    Keys: exactly one of ``json`` (any JSON value), ``text`` (with ``encoding``) or ``base64`` (bytes);
    ``status``, ``content_type``, ``headers``, ``truncate_at``, ``chunked``.

    Raises:
        ValueError: an unknown key, or not exactly one body.
    """
    unknown = set(raw) - _RAW_KEYS
    if unknown:
        raise ValueError(f"unknown raw-reply keys {sorted(unknown)}; allowed: {sorted(_RAW_KEYS)}")
    bodies = [k for k in ("json", "text", "base64") if k in raw]
    if len(bodies) != 1:
        raise ValueError(f"a raw reply has exactly one of json, text, base64 (got {bodies or 'none'})")
    common: dict[str, Any] = {"status": int(raw.get("status", 200)), "headers": dict(raw.get("headers") or {}),
                              "truncate_at": raw.get("truncate_at"), "chunked": bool(raw.get("chunked", False))}
    if "content_type" in raw:
        common["content_type"] = raw["content_type"]
    if "json" in raw:
        return RawReply.json(raw["json"], **common)
    if "text" in raw:
        return RawReply.text(str(raw["text"]), encoding=str(raw.get("encoding", "utf-8")), **common)
    return RawReply(base64.b64decode(raw["base64"]), **common)
