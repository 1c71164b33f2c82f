"""Provisional records: authenticated (MAC, log, session, seq, head) before they are appended, else moved aside."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from netghost.governance import (
    Provisional,
    ProvisionalRejection,
    pending_record,
    provisional_path,
    read_provisional,
    recover_provisional,
    rejected_provisionals,
    write_provisional,
)
from netghost.governance.wal import WalWriter, read_wal, verify

from .helpers import FakeClock

SID = "s1"


def _writer(directory: Path, sid: str = SID, key: Path | None = None) -> WalWriter:
    return WalWriter(directory / f"log_{sid}.jsonl", fsync=False, clock=FakeClock(), key=key)


def _record(i: int, **extra: Any) -> dict[str, Any]:
    return {"kind": "call", "i": i, "command": "az network nsg list", **extra}


def _envelope(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(provisional_path(path).read_text())
    return doc


def test_an_authentic_record_that_continues_the_log_is_appended_once(tmp_path: Path) -> None:
    with _writer(tmp_path) as w:
        w.append(_record(0))
        write_provisional(w, _record(1), session_id=SID)
        assert pending_record(w.path, read_wal(w.path).records, session_id=SID) == _record(1)
        recovery = recover_provisional(w, session_id=SID)
        assert recovery.rejection is None and recovery.appended is not None and recovery.appended["seq"] == 2
        assert not provisional_path(w.path).exists()
        assert recover_provisional(w, session_id=SID).appended is None  # nothing left to recover
    assert [r["i"] for r in read_wal(w.path).records] == [0, 1] and verify(w.path).ok


def test_the_leftover_of_an_appended_record_is_removed_quietly(tmp_path: Path) -> None:
    with _writer(tmp_path) as w:
        write_provisional(w, _record(0), session_id=SID)
        w.append(_record(0))  # the real record went in; the provisional file stayed (its removal failed)
        recovery = recover_provisional(w, session_id=SID)
        assert recovery.appended is None and recovery.rejection is None
        assert not provisional_path(w.path).exists() and rejected_provisionals(w.path) == []
    assert len(read_wal(w.path).records) == 1


def _refused(w: WalWriter, before: int) -> ProvisionalRejection:
    recovery = recover_provisional(w, session_id=SID)
    assert recovery.appended is None and recovery.rejection is not None
    rejection = recovery.rejection
    assert not provisional_path(w.path).exists()
    assert rejection.moved_to is not None and rejection.moved_to.exists()
    assert rejected_provisionals(w.path) == [rejection.moved_to]
    assert len(read_wal(w.path).records) == before  # nothing appended
    assert "\n" not in rejection.notice and rejection.notice.startswith(f"Provisional audit record {w.path.name}")
    return rejection


def test_an_unkeyed_record_is_refused_and_moved_aside(tmp_path: Path) -> None:
    with _writer(tmp_path) as w:
        w.append(_record(0))
        forged = _record(1, action="user_approved", status="completed")
        provisional_path(w.path).write_text(json.dumps(forged))
        rejection = _refused(w, 1)
        assert "carries no MAC" in rejection.reason
        assert rejection.file_sha256.startswith("sha256:") and rejection.size > 0
        assert rejection.moved_to is not None and json.loads(rejection.moved_to.read_text()) == forged  # kept as evidence


def test_an_altered_record_is_refused(tmp_path: Path) -> None:
    with _writer(tmp_path) as w:
        w.append(_record(0))
        write_provisional(w, _record(1), session_id=SID)
        doc = _envelope(w.path)
        doc["record"]["command"] = "az network nsg rule delete -g rg --nsg-name n -n AllowRedis"
        provisional_path(w.path).write_text(json.dumps(doc))
        assert "its MAC does not check" in _refused(w, 1).reason


def test_a_record_sealed_by_another_installation_is_refused(tmp_path: Path) -> None:
    with _writer(tmp_path / "theirs", key=tmp_path / "theirs-key" / "audit.key") as theirs:
        write_provisional(theirs, _record(0), session_id=SID)
        planted = provisional_path(theirs.path).read_bytes()
    with _writer(tmp_path) as w:
        provisional_path(w.path).write_bytes(planted)
        assert "its MAC does not check" in _refused(w, 0).reason


def test_a_record_replayed_from_another_session_is_refused(tmp_path: Path) -> None:
    with _writer(tmp_path / "a", sid="other") as other:
        write_provisional(other, _record(0), session_id="other")
        genuine = provisional_path(other.path).read_bytes()
    with _writer(tmp_path) as w:
        provisional_path(w.path).write_bytes(genuine)
        reason = _refused(w, 0).reason
    assert "written for log_other.jsonl of session other" in reason and "replayed from another session" in reason


def test_a_record_replayed_from_an_earlier_point_of_the_log_is_refused(tmp_path: Path) -> None:
    with _writer(tmp_path) as w:
        w.append(_record(0))
        write_provisional(w, _record(1), session_id=SID)
        early = provisional_path(w.path).read_bytes()
        w.append(_record(1))
        w.append(_record(2))
        provisional_path(w.path).write_bytes(early)
        reason = _refused(w, 3).reason
    assert "written for record 2" in reason and "next record is 4" in reason and "replayed" in reason


def test_garbage_is_refused_as_unreadable(tmp_path: Path) -> None:
    with _writer(tmp_path) as w:
        provisional_path(w.path).write_bytes(b'{"v": 2, "kind": "provis')
        assert "unreadable JSON" in _refused(w, 0).reason


def test_a_planted_link_is_neither_followed_nor_read(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me")
    with _writer(tmp_path / "d") as w:
        provisional_path(w.path).symlink_to(target)
        assert read_provisional(w.path, session_id=SID) is not None
        rejection = _refused(w, 0)
        assert "symbolic link" in rejection.reason and rejection.file_sha256 == ""
        provisional_path(w.path).symlink_to(target)
        write_provisional(w, _record(0), session_id=SID)  # replaces the link, never writes through it
        assert not provisional_path(w.path).is_symlink()
    assert target.read_text() == "keep me"


def test_a_directory_in_the_way_is_left_so_writes_fail_closed(tmp_path: Path) -> None:
    with _writer(tmp_path) as w:
        provisional_path(w.path).mkdir()
        recovery = recover_provisional(w, session_id=SID)
        assert recovery.appended is None and recovery.rejection is None
        assert provisional_path(w.path).is_dir()


def test_a_reader_sees_only_an_authentic_record_that_continues_the_log(tmp_path: Path) -> None:
    with _writer(tmp_path) as w:
        w.append(_record(0))
        write_provisional(w, _record(1), session_id=SID)
    records = read_wal(w.path).records
    found = read_provisional(w.path, session_id=SID)
    assert isinstance(found, Provisional) and found.seq == 2 and found.prev_sha256 == records[-1]["sha256"]
    assert pending_record(w.path, records, session_id=SID) == _record(1)
    assert pending_record(w.path, records[:0], session_id=SID) is None  # does not continue that log
    assert pending_record(w.path, records, session_id="other") is None
    doc = _envelope(w.path)
    doc["record"]["status"] = "completed"
    provisional_path(w.path).write_text(json.dumps(doc))
    assert pending_record(w.path, records, session_id=SID) is None
    assert isinstance(read_provisional(w.path, session_id=SID), ProvisionalRejection)
