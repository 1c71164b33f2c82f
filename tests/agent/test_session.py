"""ghost_session.json: seed 001 §8 fields, the seal and the checksum, atomic saves, keeping another session's file.

The tamper cases of the seal (removed, unkeyed, copied, another installation, ...) are in
``tests/test_tamper.py``; here: what a save writes and what a load answers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from netghost.agent._session import (
    SESSION_FILE,
    kept_path,
    load_session,
    new_session,
    new_session_id,
    save_session,
    set_aside,
    take_back,
)
from netghost.contracts import compute_session_checksum
from tests.agent.fakes import NOW

SID = "ghost_20250115_143022"


def test_session_id_is_the_seeds_format() -> None:
    assert new_session_id(NOW) == SID


def test_saved_file_is_sealed_and_verifies_with_the_seeds_own_checksum_recipe(tmp_path: Path) -> None:
    state = new_session(SID, model="gemini-2.5-flash", audit_dir=tmp_path, now=NOW)
    path = save_session(tmp_path, state)
    assert path == tmp_path / SESSION_FILE and oct(path.stat().st_mode & 0o777) == "0o600"
    data = json.loads(path.read_text())
    assert data["v"] == 2 and data["_seal"].startswith("hmac-sha256:") and state.seal == data["_seal"]
    stored = data.pop("_checksum")
    import hashlib
    assert stored == hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    loaded = load_session(path)
    assert loaded.status == "ok" and loaded.state is not None and loaded.state.session_id == SID
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_an_edited_file_is_refused_even_with_the_checksum_recomputed_and_garbage_is_corrupt(tmp_path: Path) -> None:
    path = save_session(tmp_path, new_session(SID, model="m", audit_dir=tmp_path, now=NOW))
    data = json.loads(path.read_text())
    data["turn_count"] = 7
    path.write_text(json.dumps(data))
    refused = load_session(path)
    assert (refused.status, refused.state) == ("refused", None)
    assert "seal does not match its content" in refused.detail
    data["_checksum"] = compute_session_checksum(data)  # what anyone can do: the seed's digest is unkeyed
    path.write_text(json.dumps(data))
    assert load_session(path).status == "refused"
    path.write_text('{"session_id": ')
    assert load_session(path).status == "corrupt"
    path.write_text('{"session_id": "x"}')
    assert load_session(path).status == "refused"  # unsealed: refused before it is even validated
    assert load_session(tmp_path / "nope.json").status == "missing"


def test_a_refused_file_is_set_aside_under_its_hash_never_under_the_session_it_claims(tmp_path: Path) -> None:
    other = "ghost_20250101_000000"
    save_session(tmp_path, new_session(other, model="m", audit_dir=tmp_path, now=NOW))
    set_aside(tmp_path)
    kept = kept_path(tmp_path, other).read_bytes()
    forged = {"v": 2, "session_id": other, "created_at": "2025-01-15T14:30:22Z", "model": "m"}
    (tmp_path / SESSION_FILE).write_text(json.dumps(forged))
    assert set_aside(tmp_path) is None
    assert kept_path(tmp_path, other).read_bytes() == kept  # the real session's kept file is untouched
    assert [p.name.startswith("ghost_session.refused-") for p in tmp_path.glob("ghost_session.refused-*")] == [True]


def test_a_failed_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = new_session(SID, model="m", audit_dir=tmp_path, now=NOW)
    save_session(tmp_path, state)
    before = (tmp_path / SESSION_FILE).read_bytes()
    state.turn_count = 3

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        save_session(tmp_path, state)
    assert (tmp_path / SESSION_FILE).read_bytes() == before


def test_a_new_session_keeps_the_old_one_and_resume_takes_it_back(tmp_path: Path) -> None:
    save_session(tmp_path, new_session(SID, model="m", audit_dir=tmp_path, now=NOW))
    assert set_aside(tmp_path) == SID and kept_path(tmp_path, SID).exists()
    save_session(tmp_path, new_session("ghost_20250116_000000", model="m", audit_dir=tmp_path, now=NOW))
    path = take_back(tmp_path, SID)
    loaded = load_session(path)
    assert loaded.state is not None and loaded.state.session_id == SID
    assert kept_path(tmp_path, "ghost_20250116_000000").exists()


def test_an_older_copy_of_the_sessions_own_file_is_refused_as_replayed(tmp_path: Path) -> None:
    state = new_session(SID, model="m", audit_dir=tmp_path, now=NOW)
    path = save_session(tmp_path, state)
    older = path.read_bytes()  # genuinely sealed by this installation
    state.turn_count = 5
    save_session(tmp_path, state)
    assert load_session(path).status == "ok"
    path.write_bytes(older)
    refused = load_session(path)
    assert refused.status == "refused" and "older copy of this session's file" in refused.detail
    assert set_aside(tmp_path) is None and not kept_path(tmp_path, SID).exists()  # never kept as SID's


def test_a_crash_between_the_note_and_the_file_refuses_neither_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = new_session(SID, model="m", audit_dir=tmp_path, now=NOW)
    path = save_session(tmp_path, state)
    before = path.read_bytes()
    state.turn_count = 2

    real_replace = os.replace

    def crash(src: str, dst: str) -> None:  # the note was written, the new file never replaced the old one
        if Path(dst) == path:
            raise OSError(5, "crash before the rename")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        save_session(tmp_path, state)
    monkeypatch.setattr(os, "replace", real_replace)
    assert path.read_bytes() == before and load_session(path).status == "ok"  # the file on disk still loads
    save_session(tmp_path, state)  # the next save goes through
    assert load_session(path).status == "ok"
    assert json.loads(path.read_text())["turn_count"] == 2
