"""The session file's seal: an HMAC under the installation key, required, with a one-line reason per refusal."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from netghost.contracts import SessionState, compute_session_checksum
from netghost.governance import (
    check_session_seal,
    record_session_seals,
    seal_session,
    session_seal_body,
    session_seals,
)
from netghost.governance._anchor import SLOT, load_key

SID = "ghost_20250115_143022"


def _content(sid: str = SID) -> dict[str, Any]:
    state = SessionState(session_id=sid, created_at="2025-01-15T14:30:22Z", model="gemini-2.5-flash")
    return state.model_dump(mode="json", by_alias=True, exclude={"checksum", "seal"})


def _sealed(key: Path, sid: str = SID) -> dict[str, Any]:
    return SessionState.model_validate(_content(sid)).to_file_dict(seal=lambda d: seal_session(d, key=key))


def _recheck(data: dict[str, Any]) -> dict[str, Any]:
    """What anyone can do without the key: recompute the seed's unkeyed checksum."""
    return dict(data, _checksum=compute_session_checksum(data))


def _edit(data: dict[str, Any]) -> dict[str, Any]:
    forged = dict(data, hypothesis_log=[{"id": "H1", "description": "NSG deny", "state": "CONFIRMED",
                                         "denial_count": 0}])
    return _recheck(forged)


def _unkeyed(data: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps(session_seal_body(data), sort_keys=True).encode()
    return _recheck(dict(data, _seal=hashlib.sha256(body).hexdigest()))


def _unkeyed_in_hmac_form(data: dict[str, Any]) -> dict[str, Any]:
    kid = str(data["_seal"]).split(":")[1]
    body = json.dumps(session_seal_body(data), sort_keys=True).encode()
    return _recheck(dict(data, _seal=f"hmac-sha256:{kid}:{hashlib.sha256(body).hexdigest()}"))


def test_a_sealed_file_checks_and_its_seal_names_the_key(tmp_path: Path) -> None:
    key_path = tmp_path / "k" / "audit.key"
    data = _sealed(key_path)
    key = load_key(key_path, create=False)
    assert key is not None
    assert data["_seal"].startswith(f"hmac-sha256:{key.key_id}:") and data["v"] == 2
    assert check_session_seal(data, key=key_path) is None
    assert check_session_seal(json.loads(json.dumps(data, indent=3)), key=key) is None  # layout does not matter


CASES: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]] = [
    ("field edited, checksum recomputed", _edit, "its seal does not match its content"),
    ("seal removed", lambda d: _recheck({k: v for k, v in _edit(d).items() if k != "_seal"}), "it has no seal"),
    ("checksum removed", lambda d: {k: v for k, v in d.items() if k != "_checksum"}, "it has no _checksum"),
    ("checksum wrong", lambda d: dict(d, _checksum="0" * 64), "its _checksum does not match"),
    ("an older version's file", lambda d: _recheck({k: v for k, v in dict(d, v=1).items() if k != "_seal"}),
     "written by an older version"),
    ("seal recomputed without the key (bare SHA-256)", lambda d: _unkeyed(_edit(d)), "not an HMAC"),
    ("seal recomputed without the key (in HMAC form)", lambda d: _unkeyed_in_hmac_form(_edit(d)),
     "its seal does not match its content"),
    ("seal not a string", lambda d: _recheck(dict(d, _seal=["x"])), "not an HMAC"),
]


@pytest.mark.parametrize(("case", "tamper", "reason"), CASES, ids=[c[0] for c in CASES])
def test_each_tampering_is_refused_with_its_reason(tmp_path: Path, case: str,
                                                   tamper: Callable[[dict[str, Any]], dict[str, Any]],
                                                   reason: str) -> None:
    key_path = tmp_path / "k" / "audit.key"
    refusal = check_session_seal(tamper(_sealed(key_path)), key=key_path)
    assert refusal is not None and reason in refusal, case
    assert "\n" not in refusal


def test_a_seal_copied_from_another_session_does_not_check(tmp_path: Path) -> None:
    key_path = tmp_path / "k" / "audit.key"
    mine, other = _sealed(key_path), _sealed(key_path, "ghost_20250116_000000")
    copied = _recheck(dict(mine, _seal=other["_seal"]))
    refusal = check_session_seal(copied, key=key_path)
    assert refusal is not None and "copied from another session" in refusal


def test_a_file_from_another_installation_is_named_as_such(tmp_path: Path) -> None:
    theirs = _sealed(tmp_path / "theirs" / "audit.key")
    load_key(tmp_path / "mine" / "audit.key", create=True)
    refusal = check_session_seal(theirs, key=tmp_path / "mine" / "audit.key")
    assert refusal is not None and refusal.startswith("it was sealed by another installation (key id ")


def test_no_key_or_an_unusable_key_is_a_reason_never_a_traceback(tmp_path: Path) -> None:
    data = _sealed(tmp_path / "k" / "audit.key")
    refusal = check_session_seal(data, key=tmp_path / "none" / "audit.key")
    assert refusal is not None and "has no audit key" in refusal
    loose = tmp_path / "k" / "audit.key"
    loose.chmod(0o644)
    refusal = check_session_seal(data, key=loose)
    assert refusal is not None and "audit key is unusable" in refusal and "readable by others" in refusal


def test_the_default_key_is_the_installations(tmp_path: Path) -> None:
    data = SessionState.model_validate(_content()).to_file_dict(seal=seal_session)  # creates the default key
    assert check_session_seal(data) is None
    assert (tmp_path / "home" / ".config" / "netghost" / "audit.key").exists()


def test_the_noted_seal_refuses_an_older_copy_and_a_bad_note_is_a_reason(tmp_path: Path) -> None:
    key_path = tmp_path / "k" / "audit.key"
    audit = tmp_path / "audit"
    first = _sealed(key_path)
    second = SessionState.model_validate(dict(_content(), turn_count=3)).to_file_dict(
        seal=lambda d: seal_session(d, key=key_path))
    assert session_seals(audit, SID, key=key_path) is None
    assert check_session_seal(first, key=key_path, audit_dir=audit) is None  # nothing noted: the seal alone
    record_session_seals(audit, SID, [first["_seal"], second["_seal"]], key=key_path)  # a save in progress
    assert check_session_seal(first, key=key_path, audit_dir=audit) is None
    record_session_seals(audit, SID, [second["_seal"]], key=key_path)
    assert check_session_seal(second, key=key_path, audit_dir=audit) is None
    refusal = check_session_seal(first, key=key_path, audit_dir=audit)
    assert refusal is not None and "older copy of this session's file" in refusal and "replayed" in refusal
    assert check_session_seal(first, key=key_path, audit_dir=tmp_path / "elsewhere") is None  # another directory
    (note,) = (tmp_path / "k" / "anchors").glob("session-*.seal")
    raw = note.read_bytes()
    slots = {json.loads(raw[i : i + SLOT])["gen"]: i for i in (0, SLOT)}
    assert sorted(slots) == [1, 2]  # two notes: [first, second] while saving, then [second]
    newest = slots[2]
    note.write_bytes(raw[:newest] + b"x" * SLOT + raw[newest + SLOT :])  # a crash tore the newest slot
    assert session_seals(audit, SID, key=key_path) == [first["_seal"], second["_seal"]]  # the one before holds
    note.write_bytes(raw.replace(second["_seal"].encode(), first["_seal"].encode()))  # both notes edited
    assert session_seals(audit, SID, key=key_path) == "the installation's note of its seal does not check"
    assert check_session_seal(first, key=key_path, audit_dir=audit) == "the installation's note of its seal does not check"
