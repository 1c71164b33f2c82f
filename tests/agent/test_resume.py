"""--resume: an API error saves and prints the resume command; resuming rebuilds the conversation from
the audit trail, verifies the chains first, and refuses a tampered session file without a human."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from netghost.agent.cli import main
from netghost.contracts import SessionState
from netghost.lab.fake_gemini import FakeGemini, FakeTurn

NSG = {"command": "az network nsg list -g prod-rg -o json", "reasoning": "Read the NSGs."}


def _env(monkeypatch: pytest.MonkeyPatch, fake: FakeGemini) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "x")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def _first_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    with FakeGemini([FakeTurn.call("run_shell_cmd", NSG, text="Reading NSGs."), FakeTurn.fail(400, "bad")]) as fake:
        _env(monkeypatch, fake)
        code = main(["--lab", "nsg-deny", "--audit-dir", str(tmp_path), "--intent", "web cannot reach redis"])
    out = capsys.readouterr().out
    assert code == 3  # the model API failed (ExitCode.MODEL_API)
    assert "[ERROR] The Gemini API call failed (api_error)" in out
    sid = SessionState.model_validate(json.loads((tmp_path / "ghost_session.json").read_text())).session_id
    assert f"Session saved. Resume with: ghost-agent --resume {sid} --audit-dir {tmp_path} --lab nsg-deny" in out
    return sid


def test_an_api_error_saves_and_resume_continues_from_the_audit_trail(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    sid = _first_run(tmp_path, monkeypatch, capsys)
    done = FakeTurn.call("complete_investigation", {"confidence": "high", "root_cause_summary": "NSG deny."})
    with FakeGemini([done]) as fake:
        _env(monkeypatch, fake)
        assert main(["--resume", sid, "--lab", "nsg-deny", "--audit-dir", str(tmp_path)]) == 0
        body = fake.requests[0]
    out = capsys.readouterr().out
    assert "Audit trail verified" in out
    roles = [c["role"] for c in body["contents"]]
    assert roles == ["user", "model", "user", "user"]  # intent, the NSG call, its result, the resume note
    result = body["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert result["audit_id"] == f"{sid}_003" and result["status"] == "completed"  # rebuilt from the shell audit
    assert "is_resume = True" in json.dumps(body["systemInstruction"])
    state = SessionState.model_validate(json.loads((tmp_path / "ghost_session.json").read_text()))
    assert state.is_resume and state.rca_report_path and state.resumed_from == sid


def test_a_tampered_session_file_is_refused_with_its_reason_and_the_next_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    sid = _first_run(tmp_path, monkeypatch, capsys)
    path = tmp_path / "ghost_session.json"
    data = json.loads(path.read_text())
    data["turn_count"] = 40
    path.write_text(json.dumps(data))
    with FakeGemini([]) as fake:
        _env(monkeypatch, fake)
        assert main(["--resume", sid, "--lab", "nsg-deny", "--audit-dir", str(tmp_path)]) == 1
        assert fake.requests == []
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "refused" in x]
    assert line == (f"[ERROR] Session file ghost_session.json refused: its seal does not match its content: a field "
                    "was edited, or the seal was copied from another session's file. Start a new session, or rebuild "
                    f"the report from the audit trail: ghost-agent report {sid} --audit-dir {tmp_path}")


def test_a_tampered_audit_file_is_reported_before_anything_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    sid = _first_run(tmp_path, monkeypatch, capsys)
    audit = tmp_path / f"shell_audit_{sid}.jsonl"
    lines = audit.read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace('"auto_approved"', '"user_approved"')
    audit.write_text("".join(lines))
    with FakeGemini([]) as fake:
        _env(monkeypatch, fake)
        assert main(["--resume", sid, "--lab", "nsg-deny", "--audit-dir", str(tmp_path)]) == 1
        assert fake.requests == []
    out = capsys.readouterr().out
    assert out.lstrip().startswith("[ERROR] Audit trail broken: " + audit.name)
