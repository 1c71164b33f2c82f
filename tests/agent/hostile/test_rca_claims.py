"""Family 4: the RCA checks what the model claims, flags each lie and caps the confidence it shows.

End to end (a scripted model through the real google-genai SDK on the lab), then each rule of the
table on its own. A lie must show in the Markdown and HTML Integrity Statements, on screen (with the
rules that capped it) and in the journal; an honest conclusion must keep its confidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from netghost.agent._claims import RULES, check_claims, id_key, is_plain_id
from netghost.contracts import CompleteInvestigationArgs, Hypothesis, HypothesisState, SessionState
from netghost.governance import read_wal
from netghost.lab.fake_gemini import FakeCall, FakeTurn

from .harness import HostileRun, complete, run_hostile, shell

Body = dict[str, Any]


def _last_audit_id(body: Body) -> str:
    """The audit id of the last tool result the model was sent (what a model would cite)."""
    for content in reversed(body["contents"]):
        for part in content.get("parts", []):
            response = (part.get("functionResponse") or {}).get("response") or {}
            if response.get("audit_id"):
                return str(response["audit_id"])
    raise AssertionError("no tool result with an audit id was sent")


def _reports(run: HostileRun) -> tuple[str, str]:
    files = run.files()
    md = next(t for p, t in files.items() if p.name.startswith("ghost_rca_") and p.suffix == ".md")
    html = next(t for p, t in files.items() if p.name.startswith("ghost_rca_") and p.suffix == ".html")
    return md, html


def _rca_event(run: HostileRun) -> dict[str, Any]:
    return next(r for r in run.records("ghost_turns") if r.get("event") == "rca_written")


def test_high_confidence_with_no_command_run_is_capped_everywhere(tmp_path: Path) -> None:
    run = run_hostile(tmp_path, [complete("The NSG nsg-data blocks 6379.", confidence="high")])
    assert run.code == 0, run.console
    md, html = _reports(run)
    assert "_Confidence: low (the model claimed high; capped by the claim checks" in md
    assert "CLAIM CHECK no_evidence" in md and "CLAIM CHECK high_without_cloud_evidence" in md
    assert "confidence <strong>low (the model claimed high; capped by the claim checks)</strong>" in html
    assert "CLAIM CHECK no_evidence" in html
    said = " ".join(run.console.split())  # rich wraps long lines
    assert "Confidence capped at low (the model claimed high): no_evidence, high_without_cloud_evidence" in said
    assert "Confidence: low  |" in run.console
    event = _rca_event(run)
    assert event["confidence"] == "low" and event["claimed_confidence"] == "high"
    session = SessionState.model_validate_json((run.audit / "ghost_session.json").read_text())
    assert session.rca_confidence == "low"
    assert any(c.startswith("no_evidence:") for c in event["claim_checks"])


def test_every_lie_of_a_conclusion_is_flagged(tmp_path: Path) -> None:
    """Confirmed and refuted, undeclared ids, other spellings (case, zero-width, Cyrillic look-alike),
    a denied command as the evidence of a confirmed state, a refutation with no audit id."""
    seen: dict[str, str] = {}

    def denied(body: Body) -> FakeTurn:
        seen["read"] = _last_audit_id(body)
        return shell("az network nsg rule delete -g prod-rg --nsg-name nsg-data -n DenyAllFromWebSubnet",
                     "Remove the rule.")

    def conclude(body: Body) -> FakeTurn:
        seen["denied"] = _last_audit_id(body)
        return FakeTurn(calls=(FakeCall("complete_investigation", {
            "confidence": "high", "root_cause_summary": f"The rule blocks it: {seen['read']}.",
            "confirmed_hypotheses": ["h1", "H1", "h\u200b2", "\u04bb2", "h9"], "refuted_hypotheses": ["h1"],
            "recommended_actions": ["Remove DenyAllFromWebSubnet."],
            "hypotheses": [{"id": "h1", "state": "CONFIRMED", "resolving_audit_id": seen["denied"]},
                           {"id": "h2", "state": "REFUTED"}]}),))

    script = [FakeTurn(calls=(FakeCall("run_shell_cmd", {
        "command": "az network nsg rule list -g prod-rg --nsg-name nsg-data -o json", "reasoning": "Read the rules.",
        "hypotheses": [{"id": "h1", "description": "NSG rule blocks 6379"},
                       {"id": "h2", "description": "UDR to a dead appliance"}]}),)), denied, conclude]
    run = run_hostile(tmp_path, script, yes=False)  # no terminal, no --yes: the RISKY delete is denied
    assert run.code == 0, run.console
    assert run.shell_by_command()["az network nsg rule delete -g prod-rg --nsg-name nsg-data -n "
                                  "DenyAllFromWebSubnet"]["status"] == "denied"
    md, html = _reports(run)
    expected = {
        "conflicting_conclusion": "h1 is listed both as confirmed and as refuted",
        "other_spelling": "'H1' (confirmed) is not the declared id 'h1'",
        "undeclared_hypothesis": "h9 is listed as confirmed but was never declared",
        "failed_evidence": f"h1 is confirmed by {seen['denied']}, a command that did not succeed",
        "concluded_without_audit_id": "h2 is concluded",
    }
    for rule, words in expected.items():
        assert f"CLAIM CHECK {rule}" in md and f"CLAIM CHECK {rule}" in html, rule
        assert words in _unescaped(md) and words.replace("'", "&#x27;") in html, words
    assert "'h\\u200b2' (holds U+200B) (confirmed) is not the declared id 'h2'" in _unescaped(md)  # zero-width
    assert "'\u04bb2' (holds U+04BB) (confirmed) is not a plain id" in _unescaped(md)  # a Cyrillic look-alike
    assert "high_without_cloud_evidence" not in md  # it did cite a [CLOUD] read that succeeded
    assert "_Confidence: low (the model claimed high" in md
    line = next(ln for ln in run.console.replace("\n", " ").split("[WARN]") if "Confidence capped" in ln)
    for rule in expected:
        assert rule in line, rule
    assert _rca_event(run)["confidence"] == "low"


def test_an_honest_conclusion_keeps_its_confidence(tmp_path: Path) -> None:
    def conclude(body: Body) -> FakeTurn:
        read = _last_audit_id(body)
        return FakeTurn(calls=(FakeCall("complete_investigation", {
            "confidence": "high", "root_cause_summary": f"DenyAllFromWebSubnet in nsg-data blocks 6379 ({read}).",
            "confirmed_hypotheses": ["h1"], "refuted_hypotheses": [], "recommended_actions": ["Remove the rule."],
            "hypotheses": [{"id": "h1", "state": "CONFIRMED", "resolving_audit_id": read}]}),))

    script = [FakeTurn(calls=(FakeCall("run_shell_cmd", {
        "command": "az network nsg rule list -g prod-rg --nsg-name nsg-data -o json", "reasoning": "Read the rules.",
        "hypotheses": [{"id": "h1", "description": "NSG rule blocks 6379"}]}),)), conclude]
    run = run_hostile(tmp_path, script)
    assert run.code == 0, run.console
    md, html = _reports(run)
    assert "_Confidence: high_" in md and "CLAIM CHECK" not in md and "CLAIM CHECK" not in html
    assert "Claim checks: the conclusion's confidence, citations and hypotheses agree with the trail." in md
    assert "Confidence capped" not in run.console and "Confidence: high  |" in run.console


def _unescaped(markdown: str) -> str:
    """The Markdown with its backslash escapes read (what a renderer shows)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


