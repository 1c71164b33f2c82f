"""The fake Gemini server against the real google-genai SDK (no patching): text, function calls,
multi-turn with function responses, streaming, errors on demand, callables, and loud failures."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from netghost.lab import FakeCall, FakeGemini, FakeTurn
from netghost.lab.fake_gemini import RawReply, as_turn, load_script, main, sse_body

MODEL = "gemini-2.5-flash"
SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


def _client(fake: FakeGemini, api_version: str | None = None) -> genai.Client:
    # keep the returned client in a variable: a Client that is garbage collected closes its HTTP pool,
    # even while one of its ``models`` calls is still running
    return genai.Client(api_key="x", http_options=types.HttpOptions(base_url=fake.base_url, api_version=api_version))


def _config(**decl: Any) -> types.GenerateContentConfig:
    fd = types.FunctionDeclaration(name="run_diagnostic", description="Run a diagnostic",
                                   **(decl or {"parameters_json_schema": SCHEMA}))
    return types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[fd])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))


@pytest.fixture
def fake(request: pytest.FixtureRequest) -> Iterator[FakeGemini]:
    with FakeGemini(request.param) as f:
        yield f


def test_text_turn_with_usage_and_model_version() -> None:
    with FakeGemini([FakeTurn.say("hello", prompt_tokens=12, candidates_tokens=9)]) as fake:
        client = _client(fake)
        r = client.models.generate_content(model=MODEL, contents="Is 10.0.0.4 reachable?")
    assert r.text == "hello"
    assert r.usage_metadata is not None
    assert (r.usage_metadata.prompt_token_count, r.usage_metadata.candidates_token_count,
            r.usage_metadata.total_token_count) == (12, 9, 21)
    assert r.model_version == "fake-gemini"
    assert fake.paths == [f"/v1/models/{MODEL}:generateContent"]
    assert fake.requests[0]["contents"] == [{"parts": [{"text": "Is 10.0.0.4 reachable?"}], "role": "user"}]
    assert fake.headers[0]["x-goog-api-key"] == "x"
    assert fake.failures == [] and fake.remaining == 0


def test_default_usage_is_an_estimate() -> None:
    with FakeGemini([{"text": "ok"}]) as fake:
        client = _client(fake)
        usage = client.models.generate_content(model=MODEL, contents="x" * 400).usage_metadata
    assert usage is not None and usage.prompt_token_count and usage.prompt_token_count >= 100
    assert usage.total_token_count == usage.prompt_token_count + (usage.candidates_token_count or 0)


def test_function_calls_then_function_response_multi_turn() -> None:
    script = [
        FakeTurn(calls=(FakeCall("run_diagnostic", {"command": "ping -c 4 10.0.0.4"}),
                        FakeCall("run_diagnostic", {"command": "dig +short example.com"}))),
        {"text": "Host 10.0.0.4 is reachable (0% loss)."},
    ]
    with FakeGemini(script) as fake:
        client, cfg = _client(fake), _config()
        contents: list[Any] = [types.Content(role="user", parts=[types.Part.from_text(text="reachable?")])]
        r1 = client.models.generate_content(model=MODEL, contents=contents, config=cfg)
        assert r1.function_calls is not None
        assert [(c.name, c.args) for c in r1.function_calls] == [
            ("run_diagnostic", {"command": "ping -c 4 10.0.0.4"}),
            ("run_diagnostic", {"command": "dig +short example.com"})]
        assert r1.candidates and r1.candidates[0].content
        contents += [r1.candidates[0].content, types.Content(role="user", parts=[
            types.Part.from_function_response(name="run_diagnostic", response={"stdout": "4 received"})])]
        r2 = client.models.generate_content(model=MODEL, contents=contents, config=cfg)
    assert r2.text == "Host 10.0.0.4 is reachable (0% loss)."
    second = fake.requests[1]
    assert second["contents"][1]["role"] == "model"
    assert second["contents"][2]["parts"][0]["functionResponse"]["response"] == {"stdout": "4 received"}
    assert second["tools"][0]["functionDeclarations"][0]["parameters_json_schema"] == SCHEMA


def test_declarations_with_parameters_schema_are_accepted() -> None:
    params = types.Schema(type=types.Type.OBJECT, properties={"command": types.Schema(type=types.Type.STRING)})
    with FakeGemini([FakeTurn.call("run_diagnostic", {"command": "ss -tn"})]) as fake:
        client = _client(fake)
        r = client.models.generate_content(model=MODEL, contents="go", config=_config(parameters=params))
    assert r.function_calls and r.function_calls[0].args == {"command": "ss -tn"}
    assert fake.requests[0]["tools"][0]["functionDeclarations"][0]["parameters"]["type"] == "OBJECT"


@pytest.mark.parametrize(("status", "kind", "name"), [(429, errors.ClientError, "RESOURCE_EXHAUSTED"),
                                                      (500, errors.ServerError, "INTERNAL"),
                                                      (503, errors.ServerError, "UNAVAILABLE")])
def test_errors_on_demand(status: int, kind: type[errors.APIError], name: str) -> None:
    with FakeGemini([FakeTurn.fail(status, "quota", retry_after=7), FakeTurn.say("after")]) as fake:
        client = _client(fake)
        with pytest.raises(kind) as info:
            client.models.generate_content(model=MODEL, contents="x")
        assert client.models.generate_content(model=MODEL, contents="x").text == "after"  # the SDK did not retry
    assert (info.value.code, info.value.status, info.value.message) == (status, name, "quota")
    assert info.value.details["error"]["details"][0] == {"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                                         "retryDelay": "7s"}
    assert len(fake.requests) == 2


def test_callable_item_and_callable_responder_see_the_body() -> None:
    def echo(body: dict[str, Any]) -> dict[str, Any]:
        return {"text": "saw " + body["contents"][-1]["parts"][0]["text"]}

    with FakeGemini([FakeTurn.say("first"), echo]) as fake:
        client = _client(fake)
        assert client.models.generate_content(model=MODEL, contents="a").text == "first"
        assert client.models.generate_content(model=MODEL, contents="b").text == "saw b"
    seen: list[int] = []

    def responder(body: dict[str, Any]) -> FakeTurn | None:
        seen.append(len(body["contents"]))
        return FakeTurn.say("again") if len(seen) < 3 else None

    with FakeGemini(responder) as fake:
        client = _client(fake)
        assert [client.models.generate_content(model=MODEL, contents="q").text for _ in range(2)] == ["again"] * 2
        with pytest.raises(errors.ClientError, match="exhausted"):
            client.models.generate_content(model=MODEL, contents="q")


def test_exhausted_script_fails_loudly_and_is_recorded() -> None:
    with FakeGemini([FakeTurn.say("only")]) as fake:
        client = _client(fake)
        client.models.generate_content(model=MODEL, contents="1")
        with pytest.raises(errors.ClientError) as info:
            client.models.generate_content(model=MODEL, contents="2")
    assert info.value.code == 400
    assert "script is exhausted: request #2" in (info.value.message or "")
    assert fake.failures == [info.value.message]
    assert len(fake.requests) == 2  # the refused request is recorded too


def test_api_version_is_checked() -> None:
    with FakeGemini([FakeTurn.say("beta")], api_version="v1beta") as fake:
        v1, beta = _client(fake), _client(fake, "v1beta")
        with pytest.raises(errors.ClientError, match="v1 requested"):
            v1.models.generate_content(model=MODEL, contents="x")
        assert beta.models.generate_content(model=MODEL, contents="x").text == "beta"
    assert fake.paths[-1] == f"/v1beta/models/{MODEL}:generateContent"


def test_streaming_sse() -> None:
    turn = FakeTurn(text="thinking", calls=(FakeCall("run_diagnostic", {"command": "ip route"}),))
    with FakeGemini([turn]) as fake:
        client = _client(fake)
        chunks = list(client.models.generate_content_stream(model=MODEL, contents="x", config=_config()))
    assert fake.paths == [f"/v1/models/{MODEL}:streamGenerateContent?alt=sse"]
    assert chunks[0].text == "thinking"
    assert chunks[-1].function_calls and chunks[-1].function_calls[0].args == {"command": "ip route"}
    assert chunks[-1].usage_metadata is not None and chunks[-1].usage_metadata.total_token_count


def test_async_client_works_the_same() -> None:
    import asyncio

    with FakeGemini([FakeTurn.say("async")]) as fake:
        client = _client(fake)

        async def ask() -> types.GenerateContentResponse:
            try:
                return await client.aio.models.generate_content(model=MODEL, contents="x")
            finally:
                await client.aio.aclose()  # the async pool belongs to this loop: close it before the loop ends

        r = asyncio.run(ask())
    assert r.text == "async"


def test_malformed_requests_are_refused() -> None:
    with FakeGemini([FakeTurn.say("never")]) as fake:
        assert fake.answer("/v1/models/m:generateContent", b"not json", {})[0] == 400
        assert fake.answer("/v1/models/m:generateContent", b'{"contents": []}', {})[0] == 400
        both = {"contents": [{"parts": [{"text": "x"}]}], "tools": [{"functionDeclarations": [
            {"name": "f", "parameters": {"type": "OBJECT"}, "parameters_json_schema": {"type": "object"}}]}]}
        status, _, body = fake.answer("/v1/models/m:generateContent", json.dumps(both).encode(), {})
        assert status == 400 and "mutually exclusive" in json.loads(body)["error"]["message"]
        assert fake.answer("/v1/models/m:countTokens", b"{}", {})[0] == 404
    assert len(fake.failures) == 4 and fake.remaining == 1
    assert fake.requests[0] == "not json"


def test_retry_after_header() -> None:
    with FakeGemini([FakeTurn.fail(429, retry_after=1.5)]) as fake:
        status, headers, _ = fake.answer("/v1/models/m:generateContent", b'{"contents":[{"parts":[{"text":"x"}]}]}', {})
    assert status == 429 and headers["Retry-After"] == "2"


def test_script_dicts() -> None:
    assert as_turn({"call": {"name": "f", "args": {"a": 1}}}) == FakeTurn.call("f", {"a": 1})
    assert as_turn({"error": 503}).error == 503
    for bad in ({}, {"text": "x", "oops": 1}, {"calls": [{"args": {}}]}, {"error": 200}):
        with pytest.raises(ValueError):
            as_turn(bad)
    with pytest.raises(ValueError):
        FakeGemini([{"bogus": True}])


def test_main_serves_a_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "from file"}]}))
    assert load_script(script) == [{"text": "from file"}]
    stop = threading.Event()
    result: list[int] = []
    runner = threading.Thread(target=lambda: result.append(main(["--script", str(script)], stop=stop)))
    runner.start()
    try:
        for _ in range(200):
            out = capsys.readouterr().out
            if out:
                break
            threading.Event().wait(0.01)
        url = out.strip()
        assert url.startswith("http://127.0.0.1:")
        client = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=url))
        assert client.models.generate_content(model=MODEL, contents="x").text == "from file"
    finally:
        stop.set()
        runner.join()
    assert result == [0]


def test_module_entry_point_rejects_a_bad_script(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"turns": 3}')
    proc = subprocess.run([sys.executable, "-m", "netghost.lab.fake_gemini", "--script", str(bad)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and "a script is a JSON list" in proc.stderr


def _raw_get(fake: FakeGemini) -> tuple[int, dict[str, str], bytes]:
    """POST one request with the standard library: the exact status, headers and bytes, no SDK parsing."""
    host, port = fake.base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("POST", f"/v1/models/{MODEL}:generateContent",
                     body=json.dumps({"contents": [{"role": "user", "parts": [{"text": "x"}]}]}),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_a_raw_reply_is_sent_byte_for_byte() -> None:
    replies = [RawReply(b"\xff\xfe<html>", status=200, content_type="text/html", headers={"X-Odd": "1"}),
               RawReply.json({"candidates": "\ud800"}, ensure_ascii=False),
               RawReply.json({"candidates": "\ud800"}, ensure_ascii=True),
               RawReply.text("caf\u00e9", encoding="latin-1", status=503),
               {"raw": {"base64": "AAEC", "content_type": None}},
               RawReply.json({"a": 1}, chunked=True)]
    with FakeGemini(replies) as fake:
        got = [_raw_get(fake) for _ in replies]
    assert got[0][2] == b"\xff\xfe<html>" and got[0][1]["x-odd"] == "1"
    assert got[1][2] == b'{"candidates": "\xed\xa0\x80"}'  # a lone surrogate as broken UTF-8
    assert got[2][2] == b'{"candidates": "\\ud800"}'
    assert (got[3][0], got[3][2]) == (503, b"caf\xe9")
    assert got[4][2] == b"\x00\x01\x02" and "content-type" not in got[4][1]
    assert got[5][2] == b'{"a": 1}' and got[5][1]["transfer-encoding"] == "chunked"
    assert fake.failures == []


def test_a_cut_reply_ends_the_connection_and_the_sdk_sees_no_answer() -> None:
    with FakeGemini([RawReply.json({"candidates": []}, truncate_at=5)]) as fake:
        client = _client(fake)
        with pytest.raises(Exception) as info:
            client.models.generate_content(model=MODEL, contents="x")
    assert "RemoteProtocolError" in type(info.value).__name__ or "peer closed" in str(info.value)


def test_raw_script_items_are_checked() -> None:
    with pytest.raises(ValueError, match="exactly one of json, text, base64"):
        FakeGemini([{"raw": {"status": 200}}])
    with pytest.raises(ValueError, match="unknown raw-reply keys"):
        FakeGemini([{"raw": {"json": {}, "colour": "red"}}])
    with pytest.raises(ValueError, match="200-599"):
        RawReply(b"", status=101)


def test_a_raw_sse_stream_reaches_the_sdks_stream_reader_as_sent() -> None:
    good = {"candidates": [{"content": {"role": "model", "parts": [{"text": "one "}]}}]}
    stream = RawReply(sse_body([good], raw_lines=[": a comment line\n", 'data: {"candidates": [{"cont']),
                      content_type="text/event-stream")
    with FakeGemini([stream]) as fake:
        client = _client(fake)
        seen: list[str] = []
        with pytest.raises(errors.UnknownApiResponseError):  # the half event at the end
            for chunk in client.models.generate_content_stream(model=MODEL, contents="x"):
                seen.append(chunk.text or "")
    assert seen == ["one "] and fake.paths[0].endswith(":streamGenerateContent?alt=sse")
