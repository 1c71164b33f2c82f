"""What the loop and a brain exchange: a neutral conversation (history in) and one model turn (out).

Why not the SDK's own ``types.Content``: the same loop runs the Gemini brain and the offline playbook
brain, the conversation is rebuilt from the audit trail on ``--resume`` (plain JSON), and tests script
a brain in-process. So the history is small frozen dataclasses that round-trip through JSON
(:meth:`Message.to_json` / :meth:`Message.from_json`); the Gemini brain translates them at its edge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from netghost.errors import BrainError

__all__ = ["Brain", "BrainError", "FunctionCall", "FunctionResponse", "Message", "ModelTurn", "Part"]

Role = Literal["user", "model"]


@dataclass(frozen=True)
class FunctionCall:
    """One tool call the model asked for (``id`` when the API gives one).

    ``error`` is set when the call was malformed (no name, arguments that are not an object or are too
    large, ...): nothing is dispatched, and the error goes back to the model as the call's result.
    """

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class FunctionResponse:
    """The loop's answer to one :class:`FunctionCall` (the tool result, ``_meta`` included)."""

    name: str
    response: dict[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Part:
    """One part of a message: text, a call or a response (exactly one is set).

    ``signature`` keeps the API's opaque thought signature (base64) so that it goes back unchanged.
    """

    text: str | None = None
    call: FunctionCall | None = None
    response: FunctionResponse | None = None
    signature: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (the journal's form)."""
        out: dict[str, Any] = {}
        if self.text is not None:
            out["text"] = self.text
        if self.call is not None:
            out["call"] = {"name": self.call.name, "args": self.call.args, "id": self.call.id}
            if self.call.error is not None:
                out["call"]["error"] = self.call.error
        if self.response is not None:
            out["response"] = {"name": self.response.name, "response": self.response.response,
                               "id": self.response.id}
        if self.signature is not None:
            out["signature"] = self.signature
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Part:
        """Read what :meth:`to_json` wrote."""
        call = data.get("call")
        response = data.get("response")
        return cls(
            text=data.get("text"),
            call=(FunctionCall(call["name"], dict(call.get("args") or {}), call.get("id"), call.get("error"))
                  if call else None),
            response=(FunctionResponse(response["name"], dict(response["response"]), response.get("id"))
                      if response else None),
            signature=data.get("signature"),
        )


@dataclass(frozen=True)
class Message:
    """One turn of the conversation: the user's (text, or the tool results) or the model's."""

    role: Role
    parts: tuple[Part, ...]

    @classmethod
    def user_text(cls, text: str) -> Message:
        """A user message holding one text part."""
        return cls("user", (Part(text=text),))

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (the journal's form)."""
        return {"role": self.role, "parts": [p.to_json() for p in self.parts]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        """Read what :meth:`to_json` wrote."""
        role = data["role"]
        if role not in ("user", "model"):
            raise ValueError(f"unknown role {role!r}")
        return cls(role, tuple(Part.from_json(p) for p in data["parts"]))


@dataclass(frozen=True)
class ModelTurn:
    """What a brain answered: its parts (text and calls, in order), why it stopped, what it cost."""

    parts: tuple[Part, ...]
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """Every text part, joined."""
        return "\n".join(p.text for p in self.parts if p.text).strip()

    @property
    def calls(self) -> tuple[FunctionCall, ...]:
        """Every function call, in the order the model made them."""
        return tuple(p.call for p in self.parts if p.call is not None)

    def message(self) -> Message:
        """The turn as it goes into the history."""
        return Message("model", self.parts)


class Brain(Protocol):
    """Anything that answers a conversation with the next model turn.

    ``next_turn`` gets the whole history (the first message is the user's problem statement) and the
    system prompt; it returns the model's turn or raises :class:`BrainError`.
    """

    name: str
    model: str

    def next_turn(self, history: Sequence[Message], *, system_prompt: str) -> ModelTurn:
        """The model's next turn for ``history``."""
        ...
