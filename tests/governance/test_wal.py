"""The hash-chained WAL: format, permissions, locking, torn tails, corruption and tampering."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.errors import WalError, WalLockedError
from netghost.governance.plan_token import canonical_json, sha256_tagged
from netghost.governance.wal import WalWriter, read_wal, replay_latest, verify

from .helpers import write_wal


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_records_are_chained_and_hashed(tmp_path: Path) -> None:
    path = tmp_path / "audit" / "a.jsonl"
    recs = write_wal(path, 3)
    assert [r["seq"] for r in recs] == [1, 2, 3]
    assert recs[0]["prev_sha256"] is None
    assert recs[1]["prev_sha256"] == recs[0]["sha256"]
    body = {k: v for k, v in recs[2].items() if k != "sha256"}
    assert recs[2]["sha256"] == sha256_tagged(canonical_json(body))
    assert recs[0]["ts"] == "2026-11-22T06:00:00.001000Z"
    on_disk = [json.loads(line) for line in _lines(path)]
    assert all(d.pop("hmac").startswith("hmac-sha256:") for d in on_disk)  # the seal, not part of the record
    assert on_disk == recs
    report = verify(path)
    assert report.ok and report.records == 3 and report.head_sha256 == recs[-1]["sha256"]
    assert report.breaks == []


def test_permissions_dir_0700_file_0600(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "w.jsonl"
    with WalWriter(path, fsync=True) as w:
        w.append({"x": 1})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_reserved_keys_rejected(tmp_path: Path) -> None:
    with WalWriter(tmp_path / "w.jsonl", fsync=False) as w:
        for key in ("seq", "ts", "prev_sha256", "sha256"):
            with pytest.raises(ValueError, match=key):
                w.append({key: 1})
        assert w.next_seq == 1


def test_append_after_close_raises(tmp_path: Path) -> None:
    w = WalWriter(tmp_path / "w.jsonl", fsync=False)
    w.close()
    w.close()
    assert w.closed
    with pytest.raises(WalError):
        w.append({"x": 1})


def test_resume_continues_seq_and_chain(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    first = write_wal(path, 2)
    with WalWriter(path, fsync=False) as w:
        assert w.next_seq == 3 and w.head_sha256 == first[-1]["sha256"]
        third = w.append({"i": 99})
    assert third["seq"] == 3 and third["prev_sha256"] == first[-1]["sha256"]
    assert verify(path).ok


def test_torn_tail_is_skipped_then_truncated_by_next_writer(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    recs = write_wal(path, 3)
    with path.open("ab") as fh:
        fh.write(b'{"seq":4,"kind":"t","ms')
    result = read_wal(path)
    assert [r["seq"] for r in result.records] == [1, 2, 3]
    assert [(i.kind, i.line_no) for i in result.issues] == [("torn_tail", 4)]
    report = verify(path)
    assert report.ok and report.torn_tail
    assert [(b.kind, b.seq) for b in report.breaks] == [("torn_tail", 4)]
    with WalWriter(path, fsync=False) as w:
        stored = w.append({"after": "crash"})
    assert stored["seq"] == 4 and stored["prev_sha256"] == recs[-1]["sha256"]
    report = verify(path)
    assert report.ok and report.breaks == [] and report.records == 4


def test_file_of_only_a_torn_line_resumes_at_one(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    path.write_bytes(b'{"seq":1,"ha')
    with WalWriter(path, fsync=False) as w:
        assert w.next_seq == 1 and w.head_sha256 is None
        w.append({"a": 1})
    assert verify(path).ok


def test_corrupt_lines_are_skipped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    write_wal(path, 4)
    lines = _lines(path)
    lines[1] = b"this is not json\n"
    path.write_bytes(b"".join(lines))
    result = read_wal(path)
    assert [r["seq"] for r in result.records] == [1, 3, 4]
    assert [(i.line_no, i.kind) for i in result.issues] == [(2, "corrupt_line")]
    report = verify(path)
    assert not report.ok
    assert [(b.kind, b.seq, b.line_no) for b in report.breaks] == [("corrupt_line", 2, 2)]


def test_writer_resumes_after_corrupt_last_line(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    recs = write_wal(path, 2)
    with path.open("ab") as fh:
        fh.write(b"garbage\n")
    with WalWriter(path, fsync=False) as w:
        assert w.next_seq == 3 and w.head_sha256 == recs[-1]["sha256"]


def test_replay_latest_last_record_per_key_wins(tmp_path: Path) -> None:
    path = tmp_path / "reg.jsonl"
    with WalWriter(path, fsync=False) as w:
        w.append({"task_id": "a", "state": "PENDING"})
        w.append({"task_id": "b", "state": "PENDING"})
        w.append({"task_id": "a", "state": "COMPLETED"})
        w.append({"note": "no key"})
    with path.open("ab") as fh:
        fh.write(b'{"task_id":"b","state":"FAIL')  # torn: must not win
    latest = replay_latest(path, "task_id")
    assert {k: v["state"] for k, v in latest.items()} == {"a": "COMPLETED", "b": "PENDING"}


# ---- tampering: every break is reported with its seq, never only the first -------------------


def _tamper_file(tmp_path: Path, n: int = 8) -> tuple[Path, list[bytes]]:
    path = tmp_path / "t.jsonl"
    write_wal(path, n)
    return path, _lines(path)


def test_tamper_flip_a_byte_reports_that_seq(tmp_path: Path) -> None:
    path, lines = _tamper_file(tmp_path)
    i = lines[4].index(b"record number")
    line = bytearray(lines[4])
    line[i] ^= 0x01  # 'r' -> 's': still valid JSON, different content
    lines[4] = bytes(line)
    path.write_bytes(b"".join(lines))
    report = verify(path)
    assert not report.ok
    assert [(b.kind, b.seq) for b in report.breaks] == [("hash_mismatch", 5)]


def test_tamper_delete_a_line_reports_missing_seq(tmp_path: Path) -> None:
    path, lines = _tamper_file(tmp_path)
    del lines[2]
    path.write_bytes(b"".join(lines))
    report = verify(path)
    assert [(b.kind, b.seq) for b in report.breaks] == [("missing", 3)]


def test_tamper_swap_two_lines_reports_both_seqs(tmp_path: Path) -> None:
    path, lines = _tamper_file(tmp_path)
    lines[3], lines[4] = lines[4], lines[3]
    path.write_bytes(b"".join(lines))
    report = verify(path)
    assert {b.kind for b in report.breaks} == {"out_of_order"}
    assert sorted(b.seq for b in report.breaks if b.seq is not None) == [4, 5]


def test_tamper_insert_forged_line_reports_its_seq(tmp_path: Path) -> None:
    path, lines = _tamper_file(tmp_path)
    real = json.loads(lines[3])  # seq 4
    forged = dict(real, msg="nothing to see here")
    lines.insert(4, (canonical_json(forged) + "\n").encode())
    path.write_bytes(b"".join(lines))
    report = verify(path)
    assert {(b.kind, b.seq) for b in report.breaks} == {("hash_mismatch", 4), ("duplicate_seq", 4)}


def test_tamper_insert_well_forged_line_with_valid_hash_is_still_caught(tmp_path: Path) -> None:
    path, lines = _tamper_file(tmp_path)
    prev = json.loads(lines[3])  # seq 4
    forged: dict[str, object] = {"kind": "t", "i": 42, "msg": "forged", "seq": 5, "ts": prev["ts"],
                                 "prev_sha256": prev["sha256"]}
    forged["sha256"] = sha256_tagged(canonical_json(forged))
    lines.insert(4, (canonical_json(forged) + "\n").encode())
    path.write_bytes(b"".join(lines))
    report = verify(path)
    # Its hash checks, but without the audit key it cannot carry a MAC.
    assert [(b.kind, b.seq) for b in report.breaks] == [("mac_missing", 5), ("duplicate_seq", 5)]


def test_verify_reports_every_break_not_only_the_first(tmp_path: Path) -> None:
    path, lines = _tamper_file(tmp_path, 12)
    line = bytearray(lines[1])
    line[line.index(b"record number")] ^= 0x01  # edit seq 2
    lines[1] = bytes(line)
    del lines[6]  # delete seq 7
    lines[9], lines[10] = lines[10], lines[9]  # after deletion: swap seqs 11 and 12
    path.write_bytes(b"".join(lines))
    report = verify(path)
    got = {(b.kind, b.seq) for b in report.breaks}
    assert got == {("hash_mismatch", 2), ("missing", 7), ("out_of_order", 11), ("out_of_order", 12)}


def test_edit_of_sha_field_only_reports_that_record(tmp_path: Path) -> None:
    path, lines = _tamper_file(tmp_path)
    rec = json.loads(lines[2])
    lines[2] = lines[2].replace(rec["sha256"].encode(), b"sha256:" + b"0" * 64)
    path.write_bytes(b"".join(lines))
    assert [(b.kind, b.seq) for b in verify(path).breaks] == [("hash_mismatch", 3)]


# ---- one writer per file -----------------------------------------------------------------------


def test_second_writer_same_process_is_locked_out(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    with WalWriter(path, fsync=False):
        with pytest.raises(WalLockedError) as info:
            WalWriter(path, fsync=False)
        assert info.value.path == str(path)
    with WalWriter(path, fsync=False) as again:  # released on close
        again.append({"ok": True})


_HOLDER = """
import sys, time
from netghost.governance.wal import WalWriter
w = WalWriter(sys.argv[1], fsync=False)
w.append({"holder": True})
print("locked", flush=True)
sys.stdin.readline()
"""

_CONTENDER = """
import sys
from netghost.errors import WalLockedError
from netghost.governance.wal import WalWriter
try:
    WalWriter(sys.argv[1], fsync=False)
