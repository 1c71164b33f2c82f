"""The orchestrator's line for a refused step names who refused it, as the shell's decision lines do.

Through the real Safe-Exec Shell (the ``decided_by`` it audits is what the line reads): the human at the
terminal, an MCP client's elicitation, the closed gate's policy, and a callback that did not say who it is.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from netghost.contracts import DecidedBy
from netghost.governance import read_wal
from netghost.shell import HitlDecision

from .conftest import make_lab, request

CASES = [
    (DecidedBy(kind="human", name="terminal"), "change freeze", 'denied by the human at the terminal (reason: "change freeze")'),
    (DecidedBy(kind="mcp_elicitation", name="claude-code", detail="1.2.0"), "",
     "denied by MCP client claude-code 1.2.0 (elicitation)"),
    (DecidedBy(kind="policy", name="closed_gate", detail="no terminal to ask and --yes not given"), "no one to ask",
     'denied by policy closed_gate (no terminal to ask and --yes not given) (reason: "no one to ask")'),
    (None, "", "denied by approval callback "),
]


@pytest.mark.parametrize(("by", "reason", "said"), CASES, ids=["human", "mcp", "policy", "callback"])
def test_a_denied_create_says_who_denied_it(tmp_path: Path, real_shell_factory: Any, by: DecidedBy | None,
                                            reason: str, said: str) -> None:
    lab = make_lab(tmp_path)
    lab.hitl.script["packet-capture create"] = HitlDecision.deny(reason, by=by)
    out = io.StringIO()
    orch = lab.orchestrator(shell=real_shell_factory(lab), console=Console(file=out, width=300))
    resp = orch.orchestrate(request())
    orch.close()
    assert (resp["status"], resp["denied_action"]) == ("task_cancelled", "user_denied")
    line = next(ln for ln in out.getvalue().splitlines() if "create not approved" in ln)
    assert line.startswith("[Cloud Orchestrator] ") and f"create not approved: {said}" in line, line
    (audit,) = (tmp_path / "audit").glob("shell_audit_*.jsonl")
    denied = [r for r in read_wal(audit).records if r.get("action") == "user_denied"]
    expected = by or DecidedBy(kind="callback", name=denied[-1]["decided_by"]["name"])
    assert DecidedBy.model_validate(denied[-1]["decided_by"]) == expected  # the line says what the audit holds
    assert f"by {expected.label()}" in json.dumps(resp)  # and so does what the model is told


def test_a_denied_download_says_who_denied_it(tmp_path: Path, real_shell_factory: Any) -> None:
    lab = make_lab(tmp_path)
    lab.hitl.script["blob download"] = HitlDecision.deny("not to this laptop", by=DecidedBy(kind="human", name="terminal"))
    out = io.StringIO()
    orch = lab.orchestrator(shell=real_shell_factory(lab), console=Console(file=out, width=300))
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    resp = orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})
    orch.close()
    assert resp["status"] == "task_cancelled"
    assert 'download not approved: denied by the human at the terminal (reason: "not to this laptop")' in out.getvalue()
