"""The tool-use loop (seed 001 §4) with a scripted brain, a table shell and a table orchestrator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from netghost.agent._dispatch import Dispatcher, WatchedShell
from netghost.agent._journal import Journal
from netghost.agent._loop import Loop
from netghost.agent._rebuild import rebuild
from netghost.agent._session import new_session
from netghost.agent.brains import BrainError, FunctionCall, Message, ModelTurn, Part
from netghost.contracts import HypothesisState, SessionState
from netghost.governance import read_wal, verify
from tests.agent.fakes import NOW, RecordingUi, ScriptedBrain, TableOrchestrator, TableShell, call, turn

SID = "ghost_20250115_143022"


def _loop(tmp_path: Path, brain: ScriptedBrain, shell: TableShell | None = None, *,
          ui: RecordingUi | None = None, **kw: Any) -> tuple[Loop, SessionState, list[int]]:
    shell = shell or TableShell()
    watched = WatchedShell(shell)
    state = new_session(SID, model="scripted-1", audit_dir=tmp_path, now=NOW)
    saves: list[int] = []
    loop = Loop(brain=brain, dispatcher=Dispatcher(watched, TableOrchestrator(watched, kw.pop("answers", {}))),
                state=state, journal=Journal(tmp_path, SID), ui=ui or RecordingUi(), system_prompt="SP",
                history=[Message.user_text("web-vm cannot reach redis on 6379")],
                save=lambda: saves.append(state.turn_count), now=lambda: NOW, **kw)
    return loop, state, saves


def _responses(message: Message) -> list[dict[str, Any]]:
    return [p.response.response for p in message.parts if p.response is not None]


def test_every_call_of_a_turn_is_dispatched_and_answered_in_order(tmp_path: Path) -> None:
    brain = ScriptedBrain([
        turn("Checking NSG and routes.",
             call("run_shell_cmd", command="az network nsg list -g prod-rg -o json", reasoning="NSG"),
             call("run_shell_cmd", command="az network route-table list -g prod-rg -o json", reasoning="UDR")),
        turn(call("complete_investigation", confidence="high", root_cause_summary="UDR to a dead NVA.")),
    ])
    shell = TableShell()
    loop, state, saves = _loop(tmp_path, brain, shell)
    end = loop.run()
    assert end.reason == "complete" and end.completion is not None
    assert end.completion.root_cause_summary == "UDR to a dead NVA."
    assert [r["command"] for r in shell.requests] == ["az network nsg list -g prod-rg -o json",
                                                       "az network route-table list -g prod-rg -o json"]
    second = brain.seen[1]
    assert [m.role for m in second] == ["user", "model", "user"]
    assert [r["audit_id"] for r in _responses(second[2])] == [f"{SID}_001", f"{SID}_002"]
    assert state.turn_count == 2 and saves  # saved every turn
    kinds = [r["kind"] for r in read_wal(tmp_path / f"ghost_turns_{SID}.jsonl").records]
    assert kinds == ["model_turn", "shell_call", "shell_call", "model_turn"]
    assert verify(tmp_path / f"ghost_turns_{SID}.jsonl").ok


def test_text_only_turn_without_a_terminal_counts_as_done(tmp_path: Path) -> None:
    brain = ScriptedBrain([turn("I think it is the NSG.")])
    loop, _, _ = _loop(tmp_path, brain)
    end = loop.run()
    assert end.reason == "done" and end.last_text == "I think it is the NSG."


def test_text_only_turn_on_a_terminal_offers_continue_and_takes_an_instruction(tmp_path: Path) -> None:
    brain = ScriptedBrain([turn("Shall I look at routes?"), turn("Done looking."), ])
    ui = RecordingUi(["c", "check the routes", "d"], interactive=True)
    loop, _, _ = _loop(tmp_path, brain, ui=ui)
    end = loop.run()
    assert end.reason == "done"
    assert "Continue investigation? [C]ontinue / [D]one" in ui.lines
    history = brain.seen[1]
    assert [m.role for m in history] == ["user", "model", "user"]
    assert history[2].parts[0].text == "check the routes"


def test_max_loop_turns_offers_extend_then_generates(tmp_path: Path) -> None:
    cmd = call("run_shell_cmd", command="az network nsg list -o json", reasoning="r")
    brain = ScriptedBrain([turn(cmd)] * 12)
    ui = RecordingUi(["e", "g"], interactive=True)
    loop, state, _ = _loop(tmp_path, brain, ui=ui, max_turns=2)
    end = loop.run()
    assert end.reason == "max_turns" and state.turn_count == 12  # 2, then extended by 10
    assert "[Ghost Agent] Maximum investigation turns (2) reached." in ui.lines
    assert "[Ghost Agent] Maximum investigation turns (12) reached." in ui.lines


def test_unknown_tool_and_bad_arguments_are_answered_not_raised(tmp_path: Path) -> None:
    brain = ScriptedBrain([
        turn(call("format_disk"), call("run_shell_cmd", command="ping x")),
        turn(call("complete_investigation", confidence="low", root_cause_summary="-")),
    ])
    loop, _, _ = _loop(tmp_path, brain)
    assert loop.run().reason == "complete"
    unknown, bad = _responses(brain.seen[1][2])
    assert {k: unknown[k] for k in ("status", "error", "tool")} == {"status": "error", "error": "unknown_tool",
                                                                     "tool": "format_disk"}
    assert "format_disk" in unknown["message"]
    assert bad["error"] == "invalid_arguments" and "reasoning" in bad["message"]


def test_brain_error_ends_the_loop_with_the_session_saved(tmp_path: Path) -> None:
    brain = ScriptedBrain([BrainError("quota", code=429, status="RESOURCE_EXHAUSTED")])
    loop, state, saves = _loop(tmp_path, brain)
    end = loop.run()
    assert end.reason == "brain_error" and end.error is not None and end.error.code == 429
    assert state.turn_count == 0 and saves == [0]


def _deny_turn(hid: str = "h1", command: str = "az network route-table route update -g prod-rg") -> Any:
    return turn(call("run_shell_cmd", command=command, reasoning="fix the next hop",
                     active_hypothesis_ids=[hid]))


def test_three_denials_on_one_hypothesis_give_the_seeds_meta_and_states(tmp_path: Path) -> None:
    declare = turn("H1: UDR to the wrong next hop.",
                   call("run_shell_cmd", command="az network route-table list -o json", reasoning="read",
                        hypotheses=[{"id": "h1", "description": "UDR sends cache traffic to a dead NVA"}]))
    brain = ScriptedBrain([declare, _deny_turn(), _deny_turn(), _deny_turn(),
                           turn(call("complete_investigation", confidence="low", root_cause_summary="blocked",
                                     unverifiable_hypotheses=["h1"]))])
    shell = TableShell(deny={"az network route-table route update": "Wrong resource group — use cache-rg"})
    loop, state, _ = _loop(tmp_path, brain, shell)
    states: list[HypothesisState] = []
    original = loop._dispatch_one

    def spy(*a: Any) -> dict[str, Any]:
        out = original(*a)
        states.append(state.hypothesis_log[0].state)
        return out

    loop._dispatch_one = spy  # type: ignore[method-assign]
    assert loop.run().reason == "complete"
    metas = [_responses(brain.seen[i][-1])[0]["_meta"] for i in (2, 3, 4)]
    reason = "Wrong resource group — use cache-rg"
    assert metas[0] == {"denial_reason": reason, "denial_count": 1,
                        "pivot_instruction": "Command denied. Consider an alternative diagnostic approach."}
    assert metas[1] == {"denial_reason": reason, "denial_count": 2, "approaching_threshold": True,
                        "warning": "Second denial for hypothesis h1. If denied again, hypothesis will be "
                                   "marked UNVERIFIABLE."}
    assert metas[2] == {"denial_reason": reason, "denial_count": 3, "denial_threshold_reached": True,
                        "instruction": "Hypothesis h1 marked UNVERIFIABLE. Move to next hypothesis or call "
                                       "complete_investigation if active_hypothesis_ids is now empty."}
    assert states == [HypothesisState.ACTIVE, HypothesisState.DENIED_ONCE, HypothesisState.DENIED_TWICE,
                      HypothesisState.UNVERIFIABLE]
    h1 = state.hypothesis_log[0]
    assert h1.denial_count == 3 and state.denial_tracker == {"h1": 3} and state.active_hypothesis_ids == []
    assert [e.denial_reason for e in h1.denial_events] == [reason] * 3
    assert h1.denial_events[0].audit_id == f"{SID}_002" and h1.denial_events[0].turn == 2


def test_a_success_after_a_denial_returns_the_hypothesis_to_active(tmp_path: Path) -> None:
    read = turn(call("run_shell_cmd", command="az network route-table list -o json", reasoning="r",
                     active_hypothesis_ids=["h1"]))
    declare = turn(call("run_shell_cmd", command="az network nsg list -o json", reasoning="r",
                        hypotheses=[{"id": "h1", "description": "d"}]))
    brain = ScriptedBrain([declare, _deny_turn(), read, turn("done")])
    loop, state, _ = _loop(tmp_path, brain, TableShell(deny={"az network route-table route": ""}))
    loop.run()
    h1 = state.hypothesis_log[0]
    assert h1.state == HypothesisState.ACTIVE and h1.denial_count == 1
    assert state.consecutive_denial_counter["h1"] == 0 and state.denial_tracker["h1"] == 1


def test_a_denial_without_a_reason_or_hypothesis_still_reaches_the_model(tmp_path: Path) -> None:
    brain = ScriptedBrain([turn(call("run_shell_cmd", command="az vm stop -n x", reasoning="r")),
                           _deny_turn("h9"), turn("ok")])
    loop, _, _ = _loop(tmp_path, brain, TableShell(deny={"az vm stop": "", "az network route-table route": ""}))
    loop.run()
    result = _responses(brain.seen[1][-1])[0]
    assert result["status"] == "denied" and "_meta" not in result  # no active hypothesis, no reason
    unknown = _responses(brain.seen[2][-1])[0]["_meta"]
    assert unknown == {"warning": "Hypothesis updates refused: h9: no such hypothesis "
                                  "(declare it with hypotheses=[{id, description}])"}


def test_orchestrator_denial_carries_the_shell_reason_and_counts(tmp_path: Path) -> None:
    brain = ScriptedBrain([
        turn(call("capture_traffic", target="web-vm", resource_group="rg", storage_account="sa",
                  hypotheses=[{"id": "h2", "description": "packets dropped"}])),
        turn("stop"),
    ])
    shell = TableShell(deny={"az network watcher packet-capture create": "Too expensive"})
    loop, state, _ = _loop(tmp_path, brain, shell)
    loop.run()
    result = _responses(brain.seen[1][-1])[0]
    assert result["status"] == "task_cancelled"
    assert result["_meta"]["denial_reason"] == "Too expensive" and result["_meta"]["denial_count"] == 1
    assert state.active_task_ids == ["ghost_vm_1"]
    records = read_wal(tmp_path / f"ghost_turns_{SID}.jsonl").records
    orch = next(r for r in records if r["kind"] == "orchestrator_call")
    assert orch["request"]["intent"] == "capture_traffic" and orch["shell_audit_ids"] == [f"{SID}_001"]


def test_hypothesis_moves_follow_the_table(tmp_path: Path) -> None:
    brain = ScriptedBrain([
        turn(call("run_shell_cmd", command="az network nsg list -o json", reasoning="r",
                  hypotheses=[{"id": "h1", "description": "NSG"}, {"id": "h2", "description": "UDR"}])),
        turn(call("run_shell_cmd", command="az network nsg rule list -o json", reasoning="r",
                  hypotheses=[{"id": "h1", "state": "REFUTED", "resolving_audit_id": f"{SID}_002"},
                              {"id": "h2", "state": "CONTRADICTED", "conflicting_audit_ids": ["a", "b"],
                               "higher_fidelity_source": "PCAP (Tier 1)"}])),
        turn(call("run_shell_cmd", command="az network route-table list -o json", reasoning="r",
                  hypotheses=[{"id": "h1", "state": "CONFIRMED"}, {"id": "h2", "state": "CONFIRMED"}])),
        turn("done"),
    ])
    loop, state, _ = _loop(tmp_path, brain)
    loop.run()
    h1, h2 = state.hypothesis_log
    assert h1.state == HypothesisState.REFUTED and h1.resolving_audit_id == f"{SID}_002"
    assert h2.state == HypothesisState.CONFIRMED
    assert state.evidence_conflicts[0].conflicting_audit_ids == ["a", "b"]
    assert state.evidence_conflicts[0].resolution == "CONFIRMED"
    third = _responses(brain.seen[3][-1])[0]
    assert "REFUTED -> CONFIRMED is not allowed" in third["_meta"]["warning"]
    assert state.active_hypothesis_ids == []


@pytest.mark.parametrize("answer", ["c"])
def test_interrupt_at_a_prompt_stops_after_the_call(tmp_path: Path, answer: str) -> None:
    brain = ScriptedBrain([turn(call("run_shell_cmd", command="az vm stop -n x", reasoning="r"),
                                call("run_shell_cmd", command="az vm show -n x", reasoning="r"))])
    shell = TableShell(deny={"az vm stop": ""})
    loop, _, saves = _loop(tmp_path, brain, shell, interrupted=lambda: bool(shell.requests))
    end = loop.run()
    assert end.reason == "interrupted" and len(shell.requests) == 1 and saves


def test_a_malformed_call_is_answered_with_its_error_and_a_resume_sees_no_completion(tmp_path: Path) -> None:
    bad = FunctionCall("complete_investigation", {}, "c1", error="the arguments must be a JSON object")
    refused = call("complete_investigation", confidence="certain")  # valid shape, refused by the contract
    brain = ScriptedBrain([ModelTurn(parts=(Part(call=bad), Part(call=refused)), finish_reason="STOP"),
                           BrainError("stop", failure="finish_reason")])
    loop, state, _ = _loop(tmp_path, brain)
    end = loop.run()
    assert end.reason == "brain_error" and state.turn_count == 1
    first, second = _responses(brain.seen[1][2])
    assert first["error"] == "invalid_call" and first["message"] == bad.error
    assert second["error"] == "invalid_arguments"
    records = read_wal(tmp_path / f"ghost_turns_{SID}.jsonl").records
    assert [r["kind"] for r in records] == ["model_turn", "invalid_call", "invalid_call", "session_event"]
    assert records[-1]["event"] == "brain_error" and records[-1]["failure"] == "finish_reason"
    rebuilt = rebuild(tmp_path / f"ghost_turns_{SID}.jsonl", tmp_path / f"shell_audit_{SID}.jsonl")
    assert rebuilt.completion is None  # neither call ended the investigation: a resume goes on
    assert _responses(rebuilt.history[-1]) == _responses(brain.seen[1][2])
