"""The LLM gateway with the real google-genai SDK against the fake Gemini server: turns, retries,
typed errors, and one chained WAL record per call."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from netghost.errors import LlmError
from netghost.governance import WalWriter, read_wal, verify
from netghost.lab import FakeCall, FakeGemini, FakeTurn
from netghost.llm import RECORD_KIND, LlmGateway
from tests.llm.conftest import Rig

MODEL = "gemini-2.5-flash"
DECL = types.FunctionDeclaration(name="run_diagnostic", description="Run a diagnostic", parameters_json_schema={
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]})
CONFIG = types.GenerateContentConfig(
    system_instruction="You are the Ghost Agent.", tools=[types.Tool(function_declarations=[DECL])],
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
FIELDS = {"v", "kind", "purpose", "model", "model_version", "prompt_tokens", "candidates_tokens", "total_tokens",
          "latency_ms", "request_sha256", "request_bytes", "request_hashed", "redactions", "attempts",
          "retry_waits_s", "outcome", "status", "error", "screen", "seq", "ts", "prev_sha256", "sha256", "failure",
          "finish_reason", "block_reason", "response_bytes", "response_sha256", "repairs", "repairs_total"}
MakeRig = Callable[..., Rig]


def _sha(raw: bytes) -> str:
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def test_text_turn_and_its_record(rig: MakeRig) -> None:
    r = rig([FakeTurn.say("hello", prompt_tokens=12, candidates_tokens=9)])
    resp = r.gateway.generate(MODEL, "Is 10.0.0.4 reachable?", CONFIG, purpose="agent_turn")
    assert resp.text == "hello"
    (rec,) = r.records()
    assert set(rec) == FIELDS
    assert rec["kind"] == RECORD_KIND and rec["purpose"] == "agent_turn"
    assert (rec["model"], rec["model_version"]) == (MODEL, "fake-gemini")
    assert (rec["prompt_tokens"], rec["candidates_tokens"], rec["total_tokens"]) == (12, 9, 21)
    assert rec["request_sha256"] == _sha(r.fake.raw[0]) and rec["request_hashed"] == "wire"
    assert rec["request_bytes"] == len(r.fake.raw[0])
    assert rec["redactions"] == {"count": 0, "kinds": []}
    assert (rec["attempts"], rec["outcome"], rec["status"], rec["error"], rec["retry_waits_s"]) == (1, "ok", 200, None, [])
    assert isinstance(rec["latency_ms"], int) and rec["latency_ms"] >= 0
    assert r.fake.requests[0]["systemInstruction"]["parts"][0]["text"] == "You are the Ghost Agent."


def test_latency_comes_from_the_injected_clock(rig: MakeRig) -> None:
    ticks = iter([10.0, 10.25])
    r = rig([FakeTurn.say("x")], clock=lambda: next(ticks))
    r.gateway.generate(MODEL, "x")
    assert r.records()[0]["latency_ms"] == 250


def test_function_calls_and_multi_turn_with_function_responses(rig: MakeRig) -> None:
    r = rig([FakeTurn(calls=(FakeCall("run_diagnostic", {"command": "ping -c 4 10.0.0.4"}),
                             FakeCall("run_diagnostic", {"command": "ip route"}))),
             FakeTurn.say("Reachable.")])
    history: list[Any] = [types.Content(role="user", parts=[types.Part.from_text(text="reachable?")])]
    r1 = r.gateway.generate(MODEL, history, CONFIG)
    assert r1.function_calls and [c.args for c in r1.function_calls] == [{"command": "ping -c 4 10.0.0.4"},
                                                                          {"command": "ip route"}]
    assert r1.candidates and r1.candidates[0].content
    history += [r1.candidates[0].content, types.Content(role="user", parts=[
        types.Part.from_function_response(name="run_diagnostic", response={"exit_code": 0, "stdout": "4 received"}),
        types.Part.from_function_response(name="run_diagnostic", response={"exit_code": 0, "stdout": "default via"})])]
    assert r.gateway.generate(MODEL, history, CONFIG).text == "Reachable."
    sent = r.fake.requests[1]["contents"]
    assert [c["role"] for c in sent] == ["user", "model", "user"]
    assert sent[2]["parts"][1]["functionResponse"]["response"] == {"exit_code": 0, "stdout": "default via"}
    recs = r.records()
    assert [x["seq"] for x in recs] == [1, 2]
    assert [x["request_sha256"] for x in recs] == [_sha(b) for b in r.fake.raw]
    assert len(history) == 3  # the caller's list was not touched


def test_429_then_success_is_retried_with_backoff(rig: MakeRig) -> None:
    r = rig([FakeTurn.fail(429, "quota"), FakeTurn.fail(429, "quota"), FakeTurn.say("ok")])
    assert r.gateway.generate(MODEL, "x").text == "ok"
    assert r.slept == [1.0, 2.0]
    (rec,) = r.records()
    assert (rec["attempts"], rec["outcome"], rec["retry_waits_s"]) == (3, "ok", [1.0, 2.0])
    assert len(r.fake.requests) == 3
    assert len(set(r.fake.raw)) == 1 and rec["request_sha256"] == _sha(r.fake.raw[0])


def test_server_retry_hint_is_honoured_and_capped(rig: MakeRig) -> None:
    r = rig([FakeTurn.fail(429, retry_after=7), FakeTurn.fail(503, retry_after=90), FakeTurn.say("ok")],
            backoff_max_s=30.0)
    r.gateway.generate(MODEL, "x")
    assert r.slept == [7.0, 30.0]


def test_500_exhausting_retries_raises_llm_error(rig: MakeRig) -> None:
    r = rig([FakeTurn.fail(500, "boom")] * 4 + [FakeTurn.say("too late")])
    with pytest.raises(LlmError) as info:
        r.gateway.generate(MODEL, "x")
    assert (info.value.model, info.value.status, info.value.attempts) == (MODEL, 500, 4)
    assert "gave up after 4 attempts" in str(info.value)
    assert r.slept == [1.0, 2.0, 4.0]
    assert r.fake.remaining == 1
    (rec,) = r.records()
    assert (rec["outcome"], rec["status"], rec["attempts"]) == ("error", 500, 4)
    assert "boom" in rec["error"] and rec["total_tokens"] is None
    assert rec["request_sha256"] == _sha(r.fake.raw[-1])


@pytest.mark.parametrize("status", [400, 403, 404])
def test_other_4xx_is_not_retried(rig: MakeRig, status: int) -> None:
    r = rig([FakeTurn.fail(status, "bad request"), FakeTurn.say("never")])
    with pytest.raises(LlmError) as info:
        r.gateway.generate(MODEL, "x")
    assert (info.value.status, info.value.attempts) == (status, 1)
    assert "not retried" in str(info.value)
    assert r.slept == [] and r.fake.remaining == 1
    assert r.records()[0]["outcome"] == "error"


def test_max_retries_zero_sends_once(rig: MakeRig) -> None:
    r = rig([FakeTurn.fail(503), FakeTurn.say("x")], max_retries=0)
    with pytest.raises(LlmError):
        r.gateway.generate(MODEL, "x")
    assert len(r.fake.requests) == 1


def test_no_answer_is_an_llm_error_without_status(tmp_path: Path) -> None:
    fake = FakeGemini([])
    url = fake.base_url
    fake.close()
    slept: list[float] = []
    with LlmGateway(audit=tmp_path / "w.jsonl", environ={"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": url},
                    sleeper=slept.append) as gw, pytest.raises(LlmError) as info:
        gw.generate(MODEL, "x")
    assert (info.value.status, info.value.attempts) == (None, 1)
    assert slept == []
    rec = read_wal(tmp_path / "w.jsonl").records[0]
    assert (rec["outcome"], rec["status"], rec["request_hashed"]) == ("error", None, "wire")


def test_no_credentials_is_an_llm_error(tmp_path: Path) -> None:
    with LlmGateway(audit=tmp_path / "w.jsonl", environ={}) as gw, pytest.raises(LlmError) as info:
        gw.generate(MODEL, "x")
    assert (info.value.status, info.value.attempts) == (None, 0)
    rec = read_wal(tmp_path / "w.jsonl").records[0]
    assert rec["request_hashed"] == "canonical" and rec["outcome"] == "error"


def test_one_record_per_call_and_the_chain_verifies(rig: MakeRig) -> None:
    r = rig([FakeTurn.say("a"), FakeTurn.fail(400), FakeTurn.fail(429), FakeTurn.say("b")])
    r.gateway.generate(MODEL, "1")
    with pytest.raises(LlmError):
        r.gateway.generate(MODEL, "2")
    r.gateway.generate(MODEL, "3")
    r.gateway.close()
    report = verify(r.wal)
    assert report.ok and report.records == 3 and report.anchor == "checkpoint"
    assert [x["outcome"] for x in r.records()] == ["ok", "error", "ok"]
    assert [x["attempts"] for x in r.records()] == [1, 1, 2]


def test_a_caller_owned_wal_stays_open(tmp_path: Path) -> None:
    with FakeGemini([FakeTurn.say("a")]) as fake, WalWriter(tmp_path / "agent.jsonl") as wal:
        wal.append({"kind": "session_start"})
        with LlmGateway(audit=wal, environ={"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": fake.base_url}) as gw:
            gw.generate(MODEL, "x")
        assert not wal.closed
        wal.append({"kind": "session_end"})
    assert [x["kind"] for x in read_wal(tmp_path / "agent.jsonl").records] == ["session_start", RECORD_KIND,
                                                                              "session_end"]


def test_no_audit_sends_without_records(tmp_path: Path) -> None:
    with FakeGemini([FakeTurn.say("a")]) as fake, LlmGateway(
            audit=None, environ={"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": fake.base_url}) as gw:
        assert gw.wal is None
        assert gw.generate(MODEL, "x").text == "a"


def test_the_sdks_own_base_url_variable_is_honoured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with FakeGemini([FakeTurn.say("from env")]) as fake:
        monkeypatch.setenv("GEMINI_API_KEY", "env-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        with LlmGateway(audit=None) as gw:  # environ=None: the SDK reads its own variables
            assert gw.generate(MODEL, "x").text == "from env"
    assert fake.headers[0]["x-goog-api-key"] == "env-key"


def test_vertex_express_through_the_sdk(tmp_path: Path) -> None:
    with FakeGemini([FakeTurn.say("vertex")], api_version=None) as fake, LlmGateway(audit=None, environ={
            "GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_API_KEY": "vk", "GOOGLE_VERTEX_BASE_URL": fake.base_url}) as gw:
        assert gw.generate(MODEL, "x").text == "vertex"
    assert fake.paths[0].endswith(f"models/{MODEL}:generateContent")


def test_a_custom_client_factory_gets_the_options(tmp_path: Path) -> None:
    from google import genai

    seen: list[types.HttpOptions] = []

    def factory(options: types.HttpOptions) -> genai.Client:
        seen.append(options)
        return genai.Client(api_key="x", http_options=options.model_copy(update={"base_url": fake.base_url}))

    with FakeGemini([FakeTurn.say("custom")]) as fake, LlmGateway(audit=tmp_path / "w.jsonl",
                                                                   client_factory=factory) as gw:
        gw.generate(MODEL, "x")
    assert seen[0].timeout == 60_000
    assert read_wal(tmp_path / "w.jsonl").records[0]["request_sha256"] == _sha(fake.raw[0])


def test_contents_shapes(rig: MakeRig) -> None:
    r = rig([FakeTurn.say("a")] * 3)
    r.gateway.generate(MODEL, ["one", types.Part(text="two")])
    r.gateway.generate(MODEL, {"role": "user", "parts": [{"text": "three"}]})
    r.gateway.generate(MODEL, [{"role": "user", "parts": [{"text": "q"}]}, "loose"])
    assert r.fake.requests[0]["contents"] == [{"parts": [{"text": "one"}, {"text": "two"}], "role": "user"}]
    assert r.fake.requests[1]["contents"][0]["parts"] == [{"text": "three"}]
    assert len(r.fake.requests[2]["contents"]) == 2
    with pytest.raises(TypeError):
        r.gateway.generate(MODEL, [object()])
    assert json.loads(r.fake.raw[0])["contents"][0]["role"] == "user"


def test_a_shared_client_from_a_custom_factory_is_not_closed(tmp_path: Path) -> None:
    from google import genai

    with FakeGemini([FakeTurn.say("a"), FakeTurn.say("b")]) as fake:
        shared = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=fake.base_url))
        with LlmGateway(audit=None, client_factory=lambda _options: shared) as gw:
            gw.generate(MODEL, "x")
        assert shared.models.generate_content(model=MODEL, contents="y").text == "b"
        shared.close()
