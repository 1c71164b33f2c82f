"""Ctrl-C in an 80x24 pseudo-terminal while a capture polls, then ``--resume`` in one: it completes.

A person runs the real ``ghost-agent`` on the lab (``--yes`` approves its RISKY steps), presses Ctrl-C
while the capture's status is being polled, and the run stops with the resume command on screen. They
run that ``--resume`` in the same 80x24 terminal: it verifies the chains first, goes on (the model
captures again, to completion), ends with its RCA, and every chain still verifies. Both screens keep the [Shell] and orchestrator lines within 80
columns, folded by the program between words (a terminal's own wrap would cut words).
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import time
from pathlib import Path

import pexpect
import pytest

from netghost.governance import replay_latest, verify
from netghost.lab.fake_gemini import FakeGemini, FakeTurn
from tests.agent.test_crash_resume import CAPTURE, READ_VM, _check_resumed, _has, _task_driver
from tests.agent.tty_screen import HANG, logical_lines, screen_lines

pytestmark = pytest.mark.slow

INTENT = "web-vm-01 cannot reach redis-primary on 6379"
_RESUME = re.compile(r"Resume with: (ghost-agent --resume (ghost_\d{8}_\d{6}) .*)")


def _env(fake: FakeGemini, home: Path) -> dict[str, str]:
    env = {**os.environ, "GEMINI_API_KEY": "x", "GOOGLE_GEMINI_BASE_URL": fake.base_url, "TERM": "xterm",
           "HOME": str(home)}
    for name in ("COLUMNS", "LINES"):
        env.pop(name, None)
    return env


def _spawn(args: list[str], fake: FakeGemini, cwd: Path, transcript: io.StringIO) -> pexpect.spawn:
    child = pexpect.spawn(sys.executable, ["-m", "netghost", *args], env=_env(fake, cwd / "home"), cwd=str(cwd),
                          dimensions=(24, 80), encoding="utf-8", timeout=120)
    child.logfile_read = transcript
    return child


def _folded_within_80(screen: list[str]) -> None:
    """The [Shell] and [Cloud Orchestrator] lines and their continuations fit 80 columns."""
    ours = [line for line in screen if line.startswith(("[Shell] ", "[Cloud Orchestrator]", HANG, "      "))]
    assert ours and max(len(line) for line in ours) <= 80, "\n".join(line for line in ours if len(line) > 80)


def test_ctrl_c_while_a_capture_polls_then_resume_completes_verified(tmp_path: Path) -> None:
    audit = tmp_path / "audit"
    first = io.StringIO()
    with FakeGemini(_task_driver([READ_VM, FakeTurn.call("capture_traffic", CAPTURE)])) as fake:
        child = _spawn(["--lab", "nsg-deny", "--brain", "gemini", "--audit-dir", str(audit), "--yes",
                        "--intent", INTENT], fake, tmp_path, first)
        polled = _has(audit, "packet-capture show-status", completed=True)
        try:
            deadline = time.monotonic() + 120
            while not polled():  # keep reading the screen while the capture is created and polled
                assert time.monotonic() < deadline, "no poll of the capture's status"
                assert child.expect([pexpect.TIMEOUT, pexpect.EOF], timeout=0.2) == 0, first.getvalue()
            child.sendintr()
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    screen = screen_lines(first.getvalue())
    assert child.exitstatus in (130, 5), "\n".join(screen)  # interrupted (5: it said what it could not clean)
    (command, sid) = next(m.groups() for line in screen if (m := _RESUME.search(line)))
    assert f"--audit-dir {audit}" in command and not (audit / f"ghost_rca_{sid}.md").exists()
    _folded_within_80(screen)

    second = io.StringIO()
    with FakeGemini(_task_driver([FakeTurn.call("capture_traffic", CAPTURE)])) as fake:  # captures again
        child = _spawn(["--resume", sid, "--lab", "nsg-deny", "--brain", "gemini", "--audit-dir", str(audit),
                        "--yes"], fake, tmp_path, second)
        try:
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        screen = screen_lines(second.getvalue())
        assert child.exitstatus == 0, "\n".join(screen)
        _check_resumed(audit, sid, "\n".join(logical_lines(screen)), fake)  # chains first, then the RCA
    _folded_within_80(screen)
    assert any(line.startswith("  RCA REPORT WRITTEN: ") for line in screen)
    assert (audit / f"ghost_rca_{sid}.html").is_file()
    for name in (f"shell_audit_{sid}.jsonl", f"ghost_turns_{sid}.jsonl", f"orchestrator_tasks_{sid}.jsonl"):
        assert verify(audit / name).ok, name
    tasks = replay_latest(audit / f"orchestrator_tasks_{sid}.jsonl", "task_id").values()
    assert sum(bool(t.get("semantic_json_path")) for t in tasks) == 1, tasks  # the second capture was analysed
    assert all(t["cleanup_status"] == "completed" for t in tasks), tasks  # nothing left in the lab's cloud
    assert any(line.startswith("[Cloud Orchestrator] Task ") and line.endswith("COMPLETED") for line in screen)
    state = json.loads((audit / "ghost_session.json").read_text())
    assert state["session_id"] == sid and state["rca_report_path"]
