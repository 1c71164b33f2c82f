"""``--yes`` approves RISKY commands only for a lab world, whoever builds the options."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from netghost.agent._run import Options, run_agent
from tests.agent import fake_az
from tests.agent.fakes import ScriptedBrain, call, turn


def test_run_agent_with_yes_but_no_lab_fails_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_az.install(tmp_path / "bin", "ok")  # outside the lab the environment preflight needs a logged-in az
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    keep = tmp_path / "keep.txt"
    keep.write_text("precious\n")
    brain = ScriptedBrain([
        turn(call("run_shell_cmd", command=f"rm {keep}", reasoning="Remove the file.")),
        turn(call("complete_investigation", confidence="low", root_cause_summary="Nothing found.")),
    ])
    out = io.StringIO()
    code = run_agent(Options(audit_dir=tmp_path / "audit", brain="playbook", intent="x", yes=True),
                     stdin=io.StringIO(""), console=Console(file=out, width=100), brain=brain)
    assert code == 0
    assert keep.read_text() == "precious\n"  # the RISKY rm was refused, not approved by --yes
    assert "approved by --yes" not in out.getvalue()
    assert "no terminal to ask and --yes not given: failing closed" in out.getvalue()
