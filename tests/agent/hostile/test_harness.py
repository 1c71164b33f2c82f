"""The harness itself: a benign scripted model runs end to end and its evidence is all there."""

from __future__ import annotations

from pathlib import Path

from .harness import complete, run_hostile, shell


def test_a_benign_model_run_leaves_audit_files_and_request_bodies(tmp_path: Path) -> None:
    run = run_hostile(tmp_path, [shell("az vm list -o json", "List the VMs."), complete("Nothing found.")])
    assert run.code == 0, run.console
    assert "az vm list -o json" in [r["command"] for r in run.ran()]  # after the start-up orphan scan
    assert run.requests and "web-vm-01 cannot reach redis-primary" in run.sent()
    names = {p.name for p in run.files()}
    assert any(n.startswith("ghost_rca_") and n.endswith(".md") for n in names), names
    assert not run.failures
    assert run.leaks(["web-vm-01"])  # the leak finder finds what is there


def test_the_subprocess_form_reports_the_real_exit_code(tmp_path: Path) -> None:
    run = run_hostile(tmp_path, [complete("Nothing to do.")], subprocess_run=True)
    assert run.code == 0, run.console
    assert "Traceback" not in run.console
