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


def test_help_and_version_import_no_subcommand_module() -> None:
    """``--help``/``--version`` must not load the Gemini SDK, the lab or the engine (seconds of start-up)."""
    code = ("import sys\nfrom netghost.agent.cli import build_parser\nbuild_parser(['--help'])\n"
            "heavy = [m for m in ('google.genai', 'netghost.lab', 'netghost.agent._run', 'netghost.mcp',"
            " 'netghost.shell', 'numpy') if m in sys.modules]\nprint(heavy)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stdout


def test_a_playbook_investigation_never_loads_the_gemini_sdk(tmp_path: Path) -> None:
    """The demo, ``--lab`` and ``eval`` run the playbook brain: the google-genai SDK (~1 s of CPU) stays out of
    the process from start to RCA; asking for the Gemini brain still loads it (the face is lazy, not cut)."""
    code = ("import sys\nfrom netghost.agent.cli import main\n"
            f"code = main(['demo', '--brain', 'playbook', '--audit-dir', {str(tmp_path / 'audit')!r}])\n"
            "print(code, 'google.genai' in sys.modules)\n"
            "from netghost.agent.brains import GeminiBrain\n"
            "print('google.genai' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300,
                          cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert proc.stdout.split()[-3:] == ["0", "False", "True"], proc.stdout[-2000:] + proc.stderr[-2000:]


def test_only_the_chosen_subcommand_module_is_imported() -> None:
    code = ("import sys\nfrom netghost.agent.cli import build_parser\nbuild_parser(['audit', 'verify', 'x'])\n"
            "print('netghost.governance.audit_cli' in sys.modules, 'netghost.agent.demo' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert proc.stdout.split() == ["True", "False"], proc.stdout


@pytest.mark.parametrize(("argv", "want"), [
    (["demo", "--yes"], "demo"), (["--intent", "demo", "x"], None), (["--intent=demo"], None),
    (["--aud", "lab", "--brain", "playbook"], None), (["--yes", "audit", "verify"], "audit"), ([], None),
    (["--", "demo"], None), (["eval"], "eval"), (["--lab", "nsg-deny", "report"], "report"),
])
def test_the_subcommand_is_the_first_bare_word_not_an_option_value(argv: list[str], want: str | None) -> None:
    from netghost.agent.cli import selected_subcommand

    assert selected_subcommand(argv) == want


def test_a_subcommand_usage_error_prints_that_subcommand_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["demo", "--bogus"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "usage: ghost-agent demo" in err and "unrecognized arguments: --bogus" in err
