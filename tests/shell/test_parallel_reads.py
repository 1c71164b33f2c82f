"""One turn's SAFE reads run concurrently through the shell; the audit stays in call order.

A slow fake ``az`` on PATH records its own start and end stamps (and its pid), so overlap is asserted
from what the processes did, not from how long the test took. The real classifier decides what is SAFE.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from netghost.governance import pending_records, verify, write_provisional
from netghost.governance.wal import read_wal
from netghost.shell import HitlDecision, SafeExecShell
from netghost.shell.record import Outcome
from netghost.shell.shell import _provisional
from tests.shell.shell_helpers import Recorder, call_events, fake_az


def _read(name: str) -> dict[str, str]:
    return {"command": f"az network vnet show -g rg -n {name}", "reasoning": f"read {name}"}


@pytest.fixture
def lab(tmp_path: Path) -> tuple[str, Path]:
    return fake_az(tmp_path)


def _shell(tmp_path: Path, path: str, recorder: Recorder | None = None, sid: str = "par") -> SafeExecShell:
    return SafeExecShell(sid, recorder or Recorder(), audit_dir=tmp_path / "audit", path=path, cwd=tmp_path)


def test_safe_reads_of_one_batch_overlap_and_come_back_in_call_order(tmp_path: Path, lab: tuple[str, Path]) -> None:
    path, log = lab
    names = ["vnet1", "vnet2", "vnet3", "vnet4"]
    with _shell(tmp_path, path) as shell:
        responses = shell.execute_many([_read(n) for n in names])
        records = read_wal(shell.audit_path).records
    events = call_events(log)
    # every read started before any of them ended: they ran at the same time
    assert max(events[n]["start"] for n in names) < min(events[n]["end"] for n in names)
    assert [r["output"].strip() for r in responses] == [f"read {n}" for n in names]
    assert [r["audit_id"] for r in responses] == [f"par_{i:03d}" for i in range(1, 5)]
    assert [r["command"].rsplit(" ", 1)[1] for r in records] == names
    assert all(r["action"] == "auto_approved" and r["status"] == "completed" for r in records)
    assert verify(tmp_path / "audit" / "shell_audit_par.jsonl").ok
    assert not (tmp_path / "audit" / "shell_audit_par.jsonl.inflight").exists()


def test_a_risky_call_runs_alone_in_its_place_and_is_asked_once(tmp_path: Path, lab: tuple[str, Path]) -> None:
    path, log = lab
    human = Recorder([HitlDecision.approve()])
    batch = [_read("a1"), _read("a2"), {"command": "az vm delete -g rg -n r1", "reasoning": "x"}, _read("b1"),
             _read("b2")]
    with _shell(tmp_path, path, human) as shell:
        responses = shell.execute_many(batch)
    events = call_events(log)
    assert len(human.requests) == 1  # only the RISKY one was asked
    assert [r["action"] for r in responses] == ["auto_approved"] * 2 + ["user_approved"] + ["auto_approved"] * 2
    # the RISKY one overlaps nothing: it starts after the reads before it ended, and ends before the next start
    assert events["r1"]["start"] > max(events["a1"]["end"], events["a2"]["end"])
    assert events["r1"]["end"] < min(events["b1"]["start"], events["b2"]["start"])
    assert max(events["b1"]["start"], events["b2"]["start"]) < min(events["b1"]["end"], events["b2"]["end"])
    assert [r["audit_id"] for r in responses] == [f"par_{i:03d}" for i in range(1, 6)]


def test_a_denied_risky_call_leaves_the_reads_after_it_to_run(tmp_path: Path, lab: tuple[str, Path]) -> None:
    path, log = lab
    human = Recorder([HitlDecision.deny("not now")])
    with _shell(tmp_path, path, human) as shell:
        responses = shell.execute_many([{"command": "az vm delete -g rg -n r1", "reasoning": "x"}, _read("c1")])
    assert [r["status"] for r in responses] == ["denied", "completed"]
    assert "r1" not in call_events(log)


def test_forbidden_and_malformed_requests_keep_their_place(tmp_path: Path, lab: tuple[str, Path]) -> None:
    path, _ = lab
    with _shell(tmp_path, path) as shell:
        responses = shell.execute_many([_read("d1"), {"command": 7}, {"command": "az account get-access-token"},
                                        _read("d2")])
        records = read_wal(shell.audit_path).records
    assert [r["status"] for r in responses] == ["completed", "error", "denied", "completed"]
    assert [r["audit_id"] for r in records] == [r["audit_id"] for r in responses]


_CRASH = """
import json, sys
sys.path.insert(0, sys.argv[1])
from netghost.shell import SafeExecShell
from tests.shell.shell_helpers import Recorder
shell = SafeExecShell("crash", Recorder(), audit_dir=sys.argv[2], path=sys.argv[3], cwd=sys.argv[4])
shell.execute_many(json.loads(sys.argv[5]))
"""


@pytest.mark.parametrize("first_done", [False, True], ids=["all-running", "first-appended"])
def test_sigkill_mid_batch_leaves_each_call_audited_once_after_recovery(tmp_path: Path, lab: tuple[str, Path],
                                                                        first_done: bool) -> None:
    path, log = lab
    names = ["fast1" if first_done else "slow0", "slow1", "slow2"]
    audit = tmp_path / "audit"
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen([sys.executable, "-c", _CRASH, str(root), str(audit), path, str(tmp_path),
                              json.dumps([_read(n) for n in names])], env={**os.environ})
    log_file = audit / "shell_audit_crash.jsonl"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # waits for the state to reach, asserts nothing on time
            started = call_events(log) if log.exists() else {}
            ready = all(n in started for n in names)
            if first_done:
                ready = ready and log_file.exists() and len(read_wal(log_file).records) == 1
            if ready:
                break
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        for event in (call_events(log) if log.exists() else {}).values():  # the orphaned fakes
            if "end" not in event:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(int(event["pid"]), signal.SIGKILL)
    assert child.returncode == -signal.SIGKILL
    assert (audit / "shell_audit_crash.jsonl.inflight").exists()
    appended = read_wal(log_file).records if log_file.exists() else []
    waiting = pending_records(log_file, appended, session_id="crash")  # what a reader adds (resume, verify)
    assert [r["command"].rsplit(" ", 1)[1] for r in [*appended, *waiting]] == names
    with SafeExecShell("crash", Recorder(), audit_dir=audit, path=path, cwd=tmp_path) as shell:
        records = read_wal(shell.audit_path).records
        after = shell.execute(_read("next"))
    assert [r["command"].rsplit(" ", 1)[1] for r in records] == names
    assert [r["audit_id"] for r in records] == ["crash_001", "crash_002", "crash_003"]
    unknown = [r for r in records if "outcome unknown" in r["stderr"]]
    assert len(unknown) == (2 if first_done else 3)
    if first_done:
        assert records[0]["status"] == "completed" and records[0]["output"].strip() == "read fast1"
    assert after["audit_id"] == "crash_004"
    assert verify(log_file).ok
    assert not (audit / "shell_audit_crash.jsonl.inflight").exists()


def test_the_note_left_after_an_append_carries_the_calls_still_running(tmp_path: Path, lab: tuple[str, Path]) -> None:
    """A crash between an append and the rewrite of the note: the note is the leftover of the log's last
    record with the calls still in flight after it; recovery appends those, once."""
    path, _ = lab

    def record(seq: int) -> dict[str, Any]:
        out = Outcome("left", f"az network vnet show -g rg -n p{seq}", "r", seq)
        out.fields.update(classification="SAFE", tier=2, environment="azure", action="auto_approved")
        return _provisional(out)

    audit = tmp_path / "audit"
    with _shell(tmp_path, path, sid="left") as shell:
        write_provisional(shell._writer, record(1), session_id="left", then=[record(2), record(3)])
        shell._writer.append({**record(1), "status": "completed", "error": None, "stderr": ""})
    with _shell(tmp_path, path, sid="left") as shell:
        got = read_wal(shell.audit_path).records
    assert [r["audit_id"] for r in got] == ["left_001", "left_002", "left_003"]
    assert got[0]["status"] == "completed" and all("outcome unknown" in r["stderr"] for r in got[1:])
    assert verify(audit / "shell_audit_left.jsonl").ok
    assert not (audit / "shell_audit_left.jsonl.inflight").exists()
