"""The model's answer, read and judged: what the SDK refuses is read leniently, and an answer that
cannot be used becomes a named failure instead of an exception from deep inside the SDK.

Why here: the gateway is where the wire meets the product. The real google-genai SDK parses a 200
answer with ``json.loads`` and pydantic, and raises whatever they raise (``JSONDecodeError`` for an HTML
page, ``ValidationError`` for ``"args": "az vm list"``, ``AttributeError`` for a finish reason that is a
number). So when the SDK refuses an answer the gateway saw arrive, :func:`read_reply` reads the same
bytes itself: not JSON, or not an object, is a ``malformed_response``; otherwise every value of the wrong
type is dropped where it stands (found by walking the SDK's own models, then by pydantic's error
locations), each drop kept as a :class:`Repair`, and the rest validated by the SDK's own
``GenerateContentResponse``. A caller that cares about a dropped value (the agent: a function call's
``args``) finds it in :attr:`RepairedResponse.repairs` and answers the model with an error, rather than
losing the whole turn.

:func:`judge` then decides whether an answer, parsed either way, can be used at all. The classes (the
``failure`` of the gateway's WAL record and of :class:`~netghost.errors.LlmError`) are listed in
``_failures.FAILURES``.
"""

from __future__ import annotations

import enum
import json
import types as pytypes
import typing
import warnings
from dataclasses import dataclass
from typing import Any

import pydantic
from google.genai import types
from pydantic.alias_generators import to_camel, to_snake

from netghost.llm._failures import RETRIED_FINISH_REASONS
from netghost.redact import clean_text

__all__ = [
    "Repair",
    "RepairedResponse",
    "ReplyProblem",
    "judge",
    "read_reply",
]

_NOT_FROM_WIRE = frozenset({"sdk_http_response", "automatic_function_calling_history", "parsed", "repairs"})
"""Fields the SDK (or :class:`RepairedResponse`) fills itself: a server's value for them is dropped."""
_ROUNDS = 6
_MAX_TEXT = 200


@dataclass(frozen=True)
class Repair:
    """One value dropped from an answer because the SDK's model could not take it.

    Attributes:
        path: where it was, in the answer's JSON: snake_case keys and list indices.
        problem: what the SDK's model expected (pydantic's message).
        got: the JSON type of the value dropped (``string``, ``array``, ``number`` ...).
    """

    path: tuple[str | int, ...]
    problem: str
    got: str

    @property
    def where(self) -> str:
        """``candidates[0].content.parts[0].function_call.args``."""
        out = ""
        for step in self.path:
            out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
        return out

    def record(self) -> dict[str, str]:
        """The repair as the gateway's WAL record keeps it."""
        return {"where": self.where, "problem": self.problem, "got": self.got}


class RepairedResponse(types.GenerateContentResponse):
    """The SDK's response, read by :func:`read_reply`: what was dropped is in :attr:`repairs`."""

    repairs: list[Repair] = pydantic.Field(default_factory=list)


class _Unreadable(Exception):
    """Inside :func:`read_reply`: the answer cannot be read at all (the message says why)."""


@dataclass(frozen=True)
class ReplyProblem:
    """Why a parsed answer cannot be used; ``retry`` when one more request may well succeed."""

    failure: str
    message: str
    retry: bool = False
    finish_reason: str | None = None
    block_reason: str | None = None


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _describe(body: bytes, content_type: str | None) -> str:
    kind = clean_text(content_type.split(";")[0].strip(), limit=60) if content_type else "no content type"
    return f"{kind}, {len(body):,} bytes"


def read_reply(body: bytes, content_type: str | None) -> RepairedResponse | ReplyProblem:
    """Read an answer the SDK refused, dropping every value its models cannot take.

    Returns:
        The repaired response, or a ``malformed_response`` :class:`ReplyProblem` when the body is not JSON,
        not an object, or still unreadable after the repairs.
    """
    try:
        return _read(body, content_type)
    except _Unreadable as exc:
        return ReplyProblem("malformed_response", str(exc))


def _read(body: bytes, content_type: str | None) -> RepairedResponse:
    try:
        data = json.loads(body.decode("utf-8", "replace"))
    except (ValueError, RecursionError) as exc:
        raise _Unreadable(f"the answer is not JSON ({_describe(body, content_type)})") from exc
    if not isinstance(data, dict):
        raise _Unreadable(f"the answer is a JSON {json_type(data)}, not an object "
                                               f"({_describe(body, content_type)})")
    repairs: list[Repair] = []
    for key in [k for k in data if to_snake(k) in _NOT_FROM_WIRE]:
        repairs.append(Repair((to_snake(key),), "set by the SDK, not by a server", json_type(data.pop(key))))
    _fit(types.GenerateContentResponse, data, (), repairs)
    for _ in range(_ROUNDS):
        try:
            with warnings.catch_warnings():  # the SDK warns about enum values it does not know: judged below
                warnings.simplefilter("ignore")
                response = RepairedResponse.model_validate(data)
        except pydantic.ValidationError as exc:
            for error in reversed(exc.errors(include_url=False, include_input=False)):
                _drop_at(data, error["loc"], error["msg"], repairs)
            continue
        except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as exc:
            raise _Unreadable(f"the answer could not be read ({type(exc).__name__})") from exc
        response.repairs = repairs
        return response
    raise _Unreadable(f"the answer could not be read after {len(repairs)} repairs")


def _field(model: type[pydantic.BaseModel], key: str) -> Any:
    fields = model.model_fields
    return fields.get(key) or fields.get(to_snake(key))


