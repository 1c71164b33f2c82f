"""Provisional records: what a writer notes beside its log before an action whose record may never come.

The shell notes each call, before its process starts, as an "outcome unknown" record in
``<log>.inflight``; if the process or the shell dies before the real record is appended, the next writer
of the log appends the provisional one, so the call is audited exactly once. That file lives in the
audit directory, which whoever tampers with the logs can write. Unauthenticated, a forged file was
appended as a completed, user-approved ``az network nsg rule delete`` and then MACed and checkpointed
like any record, so ``audit verify`` passed.

So the file is an envelope sealed with the log's own key::

    {"v": 2, "kind": "provisional", "log": "<log file name>", "session_id": "...", "seq": N,
     "prev_sha256": "<the log's head when it was written>", "record": {...}, "mac": "hmac-sha256:..."}

The MAC covers every other member. :func:`recover_provisional` appends the record only when the MAC
checks, the envelope names this log and this session, and it continues the log exactly (``seq`` is the
next seq and ``prev_sha256`` the head). What a forger who can write the directory but not read the key
can do: write any bytes (no valid MAC: refused), replay a genuine envelope of another session or log
(names another session: refused) or of an earlier position of this one (does not continue the log:
refused), or delete the file (then the call has no record, as if the shell had died before writing it;
the journal still shows the call was made). A refused file is moved aside (``<log>.inflight.rejected-
<sha256 prefix>``, kept as evidence and never read again) and reported; the caller records the
rejection in its chain. The one file removed without a report is the leftover of a call whose real
record is already the log's last record at the same position (the removal after the append failed).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netghost.errors import WalError
from netghost.governance._anchor import AuditKey, load_key
from netghost.governance.wal import WalWriter, read_wal

__all__ = [
    "PROVISIONAL_SUFFIX",
    "Provisional",
    "ProvisionalRejection",
    "Recovery",
    "pending_record",
    "provisional_path",
    "read_provisional",
    "recover_provisional",
    "rejected_provisionals",
    "write_provisional",
]

PROVISIONAL_SUFFIX = ".inflight"
_REJECTED = ".rejected-"
_DOMAIN = b"netghost-provisional-v2\x00"
_MAX_BYTES = 4 << 20  # a provisional record holds no output; anything near this is not ours


def provisional_path(log: Path) -> Path:
    """``<log>.inflight``: where the writer of ``log`` notes its provisional record."""
    return log.with_name(log.name + PROVISIONAL_SUFFIX)


def rejected_provisionals(log: Path) -> list[Path]:
    """The refused provisional files of ``log`` that were moved aside (evidence, never read again)."""
    try:
        return sorted(log.parent.glob(f"{log.name}{PROVISIONAL_SUFFIX}{_REJECTED}*"))
    except OSError:
        return []


@dataclass(frozen=True)
class Provisional:
    """An authenticated provisional record: the log position it was written for, and the record."""

    seq: int
    prev_sha256: str | None
    record: dict[str, Any]


@dataclass(frozen=True)
class ProvisionalRejection:
    """A provisional file that was refused: why (one line), and what the file was."""

    path: Path
    reason: str
    file_sha256: str
    size: int
    moved_to: Path | None = None

    @property
    def notice(self) -> str:
        """The one line a caller shows (the screen, the RCA's warnings)."""
        where = f"; moved aside to {self.moved_to.name}" if self.moved_to is not None else ""
        return f"Provisional audit record {self.path.name} refused, not appended: {self.reason}{where}"


@dataclass(frozen=True)
class Recovery:
    """What :func:`recover_provisional` did: appended a record, refused a file, or nothing."""

    appended: dict[str, Any] | None = None
    rejection: ProvisionalRejection | None = None


def _envelope_body(log: Path, session_id: str, seq: int, prev: str | None, record: Mapping[str, Any]) -> dict[str, Any]:
    return {"v": 2, "kind": "provisional", "log": log.name, "session_id": session_id, "seq": seq,
            "prev_sha256": prev, "record": dict(record)}


def write_provisional(writer: WalWriter, record: Mapping[str, Any], *, session_id: str) -> Path:
    """Durably note ``record`` as the provisional record of ``writer``'s next seq; return the file.

    Call it under the lock that orders the writer's appends (the envelope is bound to the next seq
    and the current head). A symbolic link planted at the path is not followed.

    Raises:
        OSError: the file cannot be written (the caller must not start the action).
        TypeError, ValueError: ``record`` is not JSON data.
    """
    path = provisional_path(writer.path)
    body = _envelope_body(writer.path, session_id, writer.next_seq, writer.head_sha256, record)
    data = json.dumps({**body, "mac": writer.key.mac_json(_DOMAIN, body)}, ensure_ascii=False,
                      allow_nan=False).encode("utf-8")
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.lstat(path).st_mode):
            path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def _read_bytes(path: Path) -> bytes | str | None:
    """The file's bytes, the reason it is refused unread (a symbolic link, too big), or None.

    None also for something that is not a regular file (a directory): it is left in place, where it
    makes every later provisional write fail, so no command runs unaudited.
    """
    try:
        info = os.lstat(path)
    except OSError:  # absent (the usual case), or its directory unreadable
        return None
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link (planted: a provisional record is a plain file)"
    if not stat.S_ISREG(info.st_mode):
        return None
    if info.st_size > _MAX_BYTES:
        return f"it is {info.st_size} bytes, far more than a provisional record"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:  # replaced by a link meanwhile (ELOOP), unreadable ...
        return f"it cannot be read as a plain file ({exc.strerror or exc})"
    try:
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _authenticate(raw: bytes, log: Path, session_id: str, key: AuditKey | None) -> Provisional | str:
    """The provisional record in ``raw``, or why it is not an authentic one for ``log`` and ``session_id``."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return "it is not a provisional record (unreadable JSON: torn before its command started, or forged)"
    if not isinstance(doc, dict) or doc.get("kind") != "provisional" or doc.get("v") != 2:
        return "it carries no MAC (an older version's file, or forged without the key)"
    mac = doc.pop("mac", None)
    if mac is None:
        return "it carries no MAC (an older version's file, or forged without the key)"
    if key is None:
        return "this installation has no audit key, so its MAC cannot be checked"
    if not key.check_json(_DOMAIN, doc, mac):
        return "its MAC does not check (forged or altered without the installation's key)"
    seq, record = doc.get("seq"), doc.get("record")
    if doc.get("log") != log.name or doc.get("session_id") != session_id:
        return (f"it was written for {doc.get('log')} of session {doc.get('session_id')}, not {log.name} "
                "(replayed from another session or log)")
    if not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(record, dict):
        return "its MAC checks but its fields do not (a bug, not a forgery): not appended"
    prev = doc.get("prev_sha256")
    return Provisional(seq, prev if isinstance(prev, str) else None, record)


def _key(key: AuditKey | str | os.PathLike[str] | None) -> AuditKey | None:
    if isinstance(key, AuditKey):
        return key
    try:
        return load_key(key, create=False)
    except WalError:
        return None


def read_provisional(
    log: Path, *, session_id: str, key: AuditKey | str | os.PathLike[str] | None = None
) -> Provisional | ProvisionalRejection | None:
    """Read and authenticate ``log``'s provisional file without changing anything (readers, ``audit verify``).

    Returns None when there is none; a rejection (not moved) when it is not authentic for this log and
    session. Whether it continues the log is the caller's question (:func:`pending_record`).
    """
    path = provisional_path(log)
    raw = _read_bytes(path)
    if raw is None:
        return None
    if isinstance(raw, str):
        return ProvisionalRejection(path, raw, "", 0)
    found = _authenticate(raw, log, session_id, _key(key))
    if isinstance(found, str):
        return ProvisionalRejection(path, found, "sha256:" + hashlib.sha256(raw).hexdigest(), len(raw))
    return found


def pending_record(log: Path, records: list[dict[str, Any]], *, session_id: str) -> dict[str, Any] | None:
    """The provisional record of ``log`` when it is authentic and continues ``records`` (the log as
    read), else None: what a reader may add to the log's records before the writer appends it."""
    found = read_provisional(log, session_id=session_id)
    if not isinstance(found, Provisional):
        return None
    last_seq: int = records[-1]["seq"] if records else 0  # read_wal's records all have an int seq
    head = records[-1]["sha256"] if records else None
    return found.record if found.seq == last_seq + 1 and found.prev_sha256 == head else None


