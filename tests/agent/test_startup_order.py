"""Seed 001 §3's ten startup steps happen in order on a real run (lab world, real shell and orchestrator).

The run is observed from outside: a terminal-like stdin takes a snapshot of the screen, the session file
and the audit trail each time the agent reads an answer, and the brain takes one when it is first asked
for a turn. Steps: 1 options; 2 the session (id, file); 3 the shell; 4 the orchestrator, whose orphan
scan runs through the shell; 5-7 list_tasks, the five buckets, the cleanup offer; 8 the cleanup (skipped
here); 9 the problem statement; 10 the session saved with turn 0, then the loop's first turn.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from netghost.agent._run import Options, run_agent
from netghost.agent.brains import Message, ModelTurn
from netghost.agent.demo import prepare_lab
from tests.agent.fakes import ScriptedBrain, call, turn


@dataclass
class Snapshot:
    at: str
    screen: str
    session: dict[str, Any] | None
    shell_commands: list[str]
    journal_kinds: list[str]


class Observer:
    def __init__(self, audit: Path, screen: io.StringIO) -> None:
        self.audit, self.screen = audit, screen
        self.snaps: list[Snapshot] = []

    def take(self, at: str) -> None:
        session_file = self.audit / "ghost_session.json"
        session = json.loads(session_file.read_text()) if session_file.exists() else None
        shell = sorted(self.audit.glob("shell_audit_*.jsonl"))
        journal = sorted(self.audit.glob("ghost_turns_*.jsonl"))
        self.snaps.append(Snapshot(
            at, self.screen.getvalue(), session,
            [json.loads(x)["command"] for x in shell[0].read_text().splitlines()] if shell else [],
            [json.loads(x)["kind"] for x in journal[0].read_text().splitlines()] if journal else []))


class TerminalInput(io.StringIO):
    """A stdin that says it is a terminal and snapshots the run before each answer it gives."""

    def __init__(self, answers: str, observer: Observer) -> None:
        super().__init__(answers)
        self.observer = observer

    def isatty(self) -> bool:
        return True

    def readline(self, size: int = -1, /) -> str:
        self.observer.take(f"read {len(self.observer.snaps)}")
        return super().readline(size)


def test_the_ten_startup_steps_run_in_the_seeds_order(tmp_path: Path) -> None:
    audit = tmp_path / "audit"
    lab = prepare_lab("nsg-deny", audit)
    lab_now = lab.orchestrator["clock"]().timestamp()
    stale = audit / "captures" / "ghost_old-vm_20250101T000000" / "artifacts" / "ghost_old-vm_20250101T000000.cap"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"\xd4\xc3\xb2\xa1")
    os.utime(stale, (lab_now - 10 * 86400, lab_now - 10 * 86400))  # step 6's stale_local_files bucket
    screen = io.StringIO()
    observer = Observer(audit, screen)

    def first_turn(_history: Sequence[Message]) -> ModelTurn:
        observer.take("first model turn")
        return turn(call("complete_investigation", confidence="low", root_cause_summary="Startup only."))

    brain = ScriptedBrain([first_turn])
    stdin = TerminalInput("s\nVMs in prod-subnet cannot reach Redis on 6379\n", observer)
    code = run_agent(Options(audit_dir=audit, brain="playbook", lab=lab), stdin=stdin,
                     console=Console(file=screen, width=100, force_terminal=False), brain=brain)
    assert code == 0
    cleanup_offer, intent_prompt, first = observer.snaps
    sid = first.session["session_id"] if first.session else ""
    # steps 2-4: the session id is in the banner; the orchestrator's orphan scan ran through the shell
    # (Azure's ghost_* captures listed) before anything was asked
    assert f"Session: {sid}" in cleanup_offer.screen
    assert any("packet-capture list" in c for c in cleanup_offer.shell_commands)
    # steps 5-7: the buckets are printed, then the cleanup is offered
    screen_1 = cleanup_offer.screen
    assert screen_1.index(f"Session: {sid}") < screen_1.index("Checking for orphaned resources") \
        < screen_1.index("No orphaned tasks found.") < screen_1.index("Stale local file") \
        < screen_1.index("[C]lean up now")
    # step 8 skipped: nothing deleted; step 9: the ready banner and the question come after the offer
    screen_2 = intent_prompt.screen
    assert screen_2.index("Cleanup skipped") < screen_2.index("=== Ghost Agent Ready ===") \
        < screen_2.index("What network problem should I investigate?")
    assert intent_prompt.shell_commands == cleanup_offer.shell_commands and stale.exists()
    assert intent_prompt.journal_kinds == []  # no turn of the conversation before the problem statement
    # step 10: the session is on disk with turn 0 and the intent is journaled before the first model turn
    assert first.session is not None and first.session["turn_count"] == 0 and first.session["audit_dir"] == str(audit)
    assert first.journal_kinds[:2] == ["session_event", "user_turn"]
    assert brain.seen[0][0].parts[0].text == "VMs in prod-subnet cannot reach Redis on 6379"
