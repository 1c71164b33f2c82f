"""Redact everything a model call would send, before it leaves: text parts, function calls and
responses (walked through dicts, lists and strings), and the system instruction.

Why walk *and* redact the JSON: a string alone loses its label (``{"password": "hunter2"}`` holds the
bare value ``hunter2``), so each string is redacted on its own (multi-line stdout keeps its context)
and then the payload is redacted once more as JSON text, where the redactor's secret-named-field rules
see the keys. The second pass only ever replaces inside string values, so the JSON stays valid; if it
ever did not, the walked payload (already redacted string by string) is kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from netghost.redact import Redaction

if TYPE_CHECKING:
    from google.genai import types

__all__ = ["Redactor", "Tally", "normalise_contents", "redact_config", "redact_contents"]

Redactor = Callable[[str], Redaction]


@dataclass
class Tally:
    """The redactor applied to outgoing pieces, counting what it replaced."""

    redactor: Redactor
    count: int = 0
    kinds: set[str] = field(default_factory=set)

    def text(self, value: str) -> str:
        """One outgoing string, redacted."""
        done = self.redactor(value)
        self.count += done.count
        self.kinds.update(done.kinds)
        return done.text

    def payload(self, value: Any) -> Any:
        """A JSON-like payload (a function response or call), redacted string by string, then as JSON."""
        walked = self._walk(value)
        if not isinstance(walked, dict | list):
            return walked
        try:
            dumped = json.dumps(walked, ensure_ascii=False)
        except (TypeError, ValueError):
            return walked  # not JSON data: the walk is all we can do
        done = self.redactor(dumped)
        if not done.count:
            return walked
        try:
            again = json.loads(done.text)
        except ValueError:
            return walked
        self.count += done.count
        self.kinds.update(done.kinds)
        return again

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {k: self._walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._walk(v) for v in value]
        return value


_REDACTABLE = frozenset({"text", "thought", "thought_signature", "function_call", "function_response",
                         "executable_code", "code_execution_result"})
"""The Part fields the gateway knows how to redact (or that hold no caller text: ``thought`` is a flag,
``thought_signature`` the model's own opaque bytes). Anything else set on a Part (inline or file data,
transcriptions, metadata, fields a later SDK adds) is refused rather than sent as is."""


def _check_redactable(part: types.Part) -> None:
    extra = sorted(name for name in part.model_fields_set
                   if name not in _REDACTABLE and getattr(part, name) is not None)
    if part.function_response is not None and part.function_response.parts:
        extra.append("function_response.parts")
    if part.function_call is not None and part.function_call.partial_args:
        extra.append("function_call.partial_args")
    if extra:
        raise TypeError(f"the LLM gateway cannot redact {', '.join(extra)}: it sends text, function calls and "
                        "responses only")


def _part(part: types.Part, tally: Tally) -> types.Part:
    _check_redactable(part)
    part = part.model_copy(deep=True)
    if part.text is not None:
        part.text = tally.text(part.text)
    if part.function_call is not None and part.function_call.args:
        part.function_call.args = tally.payload(part.function_call.args)
    if part.function_response is not None and part.function_response.response is not None:
        part.function_response.response = tally.payload(part.function_response.response)
    if part.executable_code is not None and part.executable_code.code:
        part.executable_code.code = tally.text(part.executable_code.code)
    if part.code_execution_result is not None and part.code_execution_result.output:
        part.code_execution_result.output = tally.text(part.code_execution_result.output)
    return part


def _content(content: types.Content, tally: Tally) -> types.Content:
    return content.model_copy(update={"parts": [_part(p, tally) for p in content.parts or []]})


def _as_part(item: Any) -> types.Part | None:
    from google.genai import types  # noqa: PLC0415  the SDK loads only when a call is made

    if isinstance(item, str):
        return types.Part(text=item)
    if isinstance(item, types.Part):
        return item
    if isinstance(item, Mapping) and "parts" not in item:
        return types.Part.model_validate(item)
    return None


def _as_content(item: Any) -> types.Content | None:
    from google.genai import types  # noqa: PLC0415

    if isinstance(item, types.Content):
        return item
    if isinstance(item, Mapping) and "parts" in item:
        return types.Content.model_validate(item)
    return None


def normalise_contents(contents: Any) -> list[types.Content]:
    """The SDK's ``contents`` shapes as a list of Content: a string, a Part, a Content, a dict, or a list
    of those (consecutive strings/parts become one user turn, as the SDK groups them).

    Raises:
        TypeError: a piece the gateway cannot inspect (an image, an uploaded file): it would leave unredacted.
    """
    from google.genai import types  # noqa: PLC0415

    items = contents if isinstance(contents, list | tuple) else [contents]
    out: list[types.Content] = []
    loose: list[types.Part] = []
    for item in items:
        content = _as_content(item)
        part = None if content is not None else _as_part(item)
        if content is None and part is None:
            raise TypeError(f"the LLM gateway sends text, function calls and responses only, not {type(item).__name__}")
        if part is not None:
            loose.append(part)
            continue
        if loose:
            out.append(types.Content(role="user", parts=loose))
            loose = []
        assert content is not None
        out.append(content)
    if loose:
        out.append(types.Content(role="user", parts=loose))
    return out


def redact_contents(contents: Any, tally: Tally) -> list[types.Content]:
    """``contents`` (any shape the SDK takes) normalised and redacted; the caller's objects are not changed."""
    return [_content(c, tally) for c in normalise_contents(contents)]


def _instruction(value: Any, tally: Tally) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        return tally.text(value)
    contents = normalise_contents(value)
    redacted = [_content(c, tally) for c in contents]
    return redacted[0] if len(redacted) == 1 else [p for c in redacted for p in c.parts or []]


def redact_config(config: Any, tally: Tally) -> types.GenerateContentConfig | None:
    """The generation config with its system instruction redacted (tools and settings are ours, sent as is)."""
    from google.genai import types  # noqa: PLC0415

    if config is None:
        return None
    cfg = config if isinstance(config, types.GenerateContentConfig) else types.GenerateContentConfig.model_validate(config)
    if cfg.system_instruction is None:
        return cfg
    return cfg.model_copy(update={"system_instruction": _instruction(cfg.system_instruction, tally)})
