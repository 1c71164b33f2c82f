"""Start, reach and stop the resident lab of a state directory; and the server process's ``main``.

:func:`start_resident` is what the code that prepares a lab for a session calls (``ghost-agent demo``,
``--lab``, ``mcp --lab``, ``eval``): it reuses a resident lab already serving the state, else starts one
as a child in its own session (a Ctrl-C at the terminal is the agent's to handle, not the lab's) and
waits for its ``ready`` line. The :class:`Resident` it returns owns the process only if it started it,
and only an owner's :meth:`Resident.stop` stops it; every resident this process started is also stopped
at interpreter exit. Two safety nets inside the server make sure no process is left behind even if its
owner is killed: it stops when the owner is gone, and after ``idle_s`` without a call.

When the server cannot start (socket path too long without O_PATH, read-only directory, no lab state ...) the
:class:`Resident` says why (``problem``) and is not running: the shims then take the per-process path
by themselves. The caller shows the warning; nothing fails.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netghost.errors import LabError
from netghost.lab.resident._server import CONTROL, ResidentServer
from netghost.lab.resident._shim import connect, exchange, request_fields, socket_path, unix_address

__all__ = ["DEFAULT_IDLE_S", "IDLE_ENV", "Resident", "main", "start_resident", "started_residents",
           "stop_started_residents"]

DEFAULT_IDLE_S = 600.0
"""A resident lab with no call for this long stops (a safety net: its owner normally stops it)."""
IDLE_ENV = "NETGHOST_LAB_RESIDENT_IDLE_S"
_READY_TIMEOUT_S = 30.0
_STARTED: list[Resident] = []


@dataclass
class Resident:
    """A handle on the resident lab of ``state_dir``.

    ``running`` is False when none could be started (``problem`` says why: the shims then run each call
    as its own process). ``owned`` is True for the handle that started it: only that one stops it.
    """

    state_dir: Path
    running: bool
    owned: bool = False
    pid: int | None = None
    problem: str | None = None
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def socket(self) -> str:
        return socket_path(str(self.state_dir))

    def call(self, tool: str, args: Sequence[str], env: Mapping[str, str] | None = None, *, cwd: str = "",
             umask: int = 0o022, stdin: bytes = b"", timeout: float | None = 60.0) -> tuple[int, bytes, bytes]:
        """One call through the server, as a shim makes it: ``(exit code, stdout, stderr)``.

        Raises:
            LabError: the server cannot be reached or went away during the call.
        """
        try:
            sock = connect(self.socket, timeout)
        except OSError as exc:
            raise LabError(f"no resident lab answers for {self.state_dir}: {exc}", path=self.state_dir) from exc
        fields = request_fields(tool, list(args), dict(env or {}), cwd=cwd or os.getcwd(), umask=umask, stdin=stdin)
        try:
            return exchange(sock, fields)
        except ValueError as exc:
            raise LabError(f"the resident lab of {self.state_dir} went away: {exc}", path=self.state_dir) from exc

    def control(self, op: str) -> dict[str, Any]:
        """A control request (``ping``, ``status``, ``arm``, ``stop``), its JSON answer.

        Raises:
            LabError: not running, or the server refused.
        """
        code, out, err = self.call(CONTROL, [op], timeout=_READY_TIMEOUT_S)
        if code != 0:
            raise LabError(f"resident lab {op}: {err.decode(errors='replace').strip()}", path=self.state_dir)
        try:
            answer = json.loads(out) if out.strip().startswith(b"{") else {"answer": out.decode().strip()}
        except json.JSONDecodeError as exc:
            raise LabError(f"resident lab {op}: unreadable answer", path=self.state_dir) from exc
        return dict(answer)

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the server if this handle started it (it finishes the calls in flight first)."""
        if not self.owned or self._proc is None:
            return
        proc, self._proc = self._proc, None
        self.running = False
        if proc.poll() is None:
            with contextlib.suppress(LabError):
                self.control("stop")
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(5.0)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        with contextlib.suppress(ValueError):
            _STARTED.remove(self)

    def __enter__(self) -> Resident:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _idle_from_env(env: Mapping[str, str]) -> float:
    raw = env.get(IDLE_ENV, "").strip()
    try:
        return float(raw) if raw else DEFAULT_IDLE_S
    except ValueError:
        return DEFAULT_IDLE_S


