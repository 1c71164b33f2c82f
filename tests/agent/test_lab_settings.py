"""An invalid lab setting is a clear error, never an investigation of an empty world (issue 24, bug 4).

``ghost-agent demo --clock-scale 0`` used to run: every lab ``az`` call then failed with ``ERROR: lab:
NETGHOST_LAB_CLOCK_SCALE='0.0' must be in (0, 1e6]`` and the agent concluded "Could not identify the
client". The option is now refused at the command line, and a lab setting that is broken anyway (the
variable set by hand) stops the investigation with that reason at the first call that shows it.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from netghost.agent._exit_codes import ExitCode
from netghost.agent._run import Options, run_agent
from netghost.agent.cli import main
from netghost.agent.demo import prepare_lab
from netghost.errors import LabError
from netghost.lab import SCALE_ENV

EXIT_ENVIRONMENT = ExitCode.ENVIRONMENT


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "fast", "2e6"])
def test_demo_refuses_a_clock_scale_the_lab_cannot_run(value: str, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as stopped:
        main(["demo", "--clock-scale", value, "--audit-dir", str(tmp_path)])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "--clock-scale" in err and "lab seconds per wall second" in err
    assert not (tmp_path / "ghost_session.json").exists()  # nothing ran


def test_prepare_lab_refuses_it_too(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(LabError, match="clock scale must be in"):
        prepare_lab("nsg-deny", tmp_path, clock_scale=0.0)


def test_a_broken_lab_setting_stops_the_investigation_with_that_reason(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lab = prepare_lab("nsg-deny", tmp_path)
    lab.env[SCALE_ENV] = "0"  # what a hand-set NETGHOST_LAB_CLOCK_SCALE=0 does to every lab az call
    out = io.StringIO()
    code = run_agent(Options(audit_dir=tmp_path, brain="playbook", intent="web-vm-01 cannot reach redis-primary on "
                             "port 6379", yes=True, lab=lab), stdin=io.StringIO(""),
                     console=Console(file=out, width=200))
    text = out.getvalue()
    assert code == EXIT_ENVIRONMENT, text
    assert "[ERROR] lab_setting_invalid: a lab setting is invalid" in text
    assert "NETGHOST_LAB_CLOCK_SCALE='0' must be in (0, 1e6]" in text
    assert "Could not identify" not in text and not list(tmp_path.glob("ghost_rca_*.md"))
