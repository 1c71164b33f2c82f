"""Family 6, the end: whatever ends a session, what it created is cleaned up or listed with its commands.

A model that starts captures and never cleans them up, a session stopped by a model API error, an
internal error, the turn limit, a human who refuses the deletes, and Ctrl-C at each approval point of a
capture investigation (then ``--resume``): each must end with the lab's cloud empty, or with every
remaining resource listed on screen and in the RCA with the exact command that removes it and exit code 5;
and a resumed session finishes the cleanup its predecessor left, then prints where everything is.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from rich.console import Console

from netghost.agent._exit_codes import ExitCode
from netghost.agent._leftovers import EXIT_LEFTOVERS
from netghost.agent._run import Options, run_agent
from netghost.agent.cli import main
from netghost.agent.demo import prepare_lab
from netghost.contracts import ApprovalRequest, DecidedBy
from netghost.lab.az import run_az
from netghost.lab.fake_gemini import FakeGemini, FakeTurn
from netghost.shell import HitlDecision

from .harness import DEFAULT_INTENT, HostileRun, complete, run_hostile, shell

READ_VM = shell("az vm show -g prod-rg -n web-vm-01 -o json", "Read the VM first.")
CAPTURE = {"target": "web-vm-01", "resource_group": "prod-rg", "storage_account": "forensicssa",
           "duration_seconds": 60, "investigation_context": "web-vm-01 cannot reach redis-primary:6379"}
_FINAL = ("task_completed", "task_failed", "task_cancelled", "task_timed_out")


# ---- what the lab's cloud and disk still hold -------------------------------------------------------

def _lab_env(audit: Path) -> dict[str, str]:
    return {"NETGHOST_LAB_STATE": str(audit / "lab"), "HOME": str(audit.parent)}


def _left_in_the_lab(audit: Path) -> dict[str, list[Any]]:
    env = _lab_env(audit)
    code, captures, _ = run_az(["network", "watcher", "packet-capture", "list", "-l", "eastus", "-o", "json"], env)
    assert code == 0
    code, blobs, _ = run_az(["storage", "blob", "list", "--account-name", "forensicssa", "-c", "captures",
                             "--auth-mode", "login", "--query", "[].name", "-o", "json"], env)
    assert code == 0
    files = sorted(str(p) for p in (audit / "captures").rglob("*.cap")) if (audit / "captures").exists() else []
    return {"captures": json.loads(captures), "blobs": json.loads(blobs), "files": files}


NOTHING = {"captures": [], "blobs": [], "files": []}


def _rca(audit: Path) -> str:
    return next(audit.glob("ghost_rca_*.md")).read_text()


# ---- a model that captures and decides from the conversation (so a resume can go on) -----------------

def _walk(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    calls, responses, texts = [], [], []
    for content in body["contents"]:
        for part in content["parts"]:
            if "functionCall" in part:
                calls.append(part["functionCall"])
            if "functionResponse" in part:
                responses.append(part["functionResponse"]["response"])
            texts.append(part.get("text") or "")
    return calls, responses, "\n".join(texts)


def _find(value: Any, key: str) -> Iterator[Any]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key and v:
                yield v
            yield from _find(v, key)
    elif isinstance(value, list):
        for v in value:
            yield from _find(v, key)


def investigator(*, clean: bool = True) -> Callable[[dict[str, Any]], FakeTurn]:
    """Read the VM, capture, poll until it ends, read the summary, clean up (if ``clean``), conclude."""

    def answer(body: dict[str, Any]) -> FakeTurn:
        calls, responses, text = _walk(body)
        commands = [str(c.get("args", {}).get("command", "")) for c in calls if c["name"] == "run_shell_cmd"]
        if not any(c.startswith("az vm show") for c in commands):
            return READ_VM
        if not any(c["name"] == "capture_traffic" for c in calls):
            return FakeTurn.call("capture_traffic", CAPTURE)
        task_id = next(iter(_find(responses, "task_id")), None)
        status = None
        for response in responses:
            if response.get("task_id") == task_id and response.get("status"):
                status = response["status"]
        said = re.findall(rf"Task {re.escape(str(task_id))} was in flight: check_task says (\w+)", text)
        status = said[-1] if said else status
        if task_id and status not in _FINAL:
            return FakeTurn.call("check_task", {"task_id": task_id})
        report = next(iter(_find(responses, "report_path")), None)
        if report and not any(c.startswith("cat ") for c in commands):
            summary = str(report).replace("_forensic_report.md", "_executive_summary.md")
            return shell(shlex.join(["cat", summary]), "Read the capture's executive summary.")
        if clean and task_id and not any(c["name"] == "cleanup_task" for c in calls):
            return FakeTurn.call("cleanup_task", {"task_id": task_id})
        return complete("The capture shows the flow failing.")

    return answer


# ---- every end of a session ---------------------------------------------------------------------------

def test_a_model_that_never_cleans_up_leaves_nothing_behind(tmp_path: Path) -> None:
    run = run_hostile(tmp_path, [investigator(clean=False)] * 30, yes=True)
    assert run.code == 0, run.console
    assert _left_in_the_lab(run.audit) == NOTHING
    assert "Cleaning up 1 task(s) this session created" in run.console
    assert "## Resources Left Behind" in _rca(run.audit) and "None: every capture" in _rca(run.audit)


def test_a_capture_still_running_at_the_end_is_cancelled_and_cleaned(tmp_path: Path) -> None:
    script = [READ_VM, FakeTurn.call("capture_traffic", {**CAPTURE, "duration_seconds": 300}), complete("Bye.")]
    run = run_hostile(tmp_path, script, yes=True)
    assert run.code == 0, run.console
    assert _left_in_the_lab(run.audit) == NOTHING


def test_a_model_api_error_after_a_capture_still_cleans_up(tmp_path: Path) -> None:
    script = [READ_VM, FakeTurn.call("capture_traffic", CAPTURE), FakeTurn.fail(400, "the model broke")]
    run = run_hostile(tmp_path, script, yes=True)
    assert run.code == ExitCode.MODEL_API, run.console
    assert _left_in_the_lab(run.audit) == NOTHING
    assert "Resume with: ghost-agent --resume" in run.console and "Where everything is" in run.console
    assert "Traceback" not in run.console


def test_the_turn_limit_still_cleans_up(tmp_path: Path) -> None:
    poll: list[Any] = [FakeTurn.call("check_task", {"task_id": "not-a-task"})] * 48
    run = run_hostile(tmp_path, [READ_VM, FakeTurn.call("capture_traffic", CAPTURE), *poll], yes=True)
    assert run.code == 0, run.console
    assert "Maximum investigation turns (50) reached" in run.console
    assert _left_in_the_lab(run.audit) == NOTHING


def test_an_internal_error_ends_like_any_other_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from netghost.agent import _loop

    real = _loop.Loop._close_turn
    turns = {"n": 0}

    def broken(self: _loop.Loop, responses: list[Any]) -> None:
        real(self, responses)
        turns["n"] += 1
        if turns["n"] == 2:  # right after the capture started
            raise RuntimeError("a bug in the loop")

    monkeypatch.setattr(_loop.Loop, "_close_turn", broken)
    run = run_hostile(tmp_path, [READ_VM, FakeTurn.call("capture_traffic", CAPTURE), complete()], yes=True)
    assert run.code == 1, run.console
    said = " ".join(run.console.split())
    assert "internal error: RuntimeError: a bug in the loop" in said and "Traceback" not in run.console
    assert _left_in_the_lab(run.audit) == NOTHING
    assert "Resume with:" in run.console


# ---- a human who refuses the deletes: listed, with the commands, exit 3; then --resume cleans ----------

def _creates_but_never_deletes(request: ApprovalRequest) -> HitlDecision:
    by = DecidedBy(kind="human", name="terminal")
    if " delete " in f" {request.what} " or request.what.startswith("rm "):
        return HitlDecision.deny("keep it for now", by=by)
    return HitlDecision.approve(by=by)


def test_refused_deletes_are_listed_with_their_commands_and_the_exit_code_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    audit = tmp_path / "audit"
    out = io.StringIO()
    with FakeGemini([investigator()] * 30) as fake:
        monkeypatch.setenv("GEMINI_API_KEY", "x")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        monkeypatch.setenv("HOME", str(tmp_path))
        code = run_agent(Options(audit_dir=audit, brain="gemini", intent=DEFAULT_INTENT,
                                 lab=prepare_lab("nsg-deny", audit)),
                         stdin=io.StringIO(""), console=Console(file=out, width=120),
                         approver=_creates_but_never_deletes)
    console = out.getvalue()
    assert code == EXIT_LEFTOVERS, console
    left = _left_in_the_lab(audit)
    # the local capture file went after its analysis: the approval of the capture's plan covers that removal
    assert len(left["captures"]) == 1 and len(left["blobs"]) == 1 and len(left["files"]) == 0
    listed = re.findall(r"^    (capture session|capture blob|local capture file): (.+)$", console, flags=re.M)
    assert [what for what, _ in listed] == ["capture session", "capture blob"]
    assert "[LEFT BEHIND] 1 task(s)" in console and "--resume" in console
    rca = _rca(audit)
    for _, command in listed:
        assert f"`{command}`" in rca  # the RCA lists the same commands
    # each listed command really removes what it names
    env = _lab_env(audit)
    for _, command in listed:
        argv = shlex.split(command)
        if argv[0] == "az":
            assert run_az(argv[1:], env)[0] == 0, command
        else:
            assert argv[:2] == ["rm", "-f"]
            Path(argv[2]).unlink()
    assert _left_in_the_lab(audit) == NOTHING


def test_a_resumed_session_finishes_the_cleanup_its_run_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit"
    with FakeGemini([investigator()] * 30) as fake:
        monkeypatch.setenv("GEMINI_API_KEY", "x")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        monkeypatch.setenv("HOME", str(tmp_path))
        code = run_agent(Options(audit_dir=audit, brain="gemini", intent=DEFAULT_INTENT,
                                 lab=prepare_lab("nsg-deny", audit)),
                         stdin=io.StringIO(""), console=Console(file=io.StringIO(), width=120),
                         approver=_creates_but_never_deletes)
    assert code == EXIT_LEFTOVERS
    state = json.loads((audit / "ghost_session.json").read_text())
    assert state["manual_cleanup_pending"] and state["rca_report_path"]  # complete, and it announced the leftovers
    out = _resume(audit, state["session_id"], monkeypatch, capsys)
    assert "of an earlier run of this session" in out and "finishing the cleanup" in out
    assert _left_in_the_lab(audit) == NOTHING


def _resume(audit: Path, sid: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    with FakeGemini([investigator()] * 30) as fake:
        monkeypatch.setenv("GEMINI_API_KEY", "x")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        capsys.readouterr()
        code = main(["--resume", sid, "--lab", "nsg-deny", "--audit-dir", str(audit), "--yes"])
        out = capsys.readouterr().out
    assert code == 0, out
    assert "Where everything is" in out and "Shell audit:" in out
    return out


# ---- Ctrl-C at each approval point of a capture investigation, then --resume --------------------------

_POINTS = ("packet-capture create", "storage blob download", "packet-capture delete", "storage blob delete")
"""Every approval a capture asks for: reading its report (`cat`) and removing its capture file (`rm -f`) are
covered by the approval of the capture's plan and never asked."""