def start_resident(state_dir: str | Path, *, idle_s: float | None = None, owner_pid: int | None = None,
                   python: str | None = None, _retry: bool = True) -> Resident:
    """The resident lab of ``state_dir``: the one already serving it, else a new one this process owns.

    Args:
        state_dir: a lab state (``init_state`` made it).
        idle_s: stop after this long without a call (default ``$NETGHOST_LAB_RESIDENT_IDLE_S`` or 600 s).
        owner_pid: stop when this process is gone (default: this process).
        python: interpreter for the server (default this one).

    Returns:
        A :class:`Resident`; ``running`` False with ``problem`` set when none could be started.
    """
    state = Path(state_dir).resolve()
    if not (state / "meta.json").exists():
        return Resident(state, False, problem=f"no lab state in {state}")
    path = socket_path(str(state))
    try:
        _address, fd = unix_address(path)
    except OSError:
        return Resident(state, False, problem=f"the socket path {path} is too long for a Unix socket on this system")
    if fd >= 0:
        os.close(fd)
    existing = Resident(state, True)
    with contextlib.suppress(LabError):
        pid = existing.control("ping").get("pid")
        existing.pid = int(pid) if pid else None
        return existing
    idle = _idle_from_env(os.environ) if idle_s is None else idle_s
    owner = os.getpid() if owner_pid is None else owner_pid
    argv = [python or sys.executable, "-m", "netghost.lab.resident", "--state", str(state), "--idle", str(idle),
            "--owner", str(owner)]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True)
    except OSError as exc:
        return Resident(state, False, problem=f"cannot start the resident lab: {exc}")
    line = _first_line(proc, _READY_TIMEOUT_S)
    if proc.stdout is not None:
        proc.stdout.close()
    if not line.startswith("ready"):
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if "already serves" in line and _retry:  # lost a race with another starter: use theirs
            time.sleep(0.2)
            return start_resident(state, idle_s=idle_s, owner_pid=owner_pid, python=python, _retry=False)
        return Resident(state, False, problem=line.removeprefix("error: ").strip() or "it exited at start")
    resident = Resident(state, True, owned=True, pid=proc.pid, _proc=proc)
    _STARTED.append(resident)
    return resident


def _first_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The server's first line (``ready ...`` or ``error: ...``), or "" at EOF or timeout."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    buf = b""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                return "error: the resident lab did not say it was ready in time"
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            buf += chunk
    return buf.decode(errors="replace").split("\n", 1)[0]


def stop_started_residents(keep: Sequence[Resident] = ()) -> None:
    """Stop every resident lab this process started and still owns, but those in ``keep`` (at exit; tests
    after each test, keeping the ones a longer-lived fixture holds)."""
    for resident in list(_STARTED):
        if not any(resident is kept for kept in keep):
            resident.stop()


def started_residents() -> list[Resident]:
    """The resident labs this process started and still owns."""
    return list(_STARTED)


atexit.register(stop_started_residents)


# ---- the server process ----------------------------------------------------------------------
def _arm_factory(state_dir: Path, on_request: Callable[[], None]) -> Any:
    from netghost.lab.arm import start_lab_arm  # noqa: PLC0415  ssl and the certificates load only when asked

    return start_lab_arm(state_dir, on_request)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m netghost.lab.resident --state DIR [--idle S] [--owner PID]``: serve until stopped."""
    parser = argparse.ArgumentParser(prog="python -m netghost.lab.resident")
    parser.add_argument("--state", required=True)
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE_S)
    parser.add_argument("--owner", type=int, default=None)
    args = parser.parse_args(argv)
    state = Path(args.state).resolve()
    server = ResidentServer(state, idle_s=args.idle, owner_pid=args.owner, arm_factory=_arm_factory)
    try:
        server.bind()
    except LabError as exc:
        print(f"error: {exc}", flush=True)
        return 1
    _quiet_streams(state)
    server.write_info()
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's Ctrl-C belongs to the session, not the lab
    os.chdir("/")  # never hold a directory the caller may remove
    print(f"ready {os.getpid()}", flush=True)
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    server.serve()
    return 0


def _quiet_streams(state: Path) -> None:
    """Log to ``<state>/resident.log`` (or nowhere when the directory is read-only)."""
    try:
        fd = os.open(state / "resident.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 2)
    os.close(fd)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s resident[%(process)d] %(levelname)s %(message)s")
    logging.getLogger("netghost.lab.resident").info("serving %s", state)
