"""The model's turn read out of an SDK response: every string cleaned and bounded, every malformed call
kept as a call that carries its problem.

Why a call is kept rather than dropped: the model asked for something, and it must hear why nothing
ran, or it asks again the same way. So a call with no name, a name that is not a function name, ``args``
that are not an object (the gateway dropped them and says so in its repairs), arguments too large or too
deeply nested becomes a :class:`FunctionCall` whose ``error`` says what was wrong; the loop answers it
with that error as the tool result and dispatches nothing. Its name in the history is a placeholder
when the model's own cannot be sent back to the API.

The limits (documented in the agent README, "Malformed replies"):

- :data:`MAX_ARGS_BYTES`: one call's arguments as compact JSON (a command, its reasoning and hypothesis
  updates fit many times over);
- :data:`MAX_ARGS_DEPTH`: nesting of those arguments;
- :data:`MAX_TEXT_CHARS`: the text of one turn (the model's reasoning shown and journaled);
- function names as the Gemini API defines them (a letter or ``_``, then letters, digits, ``_.:-``, at
  most 64), call ids of at most :data:`MAX_ID_CHARS`, thought signatures of at most
  :data:`MAX_SIGNATURE_BYTES`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from google.genai import types

from netghost.agent.brains._protocol import FunctionCall, FunctionResponse, ModelTurn, Part
from netghost.errors import BrainError
from netghost.redact import clean_json, clean_text

__all__ = [
    "INVALID_CALL",
    "MAX_ARGS_BYTES",
    "MAX_ARGS_DEPTH",
    "MAX_ID_CHARS",
    "MAX_SIGNATURE_BYTES",
    "MAX_TEXT_CHARS",
    "from_response",
]

MAX_ARGS_BYTES = 32 * 1024
MAX_ARGS_DEPTH = 16
MAX_TEXT_CHARS = 32 * 1024
MAX_ID_CHARS = 128
MAX_SIGNATURE_BYTES = 256 * 1024
INVALID_CALL = "_invalid_call"
"""The name a malformed call goes back to the API under when its own is missing or not a function name."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")
_ID = re.compile(r"^[\x21-\x7e]{1,128}$")
_CALL_PATH = ("candidates", 0, "content", "parts")


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of a JSON value, counted iteratively (a hostile value must not exhaust the stack)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list | tuple):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))
    return deepest


def _args_problem(args: Any) -> str | None:
    if not isinstance(args, dict):
        return f"the arguments must be a JSON object, not {type(args).__name__}"
    if _depth(args, MAX_ARGS_DEPTH) > MAX_ARGS_DEPTH:
        return f"the arguments are nested more than {MAX_ARGS_DEPTH} levels deep"
    try:
        size = len(json.dumps(args, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
                   .encode("utf-8", "surrogatepass"))
    except ValueError:
        return "the arguments hold a number JSON cannot carry (NaN or Infinity)"
    if size > MAX_ARGS_BYTES:
        return f"the arguments are {size:,} bytes of JSON; the limit is {MAX_ARGS_BYTES:,}"
    return None


def _call_id(raw: Any) -> str | None:
    if raw is None or raw == "":
        return None
    text = str(raw)
    if _ID.match(text):
        return text
    return "invalid-id-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _read_call(fc: types.FunctionCall, dropped: Sequence[str]) -> FunctionCall:
    """A call as the loop gets it; ``dropped`` names the call's fields the gateway could not read."""
    call_id = _call_id(fc.id)
    raw_name = fc.name
    problems: list[str] = []
    if "name" in dropped:
        problems.append("the call's name is not a string")
    elif not raw_name:
        problems.append("the call has no name")
    elif not _NAME.match(raw_name):
        shown = clean_text(raw_name, limit=80)
        problems.append(f"{shown!r} is not a function name (a letter or _, then letters, digits, _.:-, at most 64)")
    name = raw_name if raw_name and not problems else INVALID_CALL  # problems so far are about the name
    if "args" in dropped or "function_call" in dropped:
        problems.append("the arguments must be a JSON object")
    args: Any = fc.args if fc.args is not None else {}
    trouble = _args_problem(args)
    if trouble:
        problems.append(trouble)
    if problems:
        return FunctionCall(name, {}, call_id, error="; ".join(problems))
    return FunctionCall(name, clean_json(args), call_id)


def _signature(raw: bytes | None) -> str | None:
    if not raw or len(raw) > MAX_SIGNATURE_BYTES:
        return None
    return base64.b64encode(raw).decode()


def _dropped_in(index: int, repairs: Sequence[Any]) -> list[str]:
    """The function-call fields of part ``index`` the gateway dropped (``function_call`` for the whole call)."""
    here = (*_CALL_PATH, index, "function_call")
    found = []
    for repair in repairs:
        path = tuple(getattr(repair, "path", ()))
        if path[: len(here)] == here:
            found.append(str(path[len(here)]) if len(path) > len(here) else "function_call")
    return found


def _read_part(part: types.Part, index: int, repairs: Sequence[Any], budget: list[int]) -> Part | None:
    signature = _signature(part.thought_signature)
    dropped = _dropped_in(index, repairs)
    if part.function_call is not None or dropped:
        return Part(call=_read_call(part.function_call or types.FunctionCall(), dropped), signature=signature)
    if part.text is not None and not part.thought:
        if budget[0] <= 0:  # the turn's text is already as long as it may be: the rest was cut
            return None
        text = clean_text(part.text, limit=budget[0])
        budget[0] -= len(text)
        return Part(text=text, signature=signature)
    if part.function_response is not None and part.function_response.name:
        fr = part.function_response
        name = clean_text(fr.name or "", limit=64)
        return Part(response=FunctionResponse(name, clean_json(dict(fr.response or {})), _call_id(fr.id)))
    return None


def _usage(response: types.GenerateContentResponse) -> dict[str, int]:
    meta = response.usage_metadata
    if meta is None:
        return {}
    found = {
        "prompt_tokens": meta.prompt_token_count,
        "output_tokens": meta.candidates_token_count,
        "total_tokens": meta.total_token_count,
    }
    return {k: v for k, v in found.items() if isinstance(v, int) and not isinstance(v, bool) and v >= 0}


def from_response(response: types.GenerateContentResponse) -> ModelTurn:
    """The first candidate as a :class:`ModelTurn`, cleaned and bounded (see the module docstring).

    The gateway has already refused an answer that cannot be used (no candidate, a finish reason other
    than STOP, nothing in it); a response that reaches here without a candidate (the SDK called directly,
    in tests) is still refused.

    Raises:
        BrainError: no candidate (the prompt was blocked, or an empty answer).
    """
    if not response.candidates:
        feedback = response.prompt_feedback
        block = clean_text(str(feedback.block_reason), limit=64) if feedback is not None and feedback.block_reason else ""
        raise BrainError(f"the model returned no candidate{f' (blocked: {block})' if block else ''}",
                         failure="blocked" if block else "no_candidate")
    repairs = getattr(response, "repairs", None) or ()
    candidate = response.candidates[0]
    sdk_parts = candidate.content.parts if candidate.content is not None and candidate.content.parts else []
    budget = [MAX_TEXT_CHARS]
    parts = tuple(p for p in (_read_part(sp, i, repairs, budget) for i, sp in enumerate(sdk_parts)) if p is not None)
    reason = candidate.finish_reason
    reason_text = clean_text(str(reason.value if hasattr(reason, "value") else reason), limit=64) if reason else None
    return ModelTurn(parts=parts, finish_reason=reason_text, usage=_usage(response))
