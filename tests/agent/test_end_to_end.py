"""The whole command against the fake Gemini server with the real SDK, once per shipped lab world.

Scripted like seed 001 §10's console example: hypotheses, an NSG read, a route read, a RISKY route
update that the closed gate denies with a reason (no terminal, no --yes), the RCA. Checked field by
field: the session file, all three chains, the RCA, the denial reason in the next request's ``_meta``,
and no planted secret in anything the server received.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from netghost.agent.cli import main
from netghost.contracts import SessionState, check_session_checksum
from netghost.governance import read_wal, signed_head, verify
from netghost.lab import load_world, scenario_names
from netghost.lab.fake_gemini import FakeCall, FakeGemini, FakeTurn

SECRET = "AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MTIzNA=="
CLOSED = "no terminal to ask and --yes not given: failing closed"


def _script(world: str) -> list[FakeTurn]:
    spec = load_world(world).spec
    client = next((f.client for f in spec.traffic if f.client in {v.name for v in spec.vms}), spec.vms[0].name)
    rg = next(v.resource_group for v in spec.vms if v.name == client)
    hyps = [{"id": "h1", "description": "NSG rule blocking the flow"},
            {"id": "h2", "description": "UDR sending the flow to a wrong next hop"}]
    return [
        FakeTurn(text="I'll investigate this connectivity failure systematically.\nHypothesis H1: NSG. Hypothesis H2: UDR.",
                 calls=(FakeCall("run_shell_cmd", {"command": f"az network nsg list -g {rg} -o json",
                                                   "reasoning": "Read the NSGs.", "hypotheses": hyps,
                                                   "active_hypothesis_ids": ["h1", "h2"]}),)),
        FakeTurn.call("run_shell_cmd", {"command": f"az network route-table list -g {rg} -o json",
                                        "reasoning": "Read the route tables.", "active_hypothesis_ids": ["h2"]},
                      text="Now checking route tables."),
        FakeTurn.call("run_shell_cmd", {"command": f"az network route-table route update -g {rg} "
                                                   "--route-table-name rt -n r1 --next-hop-type VnetLocal",
                                        "reasoning": "Correct the next hop.", "active_hypothesis_ids": ["h2"]}),
        FakeTurn.call("complete_investigation", {
            "confidence": "medium", "root_cause_summary": f"See {client}'s effective routes.",
            "confirmed_hypotheses": [], "refuted_hypotheses": ["h1"],
            "recommended_actions": ["Review the route table."],
            "hypotheses": [{"id": "h1", "state": "REFUTED"}]}, text="Generating root cause analysis report."),
    ]


@pytest.mark.parametrize("world", scenario_names())
def test_an_investigation_of_each_lab_world(world: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit"
    with FakeGemini(_script(world)) as fake:
        monkeypatch.setenv("GEMINI_API_KEY", "x")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal
        code = main(["--lab", world, "--audit-dir", str(audit), "--intent",
                     f"web cannot reach redis on 6379; the key in my notes is {SECRET}"])
        requests = list(fake.requests)
    out = capsys.readouterr().out
    assert code == 0, out
    (session_file,) = [audit / "ghost_session.json"]
    data = json.loads(session_file.read_text())
    assert check_session_checksum(data) == "ok"
    state = SessionState.model_validate(data)
    sid = state.session_id
    assert state.turn_count == 4 and state.rca_report_path == str(audit / f"ghost_rca_{sid}.md")
    h1, h2 = state.hypothesis_log
    assert (h1.id, h1.state.value, h2.id, h2.state.value) == ("h1", "REFUTED", "h2", "DENIED_ONCE")
    assert h2.denial_events[0].denial_reason == CLOSED and state.denial_tracker == {"h1": 0, "h2": 1}
    assert {"shell", "turns"} <= set(state.audit_heads)  # the registry has no record: no head to pin
    chains = {"shell": audit / f"shell_audit_{sid}.jsonl", "turns": audit / f"ghost_turns_{sid}.jsonl"}
    for path in chains.values():
        assert verify(path).ok
    shell = read_wal(chains["shell"]).records
    mine = [r for r in shell if r["command"].startswith(("az network nsg list", "az network route-table"))]
    assert [(r["classification"], r["action"]) for r in mine] == [
        ("SAFE", "auto_approved"), ("SAFE", "auto_approved"), ("RISKY", "user_denied")]
    assert mine[2]["denial_reason"] == CLOSED
    head = signed_head(chains["shell"])
    assert head is not None and state.audit_heads["shell"]["sha256"] == head.sha256
    kinds = [r["kind"] for r in read_wal(chains["turns"]).records]
    assert kinds.count("model_turn") == 4 and kinds.count("shell_call") == 3
    # the denial reason reached the next model turn in _meta
    fourth = requests[3]["contents"][-1]["parts"][0]["functionResponse"]["response"]
    assert fourth["_meta"]["denial_reason"] == CLOSED and fourth["_meta"]["denial_count"] == 1
    # system prompt and six tools went out; no secret did
    assert "DENIAL RECOVERY RULES" in json.dumps(requests[0]["systemInstruction"])
    assert len(requests[0]["tools"][0]["functionDeclarations"]) == 6
    assert all(SECRET not in json.dumps(r) and "Zm9vYmFyYmF6" not in json.dumps(r) for r in requests)
    # RCA: every cited audit id exists, the integrity statement counts the records it verified
    rca = Path(state.rca_report_path or "").read_text()
    ids = {r["audit_id"] for r in shell}
    cited = set(re.findall(r"ghost_\d{8}_\d{6}_\d{3}", rca))
    assert cited and cited <= ids
    assert f"{len(shell)} records, chain intact, head {verify(chains['shell']).head_sha256}" in rca
    assert "| h2 | UDR sending the flow to a wrong next hop | DENIED_ONCE | 1 |" in rca
    # the model claimed medium citing nothing and refuted h1 with no audit id: the RCA says so and caps it
    assert "\\[CLOUD\\]" in rca and "_Confidence: low (the model claimed medium" in rca
    assert "CLAIM CHECK no_evidence" in rca and "CLAIM CHECK concluded_without_audit_id" in rca
    assert "Confidence capped at low (the model claimed medium)" in out and "Confidence: low" in out
    assert "UNIFIED GHOST AGENT" in out and "[Shell] SAFE — auto-approved: az network nsg list" in out
    assert "RCA REPORT WRITTEN" in out


def test_three_denials_make_the_hypothesis_unverifiable_and_the_rca_lists_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    update = {"command": "az network route-table route update -g prod-rg --route-table-name rt -n r1 "
                         "--next-hop-type VnetLocal", "reasoning": "fix", "active_hypothesis_ids": ["h2"]}
    script: list[Any] = [
        FakeTurn.call("run_shell_cmd", {**update, "hypotheses": [{"id": "h2", "description": "UDR"}]}),
        FakeTurn.call("run_shell_cmd", update), FakeTurn.call("run_shell_cmd", update),
        FakeTurn.call("complete_investigation", {"confidence": "low", "root_cause_summary": "Blocked.",
                                                 "unverifiable_hypotheses": ["h2"]}),
    ]
    with FakeGemini(script) as fake:
        monkeypatch.setenv("GEMINI_API_KEY", "x")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        assert main(["--lab", "udr-dead-appliance", "--audit-dir", str(tmp_path), "--intent", "x"]) == 0
        last = fake.requests[3]["contents"][-1]["parts"][0]["functionResponse"]["response"]["_meta"]
    assert last["denial_threshold_reached"] is True and last["denial_count"] == 3
    state = SessionState.model_validate(json.loads((tmp_path / "ghost_session.json").read_text()))
    assert state.hypothesis_log[0].state.value == "UNVERIFIABLE"
    rca = Path(state.rca_report_path or "").read_text()
    assert "| h2 | UDR | UNVERIFIABLE | 3 |" in rca and "Unverifiable (repeated denials): h2." in rca
