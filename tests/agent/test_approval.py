"""The approval box fits 80×24 and says what a command really does."""

from __future__ import annotations

import io
import shlex
from datetime import UTC, datetime

import pytest
from rich.console import Console

from netghost.agent._approval import (
    MAX_BOX_LINES,
    closed_gate,
    decision_text,
    describe_risk,
    lab_approver,
    render_box,
    terminal_approver,
)
from netghost.contracts import DecidedBy
from netghost.governance import build_approval_request
from netghost.shell import HitlDecision

CREATE = ["az", "network", "watcher", "packet-capture", "create", "-g", "prod-rg", "-n",
          "ghost_web-vm-01_20250115T143500", "--vm", "web-vm-01", "--storage-account", "forensicssa",
          "--time-limit", "60", "--query", "storageLocation.storagePath", "-o", "tsv"]


def _request(argv: list[str], risk: str = "Azure CLI verb 'create' is classified as mutative") -> object:
    plan = {"argv": argv, "cwd": "/", "session_id": "s", "seq": 1}
    return build_approval_request(plan, what=shlex.join(argv), why="Capture 60 s of web-vm-01's traffic " * 4,
                                  risk=risk, requested_at=datetime(2025, 1, 15, tzinfo=UTC),
                                  context={"tier": 2, "classification": "RISKY", "argv": argv,
                                           "approval_timeout_s": 300.0})


def test_an_az_create_box_fits_80_by_24_with_title_and_command() -> None:
    console = Console(file=io.StringIO(), width=80, height=24, force_terminal=False)
    console.print(render_box(_request(CREATE * 2), 80))  # type: ignore[arg-type]
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert len(lines) <= MAX_BOX_LINES and max(len(ln) for ln in lines) <= 80
    text = "\n".join(lines)
    assert "SAFETY SHELL ALERT" in text and "az network watcher packet-capture create" in text
    assert "[M]odify shows it all" in text and "[A]pprove" in text


def test_a_command_that_fits_is_shown_whole_in_the_box() -> None:
    console = Console(file=io.StringIO(), width=80, height=24, force_terminal=False)
    console.print(render_box(_request(CREATE), 80))  # type: ignore[arg-type]
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert len(lines) <= MAX_BOX_LINES and max(len(ln) for ln in lines) <= 80
    inside = " ".join(ln.strip("│ ").replace("COMMAND:", "").strip() for ln in lines)
    for word in CREATE:  # every word is on screen, none dropped
        assert word in inside
    assert "more characters" not in inside


def test_risks_are_described_truthfully() -> None:
    download = ["az", "storage", "blob", "download", "--account-name", "sa", "-c", "captures", "-n", "x.cap",
                "-f", "/tmp/x.cap", "--auth-mode", "login"]
    assert describe_risk(download, "mutative") == (
        "Writes /tmp/x.cap on this machine from Azure Storage (blob x.cap); it does not change Azure.")
    assert describe_risk(CREATE, "?").startswith("Starts a packet capture on web-vm-01 in Azure")
    assert describe_risk(["cat", "/a/r.md"], "?").startswith("Reads /a/r.md on this machine")
    assert describe_risk(["az", "network", "watcher", "packet-capture", "delete", "-n", "g"], "?").startswith("Deletes")
    assert describe_risk(["frobnicate"], "unknown program") == "unknown program"


def test_the_box_shows_every_character_the_shells_box_would_hide() -> None:
    """Soft hyphen, word joiner, bidi isolates and C1 controls are escaped, as in the shell's own box."""
    hidden = "\u00ad\u2060\u2066\u0085\u202e"
    argv = ["rm", f"/tmp/a{hidden}b"]
    request = build_approval_request({"argv": argv, "cwd": "/", "session_id": "s", "seq": 1},
                                     what=shlex.join(argv), why=f"clean{hidden}up", risk="deletes",
                                     requested_at=datetime(2025, 1, 15, tzinfo=UTC),
                                     context={"tier": 3, "classification": "RISKY", "argv": argv})
    console = Console(file=io.StringIO(), width=100, force_terminal=False)
    console.print(render_box(request, 100))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert not any(ch in text for ch in hidden)
    for escape in ("\\xad", "\\u2060", "\\u2066", "\\x85", "\\u202e"):
        assert text.count(escape) >= 2, escape  # in the command and in the reasoning


