"""--narrative with the real google-genai SDK against a local fake Gemini server (no mocks, no network).

The fake server records every request, so the tests check what really leaves the process: the path,
the API key header, and that the text sent is the bounded semantic digest, never packets.
"""

from __future__ import annotations

import http.server
import json
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from netghost.forensics.compare import write_compare_outputs
from netghost.forensics.engine import analyze_capture
from netghost.forensics.report import build_semantic, generate_narrative, render_report, with_narrative
from netghost.forensics.report._narrative import MAX_INPUT_CHARS, NO_KEY, narrative_config, narrative_input

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
A = PAIRS / "chrissanders_ppa2e_http_espn_A.pcap"
B = PAIRS / "chrissanders_ppa2e_http_espn_B.pcap"
STORY = "The flow tcp/15 was reset by a middlebox between the probes (F1, B frame 598)."


class FakeGemini:
    """A threaded HTTP server speaking the generateContent wire format; records requests."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.reply_text = STORY
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if outer.status != 200:
                    reply: dict[str, Any] = {"error": {"code": outer.status, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}
                else:
                    reply = {"candidates": [{"content": {"role": "model", "parts": [{"text": outer.reply_text}]},
                                             "finishReason": "STOP"}], "modelVersion": "fake-gemini"}
                out = json.dumps(reply).encode()
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"
        self.thread = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    f = FakeGemini()
    yield f
    f.close()


@pytest.fixture(scope="module")
def sem() -> dict[str, Any]:
    return build_semantic(analyze_capture(A))


def test_no_key_says_so_and_sends_nothing(fake: FakeGemini, sem: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
    res = generate_narrative(sem)
    assert res.text is None
    assert res.message == NO_KEY
    assert fake.requests == []
    report = render_report(sem)
    assert with_narrative(report, res.text) == report


def test_real_sdk_against_fake_server(fake: FakeGemini, sem: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
    res = generate_narrative(sem)
    assert res.text == STORY
    assert res.model == "gemini-2.5-flash"
    (req,) = fake.requests
    assert req["path"] == "/v1/models/gemini-2.5-flash:generateContent"
    assert req["headers"]["x-goog-api-key"] == "test-key"
    sent = req["body"]["contents"][0]["parts"][0]["text"]
    assert sent == narrative_input(sem)
    digest = json.loads(sent)
    assert set(digest) == {"capture", "summary", "findings", "worst_flows"}
    assert len(sent) <= MAX_INPUT_CHARS
    assert "systemInstruction" in req["body"]
    report = render_report(sem)
    out = with_narrative(report, res.text, res.model)
    assert out.startswith(report.splitlines()[0] + "\n\n## Narrative (written by Gemini (gemini-2.5-flash)")
    assert STORY in out
    assert out.endswith(report.partition("\n")[2])  # the deterministic report follows, unchanged


def test_model_from_ghost_model(fake: FakeGemini, sem: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
    monkeypatch.setenv("GHOST_MODEL", "gemini-2.5-pro")
    assert generate_narrative(sem).model == "gemini-2.5-pro"
    assert fake.requests[0]["path"] == "/v1/models/gemini-2.5-pro:generateContent"


def test_api_error_leaves_report_unchanged(fake: FakeGemini, sem: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    fake.status = 429
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
    res = generate_narrative(sem)
    assert res.text is None
    assert "Gemini call failed (ClientError" in res.message
    assert "unchanged" in res.message


def test_unreachable_server_is_reported(sem: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    f = FakeGemini()
    url = f.url
    f.close()  # nothing listens there any more
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", url)
    res = generate_narrative(sem)
    assert res.text is None
    assert "Gemini call failed" in res.message


def test_config_detection() -> None:
    assert narrative_config({}) == (None, "gemini-2.5-flash")
    assert narrative_config({"GEMINI_API_KEY": "x"})[0] == "gemini"
    assert narrative_config({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"})[0] == "vertex"
    assert narrative_config({"GOOGLE_GENAI_USE_VERTEXAI": "true"})[0] is None
    assert narrative_config({"GHOST_MODEL": "m"})[1] == "m"


def test_vertex_routes_through_sdk(fake: FakeGemini, sem: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_API_KEY": "vk", "GOOGLE_VERTEX_BASE_URL": fake.url}
    res = generate_narrative(sem, environ=env)
    assert res.text == STORY
    assert "gemini-2.5-flash:generateContent" in fake.requests[0]["path"]


def test_digest_is_bounded(sem: dict[str, Any]) -> None:
    big = json.loads(json.dumps(sem))
    big["findings"] = [dict(sem["findings"][0], title="x" * 2000, id=f"F{i}") for i in range(1, 31)] if sem["findings"] else []
    text = narrative_input(big, max_chars=4000)
    assert len(text) <= 4000
    json.loads(text)  # still a whole JSON document: items were dropped, not cut


def test_compare_outputs_with_narrative(fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
    with_story = write_compare_outputs(A, B, semantic_dir=tmp_path / "s", report_dir=tmp_path / "r", narrative=True)
    monkeypatch.delenv("GEMINI_API_KEY")
    plain = write_compare_outputs(A, B, semantic_dir=tmp_path / "s2", report_dir=tmp_path / "r2", narrative=True)
    assert any("paragraph written by" in n for n in with_story.notices)
    assert NO_KEY in plain.notices
    sent = json.loads(fake.requests[0]["body"]["contents"][0]["parts"][0]["text"])
    assert sent["comparison"]["injected_at_b"] == 1
    r1 = (tmp_path / "r" / "chrissanders_ppa2e_http_espn_A_vs_chrissanders_ppa2e_http_espn_B_forensic_report.md").read_text()
    r2 = (tmp_path / "r2" / "chrissanders_ppa2e_http_espn_A_vs_chrissanders_ppa2e_http_espn_B_forensic_report.md").read_text()
    assert STORY in r1
    assert "## Narrative" not in r2
    assert r1.replace(r1[r1.index("\n## Narrative"):r1.index(STORY) + len(STORY) + 1], "") == r2
