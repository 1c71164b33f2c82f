"""Malformed replies, end to end: the real ``ghost-agent`` on the lab, a fake Gemini through the real SDK.

Each case the hostile-model review quoted, and the class it stands for: a body that is not JSON (or an
HTML page) with status 200, ``args`` sent as a string (and every other non-object), lone surrogates in
the model's text and arguments, a full ARM VM id as capture target, a SAFETY finish (and every other
non-STOP finish). Each either goes back to the model as the call's error, or stops cleanly: a one-line
message, an ``llm_call`` record naming the failure class, exit 4, the ``--resume`` line, and a resume
that goes on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from netghost.agent._exit_codes import ExitCode
from netghost.contracts import SessionState
from netghost.lab.fake_gemini import FakeCall, FakeTurn, RawReply

from .harness import HostileRun, complete, run_hostile, shell

ARM_VM = ("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/prod-rg/providers/"
          "Microsoft.Compute/virtualMachines/web-vm-01")


def _reply(parts: list[Any], finish: Any = "STOP", **candidate: Any) -> RawReply:
    return RawReply.json({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish,
                                          **candidate}]})


def _llm_calls(run: HostileRun) -> list[dict[str, Any]]:
    return [r for r in run.records("ghost_turns") if r["kind"] == "llm_call"]


def _sid(run: HostileRun) -> str:
    return SessionState.model_validate(json.loads((run.audit / "ghost_session.json").read_text())).session_id


def _assert_clean_stop(run: HostileRun, failure: str) -> dict[str, Any]:
    """Exit 4, one [ERROR] line, the resume line, no RCA, the llm_call record and the brain_error event."""
    assert "Traceback" not in run.console, run.console
    assert run.code == ExitCode.MODEL_REPLY, run.console
    errors = [line for line in run.console.splitlines() if line.startswith("[ERROR]")]
    assert len(errors) == 1 and f"({failure})" in errors[0], run.console
    sid = _sid(run)
    assert f"Session saved. Resume with: ghost-agent --resume {sid} --audit-dir {run.audit} --lab nsg-deny" \
        in run.console
    assert not list(run.audit.glob("ghost_rca_*.md")), "a stop writes no RCA"
    last = _llm_calls(run)[-1]
    assert last["outcome"] == "error" and last["failure"] == failure
    events = [r for r in run.records("ghost_turns") if r.get("event") == "brain_error"]
    assert events and events[-1]["failure"] == failure
    return last


def _resume_goes_on(tmp_path: Path, run: HostileRun) -> None:
    sid = _sid(run)
    again = run_hostile(tmp_path, [complete("Resumed and concluded.")], intent="", audit=run.audit,
                        extra=["--resume", sid])
    assert again.code == ExitCode.OK, again.console
    assert "Resumed and concluded" in (run.audit / f"ghost_rca_{sid}.md").read_text(encoding="utf-8")
    assert "web-vm-01 cannot reach redis-primary" in again.sent()  # the conversation was rebuilt


@pytest.mark.slow
@pytest.mark.parametrize("body", [
    pytest.param(RawReply.text("<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"),
                 id="html-page-status-200"),
    pytest.param(RawReply(b'{"candidates": [{"content": {"parts": [{"text": "cut her'), id="truncated-json"),
])
def test_a_body_that_is_not_a_response_is_a_clean_stop(tmp_path: Path, body: RawReply) -> None:
    """End to end for two of the class; every other body kind is in tests/llm/test_gateway_replies.py."""
    html = body.content_type == "text/html"
    run = run_hostile(tmp_path, [body], subprocess_run=html)
    record = _assert_clean_stop(run, "malformed_response")
    assert record["status"] == 200 and record["response_bytes"] == len(body.body)
    if html:
        _resume_goes_on(tmp_path, run)


@pytest.mark.slow
@pytest.mark.parametrize("finish", ["SAFETY", "MAX_TOKENS", "SOMETHING_NEW_IN_2027"])
def test_a_finish_other_than_stop_is_a_clean_stop_not_an_rca(tmp_path: Path, finish: str) -> None:
    """End to end for three of the class; every finish reason the SDK knows is in tests/llm/test_gateway_replies.py."""
    reply = _reply([{"text": "I cannot help with that."}, {"functionCall": {"name": "run_shell_cmd", "args": {
        "command": "az vm list -o json", "reasoning": "x"}}}], finish,
        safetyRatings=[{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}])
    run = run_hostile(tmp_path, [reply], subprocess_run=finish == "SAFETY")
    record = _assert_clean_stop(run, "finish_reason")
    assert record["finish_reason"] == finish
    assert "az vm list -o json" not in {r["command"] for r in run.records()}, "nothing of a refused turn runs"
    if finish == "SAFETY":
        _resume_goes_on(tmp_path, run)


def test_a_blocked_prompt_and_an_empty_answer_are_clean_stops(tmp_path: Path) -> None:
    blocked = RawReply.json({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}})
    run = run_hostile(tmp_path / "blocked", [blocked])
    assert _assert_clean_stop(run, "blocked")["block_reason"] == "PROHIBITED_CONTENT"
    empty = _reply([])
    run = run_hostile(tmp_path / "empty", [empty, empty])  # retried once, then a stop
    assert _assert_clean_stop(run, "empty_reply")["attempts"] == 2


def test_args_of_any_other_type_go_back_to_the_model_as_the_calls_error(tmp_path: Path) -> None:
    """The quoted case (``args`` a string) and its class: an array, a number, null-free nonsense; the
    model hears what was wrong, nothing runs, and the investigation goes on."""
    bad = _reply([{"functionCall": {"name": "run_shell_cmd", "args": "az network nsg list -o json"}},
                  {"functionCall": {"name": "check_task", "args": ["ghost_x"], "id": "c2"}},
                  {"functionCall": {"name": "capture_traffic", "args": 42}},
                  {"functionCall": {"args": {"command": "az vm list"}}},
                  {"functionCall": {"name": "run shell cmd", "args": {"command": "az vm list"}}},
                  {"functionCall": {"name": "run_shell_cmd", "args": {"command": "x" * 40_000}}}])
    run = run_hostile(tmp_path, [bad, complete("Done.")])
    assert run.code == ExitCode.OK and "Traceback" not in run.console, run.console
    answers = [p["functionResponse"] for c in run.requests[1]["contents"] for p in c["parts"]
               if "functionResponse" in p]
    assert len(answers) == 6 and all(a["response"]["error"] == "invalid_call" for a in answers), answers
    messages = [a["response"]["message"] for a in answers]
    assert "must be a JSON object" in messages[0] and "must be a JSON object" in messages[1]
    assert "no name" in messages[3] and "is not a function name" in messages[4]
    assert "32,768" in messages[5]
    assert [a["name"] for a in answers] == ["run_shell_cmd", "check_task", "capture_traffic", "_invalid_call",
                                            "_invalid_call", "run_shell_cmd"]
    assert answers[1]["id"] == "c2"  # the answer names the call it answers
    ran = {r["command"] for r in run.ran()}
    assert not any("nsg list" in c or c.startswith("az vm list") or "xxxx" in c for c in ran), ran
    record = _llm_calls(run)[0]
    assert record["outcome"] == "ok" and record["repairs_total"] == 3  # the three non-objects, dropped and listed


def test_lone_surrogates_and_nul_never_break_the_journal_the_wal_or_the_files(tmp_path: Path) -> None:
    reply = RawReply.json(
        {"candidates": [{"content": {"parts": [
            {"text": "Checking \ud800 the \x00 NSG \udfff."},
            {"functionCall": {"name": "run_shell_cmd", "args": {"command": "az network nsg list -g prod-rg -o json",
                                                                "reasoning": "Read NSGs \ud83d (half an emoji).",
                                                                "hypotheses": [{"id": "H1\udc80",
                                                                                "description": "NSG \x00 deny"}]}}}]},
            "finishReason": "STOP"}]}, ensure_ascii=True)
    run = run_hostile(tmp_path, [reply, complete("NSG deny \ud800.")])
    assert run.code == ExitCode.OK and "Traceback" not in run.console, run.console
    assert "az network nsg list -g prod-rg -o json" in {r["command"] for r in run.ran()}
    for path, _ in run.files().items():
        if path.suffix in (".json", ".jsonl", ".md", ".html"):
            path.read_bytes().decode("utf-8")  # strict: every file is valid UTF-8
            assert b"\\u0000" not in path.read_bytes() and b"\x00" not in path.read_bytes(), path
    assert "\ufffd" in run.console and "\ud800" not in run.console


def test_a_full_arm_vm_id_as_capture_target_is_captured_as_that_vm(tmp_path: Path) -> None:
    capture = FakeTurn(calls=(FakeCall("capture_traffic", {"target": ARM_VM, "resource_group": "wrong-rg",
                                                          "storage_account": "forensicssa", "duration_seconds": 30}),))
    run = run_hostile(tmp_path, [capture, complete("Captured.")])
    assert run.code == ExitCode.OK and "Traceback" not in run.console, run.console
    tasks = run.records("orchestrator_tasks")
    assert tasks, run.console
    task_id = tasks[-1]["task_id"]
    assert len(task_id) <= 80 and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9_]", task_id), task_id
    assert task_id.startswith("ghost_web-vm-01-")
    assert tasks[-1]["target"] == "web-vm-01" and tasks[-1]["parameters"]["resource_group"] == "prod-rg"
    assert any(c.startswith("az vm show -g prod-rg -n web-vm-01 ") for c in {r["command"] for r in run.ran()})
    assert "WorkspaceError" not in run.console


@pytest.mark.slow
def test_a_long_odd_target_gets_a_bounded_task_id(tmp_path: Path) -> None:
    target = "vm/" + "é\u202e" * 200 + " ; rm -rf / \n" + "z" * 500
    capture = shell("az vm list -o json")
    odd = FakeTurn(calls=(FakeCall("capture_traffic", {"target": target, "resource_group": "prod-rg",
                                                      "storage_account": "forensicssa"}),))
    run = run_hostile(tmp_path, [capture, odd, complete("Done.")])
    assert run.code == ExitCode.OK and "Traceback" not in run.console, run.console
    (task,) = run.records("orchestrator_tasks")[-1:]
    assert len(task["task_id"]) <= 80 and re.fullmatch(r"[A-Za-z0-9_.-]+", task["task_id"])
