"""One model turn's SAFE reads run at once through the real Safe-Exec Shell; the model sees them in call order.

The shell runs a slow fake ``az`` that stamps its own start and end, so overlap is what the processes
did. A RISKY call in the turn runs alone in its place (the reads before it have ended, the reads after
it have not started), and the per-turn call budget still cuts the turn before anything is grouped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netghost.agent._dispatch import Dispatcher, WatchedShell
from netghost.agent._journal import Journal
from netghost.agent._loop import Loop
from netghost.agent._session import new_session
from netghost.agent.brains import Message
from netghost.governance import read_wal
from netghost.orchestrator import Budgets
from netghost.shell import HitlDecision, SafeExecShell
from tests.agent.fakes import NOW, RecordingUi, ScriptedBrain, TableOrchestrator, call, turn
from tests.shell.shell_helpers import Recorder, call_events, fake_az

SID = "ghost_20250115_143022"


def _read(name: str) -> Any:
    return call("run_shell_cmd", command=f"az network vnet show -g rg -n {name}", reasoning=f"read {name}")


def _run(tmp_path: Path, brain: ScriptedBrain, human: Recorder, **kw: Any) -> tuple[Loop, Path]:
    path, log = fake_az(tmp_path)
    shell = SafeExecShell(SID, human, audit_dir=tmp_path / "audit", path=path, cwd=tmp_path)
    watched = WatchedShell(shell)
    state = new_session(SID, model="scripted-1", audit_dir=tmp_path, now=NOW)
    loop = Loop(brain=brain, dispatcher=Dispatcher(watched, TableOrchestrator(watched)), state=state,
                journal=Journal(tmp_path, SID), ui=RecordingUi(), system_prompt="SP",
                history=[Message.user_text("web-vm cannot reach redis on 6379")], save=lambda: None,
                now=lambda: NOW, **kw)
    loop.run()
    shell.close()
    return loop, log


def test_a_turns_reads_run_at_once_and_a_risky_call_alone_in_its_place(tmp_path: Path) -> None:
    brain = ScriptedBrain([
        turn(_read("a1"), _read("a2"), _read("a3"),
             call("run_shell_cmd", command="az vm delete -g rg -n r1", reasoning="risky"),
             _read("b1"), _read("b2")),
        turn(call("complete_investigation", confidence="high", root_cause_summary="NSG deny.")),
    ])
    human = Recorder([HitlDecision.approve()])
    _, log = _run(tmp_path, brain, human)
    events = call_events(log)
    assert max(events[n]["start"] for n in ("a1", "a2", "a3")) < min(events[n]["end"] for n in ("a1", "a2", "a3"))
    assert events["r1"]["start"] > max(events[n]["end"] for n in ("a1", "a2", "a3"))
    assert events["r1"]["end"] < min(events[n]["start"] for n in ("b1", "b2"))
    assert max(events[n]["start"] for n in ("b1", "b2")) < min(events[n]["end"] for n in ("b1", "b2"))
    assert len(human.requests) == 1
    seen = [p.response.response for p in brain.seen[1][2].parts if p.response is not None]
    assert [r["audit_id"] for r in seen] == [f"{SID}_{i:03d}" for i in range(1, 7)]
    assert [r["output"].strip() for r in seen] == ["read a1", "read a2", "read a3", "read r1", "read b1", "read b2"]
    journal = [r for r in read_wal(tmp_path / f"ghost_turns_{SID}.jsonl").records if r["kind"] == "shell_call"]
    assert [(r["index"], r["audit_id"]) for r in journal] == [(i, f"{SID}_{i + 1:03d}") for i in range(6)]
    audit = read_wal(tmp_path / "audit" / f"shell_audit_{SID}.jsonl").records
    assert [r["command"].rsplit(" ", 1)[1] for r in audit] == ["a1", "a2", "a3", "r1", "b1", "b2"]


def test_the_call_budget_cuts_the_turn_before_reads_are_grouped(tmp_path: Path) -> None:
    brain = ScriptedBrain([
        turn(_read("c1"), _read("c2"), _read("c3"), _read("c4")),
        turn(call("complete_investigation", confidence="high", root_cause_summary="x")),
    ])
    budgets = Budgets.defaults().with_items(["calls_per_turn=2"], "test")
    _, log = _run(tmp_path, brain, Recorder(), budgets=budgets)
    assert sorted(call_events(log)) == ["c1", "c2"]
    seen = [p.response.response for p in brain.seen[1][2].parts if p.response is not None]
    assert [r.get("error") for r in seen] == [None, None, "budget_exceeded", "budget_exceeded"]
