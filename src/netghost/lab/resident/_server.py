"""The resident lab process: one per lab state, answering the ``az`` and probe shims over a Unix socket.

Each request runs the same in-process code the per-process shim would (:func:`~netghost.lab.az.run_az_slowly`,
:func:`~netghost.lab.probes.run_probe`) against the same state directory, so answers cannot differ from
the old path: every az call still takes the state's ``flock`` for its whole run (parallel calls are
serialised where they touch the lab, and in-process callers, ``ghost-agent lab inject`` or a second
server could not interleave with them), re-reads the clock, captures and blobs, and reparses the world
only when its file changed. What residence saves is the interpreter start, the imports and the world
parse (~0.5 s a call). The latency model sleeps outside the lock, so parallel calls overlap in it as they
would against ARM.

Requests run on threads; the server stops when asked (``stop``), when its owner process is gone, or
after ``idle_s`` without a request, finishing the calls in flight first, then removes its socket and its
``.resident.json``. Control requests (tool ``@ctl``): ``ping``, ``stop``, ``arm`` (start the lab ARM
endpoint in this process and answer its settings as JSON), ``status``.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import logging
import os
import socketserver
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from netghost.errors import LabError
from netghost.lab.az import run_az_slowly
from netghost.lab.probes import SHIMS, run_probe
from netghost.lab.resident._shim import decode_fields, encode, read_frame, socket_path, unix_address
from netghost.lab.state import STATE_ENV

__all__ = ["CONTROL", "INFO_NAME", "LOCK_NAME", "Request", "ResidentServer"]

CONTROL = "@ctl"
INFO_NAME = ".resident.json"
LOCK_NAME = ".resident.lock"
_READ_TIMEOUT_S = 30.0
_WATCH_S = 0.25
log = logging.getLogger("netghost.lab.resident")


@dataclass
class Request:
    """One decoded shim request."""

    tool: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    umask: int | None = None
    stdin: bytes = b""

    @classmethod
    def decode(cls, body: bytes) -> Request:
        """Raises ValueError for a malformed request."""
        req = cls(tool="")
        for tag, data in decode_fields(body):
            text = data.decode("utf-8", "surrogateescape")
            if tag == b"t":
                req.tool = text
            elif tag == b"a":
                req.args.append(text)
            elif tag == b"e":
                name, sep, value = text.partition("=")
                if not sep:
                    raise ValueError("environment field without '='")
                req.env[name] = value
            elif tag == b"c":
                req.cwd = text
            elif tag == b"u":
                req.umask = int(text) & 0o777
            elif tag == b"i":
                req.stdin = data
            else:
                raise ValueError(f"unknown field {tag!r}")
        if not req.tool:
            raise ValueError("request names no tool")
        return req


class Extension(Protocol):
    """Something the resident process also serves (the lab ARM endpoint)."""

    def settings(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class _Handler(socketserver.BaseRequestHandler):
    server: _UnixServer

    def handle(self) -> None:
        owner = self.server.owner
        owner.enter()
        try:
            self.request.settimeout(_READ_TIMEOUT_S)
            try:
                req = Request.decode(read_frame(self.request))
            except (ValueError, OSError) as exc:
                log.warning("bad request: %s", exc)
                return
            code, out, err = owner.answer(req)
            with contextlib.suppress(OSError):  # the caller went away: nothing to tell it
                self.request.sendall(encode([(b"x", str(code).encode()), (b"o", out), (b"r", err)]))
        finally:
            owner.leave()


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = False  # server_close() waits for the calls in flight
    block_on_close = True
    owner: ResidentServer


class ResidentServer:
    """The resident lab of one state directory (see the module docstring).

    Args:
        state_dir: the lab state (absolute).
        idle_s: stop after this long without a request (0: never).
        owner_pid: stop when this process is gone (None: no owner).
        arm_factory: builds the lab ARM endpoint on the first ``arm`` request (given the state and a
            callback its every request calls: lab ARM's traffic counts as activity).
    """

    def __init__(self, state_dir: Path, *, idle_s: float, owner_pid: int | None,
                 arm_factory: Callable[[Path, Callable[[], None]], Extension] | None = None) -> None:
        self.state_dir = state_dir.resolve()
        self.idle_s = idle_s
        self.owner_pid = owner_pid
        self._parent_at_start = os.getppid()
        self._arm_factory = arm_factory
        self._arm: Extension | None = None
        self._arm_lock = threading.Lock()
        self._busy = 0
        self._served = 0  # tool calls answered (status shows it: which path a shim took is observable)
        self._busy_lock = threading.Lock()
        self._last = time.monotonic()
        self._stopping = threading.Event()
        self._lock_handle: Any = None
        self._server: _UnixServer | None = None

    # ---- life --------------------------------------------------------------------------------
    def bind(self) -> None:
        """Take the state's resident lock and listen on its socket.

        Raises:
            LabError: another resident lab serves this state, or the socket cannot be made here
                (read-only directory ...).
        """
        try:
            handle = open(self.state_dir / LOCK_NAME, "a+")  # noqa: SIM115  held for the process's life
        except OSError as exc:
            raise LabError(f"cannot write in {self.state_dir}: {exc.strerror or exc}", path=self.state_dir) from exc
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.close()
            raise LabError("another resident lab already serves this state", path=self.state_dir) from exc
        self._lock_handle = handle
        path = socket_path(str(self.state_dir))
        try:
            os.unlink(path)  # a stale socket: its server is dead (we hold the lock)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise LabError(f"cannot replace {path}: {exc.strerror or exc}", path=Path(path)) from exc
        old_umask = os.umask(0o177)
        fd = -1
        try:
            address, fd = unix_address(path)
            server = _UnixServer(address, _Handler)
        except OSError as exc:
            raise LabError(f"cannot listen on {path}: {exc.strerror or exc}", path=Path(path)) from exc
        finally:
            os.umask(old_umask)
            if fd >= 0:
                os.close(fd)
        server.owner = self
        self._server = server

    def write_info(self, extra: dict[str, Any] | None = None) -> None:
        """``.resident.json``: who serves this state (pid, owner, socket, ARM settings)."""
        info = {"v": 1, "pid": os.getpid(), "owner": self.owner_pid, "socket": socket_path(str(self.state_dir)),
                "started": time.time(), **(extra or {})}
        tmp = self.state_dir / (INFO_NAME + ".tmp")
        tmp.write_text(json.dumps(info, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.state_dir / INFO_NAME)

    def serve(self) -> None:
        """Serve until stopped; then finish the calls in flight and remove the socket and info file."""
        assert self._server is not None, "bind() first"
        watcher = threading.Thread(target=self._watch, name="resident-watch", daemon=True)
        watcher.start()
        try:
            self._server.serve_forever(poll_interval=0.05)  # a stop is seen within 50 ms: a session end waits for it
        finally:
            self._server.server_close()  # joins the handler threads
            self._cleanup()

    def stop(self) -> None:
        """Ask the serving loop to end (from any thread but the loop's own)."""
        if not self._stopping.is_set():
            self._stopping.set()
            if self._server is not None:
                threading.Thread(target=self._server.shutdown, name="resident-stop", daemon=True).start()

    def _cleanup(self) -> None:
        for name in (INFO_NAME,):
            with contextlib.suppress(FileNotFoundError):
                (self.state_dir / name).unlink()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(socket_path(str(self.state_dir)))
        if self._arm is not None:
            self._arm.close()
        if self._lock_handle is not None:
            self._lock_handle.close()

    def _watch(self) -> None:
        """Stop when the owner is gone or the lab has been idle too long (the safety nets)."""
        while not self._stopping.wait(_WATCH_S):
            if self._owner_gone():
                log.info("owner %s is gone: stopping", self.owner_pid)
                self.stop()
            elif self.idle_s > 0:
                with self._busy_lock:
                    idle = self._busy == 0 and time.monotonic() - self._last > self.idle_s
                if idle:
                    log.info("idle for %.0f s: stopping", self.idle_s)
                    self.stop()

    def _owner_gone(self) -> bool:
        if self.owner_pid is None:
            return False
        if self.owner_pid == self._parent_at_start:  # reparented: the owner (our parent) has exited
            return os.getppid() != self._parent_at_start
        try:
            os.kill(self.owner_pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    # ---- requests ----------------------------------------------------------------------------
    def enter(self) -> None:
        with self._busy_lock:
            self._busy += 1
            self._last = time.monotonic()

    def touch(self) -> None:
        """Something was served (lab ARM's requests come this way): the idle clock starts again."""
        with self._busy_lock:
            self._last = time.monotonic()

    def leave(self) -> None:
        with self._busy_lock:
            self._busy -= 1
            self._last = time.monotonic()

    def answer(self, req: Request) -> tuple[int, bytes, bytes]:
        """Run one request; an unexpected failure is the call's error, never the server's end."""
        try:
            if req.tool == CONTROL:
                return self._control(req.args)
            env = {**req.env, STATE_ENV: str(self.state_dir)}
            with self._busy_lock:
                self._served += 1
            if req.tool == "az":
                code, out, err = run_az_slowly(req.args, env, cwd=req.cwd, umask=req.umask)
            elif req.tool in SHIMS:
                try:
                    code, out, err = run_probe(req.tool, req.args, env, cwd=req.cwd)
                except LabError as exc:
                    code, out, err = 1, "", f"netghost lab probe: {exc}\n"
            else:
                return 127, b"", f"{req.tool}: not a lab tool\n".encode()
        except Exception:  # a simulator bug must fail the call, not the lab
            # the command's words only (up to its first option), never option values: they may hold secrets
            words = " ".join(itertools.takewhile(lambda a: not a.startswith("-"), req.args[:6]))
            log.error("call %s %s failed:\n%s", req.tool, words, traceback.format_exc())
            return 1, b"", f"ERROR: lab: internal error in the resident lab (see {self.state_dir}/resident.log)\n".encode()
        return code, out.encode("utf-8", "surrogateescape"), err.encode("utf-8", "surrogateescape")

    def _control(self, args: list[str]) -> tuple[int, bytes, bytes]:
        op = args[0] if args else ""
        if op == "ping":
            return 0, json.dumps({"pid": os.getpid(), "state": str(self.state_dir)}).encode(), b""
        if op == "stop":
            self.stop()
            return 0, b"stopping\n", b""
        if op == "status":
            with self._busy_lock:
                busy = self._busy - 1  # not counting this request
                served = self._served
            status = {"pid": os.getpid(), "busy": busy, "calls": served, "arm": self._arm is not None}
            return 0, json.dumps(status).encode(), b""
        if op == "arm":
            return self._start_arm()
        return 2, b"", f"unknown control request {op!r}\n".encode()

    def _start_arm(self) -> tuple[int, bytes, bytes]:
        if self._arm_factory is None:
            return 1, b"", b"this resident lab does not serve lab ARM\n"
        with self._arm_lock:
            if self._arm is None:
                try:
                    self._arm = self._arm_factory(self.state_dir, self.touch)
                except (LabError, OSError) as exc:
                    return 1, b"", f"lab ARM could not start: {exc}\n".encode()
                self.write_info({"arm": self._arm.settings()})
            return 0, json.dumps(self._arm.settings(), sort_keys=True).encode(), b""
