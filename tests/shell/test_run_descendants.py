"""Descendants that leave the process group (double fork + setsid) die with the command (Linux reaper)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from netghost.shell.exec import _run as run_mod
from netghost.shell.exec._run import run_argv, scrub_env

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="child subreaper is Linux-only")

DAEMON = """
import os, sys, time
pidfile, linger = sys.argv[1], float(sys.argv[2])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in (0, 1, 2):
            os.close(fd)
        with open(pidfile + ".tmp", "w") as fh:
            fh.write(str(os.getpid()))
        os.rename(pidfile + ".tmp", pidfile)
        time.sleep(120)
        os._exit(0)
    os._exit(0)
while not os.path.exists(pidfile):
    time.sleep(0.01)
print("daemon started", flush=True)
time.sleep(linger)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_dead(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _run(tmp_path: Path, linger: float, timeout_s: float) -> tuple[run_mod.RunResult, int]:
    pidfile = tmp_path / "daemon.pid"
    res = run_argv(
        [sys.executable, "-c", DAEMON, str(pidfile), str(linger)], timeout_s=timeout_s, env=scrub_env()
    )
    return res, int(pidfile.read_text())


def test_setsid_daemon_dies_on_timeout(tmp_path: Path) -> None:
    res, daemon = _run(tmp_path, linger=60, timeout_s=2.0)
    assert res.error == "timeout" and "daemon started" in res.stdout
    assert _wait_dead(daemon), f"daemon {daemon} survived the timeout"
    assert "may still run" not in res.stderr


def test_setsid_daemon_dies_when_the_command_exits(tmp_path: Path) -> None:
    res, daemon = _run(tmp_path, linger=0, timeout_s=20.0)
    assert (res.error, res.exit_code) == (None, 0)
    assert _wait_dead(daemon), f"daemon {daemon} outlived its command"


def test_without_the_reaper_the_daemon_escapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: process-group killing alone does not reach a setsid() daemon."""
    monkeypatch.setattr(run_mod, "USE_REAPER", False)
    res, daemon = _run(tmp_path, linger=60, timeout_s=2.0)
    try:
        assert res.error == "timeout"
        assert not _wait_dead(daemon, within_s=0.5)
    finally:
        os.kill(daemon, signal.SIGKILL)


def test_reaper_keeps_exit_codes_signals_and_not_found(tmp_path: Path) -> None:
    env = scrub_env()
    assert run_argv([sys.executable, "-c", "import sys; sys.exit(3)"], timeout_s=10, env=env).exit_code == 3
    killed = run_argv(
        [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"],
        timeout_s=10,
        env=env,
    )
    assert killed.exit_code == -signal.SIGTERM
    missing = run_argv(["no-such-binary-xyz"], timeout_s=10, env=env)
    assert (missing.exit_code, missing.error) == (127, "command_not_found")
    script = tmp_path / "noexec.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    denied = run_argv([str(script)], timeout_s=10, env=env)
    assert denied.exit_code in (126, 127) and denied.error in ("exec_error", "command_not_found")


def test_relative_program_is_resolved_against_cwd(tmp_path: Path) -> None:
    script = tmp_path / "hello.sh"
    script.write_text("#!/bin/sh\necho hello from cwd\n")
    script.chmod(0o755)
    res = run_argv(["./hello.sh"], timeout_s=10, env=scrub_env(), cwd=tmp_path)
    assert (res.exit_code, res.stdout) == (0, "hello from cwd\n")
    missing = run_argv(["./nope.sh"], timeout_s=10, env=scrub_env(), cwd=tmp_path)
    assert (missing.exit_code, missing.error) == (127, "command_not_found")
