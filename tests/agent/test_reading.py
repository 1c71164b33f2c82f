"""The model's turn read from a response: strings cleaned and bounded, malformed calls kept as calls that
carry their error (and their history round trip), the limits as documented."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from netghost.agent.brains import (
    INVALID_CALL,
    MAX_ARGS_BYTES,
    MAX_ARGS_DEPTH,
    MAX_TEXT_CHARS,
    Message,
    from_response,
    to_contents,
)
from netghost.llm import Repair, RepairedResponse


def _response(*parts: types.Part, repairs: list[Repair] | None = None) -> types.GenerateContentResponse:
    candidate = types.Candidate(content=types.Content(role="model", parts=list(parts)), finish_reason="STOP")
    if repairs is None:
        return types.GenerateContentResponse(candidates=[candidate])
    return RepairedResponse(candidates=[candidate], repairs=repairs)


def _call(name: str | None, args: Any = None, call_id: str | None = None) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))


def test_calls_the_loop_must_refuse_carry_their_error_and_a_sendable_name() -> None:
    deep: Any = "x"
    for _ in range(MAX_ARGS_DEPTH + 1):
        deep = {"d": deep}
    turn = from_response(_response(
        _call(None, {"command": "ls"}),
        _call("run shell cmd", {"command": "ls"}),
        _call("x" * 65, {}),
        _call("run_shell_cmd", {"command": "y" * MAX_ARGS_BYTES}),
        _call("run_shell_cmd", {"deep": deep}),
        _call("run_shell_cmd", {"n": float("nan")}),
        _call("run_shell_cmd", None, "id-1"),
        repairs=[Repair(("candidates", 0, "content", "parts", 6, "function_call", "args"), "dict", "string")]))
    errors = [c.error for c in turn.calls]
    assert all(errors), errors
    assert [c.name for c in turn.calls] == [INVALID_CALL, INVALID_CALL, INVALID_CALL, "run_shell_cmd",
                                            "run_shell_cmd", "run_shell_cmd", "run_shell_cmd"]
    assert all(c.args == {} for c in turn.calls)
    assert "no name" in errors[0] and "not a function name" in errors[1]
    assert f"{MAX_ARGS_BYTES:,}" in errors[3] and f"{MAX_ARGS_DEPTH} levels" in errors[4] and "NaN" in errors[5]
    assert "JSON object" in errors[6] and turn.calls[6].id == "id-1"
    message = turn.message()
    assert Message.from_json(json.loads(json.dumps(message.to_json()))) == message  # the journal keeps the error
    to_contents([Message.user_text("x"), message])


def test_a_well_formed_call_passes_untouched_but_cleaned() -> None:
    turn = from_response(_response(_call("run_shell_cmd", {"command": "az vm list\x00", "reasoning": "r\ud800"},
                                         "c-1")))
    (call,) = turn.calls
    assert call.error is None and call.id == "c-1"
    assert call.args == {"command": "az vm list\ufffd", "reasoning": "r\ufffd"}


def test_text_is_cleaned_and_the_turn_bounded() -> None:
    turn = from_response(_response(types.Part(text="a\ud800" * MAX_TEXT_CHARS), types.Part(text="more"),
                                   types.Part(text="hidden", thought=True)))
    assert len(turn.text) <= MAX_TEXT_CHARS and "\ud800" not in turn.text and "more characters cut" in turn.text
    assert "hidden" not in turn.text and "more" not in turn.text.split("cut]")[-1]


def test_odd_call_ids_and_huge_signatures_do_not_travel() -> None:
    part = _call("check_task", {"task_id": "t"}, "id with spaces\n" + "z" * 500)
    part.thought_signature = b"s" * (300 * 1024)
    (call,) = from_response(_response(part)).calls
    assert call.id is not None and call.id.startswith("invalid-id-") and len(call.id) < 40
    assert from_response(_response(part)).parts[0].signature is None
