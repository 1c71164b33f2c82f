"""SIGKILL the real CLI at five points, then ``--resume`` it against a fresh fake Gemini script.

The CLI runs as ``python -m netghost --lab nsg-deny --brain gemini ...`` in its own process group (its
commands die with it), against a fake Gemini server in this process (``GOOGLE_GEMINI_BASE_URL``). The
points: mid-turn (a RISKY route update ran, the next call of the same turn is blocked on a FIFO), at an
approval prompt (a pseudo-terminal, no ``--yes``), during a capture's burst polling, right after the
capture's download, and during the RCA (the executive summary's ``cat`` waits at its prompt). Each resume
must verify both chains before anything else, continue, never run again a RISKY command the audit shows
as executed (each approved RISKY command appears at most once), and write a complete RCA: every audit id
it cites exists, and the Integrity Statement is there.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pytest

from netghost.agent.cli import main
from netghost.contracts import SessionState
from netghost.governance import read_wal, replay_latest, verify
from netghost.lab.fake_gemini import FakeCall, FakeGemini, FakeTurn

pytestmark = pytest.mark.slow

ROUTE_UPDATE = ("az network route-table route update -g prod-rg --route-table-name rt-web -n to-data "
                "--next-hop-type VnetLocal")
CAPTURE = {"target": "web-vm-01", "resource_group": "prod-rg", "storage_account": "forensicssa",
           "duration_seconds": 120, "investigation_context": "web-vm-01 cannot reach redis-primary:6379"}
READ_VM = FakeTurn.call("run_shell_cmd", {"command": "az vm show -g prod-rg -n web-vm-01 -o json",
                                          "reasoning": "Read the VM before capturing on it."})
"""A capture's target must be a resource the investigation has read (else a person is asked; --yes refuses)."""
DONE = FakeTurn.call("complete_investigation", {"confidence": "high",
                                                "root_cause_summary": "DenyAllFromWebSubnet blocks 6379.",
                                                "recommended_actions": ["Remove the temporary deny rule."]})
_FINAL = frozenset({"task_completed", "task_failed", "task_cancelled", "task_timed_out"})
_IN_FLIGHT = re.compile(r"Task (\S+) was in flight: check_task says (\w+)")


def _env(fake: FakeGemini) -> dict[str, str]:
    return {**os.environ, "GEMINI_API_KEY": "x", "GOOGLE_GEMINI_BASE_URL": fake.base_url, "COLUMNS": "80"}


def _cli(audit: Path, *extra: str) -> list[str]:
    return ["-m", "netghost", "--lab", "nsg-deny", "--brain", "gemini", "--audit-dir", str(audit),
            "--intent", "web-vm-01 cannot reach redis-primary on 6379", *extra]


def _records(audit: Path, prefix: str = "shell_audit_") -> list[dict[str, Any]]:
    """The committed records of the session's log (read while the writer may be mid-line)."""
    out: list[dict[str, Any]] = []
    for path in audit.glob(f"{prefix}*.jsonl"):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out


