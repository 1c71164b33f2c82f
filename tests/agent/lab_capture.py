"""One scripted investigation of a lab world that takes a packet capture, through the whole ``ghost-agent``.

The fake Gemini asks for a read, a capture of the broken flow's client, polls it with check_task until
it is done (the task id is read from the previous tool result, as a model would), and concludes citing
the capture's audit ids. ``--yes`` approves the lab's RISKY steps. Used by the HTML RCA tests and the
browser test.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from netghost.agent.cli import main
from netghost.lab import load_world
from netghost.lab.fake_gemini import FakeCall, FakeGemini, FakeTurn


def _target(world: str) -> tuple[str, str, str]:
    spec = load_world(world).spec
    flows = {f.name: f for f in spec.traffic}
    flow = flows.get(spec.fault.flow) if spec.fault is not None else None
    flow = flow or next(f for f in spec.traffic if f.client in {v.name for v in spec.vms})
    vm = next(v for v in spec.vms if v.name == flow.client)
    account = spec.storage_accounts[0].name if spec.storage_accounts else "forensicssa"
    return vm.name, vm.resource_group, account


def _rg(world: str, vm: str) -> str:
    return next(v.resource_group for v in load_world(world).spec.vms if v.name == vm)


def _last_result(body: dict[str, Any]) -> dict[str, Any]:
    for content in reversed(body["contents"]):
        for part in content["parts"]:
            resp = part.get("functionResponse") or part.get("function_response")
            if resp:
                return dict(resp.get("response") or {})
    return {}


def _audit_ids(body: dict[str, Any]) -> list[str]:
    out = []
    for content in body["contents"]:
        for part in content["parts"]:
            resp = part.get("functionResponse") or part.get("function_response") or {}
            audit_id = (resp.get("response") or {}).get("audit_id")
            if audit_id:
                out.append(str(audit_id))
    return out


def _poll(body: dict[str, Any]) -> FakeTurn:
    last = _last_result(body)
    task_id = last.get("task_id") or last.get("result", {}).get("task_id")
    if last.get("status") in ("task_completed", "task_failed", "task_timed_out", "task_cancelled"):
        ids = _audit_ids(body)[:1]  # the VM read the model made first
        return FakeTurn.call("complete_investigation", {
            "confidence": "high",
            "root_cause_summary": f"The capture {task_id} shows the flow failing; see {' and '.join(ids) or 'the audit'}.",
            "confirmed_hypotheses": ["h1"], "recommended_actions": ["Fix the rule the capture points at."],
            "hypotheses": [{"id": "h1", "state": "CONFIRMED", **({"resolving_audit_id": ids[-1]} if ids else {})}]})
    paired = last.get("paired_task") or {}
    if paired.get("task_id") and last.get("state") == "COMPLETED":  # this end is done: the other one's turn
        task_id = paired["task_id"]
    return FakeTurn(calls=(FakeCall("check_task", {"task_id": task_id}),), text="Polling the capture.")


def investigate(world: str, audit: Path, monkeypatch: pytest.MonkeyPatch, peer: str | None = None) -> str:
    """Run the investigation; its session id. With ``peer``, the capture is dual-end: the flow's client
    and ``peer`` captured together (``VM to PEER``), compared when both are done."""
    vm, rg, account = _target(world)
    target = f"{vm} to {peer}" if peer else vm
    script: list[Any] = [
        FakeTurn.call("run_shell_cmd", {"command": f"az vm show -g {rg} -n {vm} -o json", "reasoning": "Read the VM.",
                                        "hypotheses": [{"id": "h1", "description": f"traffic from {vm} is dropped"}],
                                        "active_hypothesis_ids": ["h1"]}),
        *([FakeTurn.call("run_shell_cmd", {"command": f"az vm show -g {_rg(world, peer)} -n {peer} -o json",
                                           "reasoning": "Read the other end.", "active_hypothesis_ids": ["h1"]})]
          if peer else []),
        FakeTurn.call("capture_traffic", {"target": target, "resource_group": rg, "storage_account": account,
                                          "duration_seconds": 60, "investigation_context": "the failing flow",
                                          "active_hypothesis_ids": ["h1"]}),
        *([_poll] * (12 if peer else 8)),
    ]
    with FakeGemini(script) as fake:
        monkeypatch.setenv("GEMINI_API_KEY", "x")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        code = main(["--lab", world, "--audit-dir", str(audit), "--yes", "--intent", f"{vm} cannot reach its peer"])
    assert code == 0
    return str(json.loads((audit / "ghost_session.json").read_text())["session_id"])
