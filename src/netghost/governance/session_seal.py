"""The seal of ``ghost_session.json``: an HMAC under the installation's audit key, required to load it.

Why: the session file feeds ``--resume`` and the RCA (hypotheses and their states, task ids, the audit
heads it pins). Seed 001's ``_checksum`` is an unkeyed SHA-256, so whoever edits the file recomputes it,
and a file without one was accepted unverified: an edited "H1 CONFIRMED" reached the RCA. The seal is
HMAC-SHA256 under the same per-installation key that anchors the audit logs (0600, outside the audit
directory): someone who can write the audit directory but cannot read the key cannot make one.

Format v2 (``"v": 2``) carries both members:

* ``_seal`` = ``hmac-sha256:<key id>:<mac>``, the MAC of the canonical JSON of the content without
  ``_seal`` and ``_checksum`` (so the session id, every hypothesis and every pinned head are covered).
  The key id is a public fingerprint of the key, so a file from another installation is named as such
  instead of looking merely edited.
* ``_checksum``, the seed's digest, computed last over everything but itself (the seal included), so a
  reader following seed 001 §3 still checks the file. It proves nothing on its own; it is required too.

A file written before sealing (v1, no ``_seal``) is refused like any unsealed file: nothing in it can
be told apart from an edit. Its evidence is safe in the audit logs, which ``ghost-agent report SID``
reads without it.

A seal proves the installation wrote the content, not that it is the *latest* content: an older copy of
the same session's file (before H1 was refuted, say) carries a valid seal. So each save also notes the
seal it is writing beside the audit anchors, outside the audit directory (:func:`record_session_seals`,
keyed by the audit directory and the session), and a file whose seal is not the noted one is refused as
replayed. The note is written before the file (with the previous seal still accepted) and again after
it, so a crash in between never refuses the file that is on disk.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from netghost.contracts import CHECKSUM_KEY, SEAL_FIELD, compute_session_checksum
from netghost.errors import WalError
from netghost.governance._anchor import SLOT, AuditKey, default_key_path, load_key, open_checkpoint

__all__ = ["check_session_seal", "record_session_seals", "seal_session", "session_seal_body", "session_seals"]

_DOMAIN = b"netghost-session-v2\x00"
_LATEST_DOMAIN = b"netghost-session-latest-v1\x00"
_MAX_PENDING = 8  # seals still accepted after crashes between a note and its file (normally one)
_TAG = "hmac-sha256:"

KeySource = AuditKey | str | os.PathLike[str] | None


def session_seal_body(data: Mapping[str, Any]) -> dict[str, Any]:
    """What the seal covers: the file's content without ``_seal`` and ``_checksum``."""
    return {k: v for k, v in data.items() if k not in (SEAL_FIELD, CHECKSUM_KEY)}


def _key(key: KeySource, *, create: bool) -> AuditKey | None:
    return key if isinstance(key, AuditKey) else load_key(key, create=create)


def seal_session(data: Mapping[str, Any], *, key: KeySource = None) -> str:
    """The ``_seal`` of a session file's content (the installation's key, created on first use).

    Raises:
        WalError: the key file is unusable (malformed, readable by others).
        OSError: the key cannot be created.
    """
    audit_key = _key(key, create=True)
    assert audit_key is not None  # created when missing
    mac = audit_key.mac_json(_DOMAIN, session_seal_body(data))
    return f"{_TAG}{audit_key.key_id}:{mac[len(_TAG):]}"


def _latest_path(key: AuditKey, audit_dir: Path, session_id: str) -> Path:
    ident = f"{Path(audit_dir).resolve()}\x00{session_id}".encode()
    return key.anchors_dir / f"session-{hashlib.sha256(ident).hexdigest()[:32]}.seal"


def record_session_seals(audit_dir: Path, session_id: str, seals: Sequence[str], *, key: KeySource = None) -> None:
    """Note, outside the audit directory, the seal(s) ``session_id``'s file in ``audit_dir`` may carry now.

    The note has two slots written in place by generation (as the logs' checkpoints are): a write torn
    by a crash spoils only its own slot, and the other still holds the previous note. One
    ``fdatasync`` per note, no rename.

    Raises:
        WalError: the key is unusable.
        OSError: the note cannot be written (the caller does not write the file then).
    """
    audit_key = _key(key, create=True)
    assert audit_key is not None
    target = _latest_path(audit_key, audit_dir, session_id)
    current = _read_note(audit_key, target, session_id)
    gen = current[0] + 1 if isinstance(current, tuple) else 1
    body = {"v": 2, "dir": str(Path(audit_dir).resolve()), "session_id": session_id, "gen": gen,
            "seals": list(seals)[-_MAX_PENDING:]}
    line = json.dumps({**body, "mac": audit_key.mac_json(_LATEST_DOMAIN, body)}, sort_keys=True).encode()
    if len(line) >= SLOT:
        raise OSError(f"the note of {session_id}'s seal does not fit a {SLOT}-byte slot")
    fd = open_checkpoint(target)
    try:
        os.pwrite(fd, line.ljust(SLOT - 1) + b"\n", (gen % 2) * SLOT)
        os.fdatasync(fd)
    finally:
        os.close(fd)