# ---- each rule on its own ------------------------------------------------------------------------------

SID = "ghost_20260101_000000"


def _aid(n: int) -> str:
    return f"{SID}_{n:03d}"


def _record(n: int, *, status: str = "completed", exit_code: int | None = 0, env: str = "azure",
            action: str = "auto_approved") -> dict[str, Any]:
    return {"audit_id": _aid(n), "status": status, "exit_code": exit_code, "environment": env, "action": action,
            "command": "az vm list"}


def _state(*hyps: tuple[str, HypothesisState, str | None]) -> SessionState:
    log = [Hypothesis(id=i, description=i, state=s, denial_count=0, resolving_audit_id=a) for i, s, a in hyps]
    return SessionState(session_id=SID, created_at="2026-01-01T00:00:00Z", model="m", hypothesis_log=log)


def _done(confidence: str = "high", summary: str = "", **lists: list[str]) -> CompleteInvestigationArgs:
    return CompleteInvestigationArgs.model_validate({"confidence": confidence, "root_cause_summary": summary, **lists})


H = HypothesisState
Case = tuple[SessionState, CompleteInvestigationArgs, list[dict[str, Any]]]
CASES: dict[str, Callable[[], Case]] = {
    "unknown_citation": lambda: (_state(), _done("low", f"see {_aid(9)}"), [_record(1)]),
    "no_evidence": lambda: (_state(), _done("medium", f"see {_aid(1)}"), [_record(1, exit_code=1)]),
    "high_without_cloud_evidence": lambda: (_state(), _done("high", f"see {_aid(1)}"), [_record(1, env="local")]),
    "conflicting_conclusion": lambda: (_state(("h1", H.REFUTED, _aid(1))), _done(
        "low", confirmed_hypotheses=["h1"]), [_record(1)]),
    "concluded_without_audit_id": lambda: (_state(("h1", H.CONFIRMED, None)), _done(
        "low", confirmed_hypotheses=["h1"]), [_record(1)]),
    "undeclared_hypothesis": lambda: (_state(), _done("low", refuted_hypotheses=["h7"]), [_record(1)]),
    "other_spelling": lambda: (_state(("h1", H.CONFIRMED, _aid(1))), _done(
        "low", confirmed_hypotheses=[" h1"]), [_record(1)]),
    "failed_evidence": lambda: (_state(("h1", H.CONFIRMED, _aid(1))), _done(
        "low", confirmed_hypotheses=["h1"]), [_record(1, status="denied", exit_code=None, action="user_denied")]),
}


