"""The ghost-agent entry points work as the README says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from netghost.agent.cli import build_parser, main
from tests.conftest import REPO_ROOT


def test_python_dash_m_netghost_reports_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "netghost", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("ghost-agent ")


def test_help_lists_the_subcommands_and_the_investigation_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "COMMAND" in out
    for option in ("--resume SID", "--model M", "--audit-dir DIR", "--brain {gemini,playbook}", "--lab WORLD",
                   "--intent TEXT", "--yes"):
        assert option in out


def test_gemini_without_credentials_prints_the_setup_message_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit"
    assert main(["--brain", "gemini", "--audit-dir", str(audit), "--intent", "x"]) == 1
    assert "Set GEMINI_API_KEY environment variable or add to .env file." in capsys.readouterr().err
    assert not audit.exists()


def test_without_a_key_the_playbook_brain_investigates_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    audit = tmp_path / "audit"
    assert main(["--lab", "nsg-deny", "--yes", "--audit-dir", str(audit), "--intent",
                 "web-vm-01 cannot reach redis-primary on port 6379"]) == 0
    assert "the offline playbook brain investigates" in capsys.readouterr().err
    session = json.loads((audit / "ghost_session.json").read_text())
    assert session["model"] == "playbook" and session["rca_report_path"]


def test_yes_is_refused_without_lab(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--yes", "--brain", "playbook", "--intent", "x"])
    assert info.value.code == 2
    assert "--yes approves RISKY commands and is refused without --lab" in capsys.readouterr().err


def test_an_unknown_lab_world_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lab", "no-such-world", "--brain", "playbook", "--audit-dir", str(tmp_path)]) == 2
    assert "--lab no-such-world" in capsys.readouterr().err


def test_python_dash_m_netghost_runs_the_playbook_brain_in_the_lab(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    proc = subprocess.run(
        [sys.executable, "-m", "netghost", "--brain", "playbook", "--lab", "nsg-deny", "--audit-dir",
         str(tmp_path / "audit"), "--intent", "web-vm-01 cannot reach redis-primary on 6379"],
        capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "RCA REPORT WRITTEN" in proc.stdout and list((tmp_path / "audit").glob("ghost_rca_ghost_*.md"))


def test_every_routed_subcommand_has_help() -> None:
    parser = build_parser()
    choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"audit", "lab", "demo"} <= set(choices)


def test_readme_commands_are_make_targets() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    makefile = (REPO_ROOT / "Makefile").read_text()
    commands = re.findall(r"^make (\w+)$", readme, flags=re.M)
    assert "test" in commands and "demo" in commands
    for target in commands:
        assert re.search(rf"^{target}:", makefile, flags=re.M), target
