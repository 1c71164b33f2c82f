"""Run one argv: no shell, no stdin, a scrubbed environment, and a timeout that kills the process group.

Why each choice:

* **argv, no shell** — the classifier approved a parsed argv; handing a string to ``/bin/sh`` would let
  the shell re-parse it differently.
* **new session + killpg** — ``az`` is a Python program that spawns helpers; killing only the direct child
  on timeout leaves grandchildren running and holding our pipes open.
* **scrubbed environment** — the agent's own credentials (``GEMINI_API_KEY``, ``GOOGLE_API_KEY`` ...) must
  never reach a child that the model chose to run; anything whose name says key/token/secret/password
  is dropped too. An explicit ``path`` replaces ``PATH`` (the lab puts its simulator first).
* **stdin = /dev/null** — an interactive prompt would otherwise hang until the timeout.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["MAX_CAPTURE_BYTES", "RunResult", "run_argv", "scrub_env"]

MAX_CAPTURE_BYTES = 8 * 1024 * 1024
_KILL_GRACE_S = 2.0
_PIPE_GRACE_S = 0.5  # how long pipes may stay open after the command itself exited
_POLL_S = 0.25

# Never passed to a child, even when the caller lists them explicitly.
_ALWAYS_DROPPED = re.compile(r"^(?:GEMINI_|GOOGLE_|GOOGLE$|GENAI_|OPENAI_|ANTHROPIC_|VERTEX)")
# Dropped from the inherited environment: names that say they hold a credential, and the agent's own
# settings (GHOST_MODEL ...), which no child needs.
_SECRET_NAME = re.compile(
    r"(?i)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_AUTH|AUTH_|COOKIE|SESSION|SAS)|^GHOST_"
)
_KEEP_NAMES = frozenset({"PWD", "OLDPWD", "KEYTIMEOUT"})

ErrorCode = Literal["timeout", "command_not_found", "exec_error"]


@dataclass(frozen=True)
class RunResult:
    """What the child did. ``stdout``/``stderr`` are raw (not yet redacted)."""

    exit_code: int | None
    stdout: str
    stderr: str
    error: ErrorCode | None
    duration_ms: float


def scrub_env(
    base: Mapping[str, str] | None = None,
    *,
    path: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Build the child's environment.

    Args:
        base: The environment to start from (``os.environ`` when None).
        path: A ``PATH`` that replaces the inherited one (e.g. the lab's simulator directory first).
        extra: Variables the caller sets on purpose (e.g. the lab's world file); they are kept even if
            their name sounds secret, except the agent's own model credentials, which are always dropped.

    Returns:
        A new dict; ``base`` is not modified.
    """
    source = os.environ if base is None else base
    env = {
        name: value
        for name, value in source.items()
        if not _ALWAYS_DROPPED.match(name) and (name in _KEEP_NAMES or not _SECRET_NAME.search(name))
    }
    for name, value in (extra or {}).items():
        if not _ALWAYS_DROPPED.match(name):
            env[name] = value
    if path is not None:
        env["PATH"] = path
    return env


def run_argv(
    argv: Sequence[str],
    *,
    timeout_s: float,
    env: Mapping[str, str],
    cwd: str | os.PathLike[str] | None = None,
    max_bytes: int = MAX_CAPTURE_BYTES,
) -> RunResult:
    """Run ``argv`` to completion or until ``timeout_s``, whichever comes first.

    Args:
        argv: The program and its arguments; ``argv[0]`` is looked up on ``env["PATH"]``.
        timeout_s: Wall-clock limit; on expiry the whole process group gets SIGKILL.
        env: The complete child environment (see :func:`scrub_env`).
        cwd: Working directory for the child.
        max_bytes: Capture limit per stream; a child that writes more (``yes``, a runaway log) is
            stopped with its process group instead of filling memory until the timeout.

    Returns:
        A :class:`RunResult`. Expected failures (timeout, not found, not executable) are values; exit
        code 127 is reported as ``command_not_found`` like a shell would.

    Raises:
        ValueError: ``argv`` is empty.
    """
    if not argv:
        raise ValueError("argv must not be empty")
    start = time.perf_counter()
    try:
        # argv was classified and approved; no shell is involved.
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    except FileNotFoundError as exc:
        return RunResult(127, "", f"{argv[0]}: command not found ({exc.strerror})", "command_not_found", _ms(start))
    except (PermissionError, OSError) as exc:
        return RunResult(126, "", f"{argv[0]}: cannot execute ({exc.strerror})", "exec_error", _ms(start))

    deadline = time.monotonic() + timeout_s
    try:
        out, err, timed_out, overflow = _collect(proc, deadline, max_bytes)
        if not timed_out:
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        _kill_group(proc)  # on timeout, overflow or normal exit: no helper outlives the command
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    error: ErrorCode | None = "timeout" if timed_out else None
    exit_code: int | None = None if timed_out else proc.returncode
    if error is None and exit_code == 127:
        error = "command_not_found"
    stdout = _decode(out)
    if overflow:
        stdout += f"\n... [output exceeded {max_bytes} bytes; the command was stopped] ...\n"
    return RunResult(exit_code, stdout, _decode(err), error, _ms(start))


def _collect(
    proc: subprocess.Popen[bytes], deadline: float, max_bytes: int
) -> tuple[bytes, bytes, bool, bool]:
    """Read both pipes until EOF, the deadline, or ``max_bytes`` on one of them.

    Returns:
        (stdout, stderr, timed_out, overflow).
    """
    assert proc.stdout is not None and proc.stderr is not None
    bufs = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    with selectors.DefaultSelector() as sel:
        for fd in bufs:
            sel.register(fd, selectors.EVENT_READ)
        grace_until: float | None = None
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                return bytes(bufs[proc.stdout.fileno()]), bytes(bufs[proc.stderr.fileno()]), True, False
            if grace_until is None and proc.poll() is not None:
                # The command exited; a background helper may still hold the pipes. Drain briefly, then stop.
                grace_until = now + _PIPE_GRACE_S
            if grace_until is not None and now >= grace_until:
                break
            for key, _ in sel.select(timeout=min(deadline - now, _POLL_S)):
                fd = int(key.fd)
                chunk = os.read(fd, 65536)
                if not chunk:
                    sel.unregister(fd)
                    continue
                buf = bufs[fd]
                buf += chunk[: max(max_bytes - len(buf), 0)]
                if len(buf) >= max_bytes:
                    _kill_group(proc)
                    return bytes(bufs[proc.stdout.fileno()]), bytes(bufs[proc.stderr.fileno()]), False, True
    return bytes(bufs[proc.stdout.fileno()]), bytes(bufs[proc.stderr.fileno()]), False, False


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is already gone
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        try:
            proc.wait(timeout=_KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace") if data else ""


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)
