"""The Gemini brain: one ``generate_content`` call per turn through the LLM gateway.

The six declarations and the system prompt go in ``GenerateContentConfig`` with automatic function
calling off (the loop, not the SDK, dispatches every call: the SDK must never run a tool by itself).
The call itself is injected (``generate(model, contents, config)``): in the product it is the LLM
gateway's (redaction of everything sent, bounded retry, one WAL record per call); tests pass the real
SDK pointed at the fake Gemini server. SDK and transport errors become :class:`BrainError`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

from google.genai import errors as genai_errors
from google.genai import types

from netghost.agent._tools import TOOL_DECLARATIONS
from netghost.agent.brains._protocol import (
    BrainError,
    FunctionCall,
    FunctionResponse,
    Message,
    ModelTurn,
    Part,
)
from netghost.errors import NetGhostError

__all__ = ["GeminiBrain", "Generate", "build_config", "from_response", "to_contents"]

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


def _from_sdk_part(part: types.Part) -> Part | None:
    signature = base64.b64encode(part.thought_signature).decode() if part.thought_signature else None
    if part.function_call is not None and part.function_call.name:
        fc = part.function_call
        return Part(call=FunctionCall(fc.name or "", dict(fc.args or {}), fc.id), signature=signature)
    if part.text is not None and not part.thought:
        return Part(text=part.text, signature=signature)
    if part.function_response is not None and part.function_response.name:
        fr = part.function_response
        return Part(response=FunctionResponse(fr.name or "", dict(fr.response or {}), fr.id))
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
    return {k: v for k, v in found.items() if isinstance(v, int)}


def from_response(response: types.GenerateContentResponse) -> ModelTurn:
    """The first candidate as a :class:`ModelTurn`.

    Raises:
        BrainError: no candidate (the prompt was blocked, or an empty answer).
    """
    if not response.candidates:
        feedback = response.prompt_feedback
        why = f" (blocked: {feedback.block_reason})" if feedback is not None and feedback.block_reason else ""
        raise BrainError(f"the model returned no candidate{why}")
    candidate = response.candidates[0]
    sdk_parts = candidate.content.parts if candidate.content is not None and candidate.content.parts else []
    parts = tuple(p for p in (_from_sdk_part(sp) for sp in sdk_parts) if p is not None)
    reason = candidate.finish_reason.value if candidate.finish_reason is not None else None
    return ModelTurn(parts=parts, finish_reason=reason, usage=_usage(response))


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
            raise BrainError(f"Gemini API call failed: {exc.code} {exc.status or ''} {exc.message or ''}".strip(),
                             code=exc.code, status=exc.status) from exc
        except NetGhostError as exc:
            code: Any = getattr(exc, "code", None)
            raise BrainError(f"Gemini API call failed: {exc}", code=code if isinstance(code, int) else None) from exc
        except Exception as exc:
            if not _is_transport_error(exc):
                raise
            raise BrainError(f"Gemini API unreachable: {type(exc).__name__}: {exc}") from exc
        return from_response(response)
