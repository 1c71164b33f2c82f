"""The terminal HITL callback, driven through a real pseudo-terminal with pexpect."""

from __future__ import annotations

import io
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pexpect
import pytest
from rich.console import Console

from netghost.shell.gate import build_shell_request, shell_plan
from netghost.shell.hitl_terminal import make_terminal_callback

REPO = Path(__file__).resolve().parents[2]

# A child that shows one alert through SafeExecShell + terminal_hitl_callback and prints the response.
DRIVER = r"""
import json, signal, sys, tempfile
# A terminal program gets Ctrl-C as KeyboardInterrupt. An ignored or blocked SIGINT is inherited across
# exec, so a test process that left one behind (a library's worker pool) must not leave this child deaf.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
signal.signal(signal.SIGINT, signal.default_int_handler)
from netghost.shell import SafeExecShell, terminal_hitl_callback
from tests.shell.shell_helpers import table_classify
audit = tempfile.mkdtemp()
with SafeExecShell("pty1", terminal_hitl_callback, audit_dir=audit, classifier=table_classify) as shell:
    res = shell.execute({"command": "az network route-table route update -g prod-rg -n r1 --next-hop-type None",
                         "reasoning": "Attempting to correct the next-hop for route 10.0.2.0"})
print("RESULT " + json.dumps({k: res[k] for k in ("status", "action", "denial_reason", "output", "error")}))
"""


