"""``ghost-agent demo`` investigates a lab world end to end through the real shell and gate."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from netghost.agent.cli import main
from netghost.governance.wal import read_wal, verify


def _records(audit_dir: Path) -> list[dict[str, object]]:
    (path,) = audit_dir.glob("shell_audit_*.jsonl")
    assert verify(path).ok
    return read_wal(path).records


def test_demo_with_yes_finds_the_nsg_rule_and_the_silent_drop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--yes", "--scenario", "nsg-deny", "--audit-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "DenyAllFromWebSubnet" in out
    assert "silently dropped" in out
    records = _records(tmp_path)
    actions = {(r["command"].split()[4], r["action"]) for r in records if r["command"].startswith("az network watcher packet-capture")}
    assert ("create", "user_approved") in actions
    # every finding line cites an audit id that exists in the chain
    ids = {r["audit_id"] for r in records}
    cited = set(re.findall(r"\[(ghost_\d{8}_\d{6}_\d{3})\]", out))
    assert cited and cited <= ids
    semantic = next(tmp_path.glob("evidence/*/*_semantic.json"))
    assert json.loads(semantic.read_text())["summary"]["syn_without_synack"] > 0
    # the screen says where the engine's outputs are, and every path it names exists
    listed = re.findall(r"^\s+(/\S+(?:\.cap|_executive_summary\.md|_forensic_report\.md|_semantic\.json))$", out, re.M)
    assert len(listed) == 4 and all(Path(p).exists() for p in listed), out


def test_demo_without_terminal_or_yes_fails_closed_at_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--scenario", "nsg-deny", "--audit-dir", str(tmp_path)]) == 0
    records = _records(tmp_path)
    risky = [r for r in records if r["classification"] == "RISKY"]
    assert risky and all(r["status"] == "denied" and r["action"] == "user_denied" for r in risky)
    assert not list(tmp_path.glob("evidence/*/*.cap"))
    # and the screen says why, and how to let the lab's RISKY steps run
    out = " ".join(capsys.readouterr().out.split())
    assert "refused: no terminal to ask and --yes not given: failing closed" in out
    assert "Run `ghost-agent demo --yes`" in out


def test_demo_rejects_an_unknown_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--scenario", "no-such-world", "--audit-dir", str(tmp_path)]) == 2
    assert "unknown scenario" in capsys.readouterr().err
