"""The approval timeout: a callback that never answers is denied at the deadline, and a late answer is dropped.

No test sleeps: the gate's waiter is injected (it reports "no answer in time" at once, or waits only for a
callback that answers immediately), and the terminal prompt is driven with a deadline already passed.
"""

from __future__ import annotations

import io
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from netghost.errors import ShellError
from netghost.governance.approval import ApprovalRequest
from netghost.governance.wal import read_wal, verify
from netghost.shell import HitlDecision, SafeExecShell
from netghost.shell.gate import (
    _PROMPT,
    DEFAULT_APPROVAL_TIMEOUT_S,
    PromptControl,
    ask_human,
    build_shell_request,
    current_prompt,
    shell_plan,
)
from netghost.shell.hitl_terminal import _wait_for_input, make_terminal_callback, render_alert
from tests.shell.shell_helpers import table_classify

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


def _request(seq: int = 1, context: dict[str, Any] | None = None) -> ApprovalRequest:
    plan = shell_plan(["rm", "notes.txt"], cwd="/work", session_id="s1", seq=seq)
    return build_shell_request(
        plan,
        command="rm notes.txt",
        reasoning="clean up",
        risk="deletes a file",
        requested_at=NOW,
        context=context if context is not None else {"tier": 3},
    )


class Hung:
    """A callback that blocks until released, then answers ``answer`` (a late answer)."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.release = threading.Event()
        self.started = threading.Event()
        self.returned = threading.Event()
        self.requests: list[ApprovalRequest] = []
        self.controls: list[PromptControl | None] = []

    def __call__(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        self.controls.append(current_prompt())
        self.started.set()
        self.release.wait(10)
        self.returned.set()
        return self.answer


class NoAnswerInTime:
    """The injected waiter: records the timeout it was given and reports that it expired."""

    def __init__(self) -> None:
        self.timeouts: list[float] = []

    def __call__(self, answered: threading.Event, timeout_s: float) -> bool:
        self.timeouts.append(timeout_s)
        return False


def test_no_answer_within_the_timeout_fails_closed_and_a_late_answer_is_dropped() -> None:
    hung = Hung(HitlDecision.approve())
    waiter = NoAnswerInTime()
    outcome = ask_human(hung, _request(), now=lambda: NOW, timeout_s=42, wait=waiter)
    assert outcome.response is None and outcome.decision is None
    assert outcome.abandoned == "approval timed out: no answer within 42 s"
    assert waiter.timeouts == [42]
    assert hung.started.wait(5)
    control = hung.controls[0]
    assert control is not None and control.cancelled.is_set() and control.remaining() == 0
    hung.release.set()  # the human answers "approve" after the deadline
    assert hung.returned.wait(5)
    assert outcome.response is None  # nothing changed: the sealed slot dropped the late answer


def test_default_timeout_is_300_s_and_an_answer_in_time_is_bound() -> None:
    waits: list[float] = []

    def waiter(answered: threading.Event, timeout_s: float) -> bool:
        waits.append(timeout_s)
        return answered.wait(10)  # the callback answers at once: no real waiting

    outcome = ask_human(lambda r: HitlDecision.approve(), _request(), now=lambda: NOW, wait=waiter)
    assert outcome.decision == "approve"
    assert waits == [DEFAULT_APPROVAL_TIMEOUT_S] == [300.0]
    assert current_prompt() is None  # the control lives in the worker's context only


def test_ctrl_c_while_waiting_fails_closed() -> None:
    hung = Hung(HitlDecision.approve())

    def waiter(answered: threading.Event, timeout_s: float) -> bool:
        raise KeyboardInterrupt

    outcome = ask_human(hung, _request(), now=lambda: NOW, wait=waiter)
    assert outcome.response is None
    assert outcome.abandoned == "approval prompt closed (KeyboardInterrupt)"
    assert hung.started.wait(5)
    control = hung.controls[0]
    assert control is not None and control.cancelled.is_set()
    hung.release.set()
    assert hung.returned.wait(5)


def _shell(tmp_path: Path, callback: Any, **kw: Any) -> SafeExecShell:
    return SafeExecShell(
        "s1",
        callback,
        audit_dir=tmp_path / "audit",
        classifier=table_classify,  # type: ignore[arg-type]
        cwd=tmp_path,
        **kw,
    )


def test_shell_denies_a_hung_prompt_audits_it_and_never_runs_the_late_approval(tmp_path: Path) -> None:
    hung = Hung(HitlDecision.approve())
    waiter = NoAnswerInTime()
    marker = tmp_path / "made"
    with _shell(tmp_path, hung, approval_timeout_s=7.5, approval_wait=waiter) as shell:
        res = shell.execute({"command": f"touch {marker}", "reasoning": "need a marker"})
        assert (res["status"], res["action"], res["exit_code"]) == ("denied", "user_abandoned", None)
        assert "approval timed out: no answer within 7.5 s" in res["stderr"]
        assert res["plan_token"] == hung.requests[0].plan_token
        assert waiter.timeouts == [7.5]
        ctx = hung.requests[0].context
        assert ctx["approval_timeout_s"] == 7.5
        deadline = datetime.fromisoformat(ctx["approval_deadline"])
        assert 7.4 <= (deadline - hung.requests[0].requested_at).total_seconds() <= 7.6
        hung.release.set()  # the late "approve" arrives
        assert hung.returned.wait(5)
        # The next call is a new seq, hence a new plan-token; it is asked afresh and denied here.
        shell.hitl_callback = lambda request: HitlDecision.deny("no")
        res2 = shell.execute({"command": f"touch {marker}", "reasoning": "again"})
        assert (res2["status"], res2["action"]) == ("denied", "user_denied")
        assert res2["plan_token"] != res["plan_token"]
    assert not marker.exists()
    records = read_wal(shell.audit_path).records
    assert [(r["action"], r["status"]) for r in records] == [
        ("user_abandoned", "denied"),
        ("user_denied", "denied"),
    ]
    assert "approval timed out" in records[0]["stderr"]
    assert verify(shell.audit_path).ok


@pytest.mark.parametrize("bad", [0, -1, float("nan")])
def test_approval_timeout_must_be_positive(tmp_path: Path, bad: float) -> None:
    with pytest.raises(ShellError, match="approval_timeout_s"):
        _shell(tmp_path, lambda r: HitlDecision.deny(), approval_timeout_s=bad)


def test_terminal_box_shows_the_deadline() -> None:
    ctx = {"tier": 3, "approval_deadline": "2026-11-22T06:05:00+00:00", "approval_timeout_s": 300.0}
    out = io.StringIO()
    Console(file=out, width=120).print(render_alert(_request(context=ctx)))
    assert "ANSWER BY:" in out.getvalue()
    assert "2026-11-22 06:05:00 UTC (300 s; no answer = denied)" in out.getvalue()
    plain = io.StringIO()
    Console(file=plain, width=120).print(render_alert(_request()))
    assert "ANSWER BY" not in plain.getvalue()


@pytest.mark.parametrize("how", ["deadline_passed", "gate_left"])
def test_terminal_prompt_stops_reading_at_the_deadline(how: str) -> None:
    """On a terminal the prompt gives up instead of lingering and swallowing the next prompt's line."""
    master, slave = os.openpty()
    try:
        with os.fdopen(slave, "r", closefd=False) as stdin:
            assert stdin.isatty()
            control = PromptControl(deadline=0.0 if how == "deadline_passed" else float("inf"))
            if how == "gate_left":
                control.cancelled.set()
            out = io.StringIO()
            token = _PROMPT.set(control)
            try:
                with pytest.raises(TimeoutError):
                    _wait_for_input(Console(file=out), stdin)
                with pytest.raises(TimeoutError):  # the whole callback fails too, before reading anything
                    make_terminal_callback(stdin, Console(file=io.StringIO()))(_request())
            finally:
                _PROMPT.reset(token)
            assert ("deadline" in out.getvalue()) == (how == "deadline_passed")
            os.write(master, b"a\n")  # a line typed now is still there for the next prompt
            assert stdin.readline() == "a\n"
    finally:
        os.close(master)
        os.close(slave)


def test_terminal_prompt_reads_an_answer_typed_in_time() -> None:
    master, slave = os.openpty()
    try:
        with os.fdopen(slave, "r", closefd=False) as stdin:
            os.write(master, b"d\n\n")
            control = PromptControl(deadline=float("inf"))
            token = _PROMPT.set(control)
            try:
                decision = make_terminal_callback(stdin, Console(file=io.StringIO()))(_request())
            finally:
                _PROMPT.reset(token)
            assert decision.decision == "deny"
    finally:
        os.close(master)
        os.close(slave)
