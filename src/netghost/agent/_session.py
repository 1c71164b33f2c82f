"""``ghost_session.json`` (seed 001 §8): the crash-resume index, saved atomically every turn.

The file is an index only (hypotheses, denial counters, task ids, audit heads); evidence stays in the
audit logs. It lives in the audit directory. Every save writes a temporary file, fsyncs it, renames it
over the old one and fsyncs the directory, so a crash leaves the old file or the new one, never half of
either. A new session finds the previous session's file and keeps it as ``ghost_session_{sid}.json``
so that ``--resume`` of that session still works; resuming a kept session moves it back.

Every save seals the file with the installation's audit key (``_seal``, HMAC-SHA256, see
``netghost.governance.seal_session``), and loading requires the seal: the file feeds ``--resume`` and
the RCA, so a file that is unsealed (its seal removed, or written by an older version), whose seal does
not check (a field edited, a seal copied from another session's file or recomputed without the key),
that is an older copy of the session's file (each save notes its seal outside the audit directory) or
that another installation sealed is *refused*, with a one-line reason, and never used. Its evidence is
safe in the audit logs: ``ghost-agent report SID`` rebuilds the report from them.

Loading reports what it found as a value (:class:`Loaded`): ``ok``, ``refused`` (the seal does not
check: the reason is in ``detail``), ``corrupt`` (not a session file) or ``missing``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from netghost.contracts import SEAL_FIELD, SessionState, format_timestamp
from netghost.governance import (
    SESSION_FILE,
    check_session_seal,
    record_session_seals,
    seal_session,
    session_seals,
)

__all__ = ["SESSION_FILE", "Loaded", "kept_path", "load_session", "new_session", "new_session_id",
           "refusal_line", "save_session", "set_aside", "take_back"]

LoadStatus = Literal["ok", "refused", "corrupt", "missing"]


def new_session_id(now: datetime) -> str:
    """``ghost_{YYYYMMDD}_{HHMMSS}`` (seed 001 §3 step 2)."""
    return now.strftime("ghost_%Y%m%d_%H%M%S")


def new_session(session_id: str, *, model: str, audit_dir: Path, now: datetime,
                resumed_from: str | None = None) -> SessionState:
    """A fresh session state (turn 0, nothing known yet)."""
    return SessionState(session_id=session_id, created_at=format_timestamp(now), model=model,
                        audit_dir=str(audit_dir), resumed_from=resumed_from)


def kept_path(audit_dir: Path, session_id: str) -> Path:
    """Where an earlier session's file is kept while another session owns ``ghost_session.json``."""
    return audit_dir / f"ghost_session_{session_id}.json"


def save_session(audit_dir: Path, state: SessionState) -> Path:
    """Write ``state`` sealed (``_seal``, then the seed's ``_checksum``) atomically; return the path.

    Raises:
        OSError: the directory is not writable or the disk is full (the old file is left intact).
        WalError: the audit key is unusable (readable by others, malformed).
    """
    path = audit_dir / SESSION_FILE
    data = state.to_file_dict(seal=seal_session)
    noted = session_seals(audit_dir, state.session_id)
    pending = noted if isinstance(noted, list) else []
    record_session_seals(audit_dir, state.session_id, [*pending, data[SEAL_FIELD]])  # the old file stays valid
    body = (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    tmp = path.with_name(f".{SESSION_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    _fsync_dir(audit_dir)
    record_session_seals(audit_dir, state.session_id, [data[SEAL_FIELD]])  # from now on only this one
    state.checksum, state.seal = data["_checksum"], data[SEAL_FIELD]
    return path


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Loaded:
    """What :func:`load_session` found: the state (None when ``corrupt`` or ``missing``) and why."""

    status: LoadStatus
    state: SessionState | None
    detail: str = ""


def load_session(path: Path) -> Loaded:
    """Read and check a session file (see the module docstring for the statuses)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Loaded("missing", None, f"{path} does not exist")
    except (OSError, UnicodeDecodeError) as exc:
        return Loaded("corrupt", None, f"{path}: {exc}")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        return Loaded("corrupt", None, f"{path}: not JSON ({exc})")
    if not isinstance(data, dict):
        return Loaded("corrupt", None, f"{path}: not a JSON object")
    reason = check_session_seal(data, audit_dir=path.parent)
    if reason is not None:
        return Loaded("refused", None, reason)
    try:
        state = SessionState.model_validate(data)
    except ValidationError as exc:
        return Loaded("corrupt", None, f"{path}: not a session file ({exc.error_count()} problems)")
    return Loaded("ok", state)


def refusal_line(path: Path, session_id: str, audit_dir: Path, reason: str) -> str:
    """The one line shown when a session file is refused: what, why, and what to do next."""
    return (f"Session file {path.name} refused: {reason}. Start a new session, or rebuild the report from "
            f"the audit trail: ghost-agent report {session_id} --audit-dir {audit_dir}")


def set_aside(audit_dir: Path) -> str | None:
    """Keep the current ``ghost_session.json`` under its session's name; return that session id.

    A file that cannot be read as a session is kept as ``ghost_session.unreadable.json``; one whose seal
    does not check as ``ghost_session.refused-<hash>.json``, never under the session id it claims (a
    forged file must not replace another session's kept file).
    """
    path = audit_dir / SESSION_FILE
    if not path.exists():
        return None
    loaded = load_session(path)
    if loaded.status == "refused":
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        os.replace(path, audit_dir / f"ghost_session.refused-{digest}.json")
        return None
    if loaded.state is None:
        os.replace(path, audit_dir / "ghost_session.unreadable.json")
        return None
    os.replace(path, kept_path(audit_dir, loaded.state.session_id))
    return loaded.state.session_id


def take_back(audit_dir: Path, session_id: str) -> Path:
    """Make ``session_id``'s file the current ``ghost_session.json`` (setting aside another session's).

    Returns the current path (it may not exist: the caller reports ``missing``).
    """
    path = audit_dir / SESSION_FILE
    kept = kept_path(audit_dir, session_id)
    if path.exists():
        current = load_session(path)
        if current.state is not None and current.state.session_id == session_id:
            return path
        if kept.exists():
            set_aside(audit_dir)
    if kept.exists():
        os.replace(kept, path)
    return path
