"""What the gateway does with answers it cannot use, through the real SDK against the fake server: each
class of malformed answer becomes an LlmError with its failure class and one WAL record naming it; a
wrongly typed value is dropped and listed as a repair; the retries are bounded and counted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types

from netghost.errors import LlmError
from netghost.lab.fake_gemini import FakeTurn, RawReply, sse_body
from netghost.llm import FAILURES, MAX_RESPONSE_BYTES, REPLY_FAILURES, RepairedResponse
from tests.llm.conftest import Rig

MODEL = "gemini-2.5-flash"
MakeRig = Callable[..., Rig]
GOOD = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}


def _reply(parts: list[Any], finish: Any = "STOP", **candidate: Any) -> RawReply:
    return RawReply.json({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish,
                                          **candidate}]})


def _fails(r: Rig, failure: str) -> tuple[LlmError, dict[str, Any]]:
    with pytest.raises(LlmError) as info:
        r.gateway.generate(MODEL, "hello", purpose="agent_turn")
    (record,) = r.records()
    assert info.value.failure == failure and record["failure"] == failure and record["outcome"] == "error"
    assert "\n" not in str(info.value)
    return info.value, record


@pytest.mark.parametrize("body", [
    RawReply.text("<html><body>502</body></html>", content_type="text/html"),
    RawReply.text("upstream connect error", content_type=None),
    RawReply(b'{"candidates": [{"content": {"parts": [{"text": "cut'),
    RawReply.json(["candidates", 1]),
    RawReply.json("a string"),
    RawReply.json(7),
    RawReply(sse_body([GOOD, GOOD]), content_type="text/event-stream"),
    RawReply(bytes(range(256)), content_type="application/octet-stream"),
    RawReply(b"\xff\xfe{\x00}\x00", content_type="application/json; charset=utf-16"),
    RawReply(b"[" * 50_000 + b"]" * 50_000),
], ids=["html", "text", "truncated", "array", "string", "number", "sse", "binary", "utf16", "deep-array"])
def test_a_body_that_is_not_a_response_object_is_malformed(rig: MakeRig, body: RawReply) -> None:
    r = rig([body])
    error, record = _fails(r, "malformed_response")
    assert error.status == 200 and record["response_bytes"] == len(body.body) and record["attempts"] == 1
    assert record["response_sha256"].startswith("sha256:")


@pytest.mark.parametrize("finish", [f for f in types.FinishReason.__members__ if f != "STOP"] + ["NEW_REASON", "",
                                                                                                 "stop ", "x" * 500])
def test_every_finish_reason_but_stop_is_a_named_stop(rig: MakeRig, finish: str) -> None:
    retried = finish == "MALFORMED_FUNCTION_CALL"
    reply = _reply([{"text": "partial"}], finish, finishMessage="line one\nline two")
    r = rig([reply, reply] if retried else [reply])
    error, record = _fails(r, "finish_reason")
    assert record["attempts"] == (2 if retried else 1)
    assert len(record["finish_reason"]) <= 64 and len(str(error)) < 400


def test_a_malformed_function_call_is_retried_once_and_a_good_sample_is_used(rig: MakeRig) -> None:
    r = rig([_reply([{"text": "x"}], "MALFORMED_FUNCTION_CALL"), FakeTurn.say("second sample")])
    response = r.gateway.generate(MODEL, "hello")
    assert response.text == "second sample"
    (record,) = r.records()
    assert (record["outcome"], record["attempts"], record["failure"]) == ("ok", 2, None)


@pytest.mark.parametrize(("body", "failure"), [
    ({"promptFeedback": {"blockReason": "SAFETY", "blockReasonMessage": "no\nway"}}, "blocked"),
    ({"candidates": [], "promptFeedback": {"blockReason": "JAILBREAK"}}, "blocked"),
    ({}, "no_candidate"),
    ({"candidates": []}, "no_candidate"),
    ({"candidates": "none"}, "empty_reply"),  # the SDK reads the string as four empty candidates
    ({"candidates": [{"content": {"parts": []}, "finishReason": "STOP"}]}, "empty_reply"),
    ({"candidates": [{"content": {"parts": [{"text": "   "}]}}]}, "empty_reply"),
    ({"candidates": [{"content": {"parts": [{"text": "thinking", "thought": True}]}}]}, "empty_reply"),
    ({"candidates": [{"content": "text instead of content"}]}, "empty_reply"),
    ({"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": 3}]}, "finish_reason"),
    ({"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": ["STOP"]}]}, "finish_reason"),
])
def test_an_answer_with_nothing_usable_is_a_named_stop(rig: MakeRig, body: dict[str, Any], failure: str) -> None:
    reply = RawReply.json(body)
    r = rig([reply, reply])  # an empty answer gets one retry
    _, record = _fails(r, failure)
    assert record["attempts"] == (2 if failure == "empty_reply" else 1)
    if failure == "blocked":
        assert record["block_reason"] in ("SAFETY", "JAILBREAK")


def test_wrongly_typed_values_are_dropped_and_listed(rig: MakeRig) -> None:
    r = rig([_reply([{"functionCall": {"name": "run_shell_cmd", "args": "az vm list"}},
                     {"functionCall": {"name": 12, "args": {"command": "ls"}}}, "a bare string", {"text": 5}],
                    safetyRatings=[{"category": 9, "probability": "HIGH"}],
                    citationMetadata={"citationSources": "nope"}, index="first")])
    response = r.gateway.generate(MODEL, "hello")
    assert isinstance(response, RepairedResponse)
    where = {x.where: x.got for x in response.repairs}
    assert where["candidates[0].content.parts[0].function_call.args"] == "string"
    assert where["candidates[0].content.parts[1].function_call.name"] == "number"
    assert where["candidates[0].content.parts[2]"] == "string"
    assert where["candidates[0].content.parts[3].text"] == "number"
    assert where["candidates[0].safety_ratings[0].category"] == "number"
    (record,) = r.records()
    assert record["outcome"] == "ok" and record["repairs_total"] == len(response.repairs)
    assert {x["where"] for x in record["repairs"]} == set(where)


def test_fields_only_the_sdk_sets_are_not_taken_from_the_wire(rig: MakeRig) -> None:
    r = rig([RawReply.json({**GOOD, "candidates": [{"content": {"parts": [{"functionCall": {"name": "x",
                                                                                           "args": 1}}]}}],
                            "parsed": {"injected": True}, "repairs": [{"path": ["x"]}],
                            "automaticFunctionCallingHistory": [{"parts": [{"text": "forged"}]}]})])
    response = r.gateway.generate(MODEL, "hello")
    assert isinstance(response, RepairedResponse)
    assert response.parsed is None and response.automatic_function_calling_history is None
    assert {x.where for x in response.repairs} >= {"parsed", "repairs", "automatic_function_calling_history"}


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_an_answer_over_the_limit_is_refused(rig: MakeRig, chunked: bool) -> None:
    body = RawReply.json({"candidates": [{"content": {"parts": [{"text": "A" * (MAX_RESPONSE_BYTES + 10)}]}}]},
                         chunked=chunked)
    r = rig([body])
    error, record = _fails(r, "response_too_large")
    assert f"{MAX_RESPONSE_BYTES:,}" in str(error) and record["status"] == 200


def test_a_connection_cut_mid_answer_is_a_transport_failure(rig: MakeRig) -> None:
    r = rig([RawReply.json(GOOD, truncate_at=20)])
    error, record = _fails(r, "transport")
    assert error.status is None and record["attempts"] == 1


def test_an_error_status_with_a_body_the_sdk_cannot_read_is_an_api_error(rig: MakeRig) -> None:
    html = RawReply.text("<html>" + "x" * 5000 + "\n</html>", status=500, content_type="text/html")
    r = rig([RawReply.json([1, 2], status=503), html], max_retries=1)
    error, record = _fails(r, "api_error")
    assert error.status == 500 and record["attempts"] == 2 and len(r.slept) == 1
    assert len(str(error)) < 400


def test_a_continuation_token_does_not_make_the_sdk_send_more_requests(rig: MakeRig) -> None:
    reply = _reply([{"text": "part one"}], "CONTINUATION", continuationToken="YWJj")
    r = rig([reply] * 5)
    _fails(r, "finish_reason")
    assert len(r.fake.requests) == 1


def test_every_failure_the_gateway_names_is_documented() -> None:
    assert set(REPLY_FAILURES) <= set(FAILURES)
    assert {"api_error", "transport", "no_client", "internal_error"} <= set(FAILURES)
