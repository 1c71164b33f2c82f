"""``ghost-agent demo`` is the real agent investigating a lab world, and says where everything is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from netghost.agent.cli import main
from netghost.agent.demo import prepare_lab
from netghost.governance.wal import read_wal, verify


def _records(audit_dir: Path) -> list[dict[str, object]]:
    (path,) = audit_dir.glob("shell_audit_*.jsonl")
    assert verify(path).ok
    return read_wal(path).records


def _listed(out: str) -> dict[str, str]:
    """The 'Where everything is' lines: label -> path."""
    tail = out.split("Where everything is", 1)[1]
    rows = re.findall(r"^([A-Za-z ()]+):\s+(/\S+)", tail, re.M)
    return {label.strip(): path for label, path in rows}


def test_demo_with_yes_is_the_agent_and_lists_every_output(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--yes", "--scenario", "nsg-deny", "--audit-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "web-vm-01 cannot reach redis-primary on port 6379" in out  # the world's symptom is the intent
    assert "[Ghost Agent]" in out and "DenyAllFromWebSubnet" in out and "RCA REPORT WRITTEN" in out
    listed = _listed(out)
    for label in ("RCA (Markdown)", "RCA (HTML)", "Session", "Shell audit", "Conversation"):
        assert Path(listed[label]).exists(), (label, out)
    session = json.loads((tmp_path / "ghost_session.json").read_text())
    assert listed["RCA (Markdown)"] == session["rca_report_path"]
    rca = Path(session["rca_report_path"]).read_text()
    ids = {r["audit_id"] for r in _records(tmp_path)}
    cited = set(re.findall(r"ghost_\d{8}_\d{6}_\d{3,}", rca))
    assert cited and cited <= ids
    assert "chain intact" in out


@pytest.mark.slow
def test_demo_of_a_capture_world_lists_the_forensic_reports(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--yes", "--scenario", "service-down", "--audit-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    reports = [p for label, p in re.findall(r"^(Forensic output):\s+(/\S+)", out, re.M)]
    assert any(p.endswith("_executive_summary.md") for p in reports), out
    assert any(p.endswith("_forensic_report.md") for p in reports), out
    assert all(Path(p).exists() for p in reports) and len(reports) == len(set(reports))


def test_demo_without_terminal_or_yes_fails_closed_and_says_how_to_approve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--scenario", "service-down", "--audit-dir", str(tmp_path)]) == 0
    records = _records(tmp_path)
    risky = [r for r in records if r["classification"] == "RISKY"]
    assert risky and all(r["status"] == "denied" and r["action"] == "user_denied" for r in risky)
    assert not list(tmp_path.glob("captures/*/artifacts/*.cap"))
    out = " ".join(capsys.readouterr().out.split())
    assert "failing closed" in out and "Run `ghost-agent demo --yes`" in out


def test_demo_rejects_an_unknown_world_and_never_confuses_a_name_with_a_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["demo", "--scenario", "no-such-world", "--audit-dir", str(tmp_path)]) == 2
    assert "unknown lab world 'no-such-world'" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--yes", "--scenario", "nsg-deny", "--audit-dir", "nsg-deny"]) == 0
    assert (tmp_path / "nsg-deny" / "ghost_session.json").exists()


@pytest.mark.slow
def test_keep_lab_keeps_an_injected_fault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", "--audit-dir", str(tmp_path), "reset", "nsg-deny"]) == 0
    assert main(["lab", "--audit-dir", str(tmp_path), "inject", "capture-quota"]) == 0
    faults = tmp_path / "lab" / "faults.json"
    assert json.loads(faults.read_text())["injected"]
    assert main(["demo", "--yes", "--keep-lab", "--scenario", "nsg-deny", "--audit-dir", str(tmp_path)]) == 0
    assert json.loads(faults.read_text())["injected"]  # still there for this run
    prepare_lab("nsg-deny", tmp_path)  # what a plain run does first
    assert not json.loads(faults.read_text())["injected"]  # a plain run starts the world afresh
