"""What a person typed as a place: the audit directory and the session id, checked before anything runs.

Why one module: ``--audit-dir``, ``--resume SID``, ``report SID``, ``demo`` and ``eval`` all take the same
two things, and every wrong one must end the same way: one line that says what is wrong with *that* path
or id and the next step (a command to copy), an exit code from :mod:`netghost.agent._exit_codes`, never a
traceback and never a message that reads like something else (a mistyped session id is not a broken
audit trail). The checks only read, except :func:`audit_dir_problem`, which creates the directory the
command is about to write anyway and proves it writable with a throw-away file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from netghost.agent._exit_codes import ExitCode

__all__ = ["PathProblem", "audit_dir_problem", "moved_session_line", "session_id_problem", "sessions_in",
           "unknown_session_line"]

_SID = re.compile(r"^shell_audit_(ghost_\d{8}_\d{6})\.jsonl$")


@dataclass(frozen=True)
class PathProblem:
    """A place that cannot be used: the one line to print and the exit code to end with."""

    code: ExitCode
    line: str


def audit_dir_problem(path: Path, *, option: str = "--audit-dir", create: bool = True) -> PathProblem | None:
    """Why ``path`` cannot hold a session's audit logs (created here when missing), or None when it can.

    A file where a directory is wanted (the path itself or one of its parents) is a bad command line
    (:attr:`ExitCode.USAGE`); a directory that cannot be created or written (permissions, a read-only file
    system, a full disk) means the session cannot start (:attr:`ExitCode.ERROR`). ``create=False`` checks
    without creating anything (the caller may still stop for another reason first, e.g. no credentials):
    an existing directory is probed, a missing one only for a file in its way.
    """
    shown = shlex.quote(str(path))
    blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        what = "is a file" if blocker == path else f"has a file in its way ({blocker})"
        return PathProblem(ExitCode.USAGE, f"{option} {shown} {what}, not a directory: give a directory "
                                           f"(created if missing), e.g. {option} ./audit")
    if not create and not path.exists():
        return None
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        why = "read-only file system" if exc.errno == errno.EROFS else (exc.strerror or type(exc).__name__).lower()
        return PathProblem(ExitCode.ERROR, f"{option} {shown} cannot be written ({why}): give a directory you can "
                                           f"write, e.g. {option} ~/netghost-audit")
    if not os.access(path, os.W_OK | os.X_OK):  # pragma: no cover  (the probe above already failed)
        return PathProblem(ExitCode.ERROR, f"{option} {shown} is not writable: give a directory you can write")
    return None


def sessions_in(audit_dir: Path) -> list[str]:
    """The session ids that have a shell audit log in ``audit_dir``, newest first ([] when none or unreadable)."""
    try:
        names = [entry.name for entry in os.scandir(audit_dir)]
    except OSError:
        return []
    return sorted({m.group(1) for n in names if (m := _SID.match(n))}, reverse=True)


def unknown_session_line(session_id: str, audit_dir: Path, *, command: str) -> str:
    """The line for a session id that has no trail in ``audit_dir``: which ones it has, what to run.

    ``command`` is the command to suggest with the right id (``ghost-agent --resume`` or
    ``ghost-agent report``). The id typed is shown quoted (it is the user's text, any characters).
    """
    where = shlex.quote(str(audit_dir))
    known = sessions_in(audit_dir)
    typed = repr(session_id)
    if _named_by_a_session_file(audit_dir, session_id):  # not a typo: its log is gone (deleted, moved)
        return (f"Session {session_id} in {where} has no shell_audit_{session_id}.jsonl although its session "
                f"file names it (deleted or moved away): see what is left with ghost-agent audit verify {where}")
    if not known:
        return (f"No session {typed} in {where}: it holds no session's audit log. Give the directory the "
                f"session ran in: {command} SID --audit-dir DIR")
    more = f" (and {len(known) - 3} more)" if len(known) > 3 else ""
    return (f"No session {typed} in {where}; it holds {', '.join(known[:3])}{more}. "
            f"Next: {command} {known[0]} --audit-dir {where}")


def _named_by_a_session_file(audit_dir: Path, session_id: str) -> bool:
    """Does the current or a kept session file claim ``session_id``? Only chooses the message: never trusted."""
    for path in (audit_dir / "ghost_session.json", audit_dir / f"ghost_session_{session_id}.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if isinstance(data, dict) and data.get("session_id") == session_id:
            return True
    return False


def moved_session_line(session_id: str, recorded_in: str, audit_dir: Path) -> str:
    """The line for a session whose directory was copied or moved: where it ran, and what works here.

    Why not resume the copy: each log's checkpoint is kept per path outside the audit directory, so a copy
    has logs without checkpoints and extending them would break the tamper evidence. The copy can still be
    verified and its report rebuilt.
    """
    here = shlex.quote(str(audit_dir))
    return (f"Session {session_id} ran in {recorded_in}, not in {here} (a copy or a move): resume it where it "
            f"ran (move it back if it was moved): ghost-agent --resume {session_id} --audit-dir {shlex.quote(recorded_in)} "
            f"(here: ghost-agent audit verify {here}; ghost-agent report {session_id} --audit-dir {here})")


def session_id_problem(session_id: str) -> PathProblem | None:
    """Why ``session_id`` cannot name a session (ids are ``ghost_YYYYMMDD_HHMMSS``), or None.

    Why check the form: the id becomes part of file names in the audit directory; anything else (a path,
    a typo with a slash) must be refused before it is joined to one.
    """
    if re.fullmatch(r"ghost_\d{8}_\d{6}", session_id):
        return None
    return PathProblem(ExitCode.USAGE, f"{session_id!r} is not a session id (ghost_YYYYMMDD_HHMMSS, as the run "
                                       f"printed it); the audit directory's shell_audit_SID.jsonl files name them")
