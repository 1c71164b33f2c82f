"""No planted secret reaches the model: user text, function responses (nested payloads, secret-named
fields), function-call echoes and the system instruction are redacted before the request is built."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types

from netghost.lab import FakeTurn
from netghost.llm._outgoing import Tally, redact_contents
from netghost.redact import redact
from tests.llm.conftest import Rig

MODEL = "gemini-2.5-flash"
STORAGE_KEY = "Zm9vYmFy" + "Q" * 70 + "ab12cd=="  # an 88-character base64 account key
CONN = f"DefaultEndpointsProtocol=https;AccountName=stghost;AccountKey={STORAGE_KEY};EndpointSuffix=core.windows.net"
SAS_SIG = "s3cr3tSigNaTuReAbCdEfGhIjKlMnOpQrStUvWx%2Bz%3D"
SAS_URL = f"https://stghost.blob.core.windows.net/c/cap.pcap?sv=2022-11-02&sp=r&se=2030-01-01T00:00:00Z&sig={SAS_SIG}"
PASSWORD = "Hunter2-Sekrit-42"
SECRETS = [STORAGE_KEY, SAS_SIG, PASSWORD, "s3cr3tSigNaTuReAbCdEfGhIjKlMnOpQrStUvWx"]


def _sent(raw: list[bytes]) -> str:
    return b"\n".join(raw).decode()


def test_planted_secrets_never_reach_the_server(rig: Callable[..., Rig]) -> None:
    r = rig([FakeTurn.call("run_diagnostic", {"command": "az storage blob list"}), FakeTurn.say("done")])
    user = types.Content(role="user", parts=[types.Part.from_text(
        text=f"Capture failed; I used --password {PASSWORD} and the SAS {SAS_URL}")])
    config = types.GenerateContentConfig(system_instruction=f"Account: {CONN}")
    first = r.gateway.generate(MODEL, [user], config)
    assert first.candidates and first.candidates[0].content
    tool_output = {"exit_code": 0, "stdout": f"{CONN}\nurl: {SAS_URL}\n",
                   "details": {"db": {"password": PASSWORD}, "items": [f"password={PASSWORD}"]}}
    history = [user, first.candidates[0].content, types.Content(role="user", parts=[
        types.Part.from_function_response(name="run_diagnostic", response=tool_output)])]
    r.gateway.generate(MODEL, history, config)
    sent = _sent(r.fake.raw)
    for secret in SECRETS:
        assert secret not in sent, f"{secret[:12]}... reached the model"
    assert "[REDACTED:" in sent
    body = r.fake.requests[1]
    response = body["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert response["exit_code"] == 0 and response["details"]["db"]["password"].startswith("[REDACTED:")
    assert "AccountName=stghost" in response["stdout"]  # only the secret goes, not the context
    recs = r.records()
    assert recs[0]["redactions"]["count"] >= 3
    assert set(recs[0]["redactions"]["kinds"]) >= {"password", "sas_signature"}
    assert recs[1]["redactions"]["count"] > recs[0]["redactions"]["count"]
    assert "password" in recs[1]["redactions"]["kinds"]
    assert tool_output["details"]["db"]["password"] == PASSWORD  # the caller's objects are untouched


def test_function_call_echoes_and_plain_dict_parts_are_redacted(rig: Callable[..., Rig]) -> None:
    r = rig([FakeTurn.say("ok")])
    echo = types.Content(role="model", parts=[types.Part.from_function_call(
        name="run_diagnostic", args={"command": f"curl -u admin:{PASSWORD} https://example.com"})])
    r.gateway.generate(MODEL, [{"role": "user", "parts": [{"text": f"key {CONN}"}]}, echo])
    assert STORAGE_KEY not in _sent(r.fake.raw) and PASSWORD not in _sent(r.fake.raw)


def test_redacting_a_payload_twice_changes_nothing() -> None:
    tally = Tally(redact)
    once = redact_contents([types.Part.from_function_response(name="f", response={"out": CONN, "pw": PASSWORD,
                                                                                   "password": PASSWORD})], tally)
    again = Tally(redact)
    twice = redact_contents(once, again)
    assert [c.model_dump() for c in twice] == [c.model_dump() for c in once]
    assert again.count == 0 and tally.count >= 2


def test_a_custom_redactor_is_used(rig: Callable[..., Rig]) -> None:
    from netghost.redact import Redaction

    def shout(text: str) -> Redaction:
        return Redaction(text.replace("blue", "[REDACTED:colour]"), text.count("blue"), ("colour",) if "blue" in text else ())

    r = rig([FakeTurn.say("ok")], redactor=shout)
    r.gateway.generate(MODEL, "the sky is blue", {"system_instruction": "blue"})
    body: dict[str, Any] = json.loads(r.fake.raw[0])
    assert "blue" not in json.dumps(body)
    assert r.records()[0]["redactions"] == {"count": 2, "kinds": ["colour"]}


def test_parts_the_gateway_cannot_redact_are_refused() -> None:
    blob = types.Part(inline_data=types.Blob(data=f"password={PASSWORD}".encode(), mime_type="text/plain"))
    file = types.Part(file_data=types.FileData(file_uri=SAS_URL, mime_type="text/plain"))
    nested = types.Part(function_response=types.FunctionResponse(name="f", response={}, parts=[
        types.FunctionResponsePart(inline_data=types.FunctionResponseBlob(data=PASSWORD.encode(), mime_type="text/plain"))]))
    for part in (blob, file, nested):
        with pytest.raises(TypeError, match="cannot redact"):
            redact_contents(["ok", part], Tally(redact))
