"""--narrative with the real google-genai SDK against the lab's fake Gemini server (no mocks, no network),
through the LLM gateway.

The fake server records every request, so the tests check what really leaves the process: the path,
the API key header, that the text sent is the bounded semantic digest (never packets), redacted, and
that the gateway's audit record lands in the audit directory when one is given.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from netghost.forensics.compare import write_compare_outputs
from netghost.forensics.engine import analyze_capture
from netghost.forensics.report import build_semantic, generate_narrative, render_report, with_narrative
from netghost.forensics.report._narrative import (
    AUDIT_FILE,
    MAX_INPUT_CHARS,
    NO_KEY,
    narrative_config,
    narrative_input,
)
from netghost.governance import read_wal, verify
from netghost.lab import FakeGemini, FakeTurn
from netghost.llm import LlmGateway
from netghost.safetext import md_block

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
A = PAIRS / "chrissanders_ppa2e_http_espn_A.pcap"
B = PAIRS / "chrissanders_ppa2e_http_espn_B.pcap"
STORY = "The flow tcp/15 was reset by a middlebox between the probes (F1, B frame 598)."


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    """Answers every request with the story, whatever the API version (Vertex uses v1beta1)."""
    with FakeGemini(lambda body: FakeTurn.say(STORY), api_version=None) as f:
        yield f


@pytest.fixture(scope="module")
def sem() -> dict[str, Any]:
    return build_semantic(analyze_capture(A))


def test_no_key_says_so_and_sends_nothing(fake: FakeGemini, sem: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    res = generate_narrative(sem)
    assert res.text is None
    assert res.message == NO_KEY
    assert fake.requests == []
    report = render_report(sem)
    assert with_narrative(report, res.text) == report


def test_real_sdk_against_fake_server(fake: FakeGemini, sem: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    res = generate_narrative(sem)
    assert res.text == STORY
    assert res.model == "gemini-2.5-flash"
    (body,) = fake.requests
    assert fake.paths == ["/v1/models/gemini-2.5-flash:generateContent"]
    assert fake.headers[0]["x-goog-api-key"] == "test-key"
    sent = body["contents"][0]["parts"][0]["text"]
    assert sent == narrative_input(sem)
    digest = json.loads(sent)
    assert set(digest) == {"capture", "summary", "findings", "worst_flows"}
    assert len(sent) <= MAX_INPUT_CHARS
    assert "systemInstruction" in body
    report = render_report(sem)
    out = with_narrative(report, res.text, res.model)
    assert out.startswith(report.splitlines()[0] + "\n\n## Narrative (written by Gemini (gemini-2.5-flash)")
    assert md_block(STORY) in out  # the model's paragraph, escaped: it is shown, never read as Markdown
    assert out.endswith(report.partition("\n")[2])  # the deterministic report follows, unchanged


def test_model_from_ghost_model(fake: FakeGemini, sem: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    monkeypatch.setenv("GHOST_MODEL", "gemini-2.5-pro")
    assert generate_narrative(sem).model == "gemini-2.5-pro"
    assert fake.paths[0] == "/v1/models/gemini-2.5-pro:generateContent"


def test_api_error_leaves_report_unchanged(sem: dict[str, Any], tmp_path: Path) -> None:
    slept: list[float] = []
    with FakeGemini([FakeTurn.fail(429, "quota")] * 4) as fake, LlmGateway(
            audit=tmp_path / "llm.jsonl", environ={"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": fake.base_url},
            sleeper=slept.append) as gateway:
        res = generate_narrative(sem, gateway=gateway)
    assert res.text is None
    assert "Gemini call failed (ClientError" in res.message
    assert "unchanged" in res.message
    assert len(fake.requests) == 4 and slept == [1.0, 2.0, 4.0]  # retried by the gateway, without sleeping
    (rec,) = read_wal(tmp_path / "llm.jsonl").records
    assert (rec["purpose"], rec["outcome"], rec["status"], rec["attempts"]) == ("forensics_narrative", "error", 429, 4)


def test_audit_dir_gets_one_record_per_call(fake: FakeGemini, sem: dict[str, Any], tmp_path: Path) -> None:
    env = {"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": fake.base_url}
    for _ in range(2):
        assert generate_narrative(sem, environ=env, audit_dir=tmp_path / "audit").text == STORY
    wal = tmp_path / "audit" / AUDIT_FILE
    assert verify(wal).ok
    recs = read_wal(wal).records
    assert [r["purpose"] for r in recs] == ["forensics_narrative"] * 2
    assert all(r["outcome"] == "ok" and r["model"] == "gemini-2.5-flash" and r["total_tokens"] for r in recs)


def test_no_audit_dir_writes_no_audit_file(fake: FakeGemini, sem: dict[str, Any], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert generate_narrative(sem, environ={"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": fake.base_url}).text
    assert list(tmp_path.iterdir()) == [tmp_path / "home"]


def test_the_digest_is_redacted_before_it_leaves(fake: FakeGemini, sem: dict[str, Any]) -> None:
    secret = "Hunter2-Sekrit-42"
    leaky = json.loads(json.dumps(sem))
    leaky["capture"]["file"] = f"capture password={secret}.pcap"
    res = generate_narrative(leaky, environ={"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": fake.base_url})
    assert res.text == STORY
    assert secret not in b"".join(fake.raw).decode()
    assert "[REDACTED:password]" in fake.requests[0]["contents"][0]["parts"][0]["text"]


def test_unreachable_server_is_reported(sem: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    f = FakeGemini([])
    url = f.base_url
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
    env = {"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_API_KEY": "vk", "GOOGLE_VERTEX_BASE_URL": fake.base_url}
    res = generate_narrative(sem, environ=env)
    assert res.text == STORY
    assert "gemini-2.5-flash:generateContent" in fake.paths[0]


def test_digest_is_bounded(sem: dict[str, Any]) -> None:
    big = json.loads(json.dumps(sem))
    big["findings"] = [dict(sem["findings"][0], title="x" * 2000, id=f"F{i}") for i in range(1, 31)] if sem["findings"] else []
    text = narrative_input(big, max_chars=4000)
    assert len(text) <= 4000
    json.loads(text)  # still a whole JSON document: items were dropped, not cut


def test_compare_outputs_with_narrative(fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    with_story = write_compare_outputs(A, B, semantic_dir=tmp_path / "s", report_dir=tmp_path / "r", narrative=True)
    monkeypatch.delenv("GEMINI_API_KEY")
    plain = write_compare_outputs(A, B, semantic_dir=tmp_path / "s2", report_dir=tmp_path / "r2", narrative=True)
    assert any("paragraph written by" in n for n in with_story.notices)
    assert NO_KEY in plain.notices
    sent = json.loads(fake.requests[0]["contents"][0]["parts"][0]["text"])
    assert sent["comparison"]["injected_at_b"] == 1
    r1 = (tmp_path / "r" / "chrissanders_ppa2e_http_espn_A_vs_chrissanders_ppa2e_http_espn_B_forensic_report.md").read_text()
    r2 = (tmp_path / "r2" / "chrissanders_ppa2e_http_espn_A_vs_chrissanders_ppa2e_http_espn_B_forensic_report.md").read_text()
    shown = md_block(STORY)
    assert shown in r1
    assert "## Narrative" not in r2
    assert r1.replace(r1[r1.index("\n## Narrative"):r1.index(shown) + len(shown) + 1], "") == r2