def test_the_agent_prompt_answers_through_the_shells_loop() -> None:
    """Retries, deny with a reason and modify with a reason: one answer loop for both boxes."""
    ask = terminal_approver(Console(file=io.StringIO(), width=80), io.StringIO("x\nd\nwrong VM\n"))
    decision = ask(_request(CREATE))  # type: ignore[arg-type]
    assert (decision.decision, decision.reason) == ("deny", "wrong VM")
    ask = terminal_approver(Console(file=io.StringIO(), width=80), io.StringIO("m\naz vm show -n a -g b\nread first\n"))
    decision = ask(_request(CREATE))  # type: ignore[arg-type]
    assert (decision.decision, decision.command, decision.reason) == ("modify", "az vm show -n a -g b", "read first")
    ask = terminal_approver(Console(file=io.StringIO(), width=80), io.StringIO(""))
    with pytest.raises(EOFError):
        ask(_request(CREATE))  # type: ignore[arg-type]


def _needing_a_person(reason: str = "the lab does not simulate `rm` (/usr/bin/rm): it would run for real") -> object:
    request = _request(["rm", "-f", "/tmp/x"], risk="rm deletes files")
    return request.model_copy(update={"context": {**request.context, "needs_person": reason}})  # type: ignore[attr-defined]


def test_every_approver_says_who_it_is() -> None:
    yes = lab_approver(Console(file=io.StringIO()), world="nsg-deny")
    approved = yes(_request(CREATE))  # type: ignore[arg-type]
    assert approved.decision == "approve" and approved.by == DecidedBy(kind="flag", name="--yes", detail="lab nsg-deny")
    closed = closed_gate(_request(CREATE))  # type: ignore[arg-type]
    assert closed.decision == "deny" and closed.by is not None and closed.by.name == "closed_gate"
    human = terminal_approver(Console(file=io.StringIO(), width=80), io.StringIO("a\n"))(_request(CREATE))  # type: ignore[arg-type]
    assert human.decision == "approve" and human.by == DecidedBy(kind="human", name="terminal")


def test_yes_refuses_what_only_a_person_may_approve_terminal_or_not() -> None:
    asked: list[object] = []

    def person(request: object) -> HitlDecision:
        asked.append(request)
        return HitlDecision.approve(by=DecidedBy(kind="human", name="terminal"))

    yes = lab_approver(Console(file=io.StringIO()), world="nsg-deny", ask_human=person)
    decision = yes(_needing_a_person())  # type: ignore[arg-type]
    assert decision.decision == "deny" and asked == [] and decision.by is not None and decision.by.name == "--yes"
    assert "--yes approves only what the lab simulates" in decision.reason and "/usr/bin/rm" in decision.reason
    closed = closed_gate(_needing_a_person())  # type: ignore[arg-type]
    assert closed.decision == "deny" and "would run for real" in closed.reason


def test_the_box_says_when_only_a_person_may_approve() -> None:
    out = io.StringIO()
    Console(file=out, width=80).print(render_box(_needing_a_person(), 80))  # type: ignore[arg-type]
    text = out.getvalue()
    assert "NEEDS YOU:" in text and "the lab does not simulate `rm`" in text
    assert len(text.splitlines()) <= MAX_BOX_LINES


def test_the_rca_words_of_a_decision() -> None:
    record = {"action": "user_approved", "decided_by": {"kind": "flag", "name": "--yes", "detail": "lab nsg-deny"}}
    assert decision_text(record) == "user_approved by --yes (lab nsg-deny)"
    assert decision_text({"action": "user_approved"}) == "user_approved"  # a record older than the field
