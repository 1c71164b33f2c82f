"""A session's trail: the logs it must have come from real data (anchors, sealed session file, cross
references), and each missing, truncated or foreign one is a one-line problem; ``audit verify`` fails on it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from netghost.contracts import SessionState
from netghost.governance import (
    SESSION_FILE,
    check_trail,
    check_trails,
    seal_session,
    session_ids,
    signed_head,
)
from netghost.governance.wal import WalWriter

from .helpers import FakeClock
from .test_audit_cli import _run

SID = "ghost_20250115_143022"
OTHER = "ghost_20250116_090000"


def _log(path: Path, records: list[dict[str, Any]]) -> None:
    with WalWriter(path, fsync=False, clock=FakeClock()) as w:
        for r in records:
            w.append(r)


def _session(audit: Path, sid: str = SID, *, session_file: bool = True, task: str = "ghost_web_1") -> Path:
    """A session as the agent leaves it: 4 shell records, a registry citing two, a journal citing all."""
    audit.mkdir(parents=True, exist_ok=True)
    shell = [{"v": 1, "kind": "shell_command", "session_id": sid, "audit_id": f"{sid}_{i:03d}",
              "command": f"az network nsg list -g rg{i}"} for i in range(1, 5)]
    _log(audit / f"shell_audit_{sid}.jsonl", shell)
    _log(audit / f"orchestrator_tasks_{sid}.jsonl",
         [{"v": 2, "task_id": task, "session_id": sid, "state": "COMPLETED",
           "shell_audit_ids": [f"{sid}_002", f"{sid}_003"]}])
    _log(audit / f"ghost_turns_{sid}.jsonl", [
        {"v": 1, "kind": "session_event", "session_id": sid, "event": "started"},
        {"v": 1, "kind": "model_turn", "session_id": sid, "after_audit_id": None},
        {"v": 1, "kind": "shell_call", "session_id": sid, "audit_id": f"{sid}_001"},
        {"v": 1, "kind": "orchestrator_call", "session_id": sid, "request": {"intent": "capture_traffic"},
         "response": {"status": "task_pending", "task_id": task}, "shell_audit_ids": [f"{sid}_002", f"{sid}_003"]},
        {"v": 1, "kind": "shell_call", "session_id": sid, "audit_id": f"{sid}_004"},
    ])
    if session_file:
        heads = {kind: head.to_dict() for kind, name in (("shell", "shell_audit"), ("orchestrator", "orchestrator_tasks"),
                                                         ("turns", "ghost_turns"))
                 if (head := signed_head(audit / f"{name}_{sid}.jsonl")) is not None}
        state = SessionState(session_id=sid, created_at="2025-01-15T14:30:22Z", model="m", audit_heads=heads,
                             active_task_ids=[task])
        (audit / SESSION_FILE).write_text(json.dumps(state.to_file_dict(seal=seal_session)))
    return audit


def _lines(audit: Path, sid: str = SID) -> list[str]:
    return [f"{p.kind} {p.line}" for p in check_trail(audit, sid).problems]


def test_a_whole_session_is_complete_and_names_every_file(tmp_path: Path) -> None:
    audit = _session(tmp_path / "audit")
    report = check_trail(audit, SID)
    assert report.ok, report.problems
    assert set(report.expected) == {f"shell_audit_{SID}.jsonl", f"orchestrator_tasks_{SID}.jsonl",
                                    f"ghost_turns_{SID}.jsonl", SESSION_FILE}
    assert session_ids(audit) == [SID]


@pytest.mark.parametrize("name", ["shell_audit", "orchestrator_tasks", "ghost_turns"])
def test_a_deleted_log_is_missing_and_the_anchors_say_so(tmp_path: Path, name: str) -> None:
    audit = _session(tmp_path / "audit")
    (audit / f"{name}_{SID}.jsonl").unlink()
    (line,) = [x for x in _lines(audit) if x.startswith("missing")]
    assert line.startswith(f"missing {name}_{SID}.jsonl: missing, but its checkpoint says it held ")
    assert "if it was removed on purpose, remove its checkpoint" in line


def test_without_anchors_the_sealed_session_file_and_cross_references_still_know(tmp_path: Path) -> None:
    audit = _session(tmp_path / "audit")
    shutil.rmtree(tmp_path / "home" / ".config" / "netghost" / "anchors")
    (audit / f"shell_audit_{SID}.jsonl").unlink()
    (line,) = _lines(audit)
    assert line == f"missing shell_audit_{SID}.jsonl: missing, but {SESSION_FILE} pins its record 4"
    (audit / SESSION_FILE).unlink()  # the journal's and the registry's citations remain
    lines = _lines(audit)
    assert f"missing shell_audit_{SID}.jsonl: missing, but ghost_turns_{SID}.jsonl cites {SID}_001" in lines
    assert any(x.startswith(f"missing ghost_session_{SID}.json: missing: ghost_turns_{SID}.jsonl shows an agent session")
               for x in lines)


def test_a_truncated_log_ends_before_what_is_cited(tmp_path: Path) -> None:
    audit = _session(tmp_path / "audit")
    shell = audit / f"shell_audit_{SID}.jsonl"
    shell.write_bytes(b"".join(shell.read_bytes().splitlines(keepends=True)[:2]))
    (line,) = _lines(audit)
    assert line.startswith(f"truncated shell_audit_{SID}.jsonl: it ends at record 2, but ")
    assert line.endswith("(record 4)")
    code, out = _run("verify", str(audit))
    assert code == 1 and "truncated" in out


def test_a_registry_without_the_journals_task_is_truncated(tmp_path: Path) -> None:
    audit = _session(tmp_path / "audit", session_file=False)
    shutil.rmtree(tmp_path / "home" / ".config" / "netghost" / "anchors")
    (audit / f"orchestrator_tasks_{SID}.jsonl").write_bytes(b"")
    assert (f"truncated orchestrator_tasks_{SID}.jsonl: task ghost_web_1 is not in it, but "
            f"ghost_turns_{SID}.jsonl saw it created") in _lines(audit)


def test_a_log_replaced_by_another_sessions_is_foreign(tmp_path: Path) -> None:
    audit = _session(tmp_path / "audit")
    other = _session(tmp_path / "other", OTHER)
    shutil.copyfile(other / f"shell_audit_{OTHER}.jsonl", audit / f"shell_audit_{SID}.jsonl")
    lines = _lines(audit)
    assert f"foreign shell_audit_{SID}.jsonl: it holds records of session {OTHER}: replaced by (or mixed with) " \
           "another session's log" in lines
    assert any(x.startswith(f"foreign shell_audit_{SID}.jsonl: it is not the log the session file pinned") for x in lines)


def test_a_session_file_whose_seal_fails_is_a_problem_and_is_not_believed(tmp_path: Path) -> None:
    audit = _session(tmp_path / "audit")
    data = json.loads((audit / SESSION_FILE).read_text())
    data["audit_heads"] = {}
    (audit / SESSION_FILE).write_text(json.dumps(data))
    assert _lines(audit) == [f"session_file {SESSION_FILE}: refused: its seal does not match its content: a field "
                             "was edited, or the seal was copied from another session's file"]


def test_a_session_without_a_session_file_or_journal_needs_only_what_it_wrote(tmp_path: Path) -> None:
    """An MCP session: a shell audit and a registry; deleting the shell audit is still seen (anchors)."""
    audit = tmp_path / "audit"
    audit.mkdir()
    _log(audit / "shell_audit_mcp_20250101_000000.jsonl", [{"session_id": "mcp_20250101_000000", "n": 1}])
    _log(audit / "orchestrator_tasks_mcp_20250101_000000.jsonl", [])
    (report,) = check_trails(audit)
    assert report.ok and report.session_id == "mcp_20250101_000000"
    (audit / "shell_audit_mcp_20250101_000000.jsonl").unlink()
    (report,) = check_trails(audit)
    assert [p.kind for p in report.problems] == ["missing"]


def test_audit_verify_fails_with_one_line_per_problem_and_exits_one(tmp_path: Path) -> None:
    audit = _session(tmp_path / "audit")
    _session(audit, OTHER, session_file=False)
    code, out = _run("verify", str(audit))
    assert code == 0, out
    assert "6 file(s) checked, 0 broken; 2 session(s) checked, 0 incomplete" in out  # the session file is not a log
    (audit / f"ghost_turns_{SID}.jsonl").unlink()
    code, out = _run("verify", str(audit))
    assert code == 1
    assert f"INCOMPLETE  session {SID} in {audit}" in out and f"OK  session {OTHER} in {audit}" in out
    (line,) = [x for x in out.splitlines() if f"ghost_turns_{SID}.jsonl: missing" in x]
    assert line.strip().startswith(f"missing  ghost_turns_{SID}.jsonl: missing, but its checkpoint says it held 5")
    assert "2 session(s) checked, 1 incomplete" in out


def test_a_directory_whose_logs_are_all_gone_is_broken_not_empty(tmp_path: Path) -> None:
    audit = _session(tmp_path / "audit", session_file=False)
    for path in audit.glob("*.jsonl"):
        path.unlink()
    code, out = _run("verify", str(audit))
    assert code == 1 and "no .jsonl files" not in out
    assert sum(1 for x in out.splitlines() if x.strip().startswith("missing")) == 3
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run("verify", str(empty))[0] == 2  # nothing says a log should be there: a usage error as before


def test_json_output_has_one_document_per_session(tmp_path: Path) -> None:
    audit = _session(tmp_path / "audit")
    (audit / f"shell_audit_{SID}.jsonl").unlink()
    code, out = _run("verify", "--json", str(audit))
    docs = [json.loads(line) for line in out.splitlines()]
    (session,) = [d for d in docs if "session_id" in d]
    assert code == 1 and session["ok"] is False
    assert [(p["file"], p["kind"]) for p in session["problems"]] == [(f"shell_audit_{SID}.jsonl", "missing")]


def test_a_bare_audit_verify_checks_the_default_audit_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = _run("verify")
    assert code == 2 and "./audit: no such file or directory" in out
    _session(tmp_path / "audit")
    code, out = _run("verify")
    assert code == 0 and "session(s) checked, 0 incomplete" in out
    os.unlink(tmp_path / "audit" / f"shell_audit_{SID}.jsonl")
    code, out = _run("verify")
    assert code == 1 and f"shell_audit_{SID}.jsonl: missing" in out
