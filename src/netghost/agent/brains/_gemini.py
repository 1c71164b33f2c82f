"""The Gemini brain: one ``generate_content`` call per turn through the LLM gateway.

The six declarations and the system prompt go in ``GenerateContentConfig`` with automatic function
calling off (the loop, not the SDK, dispatches every call: the SDK must never run a tool by itself).
The call itself is injected (``generate(model, contents, config)``): in the product it is the LLM
gateway's (redaction of everything sent, bounded retry, one WAL record per call); tests pass the real
SDK pointed at the fake Gemini server. SDK and transport errors become :class:`BrainError`, with the
gateway's failure class; the answer is read by ``_reading`` (cleaned, bounded, malformed calls kept as
calls carrying their error).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

from google.genai import errors as genai_errors
from google.genai import types

from netghost.agent._tools import TOOL_DECLARATIONS
from netghost.agent.brains._protocol import BrainError, Message, ModelTurn, Part
from netghost.agent.brains._reading import from_response
from netghost.errors import NetGhostError
from netghost.redact import clean_text

__all__ = ["GeminiBrain", "Generate", "build_config", "to_contents"]

Generate = Callable[[str, list[types.Content], types.GenerateContentConfig], types.GenerateContentResponse]
"""``generate(model, contents, config) -> response``: the gateway's call (or the SDK's, in tests)."""


def build_config(system_prompt: str) -> types.GenerateContentConfig:
    """Tools (the six declarations), the system instruction, automatic function calling off."""
    declarations = [
        types.FunctionDeclaration(
            name=d["name"], description=d["description"], parameters_json_schema=d["parameters_json_schema"]
        )
        for d in TOOL_DECLARATIONS
    ]
    return types.GenerateContentConfig(
        system_instruction=system_prompt,
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def _to_sdk_part(part: Part) -> types.Part:
    signature = base64.b64decode(part.signature) if part.signature else None
    if part.call is not None:
        return types.Part(function_call=types.FunctionCall(name=part.call.name, args=part.call.args,
                                                           id=part.call.id),
                          thought_signature=signature)
    if part.response is not None:
        return types.Part(function_response=types.FunctionResponse(
            name=part.response.name, response=part.response.response, id=part.response.id))
    return types.Part(text=part.text or "", thought_signature=signature)


def to_contents(history: Sequence[Message]) -> list[types.Content]:
    """The neutral history as the SDK's ``contents``."""
    return [types.Content(role=m.role, parts=[_to_sdk_part(p) for p in m.parts]) for m in history]


def _is_transport_error(exc: Exception) -> bool:
    """A connection, timeout or protocol error of the SDK's HTTP stack (httpx or its fork), or the OS's."""
    return isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in {"httpx", "httpx2", "httpcore", "requests"}


class GeminiBrain:
    """The Brain backed by Gemini.

    Args:
        model: the model name (``--model`` / ``GHOST_MODEL``).
        generate: the call that reaches the API (see :data:`Generate`).
    """

    name = "gemini"

    def __init__(self, model: str, generate: Generate) -> None:
        self.model = model
        self._generate = generate
        self._config_for: tuple[str, types.GenerateContentConfig] | None = None

    def _config(self, system_prompt: str) -> types.GenerateContentConfig:
        if self._config_for is None or self._config_for[0] != system_prompt:
            self._config_for = (system_prompt, build_config(system_prompt))
        return self._config_for[1]

    def next_turn(self, history: Sequence[Message], *, system_prompt: str) -> ModelTurn:
        """One ``generate_content`` call.

        Raises:
            BrainError: the API refused or failed (after the gateway's retries), or the answer had no candidate.
        """
        try:
            response = self._generate(self.model, to_contents(history), self._config(system_prompt))
        except genai_errors.APIError as exc:
            text = clean_text(" ".join(f"{exc.code} {exc.status or ''} {exc.message or ''}".split()), limit=300)
            raise BrainError(text, code=exc.code, status=exc.status, failure="api_error") from exc
        except NetGhostError as exc:
            code: Any = getattr(exc, "code", None)
            if code is None:
                code = getattr(exc, "status", None)
            failure = getattr(exc, "failure", None)
            failure = failure if isinstance(failure, str) else None
            raise BrainError(str(exc), code=code if isinstance(code, int) else None, failure=failure) from exc
        except Exception as exc:
            if not _is_transport_error(exc):
                raise
            raise BrainError(f"no answer ({type(exc).__name__}: {clean_text(str(exc), limit=300)})",
                             failure="transport") from exc
        return from_response(response)