def _read_note(key: AuditKey, target: Path, session_id: str) -> tuple[int, list[str]] | str | None:
    """(generation, seals) of the newest valid slot; None when there is no note; a string when none checks."""
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"the installation's note of its seal is unreadable ({exc})"
    best: tuple[int, list[str]] | None = None
    for start in (0, SLOT):
        chunk = data[start : start + SLOT].strip()
        try:
            doc = json.loads(chunk) if chunk else None
        except ValueError:
            continue
        if not isinstance(doc, dict):
            continue
        mac = doc.pop("mac", None)
        gen, seals = doc.get("gen"), doc.get("seals")
        if (key.check_json(_LATEST_DOMAIN, doc, mac) and doc.get("session_id") == session_id
                and isinstance(gen, int) and isinstance(seals, list) and (best is None or gen > best[0])):
            best = (gen, [str(seal) for seal in seals])
    if best is None:
        return "the installation's note of its seal does not check" if data.strip() else None
    return best


def session_seals(audit_dir: Path, session_id: str, *, key: KeySource = None) -> list[str] | str | None:
    """The seals noted for ``session_id``'s file in ``audit_dir``: None when none was noted (a file from
    before this check, or an audit directory that moved), a string when the note does not check."""
    try:
        audit_key = _key(key, create=False)
    except WalError as exc:
        return f"the audit key is unusable ({exc})"
    if audit_key is None:
        return None
    found = _read_note(audit_key, _latest_path(audit_key, audit_dir, session_id), session_id)
    return found[1] if isinstance(found, tuple) else found


def check_session_seal(
    data: Mapping[str, Any], *, key: KeySource = None, audit_dir: Path | None = None
) -> str | None:
    """Why ``data`` (a parsed session file) cannot be trusted, in one line; None when its seal checks.

    With ``audit_dir`` (where the file is), the seal must also be the one the installation noted for
    the session there (:func:`record_session_seals`): an older copy of the file is refused as replayed.
    Never raises: an unusable key is a reason like any other.
    """
    seal = data.get(SEAL_FIELD)
    if seal is None:
        if data.get("v", 1) == 1:
            return "it was written by an older version (format v1, unsealed), so an edit cannot be ruled out"
        return "it has no seal (_seal is missing): it was removed or the file was written by hand"
    try:
        audit_key = _key(key, create=False)
    except WalError as exc:  # unreadable, malformed, readable by others: the reason, never a traceback
        return f"the audit key is unusable ({exc})"
    if audit_key is None:
        return (f"this installation has no audit key ({default_key_path() if key is None else key}), "
                "so its seal cannot be checked")
    parts = seal.split(":") if isinstance(seal, str) else []
    if len(parts) != 3 or f"{parts[0]}:" != _TAG or len(parts[1]) != 16 or len(parts[2]) != 64:
        return "its seal is not an HMAC under an installation key (an unkeyed hash, or not a seal at all)"
    if parts[1] != audit_key.key_id:
        return f"it was sealed by another installation (key id {parts[1]}; this one's is {audit_key.key_id})"
    if not audit_key.check_json(_DOMAIN, session_seal_body(data), _TAG + parts[2]):
        return ("its seal does not match its content: a field was edited, or the seal was copied from "
                "another session's file")
    checksum = data.get(CHECKSUM_KEY)
    if checksum is None:
        return "it has no _checksum (removed)"
    if checksum != compute_session_checksum(data):
        return "its _checksum does not match its content"
    if audit_dir is not None:
        noted = session_seals(audit_dir, str(data.get("session_id")), key=audit_key)
        if isinstance(noted, str):
            return noted
        if noted is not None and seal not in noted:
            return ("it is an older copy of this session's file (the installation has sealed a newer one "
                    "since): replayed")
    return None
