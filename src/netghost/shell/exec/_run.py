"""Run one argv: no shell, no stdin, a scrubbed environment, and a timeout that kills the process group.

Why each choice:

* **argv, no shell** — the classifier approved a parsed argv; handing a string to ``/bin/sh`` would let
  the shell re-parse it differently.
* **new session + killpg** — ``az`` is a Python program that spawns helpers; killing only the direct child
  on timeout leaves grandchildren running and holding our pipes open.
* **a subreaper launcher (Linux)** — a helper that calls ``setsid()`` (a double-forked daemon) leaves the
  process group; :mod:`netghost.shell.exec._reaper` runs the command as its child and, being a child subreaper,
  keeps every descendant in its tree and kills them all when the command ends or times out. Anything that
  still survives is reported in stderr, never silently ignored.
* **scrubbed environment, credentials by program** — the agent's own credentials (``GEMINI_API_KEY``,
  ``GOOGLE_API_KEY`` ...) never reach a child; anything whose name says key/token/secret/password is
  dropped too. The Azure identity's variables (managed identity, service principal, az's config dir)
  reach ``az`` and nothing else (:mod:`._child_env`, ``child_env.toml``). An explicit ``path`` replaces
  ``PATH`` (the lab puts its simulator first).
* **stdin = /dev/null** — an interactive prompt would otherwise hang until the timeout.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from netghost.shell.exec._child_env import ChildEnvironments, class_of

__all__ = ["MAX_CAPTURE_BYTES", "RunResult", "child_environments", "run_argv", "scrub_env"]

MAX_CAPTURE_BYTES = 8 * 1024 * 1024
_KILL_GRACE_S = 2.0
_PIPE_GRACE_S = 0.5  # how long pipes may stay open after the command itself exited
_POLL_S = 0.25

# Never passed to a child, even when the caller lists them explicitly.
_ALWAYS_DROPPED = re.compile(r"^(?:GEMINI_|GOOGLE_|GOOGLE$|GENAI_|OPENAI_|ANTHROPIC_|VERTEX)")
# Dropped from the inherited environment: names that say they hold a credential (keys, tokens, passwords,
# personal access tokens, connection strings such as App Service's CUSTOMCONNSTR_*/SQLAZURECONNSTR_*, the
# managed-identity endpoint's IDENTITY_HEADER / MSI_SECRET), and the agent's own settings (GHOST_MODEL ...),
# which no child needs.
_SECRET_NAME = re.compile(
    r"(?i)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIAL|_AUTH|AUTH_|COOKIE|SESSION|SAS|CONN|"
    r"(?:^|_)PAT(?:_|$)|IDENTITY_(?:HEADER|ENDPOINT)|MSI_(?:ENDPOINT|SECRET)|IMDS_)|^GHOST_"
)
# Kept whatever they look like: the basics every program needs. PWD/OLDPWD are the working directory.
# (az's config directory is a credential class of child_env.toml: az gets it, nobody else.)
_KEEP_NAMES = frozenset(
    {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR", "PWD", "OLDPWD",
     "KEYTIMEOUT", "LS_COLORS"}
)  # fmt: skip
# Variables that make a child run code it was not asked to (preloads, shell/interpreter start-up files).
_HIJACK_NAMES = frozenset(
    {"LD_PRELOAD", "LD_AUDIT", "BASH_ENV", "ENV", "PYTHONSTARTUP", "PERL5OPT", "PERL5DB", "NODE_OPTIONS",
     "RUBYOPT", "PROMPT_COMMAND"}
)  # fmt: skip
# A URL with credentials in it (DATABASE_URL, REDIS_URL, HTTPS_PROXY=http://user:pw@proxy:3128).
_URL_PASSWORD = re.compile(r"(?P<pre>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):[^@\s/]*@")
# Connection-string fields that carry the credential itself (ADO.NET, storage, Service Bus, ODBC).
_SECRET_FIELD = re.compile(
    r"(?i)(?:^|;)\s*(?:password|pwd|accountkey|sharedaccesskey|sharedaccesssignature|accesskey|"
    r"secret|token)\s*="
)

_REAPER = Path(__file__).with_name("_reaper.py")
_REAPER_MARKER = "netghost-reaper:"
USE_REAPER = sys.platform == "linux"

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
    """The environment every program gets (the common one of :func:`child_environments`).

    Args:
        base: The environment to start from (``os.environ`` when None).
        path: A ``PATH`` that replaces the inherited one (e.g. the lab's simulator directory first).
        extra: Variables the caller sets on purpose (e.g. the lab's world file).

    Returns:
        A new dict; ``base`` is not modified. It holds no credential-class variable (``child_env.toml``):
        those only reach the programs given their class (:meth:`ChildEnvironments.for_program`).
    """
    return dict(child_environments(base, path=path, extra=extra).common)


def child_environments(
    base: Mapping[str, str] | None = None,
    *,
    path: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> ChildEnvironments:
    """Split the agent's environment into the common child environment and the held-back credential classes.

    Args:
        base: The environment to start from (``os.environ`` when None).
        path: A ``PATH`` that replaces the inherited one (e.g. the lab's simulator directory first).
        extra: Variables the caller sets on purpose (e.g. the lab's world file); they are kept even if
            their name sounds secret, except the agent's own model credentials, which are always dropped,
            and credential-class variables, which only reach the programs given their class.

    Inherited variables are dropped when their name says credential (``_SECRET_NAME``) or their value is
    a connection string with a key or password field; a password inside a URL (``DATABASE_URL``,
    ``HTTPS_PROXY=http://user:pw@proxy``) is removed from the URL and the rest kept. A variable of a
    credential class (``child_env.toml``: managed identity, service principal, az's settings) is held
    back whatever its name says; a proxy URL is both: scrubbed for everyone, whole for ``az``.

    Returns:
        A :class:`ChildEnvironments`; ``base`` is not modified.
    """
    source = os.environ if base is None else base
    env: dict[str, str] = {}
    held: dict[str, dict[str, str]] = {}
    for name, value in source.items():
        if _ALWAYS_DROPPED.match(name):
            continue
        holder = class_of(name)
        if holder is not None:
            held.setdefault(holder.name, {})[name] = value
            if not holder.shared_scrubbed:
                continue
        if name in _KEEP_NAMES or name.startswith("LC_"):
            env[name] = value
            continue
        if _SECRET_NAME.search(name) or _SECRET_FIELD.search(value) or name in _HIJACK_NAMES:
            continue
        env[name] = _URL_PASSWORD.sub(r"\g<pre>@", value)  # user:pw@host -> user@host
    for name, value in (extra or {}).items():
        if _ALWAYS_DROPPED.match(name):
            continue
        holder = class_of(name)
        if holder is not None:
            held.setdefault(holder.name, {})[name] = value
            if not holder.shared_scrubbed:
                env.pop(name, None)
                continue
        env[name] = value
    if path is not None:
        env["PATH"] = path
    return ChildEnvironments(env, held)


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
    reaper = USE_REAPER and _REAPER.is_file()
    launch = list(argv)
    if reaper:
        # Resolve here what the launcher would exec, so "not found" stays a value, as with a direct Popen.
        # A name with a slash is resolved against ``cwd`` by the launcher itself (exit 127 if missing).
        if "/" not in argv[0] and shutil.which(argv[0], path=env.get("PATH", os.defpath)) is None:
            return RunResult(127, "", f"{argv[0]}: command not found", "command_not_found", _ms(start))
        launch = [sys.executable, "-I", "-S", str(_REAPER), "--", *argv]
    proc = _spawn(launch, argv, env, cwd, start)
    if isinstance(proc, RunResult):
        return proc
    deadline = time.monotonic() + timeout_s
    note = ""
    try:
        out, err, timed_out, overflow = _collect(proc, deadline, max_bytes, reaper=reaper)
        if not timed_out:
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        # On timeout, overflow or normal exit: no helper outlives the command.
        note = _kill_tree(proc) if reaper else _kill_group(proc)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    stdout = _decode(out)
    if overflow:
        stdout += f"\n... [output exceeded {max_bytes} bytes; the command was stopped] ...\n"
    return _result(proc.returncode, stdout, _decode(err) + note, start, timed_out=timed_out)


def _spawn(
    launch: list[str],
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str | os.PathLike[str] | None,
    start: float,
) -> subprocess.Popen[bytes] | RunResult:
    """Start ``launch`` in its own session with piped output, or the result of a failed start."""
    try:
        # argv was classified and approved; no shell is involved.
        return subprocess.Popen(
            launch,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    except FileNotFoundError as exc:
        return RunResult(
            127, "", f"{argv[0]}: command not found ({exc.strerror})", "command_not_found", _ms(start)
        )
    except (PermissionError, OSError) as exc:
        return RunResult(126, "", f"{argv[0]}: cannot execute ({exc.strerror})", "exec_error", _ms(start))


def _result(returncode: int | None, stdout: str, stderr: str, start: float, *, timed_out: bool) -> RunResult:
    """The result of a command that ran: 127 is ``command_not_found`` as in a shell, and 126 with the
    launcher's marker is ``exec_error`` (the launcher could not exec the command)."""
    error: ErrorCode | None = "timeout" if timed_out else None
    exit_code: int | None = None if timed_out else returncode
    if error is None and exit_code == 127:
        error = "command_not_found"
    elif error is None and exit_code == 126 and stderr.startswith(_REAPER_MARKER):
        error = "exec_error"
    return RunResult(exit_code, stdout, stderr, error, _ms(start))


def _collect(
    proc: subprocess.Popen[bytes], deadline: float, max_bytes: int, *, reaper: bool = False
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
                    if reaper:
                        _kill_tree(proc)
                    else:
                        _kill_group(proc)
                    return bytes(bufs[proc.stdout.fileno()]), bytes(bufs[proc.stderr.fileno()]), False, True
    return bytes(bufs[proc.stdout.fileno()]), bytes(bufs[proc.stderr.fileno()]), False, False


def _kill_group(proc: subprocess.Popen[bytes]) -> str:
    """SIGKILL the command's process group (children that called setsid() are out of reach)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is already gone
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        try:
            proc.wait(timeout=_KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
    return ""


def _kill_tree(proc: subprocess.Popen[bytes]) -> str:
    """Ask the reaper launcher to kill its whole tree; fall back to the group and say what may remain.

    Returns:
        A note for stderr when the launcher could not finish (empty when every descendant is gone).
    """
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=_KILL_GRACE_S + 1.0)  # the launcher's own kill rounds are bounded by 2 s
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return (
                f"\n{_REAPER_MARKER} the process-tree launcher did not finish; the process group was killed, "
                "but descendants that left it (setsid) may still run\n"
            )
    _kill_group(proc)  # backstop for anything still in the group
    return ""


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace") if data else ""


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)
