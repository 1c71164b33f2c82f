"""Hypothesis strategies for malformed model replies: whole HTTP answers (status, headers, body bytes).

Every answer is a :class:`~netghost.lab.fake_gemini.RawReply` the fake Gemini server sends byte for byte,
so the real google-genai SDK parses it (or fails to) exactly as it would a broken or hostile server's.
Built for the classes, not for examples: bodies of every kind (JSON of every shape, truncated JSON, HTML,
SSE, raw bytes, other encodings, huge), every JSON type in every field, every finish reason known to the
SDK plus unknown and non-string ones, every candidate/part shape, function-call arguments of every JSON
type and size, hostile unicode (lone surrogates, NUL, controls, bidi marks), HTTP statuses beyond 200,
and cut or chunked transfers.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from google.genai import types
from hypothesis import strategies as st

from netghost.contracts import TOOL_DECLARATIONS
from netghost.lab.fake_gemini import RawReply, sse_body

__all__ = ["json_values", "replies", "response_bodies"]

TOOLS = [d["name"] for d in TOOL_DECLARATIONS]
FINISH_REASONS = list(types.FinishReason.__members__)
BLOCK_REASONS = list(types.BlockedReason.__members__)

_nasty_chars = st.sampled_from(["\x00", "\x1b[2J", "\x1b]0;title\x07", "\u202e", "\u200b", "\ufeff", "\r", "\n",
                                "\x7f", "\x85", "\ud800", "\udfff", "\ud83d", "\U0001f600", "'", '"', "\\", "{", "}",
                                "<script>", "/", "\t"])
_surrogates = st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=4)

hostile_text = st.one_of(
    st.text(max_size=30),
    st.text(st.characters(exclude_categories=()), max_size=20),
    _surrogates,
    st.lists(st.one_of(_nasty_chars, st.text(max_size=5)), max_size=8).map("".join),
    st.builds(lambda s, n: s * n, st.sampled_from(["A", "é", "\ud800", "x\x00"]), st.integers(100, 3_000)),
)
"""Text a hostile model or a broken server might put in any string field."""

_keys = st.one_of(st.text(max_size=8), _surrogates, st.sampled_from(["text", "functionCall", "args", "name",
                                                                      "candidates", "parts", "finishReason"]))
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                     st.floats(allow_nan=True, allow_infinity=True), hostile_text)
json_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                             st.dictionaries(_keys, inner, max_size=3)),
                           max_leaves=6)
"""Any JSON value (NaN and Infinity included, as Python writes them)."""
_junk = st.one_of(_scalars, st.just([]), st.just({}), st.lists(_scalars, max_size=2),
                  st.dictionaries(_keys, _scalars, max_size=2))
"""A value of the wrong type for a typed field (cheaper to draw than a whole JSON tree)."""


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


_args = st.one_of(
    json_values,
    st.fixed_dictionaries({"command": hostile_text, "reasoning": hostile_text}),
    st.fixed_dictionaries({"command": st.just("az vm list -o json"), "reasoning": st.just("List.")}),
    st.fixed_dictionaries({"confidence": st.sampled_from(["low", "high", "x"]), "root_cause_summary": hostile_text}),
    st.builds(lambda n: {"command": "x" * n}, st.integers(30_000, 120_000)),
    st.builds(lambda d: {"deep": _deep(d)}, st.integers(10, 400)),
    st.dictionaries(_keys, json_values, max_size=4),
)
_names = st.one_of(st.sampled_from(TOOLS), hostile_text, _junk, st.just(""))
function_calls = st.one_of(
    st.fixed_dictionaries({"name": st.sampled_from(TOOLS), "args": _args},
                          optional={"id": st.one_of(hostile_text, _junk)}),
    st.fixed_dictionaries({}, optional={"name": _names, "args": _args, "id": _junk,
                                        "partialArgs": _junk, "willContinue": _junk}),
    json_values,
)
_signatures = st.one_of(st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode()), hostile_text, _junk)
parts = st.one_of(
    st.fixed_dictionaries({"text": hostile_text}, optional={"thought": _junk,
                                                            "thoughtSignature": _signatures}),
    st.fixed_dictionaries({"functionCall": function_calls}, optional={"thoughtSignature": _signatures}),
    st.fixed_dictionaries({"text": _junk}),
    st.fixed_dictionaries({"inlineData": _junk}),
    st.fixed_dictionaries({"functionResponse": _junk}),
    st.dictionaries(_keys, _junk, max_size=3),
    json_values,
)
_finish = st.one_of(st.sampled_from(FINISH_REASONS), st.sampled_from([r.lower() for r in FINISH_REASONS]),
                    hostile_text, _junk)
_ratings = st.one_of(
    st.lists(st.fixed_dictionaries({"category": st.one_of(st.sampled_from(list(types.HarmCategory.__members__)),
                                                          _junk),
                                    "probability": st.one_of(st.sampled_from(list(types.HarmProbability.__members__)),
                                                             _junk)},
                                   optional={"blocked": _junk}), max_size=3),
    _junk,
)
candidates = st.one_of(
    st.fixed_dictionaries(
        {"content": st.one_of(st.fixed_dictionaries({"parts": st.lists(parts, max_size=5)},
                                                    optional={"role": st.one_of(st.just("model"), _junk)}),
                              _junk)},
        optional={"finishReason": _finish, "safetyRatings": _ratings, "index": _junk,
                  "finishMessage": st.one_of(hostile_text, _junk), "citationMetadata": _junk,
                  "continuationToken": st.one_of(st.just("YWJj"), _junk), "tokenCount": _junk}),
    json_values,
)
response_bodies = st.fixed_dictionaries(
    {},
    optional={
        "candidates": st.one_of(st.lists(candidates, min_size=1, max_size=2), st.just([]), _junk),
        "promptFeedback": st.one_of(st.fixed_dictionaries({"blockReason": st.one_of(st.sampled_from(BLOCK_REASONS),
                                                                                    _junk)},
                                                          optional={"blockReasonMessage": _junk,
                                                                    "safetyRatings": _ratings}),
                                    _junk),
        "usageMetadata": st.one_of(st.fixed_dictionaries({"promptTokenCount": _junk,
                                                          "candidatesTokenCount": _junk,
                                                          "totalTokenCount": _junk}), _junk),
        "modelVersion": st.one_of(hostile_text, _junk),
        "responseId": _junk,
        "sdkHttpResponse": _junk,
        "automaticFunctionCallingHistory": _junk,
        "repairs": _junk,
        "somethingNew": json_values,
    },
)
"""The JSON of a GenerateContentResponse, every field of any type, plus fields no SDK knows."""

_good = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}


def _bodies(draw: st.DrawFn) -> RawReply:
    kind = draw(st.sampled_from(["response", "response", "response", "response", "json", "truncated", "html",
                                 "bytes", "encoding", "sse", "empty", "huge"]))
    common: dict[str, Any] = {}
    if kind == "response":
        return RawReply.json(draw(response_bodies), ensure_ascii=draw(st.booleans()))
    if kind == "json":
        return RawReply.json(draw(json_values), ensure_ascii=draw(st.booleans()))
    if kind == "truncated":
        text = json.dumps(draw(st.one_of(response_bodies, st.just(_good))))
        return RawReply(text[: draw(st.integers(0, max(0, len(text) - 1)))].encode("utf-8", "surrogatepass"))
    if kind == "html":
        return RawReply.text(f"<html><head><title>{draw(hostile_text)}</title></head><body>Bad gateway</body></html>",
                             content_type=draw(st.sampled_from(["text/html", "application/json", None])))
    if kind == "bytes":
        return RawReply(draw(st.binary(max_size=200)), content_type=draw(st.sampled_from(
            ["application/json", "application/octet-stream", None])))
    if kind == "encoding":
        encoding = draw(st.sampled_from(["utf-16", "utf-32", "latin-1", "cp1252", "utf-8-sig"]))
        text = json.dumps(draw(st.one_of(response_bodies, st.just(_good))), ensure_ascii=False)
        charset = draw(st.sampled_from([f"; charset={encoding}", "", "; charset=utf-8", "; charset=nonsense"]))
        return RawReply(text.encode(encoding, "replace"), content_type="application/json" + charset)
    if kind == "sse":
        chunks = draw(st.lists(st.one_of(response_bodies, st.just(_good), hostile_text), max_size=3))
        return RawReply(sse_body(chunks, raw_lines=draw(st.lists(st.sampled_from(
            [": comment\n", "event: x\n", "data: {\"candi", "\n\n"]), max_size=3))), content_type="text/event-stream")
    if kind == "empty":
        return RawReply(b"", **common)
    size = draw(st.sampled_from([100_000, 300_000]))
    return RawReply.json({"candidates": [{"content": {"parts": [{"text": "A" * size}]}, "finishReason": "STOP"}]})


@st.composite
def replies(draw: st.DrawFn) -> RawReply:
    """One whole HTTP answer: a body (see :func:`_bodies`), mostly status 200, sometimes another status,
    sometimes cut on the wire or sent chunked."""
    reply = _bodies(draw)
    status = draw(st.one_of(st.just(200), st.just(200), st.just(200),
                            st.sampled_from([201, 204, 302, 400, 401, 403, 404, 413, 429, 500, 502, 503, 599])))
    transfer = draw(st.sampled_from(["plain", "plain", "plain", "chunked", "cut"]))
    body = reply.body
    if transfer == "cut" and len(body) > 1:
        return RawReply(body, status=status, content_type=reply.content_type,
                        truncate_at=draw(st.integers(0, len(body) - 1)))
    return RawReply(body, status=status, content_type=reply.content_type, chunked=transfer == "chunked" and bool(body))
