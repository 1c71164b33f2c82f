"""The ghost-agent entry points work as the README says."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from netghost.agent.cli import build_parser, main
from tests.conftest import REPO_ROOT


def test_python_dash_m_netghost_reports_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "netghost", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("ghost-agent ")


def test_no_subcommand_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


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
