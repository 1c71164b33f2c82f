"""``ghost-agent audit verify``: per-file records, head hash, every break, exit status."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from netghost.agent.cli import main
from netghost.governance import audit_cli

from .helpers import write_wal


def _run(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="ghost-agent audit")
    audit_cli.add_arguments(parser)
    args = parser.parse_args(list(argv))
    buf = io.StringIO()
    code = audit_cli.run(args, console=Console(file=buf, width=200, color_system=None))
    return code, buf.getvalue()


def test_intact_file_exits_zero_and_prints_count_and_head(tmp_path: Path) -> None:
    recs = write_wal(tmp_path / "a.jsonl", 5)
    code, out = _run("verify", str(tmp_path / "a.jsonl"))
    assert code == 0
    assert "OK" in out and "records=5" in out and str(recs[-1]["sha256"]) in out
    assert "1 file(s) checked, 0 broken" in out


def test_directory_with_a_tampered_file_exits_one_and_lists_every_break(tmp_path: Path) -> None:
    write_wal(tmp_path / "logs" / "good.jsonl", 3)
    bad = tmp_path / "logs" / "sub" / "bad.jsonl"
    write_wal(bad, 6)
    lines = bad.read_bytes().splitlines(keepends=True)
    del lines[1]
    lines[2], lines[3] = lines[3], lines[2]
    bad.write_bytes(b"".join(lines))
    code, out = _run("verify", str(tmp_path / "logs"))
    assert code == 1
    assert "BROKEN" in out and "missing" in out and "out_of_order" in out
    assert "2 file(s) checked, 1 broken" in out


def test_torn_tail_is_reported_but_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_wal(path, 2)
    with path.open("ab") as fh:
        fh.write(b'{"seq":3')
    code, out = _run("verify", str(path))
    assert code == 0 and "torn_tail" in out


def test_json_output(tmp_path: Path) -> None:
    write_wal(tmp_path / "a.jsonl", 2)
    code, out = _run("verify", "--json", str(tmp_path / "a.jsonl"))
    doc = json.loads(out)
    assert code == 0 and doc["ok"] is True and doc["records"] == 2 and doc["breaks"] == []


def test_missing_path_and_empty_dir_exit_two(tmp_path: Path) -> None:
    assert _run("verify", str(tmp_path / "nope"))[0] == 2
    (tmp_path / "empty").mkdir()
    assert _run("verify", str(tmp_path / "empty"))[0] == 2


def test_no_action_is_a_usage_error() -> None:
    parser = argparse.ArgumentParser()
    audit_cli.add_arguments(parser)
    code = audit_cli.run(parser.parse_args([]), console=Console(file=io.StringIO()))
    assert code == 2


def test_through_the_ghost_agent_dispatcher(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_wal(tmp_path / "a.jsonl", 1)
    assert main(["audit", "verify", str(tmp_path / "a.jsonl")]) == 0
    assert "records=1" in capsys.readouterr().out


def test_console_script_in_a_subprocess(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_wal(path, 3)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[0] = lines[0].replace(b"record number 0", b"record number X")
    path.write_bytes(b"".join(lines))
    proc = subprocess.run([sys.executable, "-m", "netghost", "audit", "verify", str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "hash_mismatch" in proc.stdout


def test_rendered_text_for_a_deleted_record(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    recs = write_wal(path, 4)
    lines = path.read_bytes().splitlines(keepends=True)
    del lines[1]
    path.write_bytes(b"".join(lines))
    code, out = _run("verify", str(path))
    rows = [line.rstrip() for line in out.splitlines()]
    assert code == 1
    assert rows[0] == f"BROKEN  {path}"
    assert rows[1] == f"    records=3  head={recs[-1]['sha256']}"
    assert rows[2] == "    anchor: checkpoint at seq 4 (hmac-sha256)"
    assert rows[3].split() == ["line", "seq", "kind", "detail"]
    assert rows[4].split() == ["2", "2", "missing", "record(s)", "2", "missing", "before", "seq", "3"]
    assert rows[5] == "1 file(s) checked, 1 broken"
