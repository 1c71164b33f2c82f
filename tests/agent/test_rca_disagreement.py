"""A disagreement between the control plane and the packets is a finding of its own in the RCA (issue 26).

The Brain reports it the way the seed's hypothesis log records conflicts (a move to CONTRADICTED with the
conflicting audit ids and the side it trusts, then the resolution); the RCA, Markdown and HTML, prints it in
its own section: what disagrees, both audit ids (cited, checked against the trail), the side trusted and why,
and how it was resolved. The text is the model's, so it is escaped like every other model string.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from netghost.agent._hypotheses import apply_updates
from netghost.agent._rca import NOT_IN_TRAIL, chain_paths, write_rca
from netghost.agent._rca_html import write_rca_html
from netghost.agent._session import new_session
from netghost.contracts import CompleteInvestigationArgs, HypothesisState
from netghost.governance import WalWriter
from tests.agent.fakes import NOW

SID = "ghost_20261128_090000"
FLOW, CAPTURE = f"{SID}_004", f"{SID}_011"
TRUST = "the packet capture: what happened on the wire at the capture point"
FINDING = ("Disagreement: test-ip-flow allows web -> db:5432 both ways, but the capture shows SYNs unanswered "
           "<script>alert(1)</script> **bold**")


class _Cat:
    def execute(self, request: Any) -> dict[str, Any]:
        return {"status": "completed", "exit_code": 1, "output": "", "audit_id": f"{SID}_999"}


def _session(tmp_path: Path) -> Any:
    shell = WalWriter(chain_paths(tmp_path, SID)["shell"])
    for seq, command in ((4, "az network watcher test-ip-flow -g rg --vm web --direction Outbound"),
                         (11, "cat /tmp/x_executive_summary.md")):
        shell.append({"audit_id": f"{SID}_{seq:03d}", "command": command, "environment": "azure", "status": "completed",
                      "exit_code": 0, "classification": "SAFE", "action": "auto_approved", "output": "{}"})
    shell.close()
    WalWriter(chain_paths(tmp_path, SID)["orchestrator"]).close()
    state = new_session(SID, model="playbook", audit_dir=tmp_path, now=NOW)
    apply_updates(state, [{"id": "h3", "description": "A device on the path drops the packets."}], None, now=NOW)
    later = NOW + timedelta(minutes=3)
    notes = apply_updates(state, [
        {"id": "h3", "state": "CONTRADICTED", "conflicting_audit_ids": [FLOW, CAPTURE, f"{SID}_077"],
         "higher_fidelity_source": TRUST, "description": FINDING},
        {"id": "h3", "state": "CONFIRMED", "resolving_audit_id": CAPTURE}], None, now=later)
    assert notes == []
    return state


def test_the_rca_states_the_disagreement_with_both_sides_and_the_trusted_one(tmp_path: Path) -> None:
    state = _session(tmp_path)
    (conflict,) = state.evidence_conflicts
    assert conflict.resolution == "CONFIRMED" and state.hypothesis_log[0].state == HypothesisState.CONFIRMED
    completion = CompleteInvestigationArgs(confidence="high", root_cause_summary=f"Dropped on the path ({CAPTURE}).",
                                           confirmed_hypotheses=["h3"])
    text = write_rca(tmp_path, state, completion, _Cat(), now=lambda: NOW).text
    section = text[text.index("## Disagreement Findings"):text.index("## Hypotheses Log")]
    assert text.index("## Investigation Summary") < text.index("## Disagreement Findings")
    assert "test-ip-flow allows web -\\> db\\:5432 both ways" in section  # the model's text, escaped
    assert "<script>" not in section and "\\*\\*bold\\*\\*" in section
    assert f"Evidence that disagrees: {FLOW}, {CAPTURE}, {SID}_077{NOT_IN_TRAIL}" in section
    assert "Trusted: the packet capture\\: what happened on the wire at the capture point" in section
    assert "Hypothesis h3, resolved CONFIRMED." in section
    page = write_rca_html(tmp_path, state, completion, now=lambda: NOW).read_text(encoding="utf-8")
    html = page[page.index("<h2>Disagreement Findings</h2>"):page.index("<h2>Hypotheses</h2>")]
    assert f'<a href="#{FLOW}">{FLOW}</a>' in html and f'<a href="#{CAPTURE}">{CAPTURE}</a>' in html
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert "Trusted: the packet capture: what happened on the wire" in html


def test_without_a_disagreement_there_is_no_such_section(tmp_path: Path) -> None:
    state = new_session(SID, model="playbook", audit_dir=tmp_path, now=NOW)
    WalWriter(chain_paths(tmp_path, SID)["shell"]).close()
    WalWriter(chain_paths(tmp_path, SID)["orchestrator"]).close()
    completion = CompleteInvestigationArgs(confidence="low", root_cause_summary="Nothing found.")
    assert "Disagreement" not in write_rca(tmp_path, state, completion, _Cat(), now=lambda: NOW).text
    assert "Disagreement" not in write_rca_html(tmp_path, state, completion, now=lambda: NOW).read_text()
