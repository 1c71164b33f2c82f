"""Isolated per-task workspaces and the CABINCREW_* environment (CabinCrew §3)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from netghost.governance.workspace import WorkspaceError, create_workspace, open_workspace


def test_create_makes_fresh_private_dirs(tmp_path: Path) -> None:
    ws = create_workspace(tmp_path / "base", "task-1")
    for d in (ws.root, ws.artifacts_dir, ws.temp_dir):
        assert d.is_dir() and stat.S_IMODE(d.stat().st_mode) == 0o700
    assert list(ws.artifacts_dir.iterdir()) == [] and list(ws.temp_dir.iterdir()) == []


def test_no_state_leaks_between_runs(tmp_path: Path) -> None:
    ws = create_workspace(tmp_path, "run-1")
    (ws.artifacts_dir / "old.pcap").write_bytes(b"x")
    with pytest.raises(WorkspaceError, match="refusing to reuse"):
        create_workspace(tmp_path, "run-1")
    other = create_workspace(tmp_path, "run-2")
    assert list(other.artifacts_dir.iterdir()) == []


@pytest.mark.parametrize("bad", ["", "../x", "a/b", ".hidden", "x" * 200, "semi;colon"])
def test_unsafe_task_ids_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(WorkspaceError):
        create_workspace(tmp_path, bad)


def test_env_sets_the_four_variables(tmp_path: Path) -> None:
    ws = create_workspace(tmp_path, "t")
    env = ws.env("flight-plan")
    assert env == {
        "CABINCREW_WORKSPACE": str(ws.root),
        "CABINCREW_ARTIFACTS_DIR": str(ws.artifacts_dir),
        "CABINCREW_TEMP_DIR": str(ws.temp_dir),
        "CABINCREW_MODE": "flight-plan",
    }
    assert ws.env("take-off")["CABINCREW_MODE"] == "take-off"
    with pytest.raises(ValueError, match="unknown CabinCrew mode"):
        ws.env("landing")  # type: ignore[arg-type]


def test_child_process_sees_only_its_workspace(tmp_path: Path) -> None:
    ws = create_workspace(tmp_path, "t")
    base = dict(os.environ, CABINCREW_WORKSPACE="/somewhere/else", CABINCREW_STALE="1")
    env = ws.child_env("take-off", base)
    assert "CABINCREW_STALE" not in env and env["TMPDIR"] == str(ws.temp_dir)
    code = (
        "import os, pathlib, tempfile;"
        "p = pathlib.Path(os.environ['CABINCREW_ARTIFACTS_DIR']) / 'out.txt';"
        "p.write_text(os.environ['CABINCREW_MODE']);"
        "print(tempfile.gettempdir())"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(ws.temp_dir)
    assert (ws.artifacts_dir / "out.txt").read_text() == "take-off"


def test_reset_temp_and_open_and_remove(tmp_path: Path) -> None:
    ws = create_workspace(tmp_path, "t")
    (ws.temp_dir / "scratch").write_text("x")
    ws.reset_temp()
    assert list(ws.temp_dir.iterdir()) == []
    assert open_workspace(tmp_path, "t") == ws
    ws.remove()
    with pytest.raises(WorkspaceError, match="not a workspace"):
        open_workspace(tmp_path, "t")