except WalLockedError as exc:
    print("WalLockedError", exc.path)
    sys.exit(3)
print("got the lock")
"""


def test_second_writer_in_another_process_gets_wal_locked_error(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        other = subprocess.run([sys.executable, "-c", _CONTENDER, str(path)], capture_output=True, text=True, check=False)
        assert other.returncode == 3, other.stderr
        assert "WalLockedError" in other.stdout
        with pytest.raises(WalLockedError):
            WalWriter(path, fsync=False)
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=10)
        assert holder.stdout is not None
        holder.stdout.close()
    after = subprocess.run([sys.executable, "-c", _CONTENDER, str(path)], capture_output=True, text=True, check=False)
    assert after.returncode == 0 and "got the lock" in after.stdout
    assert os.path.getsize(path) > 0 and verify(path).ok


# ---- line layout: the hash member is last, but any valid layout verifies -----------------------


def test_written_line_is_canonical_body_plus_trailing_hash(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    rec = write_wal(path, 1)[0]
    body = {k: v for k, v in rec.items() if k != "sha256"}
    text = path.read_text()
    head, seal = text.rsplit(',"hmac":"', 1)
    assert head + "}\n" == canonical_json(body)[:-1] + f',"sha256":"{rec["sha256"]}"}}\n'
    assert seal.startswith("hmac-sha256:") and seal.endswith('"}\n')


def test_lines_rewritten_in_fully_sorted_layout_still_verify(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    recs = write_wal(path, 5)
    path.write_text("".join(canonical_json(r) + "\n" for r in recs))
    report = verify(path)
    assert report.ok and report.breaks == [] and report.records == 5


def test_smuggled_nested_hash_member_is_caught(tmp_path: Path) -> None:
    path, lines = _tamper_file(tmp_path, 4)
    rec = json.loads(lines[1])
    sha = rec.pop("sha256")
    rec["zzz"] = {"note": "inserted", "sha256": sha}
    lines[1] = (canonical_json(rec)[:-1] + f',"sha256":"{sha}"}}\n').encode()
    path.write_bytes(b"".join(lines))
    assert [(b.kind, b.seq) for b in verify(path).breaks] == [("hash_mismatch", 2)]


def test_empty_file_verifies_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes(b"")
    report = verify(path)
    assert report.ok and report.records == 0 and report.head_sha256 is None


def test_threads_share_one_writer_without_forking_the_chain(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "t.jsonl"
    with WalWriter(path, fsync=False) as w:
        def worker(k: int) -> None:
            for i in range(100):
                w.append({"thread": k, "i": i})

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    report = verify(path)
    assert report.ok and report.breaks == [] and report.records == 400


_OPS = st.sampled_from(["delete", "swap", "flip", "insert_copy"])


@settings(max_examples=200, deadline=None)
@given(n=st.integers(min_value=3, max_value=8), op=_OPS, data=st.data())
def test_any_single_tamper_is_detected(tmp_path_factory: pytest.TempPathFactory, n: int, op: str,
                                       data: st.DataObject) -> None:
    """Every edit, deletion (except of the very last line), reorder or insertion breaks verify."""
    path = tmp_path_factory.mktemp("tamper") / "w.jsonl"
    write_wal(path, n)
    lines = _lines(path)
    if op == "delete":
        del lines[data.draw(st.integers(0, n - 2))]  # dropping the tail is undetectable without an anchor
    elif op == "swap":
        i = data.draw(st.integers(0, n - 2))
        j = data.draw(st.integers(i + 1, n - 1))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "insert_copy":
        i = data.draw(st.integers(0, n - 1))
        lines.insert(data.draw(st.integers(0, n)), lines[i])
    else:
        blob = bytearray(b"".join(lines))
        pos = data.draw(st.integers(0, len(blob) - 2))  # not the final newline (that is a torn tail)
        blob[pos] ^= data.draw(st.integers(1, 255))
        lines = [bytes(blob)]
    path.write_bytes(b"".join(lines))
    report = verify(path)
    assert not report.ok, (op, report.breaks)


def test_forged_huge_seq_is_reported_without_walking_the_gap(tmp_path: Path) -> None:
    path, lines = _tamper_file(tmp_path, 3)
    forged: dict[str, object] = {"kind": "t", "seq": 10**15, "ts": "2026-11-22T06:00:00.000000Z",
                                 "prev_sha256": None}
    forged["sha256"] = sha256_tagged(canonical_json(forged))
    lines.insert(1, (canonical_json(forged) + "\n").encode())
    path.write_bytes(b"".join(lines))
    kinds = {(b.kind, b.seq) for b in verify(path).breaks}
    assert ("out_of_order", 10**15) in kinds and ("missing", 4) in kinds