@pytest.fixture
def fake_az(tmp_path: Path) -> Path:
    """A stand-in ``az`` first on PATH, so an approved command never reaches a real cloud."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "az").write_text('#!/bin/sh\necho "{\\"updated\\": true}"\n')
    (bindir / "az").chmod(0o755)
    return bindir


def _spawn(bindir: Path) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable,
        ["-c", DRIVER],
        cwd=str(REPO),
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 120),
        env={"PATH": f"{bindir}:/usr/bin:/bin", "TERM": "xterm", "HOME": str(bindir.parent)},
    )
    child.expect("SAFETY SHELL ALERT")
    child.expect("CLASSIFICATION: RISKY")
    child.expect(r"az network route-table route update -g prod-rg")
    child.expect("ARGV:")  # every argv element on its own line
    child.expect(r"\[ 0\] 'az'")
    child.expect(r"\[10\] 'None'")
    child.expect(r"\[A\]pprove\s+\[D\]eny\s+\[M\]odify command")
    child.expect("Your choice: ")
    return child


def _result(child: pexpect.spawn) -> dict[str, object]:
    child.expect(r"RESULT (\{.*\})\r?\n")
    data: dict[str, object] = json.loads(child.match.group(1))
    child.expect(pexpect.EOF)
    child.close()
    return data


def test_deny_with_reason_through_a_pty(fake_az: Path) -> None:
    child = _spawn(fake_az)
    child.sendline("d")
    child.expect(r"Denial reason \(optional, press Enter to skip\): ")
    child.sendline("Wrong resource group - use cache-rg, not prod-rg")
    res = _result(child)
    assert res == {
        "status": "denied",
        "action": "user_denied",
        "denial_reason": "Wrong resource group - use cache-rg, not prod-rg",
        "output": "",
        "error": None,
    }


def test_invalid_answer_reprompts_then_approve(fake_az: Path) -> None:
    child = _spawn(fake_az)
    child.sendline("maybe")
    child.expect("Please answer A, D or M.")
    child.expect("Your choice: ")
    child.sendline("A")
    res = _result(child)
    assert (res["status"], res["action"], res["output"]) == (
        "completed",
        "user_approved",
        '{"updated": true}\n',
    )


def test_modify_through_a_pty(fake_az: Path) -> None:
    child = _spawn(fake_az)
    child.sendline("m")
    child.expect("Modified command: ")
    child.expect_exact("az network route-table route update")  # the line starts as the command shown
    child.sendline("\x15echo read-only instead")  # Ctrl-U clears it; a new command is typed
    child.expect(r"Reason for the change \(optional, press Enter to skip\): ")
    child.sendline("")
    res = _result(child)
    assert (res["status"], res["action"], res["output"]) == (
        "completed",
        "user_modified",
        "read-only instead\n",
    )


def test_ctrl_d_fails_closed(fake_az: Path) -> None:
    child = _spawn(fake_az)
    child.sendeof()
    res = _result(child)
    assert (res["status"], res["action"]) == ("denied", "user_abandoned")


def test_ctrl_c_fails_closed(fake_az: Path) -> None:
    child = _spawn(fake_az)
    child.sendintr()
    res = _result(child)
    assert (res["status"], res["action"]) == ("denied", "user_abandoned")


def _request() -> object:
    plan = shell_plan(["rm", "x"], cwd="/", session_id="s", seq=1)
    return build_shell_request(
        plan,
        command="rm x",
        reasoning="why",
        risk="deletes",
        requested_at=datetime(2026, 1, 1, tzinfo=UTC),
        context={"tier": 3, "classification": "RISKY"},
    )


def test_stream_callback_reads_given_stream_and_raises_eof() -> None:
    out = io.StringIO()
    callback = make_terminal_callback(io.StringIO("d\n\n"), Console(file=out, width=100))
    decision = callback(_request())  # type: ignore[arg-type]
    assert (decision.decision, decision.reason) == ("deny", "")
    assert "┌" in out.getvalue() and "SAFETY SHELL ALERT" in out.getvalue()
    with pytest.raises(EOFError):
        make_terminal_callback(io.StringIO(""), Console(file=io.StringIO()))(_request())  # type: ignore[arg-type]


def test_modify_without_a_terminal_shows_the_whole_command_then_reads_a_plain_line() -> None:
    request = _request()
    out = io.StringIO()
    answers = io.StringIO(f"m\n{request.what}\nm\nrm -f b.txt\nnot needed\n")
    decision = make_terminal_callback(answers, Console(file=out, width=40))(request)  # type: ignore[arg-type]
    shown = out.getvalue()
    assert f"Current command: {request.what}" in shown  # one unwrapped line, whatever the width
    assert "unchanged; choose again" in shown  # the same command is not a modification
    assert (decision.decision, decision.command, decision.reason) == ("modify", "rm -f b.txt", "not needed")


def test_ai_safety_demo_runs_through_a_pty(tmp_path: Path) -> None:
    child = pexpect.spawn(
        sys.executable,
        [
            str(REPO / "examples" / "ai_safety_demo.py"),
            "--audit-dir",
            str(tmp_path),
            "--session-id",
            "demo_pty",
        ],
        cwd=str(REPO),
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 120),
    )
    child.expect(r"\[Shell\] SAFE — auto-approved: ss -tan")
    child.expect("SAFETY SHELL ALERT")  # cat scratch
    child.expect("Your choice: ")
    child.sendline("a")
    child.expect("next hop for 10.0.2.0/24")
    child.expect("SAFETY SHELL ALERT")  # rm scratch
    child.expect("Your choice: ")
    child.sendline("d")
    child.expect(r"Denial reason \(optional, press Enter to skip\): ")
    child.sendline("keep the notes")
    child.expect("denial reason: keep the notes")
    child.expect(r"FORBIDDEN — blocked \(forbidden_command\)")
    child.expect(r"FORBIDDEN — blocked \(not_a_single_command\)")
    child.expect(r"records:\s+7")
    child.expect("chain OK")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "shell_audit_demo_pty.jsonl").exists()


def test_control_bidi_and_zero_width_characters_are_shown_not_obeyed() -> None:
    from netghost.shell.hitl_terminal import render_alert

    plan = shell_plan(["rm", "-rf", "/data"], cwd="/", session_id="s", seq=1)
    why = "\x1b[4A\x1b[2K│ COMMAND:   ping -c 1 10.0.0.4\x1b[4B ok \u202egnp.exe\u200b \x9b2J \x7f"
    request = build_shell_request(
        plan,
        command="rm -rf /data\u2066x",
        reasoning=why,
        risk="deletes\x07 files",
        requested_at=datetime.now(UTC),
        context={
            "tier": 3,
            "classification": "RISKY\x1b[2J",
            "argv": ["rm", "-rf\x1b[1A", "/data"],
            "environment": "local\x00",
        },
    )
    buf = io.StringIO()
    Console(file=buf, force_terminal=True, width=200).print(render_alert(request))
    out = buf.getvalue()
    for raw in (
        "\x1b[4A",
        "\x1b[2K",
        "\x1b[2J",
        "\x1b[1A",
        "\u202e",
        "\u200b",
        "\u2066",
        "\x9b",
        "\x07",
        "\x00",
        "\x7f",
    ):
        assert raw not in out
    for shown in (
        r"\x1b[4A",
        r"\u202e",
        r"\u200b",
        r"\u2066",
        r"\x9b",
        r"\x07",
        r"\x00",
        r"\x7f",
        "'-rf\\x1b[1A'",
    ):
        assert shown in out
    assert "[0] 'rm'" in out and "[2] '/data'" in out