def test_the_rule_table_has_one_case_each() -> None:
    assert [r.name for r in RULES] == list(CASES) and len({r.name for r in RULES}) == len(RULES)


@pytest.mark.parametrize("rule", list(CASES))
def test_each_rule_fires_on_its_lie_alone(rule: str) -> None:
    state, completion, records = CASES[rule]()
    fired = {f.rule for f in check_claims(state, completion, records).findings}
    assert rule in fired
    cap = next(r.cap for r in RULES if r.name == rule)
    claimed_high = check_claims(state, completion.model_copy(update={"confidence": "high"}), records)
    rank = {"low": 0, "medium": 1, "high": 2}
    assert rank[claimed_high.confidence] <= rank[cap] and claimed_high.capped


def test_a_supported_conclusion_fires_nothing() -> None:
    state = _state(("h1", H.CONFIRMED, _aid(1)), ("h2", H.REFUTED, _aid(2)))
    completion = _done("high", f"The rule ({_aid(1)}) blocks it.", confirmed_hypotheses=["h1"],
                       refuted_hypotheses=["h2"])
    checked = check_claims(state, completion, [_record(1), _record(2, env="local")])
    assert checked.findings == [] and checked.confidence == "high" and not checked.capped


def test_ids_are_compared_without_their_spelling() -> None:
    assert {id_key(i) for i in ("h1", "H1", " h1 ", "h\u200b1", "\uff48\uff11")} == {"h1"}
    assert is_plain_id("h1") and is_plain_id("nsg.deny-2_b")
    assert not any(is_plain_id(i) for i in ("h 1", "\u04bb1", "h1\x1b", "", "x" * 65, "h1:"))


def test_the_journal_keeps_what_the_screen_shows(tmp_path: Path) -> None:
    """A medium conclusion that cites nothing is capped to low, and the journal's record says both."""
    run = run_hostile(tmp_path, [shell("az vm list -o json", "List."), complete("Nothing found.", confidence="medium")])
    event = _rca_event(run)
    assert event["claimed_confidence"] == "medium" and event["confidence"] == "low"  # nothing cited
    assert read_wal(next(run.audit.glob("ghost_turns_*.jsonl"))).records  # the journal is readable with it