def _wait(what: str, until: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _has(audit: Path, needle: str, *, completed: bool = False) -> Callable[[], bool]:
    return lambda: any(needle in str(r.get("command")) and (not completed or r.get("status") == "completed")
                       for r in _records(audit))


def _in_flight(audit: Path, needle: str) -> bool:
    """The shell has noted (before starting it) a command holding ``needle`` whose outcome is not known yet."""
    for path in audit.glob("shell_audit_*.jsonl.inflight"):
        with contextlib.suppress(OSError):  # the shell replaces it with the real record when a command ends
            if needle in path.read_text(errors="replace"):
                return True
    return False


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _run_and_kill(tmp_path: Path, fake: FakeGemini, at: Callable[[], bool], what: str, *extra: str) -> None:
    """The CLI with ``--yes`` and no terminal, SIGKILLed (with its commands) once ``at()`` holds."""
    log = (tmp_path / "first.out").open("w")
    proc = subprocess.Popen([sys.executable, *_cli(tmp_path / "audit", "--yes", *extra)], env=_env(fake),
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path,
                            start_new_session=True)
    try:
        _wait(what, lambda: at() or proc.poll() is not None)
        assert proc.poll() is None, f"the CLI ended before {what}:\n{(tmp_path / 'first.out').read_text()}"
    finally:
        _kill_group(proc.pid)
        proc.wait()
        log.close()
    assert proc.returncode == -signal.SIGKILL


def _spawn_tty(tmp_path: Path, fake: FakeGemini) -> pexpect.spawn:
    return pexpect.spawn(sys.executable, _cli(tmp_path / "audit"), env=_env(fake), cwd=str(tmp_path),
                         dimensions=(24, 80), encoding="utf-8", timeout=60)


def _kill_tty(child: pexpect.spawn) -> None:
    _kill_group(child.pid)
    child.close(force=True)


def _session_id(audit: Path) -> str:
    return SessionState.model_validate(json.loads((audit / "ghost_session.json").read_text())).session_id


def _task_driver(first: list[FakeTurn] | None = None) -> Callable[[dict[str, Any]], FakeTurn]:
    """Answers ``first`` in order, then check_task while a task is pending, then complete_investigation."""
    script = list(first or [])

    def answer(body: dict[str, Any]) -> FakeTurn:
        if script:
            return script.pop(0)
        status: dict[str, str] = {}
        for content in body["contents"]:
            for part in content["parts"]:
                response = (part.get("functionResponse") or {}).get("response") or {}
                if response.get("task_id") and response.get("status"):
                    status[str(response["task_id"])] = str(response["status"])
                for task_id, said in _IN_FLIGHT.findall(part.get("text") or ""):
                    status[task_id] = said
        pending = [t for t, s in status.items() if s not in _FINAL]
        return FakeTurn.call("check_task", {"task_id": pending[0]}) if pending else DONE

    return answer


def _resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
            sid: str, fake: FakeGemini) -> str:
    audit = tmp_path / "audit"
    monkeypatch.setenv("GEMINI_API_KEY", "x")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    capsys.readouterr()
    code = main(["--resume", sid, "--lab", "nsg-deny", "--audit-dir", str(audit), "--yes"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert fake.failures == []
    return out


def _approved(records: list[dict[str, Any]]) -> Counter[str]:
    """RISKY commands a human (or --yes) approved: each is one execution (or one of unknown outcome)."""
    return Counter(str(r.get("modified_command") or r["command"]) for r in records
                   if r.get("classification") == "RISKY" and r.get("action") in ("user_approved", "user_modified"))


def _check_resumed(audit: Path, sid: str, out: str, fake: FakeGemini) -> tuple[list[dict[str, Any]], str]:
    """What every resume must show; returns the shell records and the RCA text."""
    verified = out.index("Audit trail verified (every chain intact).")
    assert verified < out.index("UNIFIED GHOST AGENT"), "the chains are verified before anything else"
    for name in (f"shell_audit_{sid}.jsonl", f"ghost_turns_{sid}.jsonl", f"orchestrator_tasks_{sid}.jsonl"):
        path = audit / name
        assert not path.exists() or verify(path).ok, name
    state = SessionState.model_validate(json.loads((audit / "ghost_session.json").read_text()))
    assert state.session_id == sid and state.is_resume and state.resumed_from == sid
    if fake.requests:
        assert "is_resume = True" in json.dumps(fake.requests[0]["systemInstruction"])
    records = read_wal(audit / f"shell_audit_{sid}.jsonl").records
    repeated = {c: n for c, n in _approved(records).items() if n > 1}
    assert repeated == {}, f"RISKY commands run more than once: {repeated}"
    assert state.rca_report_path == str(audit / f"ghost_rca_{sid}.md")
    rca = Path(state.rca_report_path).read_text()
    cited = set(re.findall(r"ghost_\d{8}_\d{6}_\d{3,}", rca))
    assert cited and cited <= {r["audit_id"] for r in records}
    assert "not in the audit trail" not in rca
    assert "## Integrity Statement" in rca and f"{len(records)} records, chain intact" in rca
    return records, rca


def test_killed_mid_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit"
    audit.mkdir(mode=0o700)
    fifo = audit / "notes.fifo"  # a session output: the sealed lab lets --yes read it (a real file elsewhere: no)
    os.mkfifo(fifo)
    turn = FakeTurn(text="Fixing the route, then reading my notes.",
                    calls=(FakeCall("run_shell_cmd", {"command": ROUTE_UPDATE, "reasoning": "Fix the next hop."}),
                           FakeCall("run_shell_cmd", {"command": f"cat {fifo}", "reasoning": "Read the notes."})))
    with FakeGemini([turn]) as fake:
        _run_and_kill(tmp_path, fake, lambda: _in_flight(audit, "cat "),
                      "the cat of the FIFO to start")
    with contextlib.suppress(OSError):  # a reader that survived would wait for ever
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    fifo.unlink()
    fifo.write_text("password=not-for-the-model\n")  # a regression reads a file instead of hanging
    sid = _session_id(audit)
    again = FakeTurn(calls=(FakeCall("run_shell_cmd", {"command": ROUTE_UPDATE, "reasoning": "Fix it again."}),
                            FakeCall("run_shell_cmd", {"command": f"cat {fifo}", "reasoning": "Read the notes."})))
    with FakeGemini([again, DONE]) as fake:
        out = _resume(tmp_path, monkeypatch, capsys, sid, fake)
        first = fake.requests[0]["contents"]
    records, _ = _check_resumed(audit, sid, out, fake)
    # the rebuilt turn answers both calls from the shell audit: the update ran, the cat's outcome is unknown
    answers = [p["functionResponse"]["response"] for p in first[2]["parts"]]
    assert [a["status"] for a in answers] == ["completed", "error"], answers
    assert "outcome unknown" in str(answers[1]), answers[1]
    update = [r for r in records if r["command"] == ROUTE_UPDATE]
    assert [(r["action"], r["status"]) for r in update] == [("user_approved", "completed"), ("user_denied", "denied")]
    assert "already ran before the resume" in update[1]["denial_reason"]
    cat = [r for r in records if r["command"] == f"cat {fifo}"]  # outcome unknown: not repeated either
    assert [(r["action"], r["status"]) for r in cat] == [("user_approved", "error"), ("user_denied", "denied")]


def test_killed_at_an_approval_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit"
    update = FakeTurn.call("run_shell_cmd", {"command": ROUTE_UPDATE, "reasoning": "Fix the next hop."})
    with FakeGemini([update]) as fake:
        child = _spawn_tty(tmp_path, fake)
        try:
            child.expect("SAFETY SHELL ALERT")
            child.expect("Your choice: ")
        finally:
            _kill_tty(child)
    sid = _session_id(audit)
    assert [r for r in _records(audit) if r["command"] == ROUTE_UPDATE] == []  # asked, never answered
    with FakeGemini([update, DONE]) as fake:
        out = _resume(tmp_path, monkeypatch, capsys, sid, fake)
        rebuilt = fake.requests[0]["contents"][2]["parts"][0]["functionResponse"]["response"]
    records, _ = _check_resumed(audit, sid, out, fake)
    assert rebuilt["error"] == "interrupted"  # the model learns the call did not run
    assert [(r["action"], r["status"]) for r in records if r["command"] == ROUTE_UPDATE] == [
        ("user_approved", "completed")]  # never ran before: --yes runs it once


def _capture_run(tmp_path: Path, at: Callable[[], bool], what: str) -> tuple[str, list[dict[str, Any]]]:
    """Kill a --yes capture at ``at``; the session id and the shell records at the kill."""
    audit = tmp_path / "audit"
    with FakeGemini(_task_driver([READ_VM, FakeTurn.call("capture_traffic", CAPTURE)])) as fake:
        _run_and_kill(tmp_path, fake, at, what)
    return _session_id(audit), _records(audit)


def _completed_then_cleaned(task: dict[str, Any]) -> bool:
    """The capture was analysed, and the session's end cleaned it up (nothing is left in the lab's cloud)."""
    return bool(task["semantic_json_path"]) and (task["state"], task["cleanup_status"]) == ("DONE", "completed")


def _resume_capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                    sid: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    audit = tmp_path / "audit"
    with FakeGemini(_task_driver()) as fake:
        out = _resume(tmp_path, monkeypatch, capsys, sid, fake)
        records, rca = _check_resumed(audit, sid, out, fake)
    creates = [r for r in records if "packet-capture create" in r["command"]]
    assert [r["action"] for r in creates] == ["user_approved"]  # reconciled through check_task, not re-created
    (task,) = replay_latest(audit / f"orchestrator_tasks_{sid}.jsonl", "task_id").values()
    assert task["task_id"] in rca
    return records, task


def test_killed_during_burst_polling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    sid, at_kill = _capture_run(tmp_path, _has(tmp_path / "audit", "packet-capture show-status", completed=True),
                                "the first poll")
    assert not [r for r in at_kill if "storage blob download" in r["command"]]
    records, task = _resume_capture(tmp_path, monkeypatch, capsys, sid)
    assert [r["action"] for r in records if "storage blob download" in r["command"]] == ["user_approved"]
    assert _completed_then_cleaned(task)


def test_killed_after_the_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    sid, at_kill = _capture_run(tmp_path, _has(tmp_path / "audit", "storage blob download", completed=True),
                                "the download")
    assert [r["status"] for r in at_kill if "storage blob download" in r["command"]] == ["completed"]
    records, task = _resume_capture(tmp_path, monkeypatch, capsys, sid)
    downloads = [(r["action"], r["status"]) for r in records if "storage blob download" in r["command"]]
    # Whether or not the registry had recorded the download before the kill, the file on disk is the
    # blob (length checked by a SAFE blob show): it is kept and analysed, never downloaded or asked again.
    assert downloads == [("user_approved", "completed")] and _completed_then_cleaned(task)


def test_killed_during_the_rca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit"
    with FakeGemini(_task_driver([READ_VM, FakeTurn.call("capture_traffic", CAPTURE)])) as fake:
        child = _spawn_tty(tmp_path, fake)
        try:
            # approve every step of the capture; kill as the RCA starts (its read of the capture's summary is
            # covered by the capture plan's approval now: nothing is asked there any more)
            while child.expect(["Generating root cause analysis report", "Your choice: "]) == 1:
                child.sendline("a")
        finally:
            _kill_tty(child)
    sid = _session_id(audit)
    if (audit / f"ghost_rca_{sid}.md").exists():
        pytest.skip("the RCA was written before the kill landed: nothing to resume mid-RCA on this run")
    with FakeGemini([]) as fake:  # the journal holds complete_investigation: no model turn is needed
        out = _resume(tmp_path, monkeypatch, capsys, sid, fake)
        assert fake.requests == []
        records, rca = _check_resumed(audit, sid, out, fake)
    (cat,) = [r for r in records if r["command"].startswith("cat ")]
    assert cat["status"] == "completed" and "Executive summary of" in rca
