"""The anchored end of the WAL: every tampering with the log's end is caught by `ghost-agent audit verify`
with no extra argument (the CLI's main, with the installation's default key under the test's HOME)."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from netghost.agent.cli import main
from netghost.errors import WalError
from netghost.governance import SignedHead, signed_head
from netghost.governance._anchor import anchor_path, default_key_path, load_key, read_checkpoint
from netghost.governance.plan_token import canonical_json, sha256_tagged
from netghost.governance.wal import WalWriter, read_wal, verify

from .helpers import write_wal

N = 6


def _cli(*paths: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(["audit", "verify", *map(str, paths)])
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return int(code or 0), out.getvalue() + err.getvalue()


def _log(tmp_path: Path, n: int = N) -> tuple[Path, list[bytes]]:
    path = tmp_path / "audit" / "shell_audit_s1.jsonl"
    write_wal(path, n)
    return path, path.read_bytes().splitlines(keepends=True)


def _forge(prev: dict[str, object], seq: int, msg: str = "forged") -> bytes:
    rec: dict[str, object] = {"kind": "t", "i": seq, "msg": msg, "seq": seq, "ts": prev["ts"],
                              "prev_sha256": prev["sha256"]}  # fmt: skip
    rec["sha256"] = sha256_tagged(canonical_json(rec))
    return (canonical_json(rec) + "\n").encode()


def test_intact_anchored_log_verifies_with_its_checkpoint(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    code, out = _cli(path)
    assert code == 0, out
    assert "anchor: checkpoint at seq 6" in out
    key_path = default_key_path()
    assert key_path == Path(os.environ["HOME"]) / ".config" / "netghost" / "audit.key"
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_path.parent.stat().st_mode) == 0o700
    assert not str(anchor_path(load_key(create=False), path)).startswith(str(path.parent))  # type: ignore[arg-type]


@pytest.mark.parametrize("keep", range(N))
def test_truncation_to_every_earlier_record_is_detected(tmp_path: Path, keep: int) -> None:
    path, lines = _log(tmp_path)
    path.write_bytes(b"".join(lines[:keep]))
    code, out = _cli(path)
    assert code == 1, out
    assert "truncated" in out
    (cut,) = [b for b in verify(path).breaks if b.kind == "truncated"]
    assert cut.seq == keep + 1 and "cut off its end" in cut.detail


@pytest.mark.parametrize("cut", [1, 10, 0.5])
def test_torn_last_record_is_detected(tmp_path: Path, cut: float) -> None:
    path, lines = _log(tmp_path)
    last = lines[-1]
    keep = int(len(last) * cut) if isinstance(cut, float) else len(last) - cut
    path.write_bytes(b"".join(lines[:-1]) + last[:keep])
    code, out = _cli(path)
    assert code == 1 and "truncated" in out, out


@pytest.mark.parametrize("index", [0, 2, N - 1])
def test_deleted_record_is_detected(tmp_path: Path, index: int) -> None:
    path, lines = _log(tmp_path)
    del lines[index]
    path.write_bytes(b"".join(lines))
    code, out = _cli(path)
    assert code == 1, out


def test_forged_appended_record_with_recomputed_hash_is_detected(tmp_path: Path) -> None:
    path, lines = _log(tmp_path)
    prev = json.loads(lines[-1])
    path.write_bytes(b"".join(lines) + _forge(prev, N + 1))
    assert verify(path).breaks[0].kind == "mac_missing"
    code, out = _cli(path)
    assert code == 1 and "mac_missing" in out, out
    # ... and with a made-up MAC in the writer's layout
    forged = json.loads(_forge(prev, N + 1))
    sha = forged.pop("sha256")
    line = (canonical_json(forged)[:-1] + f',"sha256":"{sha}","hmac":"hmac-sha256:{"ab" * 32}"}}\n').encode()
    path.write_bytes(b"".join(lines) + line)
    code, out = _cli(path)
    assert code == 1 and "mac_mismatch" in out, out


@pytest.mark.parametrize("index", [0, 3, N - 1])
def test_edited_and_rechained_log_is_detected(tmp_path: Path, index: int) -> None:
    path, lines = _log(tmp_path)
    recs = [json.loads(line) for line in lines]
    out_lines = list(lines[:index])
    prev = recs[index - 1]["sha256"] if index else None
    for i, rec in enumerate(recs[index:], start=index):
        rec.pop("hmac")
        if i == index:
            rec["msg"] = "nothing to see here"
        rec["prev_sha256"] = prev
        rec.pop("sha256")
        rec["sha256"] = prev = sha256_tagged(canonical_json(rec))
        out_lines.append((canonical_json({k: v for k, v in rec.items() if k != "sha256"})[:-1]
                          + f',"sha256":"{rec["sha256"]}"}}\n').encode())  # fmt: skip
    path.write_bytes(b"".join(out_lines))
    report = verify(path)
    assert not any(b.kind == "hash_mismatch" for b in report.breaks)  # the chain itself checks
    code, out = _cli(path)
    assert code == 1 and "checkpoint_mismatch" in out, out
    # Every re-chained record after a sealed one lacks its MAC (an edit of record 1 changes the log's
    # identity instead, which the checkpoint names).
    assert ("mac_missing" in out) == (index > 0), out


def test_truncated_tail_and_deleted_checkpoint_are_detected(tmp_path: Path) -> None:
    path, lines = _log(tmp_path)
    key = load_key(create=False)
    assert key is not None
    path.write_bytes(b"".join(lines[:3]))
    anchor_path(key, path).unlink()
    code, out = _cli(path)
    assert code == 1 and "checkpoint_missing" in out, out


def test_swapped_checkpoint_is_detected(tmp_path: Path) -> None:
    path, lines = _log(tmp_path)
    key = load_key(create=False)
    assert key is not None
    own = anchor_path(key, path)
    newest = read_checkpoint(key, path)
    assert isinstance(newest, SignedHead)
    other = tmp_path / "audit" / "shell_audit_s2.jsonl"
    write_wal(other, N + 2)
    # another log's checkpoint in place of this one's
    shutil.copyfile(anchor_path(key, other), own)
    code, out = _cli(path)
    assert code == 1 and "checkpoint_mismatch" in out, out
    # a checkpoint edited to name an earlier head (matching a truncation): its MAC fails
    doc = newest.to_dict()
    doc.update(seq=3, sha256=json.loads(lines[2])["sha256"])
    own.write_text(json.dumps(doc))
    path.write_bytes(b"".join(lines[:3]))
    code, out = _cli(path)
    assert code == 1 and "checkpoint_invalid" in out, out
    # garbage in place of the checkpoint
    own.write_text("{not json")
    code, out = _cli(path)
    assert code == 1 and "checkpoint_invalid" in out, out


def test_checkpoint_signed_by_another_key_is_detected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = _log(tmp_path)
    monkeypatch.setenv("NETGHOST_AUDIT_KEY", str(tmp_path / "other" / "audit.key"))
    load_key(create=True)
    code, out = _cli(path)
    assert code == 1 and ("mac_mismatch" in out or "checkpoint" in out), out


def test_missing_key_is_a_break_for_an_anchored_log(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    default_key_path().unlink()
    code, out = _cli(path)
    assert code == 1 and "key_missing" in out, out


def test_legacy_log_reads_and_verifies_with_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "legacy.jsonl"
    prev: str | None = None
    lines = []
    for seq in range(1, 4):
        rec: dict[str, object] = {"kind": "t", "seq": seq, "ts": "2025-01-01T00:00:00.000000Z", "prev_sha256": prev}
        prev = sha256_tagged(canonical_json(rec))
        lines.append((canonical_json(rec)[:-1] + f',"sha256":"{prev}"}}\n').encode())
    path.write_bytes(b"".join(lines))
    report = verify(path)
    assert report.ok and report.anchor == "legacy" and "unanchored (legacy)" in report.notices[0]
    code, out = _cli(path)
    assert code == 0 and "unanchored (legacy)" in out, out
    # The first anchored writer checkpoints its head: from then on a cut is caught.
    with WalWriter(path, fsync=False) as w:
        assert w.next_seq == 4 and w.signed_head is not None and w.signed_head.seq == 3
        w.append({"kind": "t"})
    report = verify(path)
    assert report.ok and report.anchor == "checkpoint" and report.checkpoint is not None
    assert report.checkpoint.seq == 4
    path.write_bytes(b"".join(lines))  # back to the legacy prefix
    assert [b.kind for b in verify(path).breaks] == ["truncated"]


def test_writer_refuses_to_extend_a_tampered_log(tmp_path: Path) -> None:
    path, lines = _log(tmp_path)
    path.write_bytes(b"".join(lines[:-1]))
    with pytest.raises(WalError, match="does not match its checkpoint"):
        WalWriter(path, fsync=False)
    path.write_bytes(b"".join(lines) + _forge(json.loads(lines[-1]), N + 1))
    with pytest.raises(WalError, match="forged"):
        WalWriter(path, fsync=False)
    # the last record edited in place, its stored sha256 and MAC kept: the writer does not build on it
    last = json.loads(lines[-1])
    last["kind"] = "edited"  # key order kept: sha256 and hmac stay last
    path.write_bytes(b"".join(lines[:-1]) + json.dumps(last, separators=(",", ":")).encode() + b"\n")
    with pytest.raises(WalError, match="rewritten"):
        WalWriter(path, fsync=False)
    path.write_bytes(b"".join(lines))
    with WalWriter(path, fsync=False) as w:  # the untouched log continues
        w.append({"kind": "t"})
    assert verify(path).ok


def test_crash_between_append_and_checkpoint_is_tolerated(tmp_path: Path) -> None:
    """The checkpoint is written after the record is durable: a crash leaves it one record behind."""
    path, _ = _log(tmp_path)
    key = load_key(create=False)
    assert key is not None
    behind = anchor_path(key, path).read_bytes()
    with WalWriter(path, fsync=False) as w:
        w.append({"kind": "t", "i": 99})
    anchor_path(key, path).write_bytes(behind)  # as if the process died before the checkpoint
    report = verify(path)
    assert report.ok and report.breaks == [] and "after the checkpoint" in report.notices[0]
    with WalWriter(path, fsync=False) as w:  # the next writer re-anchors and continues
        assert w.signed_head is not None and w.signed_head.seq == N + 1
    assert verify(path).notices == []


def test_signed_head_is_citable_and_checkable(tmp_path: Path) -> None:
    path, lines = _log(tmp_path)
    head = signed_head(path)
    assert head is not None
    cited = json.loads(json.dumps(head.to_dict()))
    assert cited["seq"] == N and cited["sha256"] == json.loads(lines[-1])["sha256"]
    key = load_key(create=False)
    assert key is not None
    assert SignedHead.from_dict(cited).check(key)
    assert not SignedHead.from_dict({**cited, "seq": N - 1}).check(key)
    assert verify(path, expected_head=cited["sha256"]).ok


def test_records_read_back_without_the_seal(tmp_path: Path) -> None:
    from netghost.governance.wal import read_wal, replay_latest

    path, _ = _log(tmp_path)
    result = read_wal(path)
    assert all("hmac" not in r for r in result.records)
    assert all(s and s.startswith("hmac-sha256:") for s in result.seals)
    assert all("hmac" not in r for r in replay_latest(path, "i").values())
    with pytest.raises(ValueError, match="reserved"):
        WalWriter(tmp_path / "x.jsonl", fsync=False).append({"hmac": "x"})


def test_loose_key_permissions_are_refused(tmp_path: Path) -> None:
    key_path = tmp_path / "k" / "audit.key"
    load_key(key_path, create=True)
    key_path.chmod(0o644)
    with pytest.raises(WalError, match="readable by others"):
        load_key(key_path, create=False)


def test_a_crash_between_the_first_append_and_its_checkpoint_leaves_a_log_that_continues(tmp_path: Path) -> None:
    """SIGKILL after a new log's first record is written and before its checkpoint is: the next writer
    extends the log (the record's MAC checks it) instead of refusing it as one whose checkpoint was
    deleted. Simulated exactly: the checkpoint file is put back as it was before the first append."""
    path = tmp_path / "audit" / "shell_audit_new.jsonl"
    writer = WalWriter(path)
    target = anchor_path(writer.key, path)
    before = target.read_bytes() if target.exists() else None  # what a crash before the checkpoint leaves
    writer.append({"command": "az vm list", "status": "completed"})
    writer.close()
    if before is None:
        target.unlink()
    else:
        target.write_bytes(before)
    with WalWriter(path) as again:  # would raise WalError ("its checkpoint is gone") for a deletion
        again.append({"command": "az vm show", "status": "completed"})
    assert [r["seq"] for r in read_wal(path).records] == [1, 2]
    report = verify(path)
    assert report.ok and report.anchor == "checkpoint", report
    # a deleted checkpoint is still a deleted checkpoint
    target.unlink()
    assert not verify(path).ok
    with pytest.raises(WalError, match="checkpoint is gone"):
        WalWriter(path)