def _unwrap(annotation: Any) -> Any:
    """``Optional[X]`` -> ``X`` (other unions are left to pydantic)."""
    if typing.get_origin(annotation) in (typing.Union, pytypes.UnionType):
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel)


def _is_enum(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, enum.Enum)


def _fit(model: type[pydantic.BaseModel], data: dict[str, Any], path: tuple[str | int, ...],
         repairs: list[Repair]) -> None:
    """Walk ``data`` beside ``model``: drop nested objects, lists and enum values of the wrong JSON type.

    Pydantic reports the other type errors by location; these three cannot wait for it: the SDK's enums
    raise ``AttributeError`` (not a validation error) for a non-string, and a wrong container hides every
    error inside it."""
    for key in list(data):
        field = _field(model, key)
        value = data[key]
        if field is None or value is None:
            continue
        here = (*path, to_snake(key))
        annotation = _unwrap(field.annotation)
        if _is_model(annotation):
            if isinstance(value, dict):
                _fit(annotation, value, here, repairs)
            else:
                repairs.append(Repair(here, "should be an object", json_type(data.pop(key))))
        elif _is_enum(annotation):
            if not isinstance(value, str):
                repairs.append(Repair(here, "should be a string", json_type(data.pop(key))))
        elif typing.get_origin(annotation) is list:
            if isinstance(value, list):
                args = typing.get_args(annotation)
                _fit_list(_unwrap(args[0]) if args else None, value, here, repairs)
            else:
                repairs.append(Repair(here, "should be an array", json_type(data.pop(key))))


def _fit_list(item: Any, value: list[Any], here: tuple[str | int, ...], repairs: list[Repair]) -> None:
    for i, element in enumerate(value):
        if _is_model(item) and not isinstance(element, dict):
            repairs.append(Repair((*here, i), "should be an object", json_type(element)))
            value[i] = {}
        elif _is_model(item):
            _fit(item, element, (*here, i), repairs)
        elif _is_enum(item) and not isinstance(element, str):
            repairs.append(Repair((*here, i), "should be a string", json_type(element)))
            value[i] = None


def _drop_at(data: dict[str, Any], loc: tuple[Any, ...], problem: str, repairs: list[Repair]) -> None:
    """Drop the value pydantic located (its location may hold union tags that are not keys: skipped)."""
    node: Any = data
    parents: list[tuple[Any, str | int]] = []
    for step in loc:
        if isinstance(node, dict) and isinstance(step, str):
            key = next((k for k in (step, to_camel(step), to_snake(step)) if k in node), None)
            if key is not None:
                parents.append((node, key))
                node = node[key]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            parents.append((node, step))
            node = node[step]
    if not parents:
        raise _Unreadable(f"the answer could not be read ({clean_text(problem, limit=80)})")
    parent, last = parents[-1]
    path = tuple(to_snake(k) if isinstance(k, str) else k for _, k in parents)
    if isinstance(parent, dict):
        repairs.append(Repair(path, problem, json_type(parent.pop(last))))
    elif parent[last] == {}:  # an empty object did not fit either: the list holds no objects, remove the item
        del parent[last]
    else:
        repairs.append(Repair(path, problem, json_type(parent[last])))
        parent[last] = {}


def _enum_text(value: Any) -> str | None:
    if value is None:
        return None
    text = value.value if isinstance(value, enum.Enum) else value
    return clean_text(str(text), limit=64)


def _part_has_call(path: tuple[str | int, ...], repairs: list[Repair]) -> bool:
    return any(r.path[: len(path) + 1] == (*path, "function_call") for r in repairs)


def judge(response: types.GenerateContentResponse, repairs: list[Repair] | None = None) -> ReplyProblem | None:
    """``None`` when the first candidate can be used: it finished with STOP (or said nothing about it) and
    holds text or a function call (a call whose fields were dropped counts: the caller answers it with an
    error). Otherwise the :class:`ReplyProblem`.
    """
    repairs = repairs or []
    if any(r.path[:3] == ("candidates", 0, "finish_reason") for r in repairs):
        return ReplyProblem("finish_reason", "the model's finish reason could not be read", finish_reason="?")
    candidates = response.candidates or []
    if not candidates:
        feedback = response.prompt_feedback
        block = _enum_text(feedback.block_reason) if feedback is not None else None
        if block:
            why = clean_text(feedback.block_reason_message or "", limit=_MAX_TEXT) if feedback else ""
            return ReplyProblem("blocked", f"the prompt was blocked ({block}){': ' + why if why else ''}",
                                block_reason=block)
        return ReplyProblem("no_candidate", "the answer held no candidate")
    candidate = candidates[0]
    reason = _enum_text(candidate.finish_reason)
    if reason is not None and reason != "STOP":
        said = clean_text(" ".join((candidate.finish_message or "").split()), limit=_MAX_TEXT)
        return ReplyProblem("finish_reason", f"the model stopped with finish reason {reason}{': ' + said if said else ''}",
                            retry=reason in RETRIED_FINISH_REASONS, finish_reason=reason)
    parts = candidate.content.parts if candidate.content is not None and candidate.content.parts else []
    for i, part in enumerate(parts):
        if part.function_call is not None or _part_has_call(("candidates", 0, "content", "parts", i), repairs):
            return None
        if part.text and part.text.strip() and not part.thought:
            return None
    return ReplyProblem("empty_reply", "the model stopped with no text and no function call", retry=True,
                        finish_reason=reason)