def _interrupted_run(audit: Path, at: int) -> tuple[int, list[str]]:
    """The real CLI on a pseudo-terminal: approve every prompt before the ``at``-th, Ctrl-C from it on."""
    with FakeGemini([investigator()] * 40) as fake:
        env = {**os.environ, "GEMINI_API_KEY": "x", "GOOGLE_GEMINI_BASE_URL": fake.base_url,
               "HOME": str(audit.parent), "COLUMNS": "120", "TERM": "dumb"}
        child = pexpect.spawn(sys.executable, ["-m", "netghost", "--lab", "nsg-deny", "--brain", "gemini",
                                               "--audit-dir", str(audit), "--intent", DEFAULT_INTENT],
                              env=env, cwd=str(audit.parent), dimensions=(40, 120), encoding="utf-8", timeout=120)
        asked: list[str] = []
        try:
            while child.expect(["COMMAND: *([^\r\n]+)", pexpect.EOF]) == 0:
                asked.append(child.match.group(1))
                child.expect("Your choice: ")
                if len(asked) < at:
                    child.sendline("a")
                else:
                    child.sendintr()
            child.close()
        finally:
            if child.isalive():
                child.close(force=True)
    return child.exitstatus, asked


@pytest.mark.slow
@pytest.mark.parametrize("at", range(1, len(_POINTS) + 1), ids=[p.strip() for p in _POINTS])
def test_ctrl_c_at_each_approval_point_then_resume_leaves_nothing_in_the_cloud(
        at: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit"
    code, asked = _interrupted_run(audit, at)
    assert len(asked) >= at, asked
    assert _POINTS[at - 1] in asked[at - 1], (at, asked)
    assert not [c for c in asked if c.startswith(("cat ", "rm -f"))], asked  # the plan's approval covers them
    left = _left_in_the_lab(audit)
    if left != NOTHING:  # what the interrupted run could not clean, it said so by its exit code
        assert code == EXIT_LEFTOVERS, (code, left)
    else:
        assert code in (130, EXIT_LEFTOVERS), code
    sid = json.loads((audit / "ghost_session.json").read_text())["session_id"]
    out = _resume(audit, sid, monkeypatch, capsys)
    assert _left_in_the_lab(audit) == NOTHING, out
    if left != NOTHING:
        assert "of an earlier run of this session" in out or "Cleaning up" in out
    rca = _rca(audit)
    assert "None: every capture, blob and local capture file" in rca


def test_the_hostile_harness_sees_the_cleanup_in_the_audit(tmp_path: Path) -> None:
    """The sweep's deletes are ordinary audited shell calls, decided by --yes, inside the lab."""
    run: HostileRun = run_hostile(tmp_path, [investigator(clean=False)] * 30, yes=True)
    deletes = [r for r in run.records() if "packet-capture delete" in r["command"]
               or "storage blob delete" in r["command"] or r["command"].startswith("rm -f")]
    assert len(deletes) == 3 and all(r["exit_code"] == 0 for r in deletes)
    assert all(r["confinement"]["simulated"] for r in deletes)
    cloud = [r for r in deletes if r["command"].startswith("az ")]
    assert len(cloud) == 2 and all(r["decided_by"]["name"] == "--yes" for r in cloud)
    (local,) = [r for r in deletes if r["command"].startswith("rm -f")]  # covered by the capture plan's approval
    assert local["decided_by"]["kind"] == "policy" and local["decided_by"]["name"] == "capture_plan_approval"
