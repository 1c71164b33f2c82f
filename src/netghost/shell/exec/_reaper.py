"""A tiny launcher that makes every command's process tree killable, even daemons that called setsid().

Why: the runner kills the command's process group on timeout, but a child can leave the group
(``setsid``, double fork) and would keep running after the timeout with nobody watching it. On Linux this
launcher marks itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``): every orphaned descendant
is re-parented to it instead of to init, so the whole tree stays visible under
``/proc/<launcher>/task/*/children`` however it forks. When the command exits, or when the runner sends
SIGTERM (timeout), the launcher SIGKILLs every descendant, reaps them, and reports on stderr any that it
could not kill within a bounded time.

It is run as a script (``python -I -S _reaper.py -- argv...``): it imports only the standard library and
never the rest of netghost, and avoids slow imports (``signal``'s enum wrapper), so it starts fast.
"""

from __future__ import annotations

# The C module, not ``signal``: the wrapper imports enum, which costs ~20 ms of start-up per command.
import _signal as signal
import ctypes
import os
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
_KILL_ROUNDS_S = 2.0  # how long descendants may take to die before the launcher reports and gives up
NOT_FOUND_EXIT = 127
CANNOT_EXEC_EXIT = 126
MARKER = "netghost-reaper:"


class _Stop(Exception):
    """Raised from the SIGTERM handler to break out of a blocking waitpid()."""


def _on_term(signum: int, frame: object) -> None:
    raise _Stop


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as fh:
                out.extend(int(p) for p in fh.read().split())
        except OSError:
            continue
    return out


def _descendants() -> list[int]:
    """Every live descendant of this process (all orphans are ours: we are their subreaper)."""
    seen: list[int] = []
    todo = _children(os.getpid())
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.append(pid)
            todo.extend(_children(pid))
    return seen


def _reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_tree() -> list[int]:
    """SIGSTOP then SIGKILL every descendant until none is left or time runs out; return survivors."""
    deadline = time.monotonic() + _KILL_ROUNDS_S
    while True:
        pids = _descendants()
        for sig in (signal.SIGSTOP, signal.SIGKILL):  # stop first, so none can fork between rounds
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    continue
        _reap_all()
        if not pids:
            return []
        if time.monotonic() >= deadline:
            return _descendants()
        time.sleep(0.01)


def _exec_child(argv: list[str]) -> None:
    for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)  # what the child would have had without us
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        code = NOT_FOUND_EXIT if isinstance(exc, FileNotFoundError) else CANNOT_EXEC_EXIT
        os.write(2, f"{MARKER} {argv[0]}: cannot execute ({exc.strerror})\n".encode())
        os._exit(code)


def main(argv: list[str]) -> int:
    """Run ``argv`` as a child, then kill whatever it left behind; exit as the child did."""
    subreaper = False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGTERM, _on_term)
    child = os.fork()
    if child == 0:
        _exec_child(argv)
    status: int | None = None
    try:
        while status is None:
            pid, st = os.waitpid(-1, 0)
            if pid == child:
                status = st
    except _Stop:
        pass
    except ChildProcessError:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    survivors = kill_tree()
    if survivors or not subreaper:
        why = "not a subreaper (prctl failed)" if not subreaper else "they did not die on SIGKILL"
        os.write(
            2,
            f"\n{MARKER} {len(survivors)} descendant process(es) may still run ({why}): {survivors}\n".encode(),
        )
    if status is None:  # stopped by the runner: end as a killed command would (-9)
        os.kill(os.getpid(), signal.SIGKILL)
        return 128 + int(signal.SIGKILL)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)  # die the same way, so the runner sees -sig like a direct child
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit(2)
    sys.exit(main(args))