def _leftover(writer: WalWriter, found: Provisional) -> bool:
    """True when ``found`` is the leftover of the log's last record (same seq, same predecessor)."""
    if found.seq != writer.next_seq - 1:
        return False
    records = read_wal(writer.path).records
    last = records[-1] if records else {}
    return last.get("seq") == found.seq and last.get("prev_sha256") == found.prev_sha256


def recover_provisional(
    writer: WalWriter, *, session_id: str, check: Callable[[dict[str, Any], int], str | None] | None = None
) -> Recovery:
    """Append the provisional record of a call whose real record never reached ``writer``'s log.

    Call it under the lock that orders the writer's appends. ``check(record, seq)`` may refuse a record
    that authenticates (returns the reason). A refused file is moved aside and returned; recording the
    rejection in the chain is the caller's (it knows its record format).

    Raises:
        WalError, OSError: the append failed (the file is left for the next attempt).
    """
    path = provisional_path(writer.path)
    raw = _read_bytes(path)
    if raw is None:
        return Recovery()
    if isinstance(raw, str):
        return Recovery(rejection=_move_aside(ProvisionalRejection(path, raw, "", 0)))
    found = _authenticate(raw, writer.path, session_id, writer.key)
    reason = found if isinstance(found, str) else _position(writer, found)
    if reason is None and isinstance(found, Provisional) and check is not None:
        reason = check(found.record, found.seq)
    if reason == "":  # the leftover of the last record: nothing to append, nothing to report
        path.unlink(missing_ok=True)
        return Recovery()
    if reason is not None:
        digest = "sha256:" + hashlib.sha256(raw).hexdigest()
        return Recovery(rejection=_move_aside(ProvisionalRejection(path, reason, digest, len(raw))))
    assert isinstance(found, Provisional)
    stored = writer.append(found.record)
    path.unlink(missing_ok=True)
    return Recovery(appended=stored)


def _position(writer: WalWriter, found: Provisional) -> str | None:
    """None when ``found`` continues the log; "" for the leftover of its last record; else why not."""
    if found.seq == writer.next_seq and found.prev_sha256 == writer.head_sha256:
        return None
    if _leftover(writer, found):
        return ""
    return (f"it was written for record {found.seq} after {found.prev_sha256}, but the log's next record is "
            f"{writer.next_seq} after {writer.head_sha256} (replayed from an earlier point of the log)")


def _move_aside(rejection: ProvisionalRejection) -> ProvisionalRejection:
    """Rename the refused file out of the way (kept as evidence); a file that cannot be moved is removed."""
    tag = rejection.file_sha256.removeprefix("sha256:")[:12] or "unreadable"
    target = rejection.path.with_name(f"{rejection.path.name}{_REJECTED}{tag}")
    try:
        os.replace(rejection.path, target)
    except OSError:
        with contextlib.suppress(OSError):
            rejection.path.unlink()
        return rejection
    return ProvisionalRejection(rejection.path, rejection.reason, rejection.file_sha256, rejection.size, target)
