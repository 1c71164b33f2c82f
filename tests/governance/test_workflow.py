"""The CabinCrew workflow engine: order, preflight outcomes, approvals, take-off, replay, halts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.contracts.cabincrew import ApprovalResponse, AuditEvent, PolicyEvaluation, WalEntry
from netghost.errors import ArtifactError, PlanTokenMismatchError, WalCorruptError
from netghost.governance.approval import ApprovalMismatchError
from netghost.governance.artifacts import register_artifact
from netghost.governance.plan_token import compute_plan_token
from netghost.governance.policy import PolicyEngine, command_facts
from netghost.governance.wal import WalWriter, read_wal
from netghost.governance.workflow import (
    TRANSITIONS,
    Workflow,
    WorkflowTransitionError,
    replay_workflows,
    step,
)
from netghost.governance.workspace import create_workspace

from .helpers import FakeClock

PLAN = {"argv": ["az", "vm", "restart", "-n", "vm1"], "cwd": "/work", "session_id": "s1", "seq": 7}
NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def engine() -> PolicyEngine:
    return PolicyEngine()


@pytest.fixture
def wal(tmp_path: Path) -> Iterator[WalWriter]:
    with WalWriter(tmp_path / "wal" / "workflows.jsonl", fsync=False, clock=FakeClock()) as w:
        yield w


def _evaluation(outcome: str, reasons: list[str] | None = None) -> PolicyEvaluation:
    return PolicyEvaluation.model_validate(
        {"outcome": outcome, "reasons": reasons or [f"test {outcome}"], "policy_hash": "sha256:" + "a" * 64,
         "facts_sha256": "sha256:" + "b" * 64, "evaluated_at": NOW.isoformat()}
    )


def _start(wal: WalWriter, wid: str = "wf-1", plan: Any = PLAN, **kw: Any) -> Workflow:
    return Workflow.start(wal, plan, workflow_id=wid, clock=FakeClock(), **kw)


def _types(wal: WalWriter, wid: str = "wf-1") -> list[str]:
    out = []
    for rec in read_wal(wal.path).records:
        if rec.get("workflow_id") == wid:
            q = rec["data"].get("step") or rec["data"].get("evaluation", {}).get("outcome") or rec["data"].get(
                "response", {}).get("decision")
            out.append(rec["entry_type"] + (f":{q}" if q else ""))
    return out


def _respond(request_token: str, decision: str, **kw: Any) -> ApprovalResponse:
    return ApprovalResponse(plan_token=request_token, decision=decision, decided_at=NOW, **kw)  # type: ignore[arg-type]


def test_allow_runs_the_whole_lifecycle_in_order(wal: WalWriter, engine: PolicyEngine) -> None:
    wf = _start(wal, plan={"argv": ["ping", "-c", "1", "10.0.0.4"]})
    assert wf.state == "preflight"
    assert wf.preflight(engine, command_facts(["ping", "-c", "1", "10.0.0.4"], verdict="SAFE")).outcome == "allow"
    assert wf.state == "cleared"
    result = wf.run_take_off({"argv": ["ping", "-c", "1", "10.0.0.4"]}, lambda: {"exit_code": 0})
    assert result == {"exit_code": 0}
    assert wf.state == "completed"
    assert wf.record.completed_steps == ["flight_plan", "preflight", "take_off", "audit", "completion"]
    assert wf.record.pending_steps == []
    assert _types(wal) == [
        "workflow_started", "step_started:flight_plan", "step_completed:flight_plan", "policy_evaluated:allow",
        "plan_token_verified", "step_started:take_off", "step_completed:take_off", "step_started:audit",
        "step_completed:audit", "workflow_completed",
    ]
    assert [e.event_type for e in wf.audit_events][:4] == [
        "plan_token_creation", "engine_launch", "engine_completion", "governance_decision"]


def test_warn_is_recorded_and_continues(wal: WalWriter) -> None:
    wf = _start(wal)
    wf.record_policy(_evaluation("warn", ["TLS verification disabled"]))
    assert wf.state == "cleared" and wf.record.warnings == ["TLS verification disabled"]
    wf.run_take_off(PLAN, dict)
    assert wf.state == "completed"


def test_deny_halts_and_take_off_is_refused(wal: WalWriter) -> None:
    wf = _start(wal)
    wf.record_policy(_evaluation("deny"))
    assert wf.state == "failed" and wf.record.failure_reason == "governance_denied"
    with pytest.raises(WorkflowTransitionError):
        wf.take_off(PLAN)
    assert _types(wal)[-2:] == ["policy_evaluated:deny", "workflow_failed"]


def test_require_approval_pauses_until_approved(wal: WalWriter) -> None:
    wf = _start(wal)
    wf.record_policy(_evaluation("require_approval"))
    assert wf.state == "approval_required"
    with pytest.raises(WorkflowTransitionError):  # approval cannot be skipped
        wf.take_off(PLAN)
    req = wf.request_approval(what="az vm restart -n vm1", why="reboot a hung VM", risk="restarts a VM")
    assert req.plan_token == compute_plan_token(PLAN) and wf.state == "awaiting_approval"
    assert wf.record_approval(_respond(req.plan_token, "approve")) == "cleared"
    wf.run_take_off(PLAN, lambda: {"exit_code": 0})
    assert wf.record.completed_steps == ["flight_plan", "preflight", "approval", "take_off", "audit", "completion"]
    assert wf.record.approvals[0].response is not None


def test_rejected_approval_halts(wal: WalWriter) -> None:
    wf = _start(wal)
    wf.record_policy(_evaluation("require_approval"))
    req = wf.request_approval(what="w", why="y", risk="r")
    assert wf.record_approval(_respond(req.plan_token, "deny", reason="not now")) == "failed"
    assert wf.record.failure_reason == "approval_rejected"


def test_response_for_another_token_is_refused_and_not_recorded(wal: WalWriter) -> None:
    wf = _start(wal)
    wf.record_policy(_evaluation("require_approval"))
    wf.request_approval(what="w", why="y", risk="r")
    before = len(read_wal(wal.path).records)
    with pytest.raises(ApprovalMismatchError):
        wf.record_approval(_respond(compute_plan_token({"other": 1}), "approve"))
    assert len(read_wal(wal.path).records) == before and wf.state == "awaiting_approval"


def test_modify_binds_the_modified_plan(wal: WalWriter) -> None:
    wf = _start(wal)
    wf.record_policy(_evaluation("require_approval"))
    req = wf.request_approval(what="w", why="y", risk="r")
    modified = dict(PLAN, argv=["az", "vm", "show", "-n", "vm1"])
    wf.record_approval(_respond(req.plan_token, "modify", modified_plan=modified))
    assert wf.state == "cleared" and wf.record.plan_token == compute_plan_token(modified)
    with pytest.raises(PlanTokenMismatchError):
        wf.take_off(PLAN)  # the original plan is no longer what was approved


def test_take_off_with_a_different_plan_is_denied_and_audited(wal: WalWriter) -> None:
    wf = _start(wal)
    wf.record_policy(_evaluation("allow"))
    tampered = dict(PLAN, argv=["az", "vm", "delete", "-n", "vm1"])
    with pytest.raises(PlanTokenMismatchError) as info:
        wf.take_off(tampered)
    assert info.value.actual == compute_plan_token(tampered)
    assert wf.state == "failed" and wf.record.failure_reason == "plan_token_mismatch"
    verified = [r for r in read_wal(wal.path).records if r["entry_type"] == "plan_token_verified"]
    assert verified[-1]["data"]["ok"] is False
    assert any(e.event_type == "plan_token_verification" and e.outcome == "mismatch" for e in wf.audit_events)


def test_action_error_fails_the_workflow(wal: WalWriter) -> None:
    wf = _start(wal)
    wf.record_policy(_evaluation("allow"))

    def boom() -> dict[str, Any]:
        raise RuntimeError("engine crashed")

    with pytest.raises(RuntimeError):
        wf.run_take_off(PLAN, boom)
    assert wf.state == "failed" and wf.record.failure_reason == "take_off_error"


def test_out_of_order_calls_write_nothing(wal: WalWriter) -> None:
    wf = _start(wal)
    n = len(read_wal(wal.path).records)
    with pytest.raises(WorkflowTransitionError):
        wf.complete()
    with pytest.raises(WorkflowTransitionError):
        wf.request_approval(what="w", why="y", risk="r")
    with pytest.raises(WorkflowTransitionError):
        wf.complete_take_off({})
    assert len(read_wal(wal.path).records) == n


def test_duplicate_workflow_id_is_refused(wal: WalWriter) -> None:
    _start(wal)
    with pytest.raises(WorkflowTransitionError, match="already used"):
        _start(wal)


def test_audit_sink_gets_every_transition(wal: WalWriter) -> None:
    got: list[AuditEvent] = []
    wf = _start(wal, audit_sink=got.append)
    wf.record_policy(_evaluation("allow"))
    wf.run_take_off(PLAN, dict)
    assert len(got) == len(_types(wal)) == len(wf.audit_events)
    assert [e.wal_seq for e in got] == [r["seq"] for r in read_wal(wal.path).records]


# ---- replay and restart ------------------------------------------------------------------------


def test_replay_rebuilds_the_same_state_for_interleaved_workflows(wal: WalWriter) -> None:
    a, b = _start(wal, "a"), _start(wal, "b", plan={"x": 1})
    a.record_policy(_evaluation("require_approval"))
    b.record_policy(_evaluation("allow"))
    req = a.request_approval(what="w", why="y", risk="r")
    b.run_take_off({"x": 1}, lambda: {"ok": True})
    a.record_approval(_respond(req.plan_token, "approve"))
    states = replay_workflows(wal.path)
    assert states == {"a": a.record, "b": b.record}
    assert states["a"].state == "cleared" and states["b"].state == "completed"


def test_pending_approval_stays_pending_after_restart(tmp_path: Path) -> None:
    path = tmp_path / "wf.jsonl"
    with WalWriter(path, fsync=False) as w:
        wf = _start(w)
        wf.record_policy(_evaluation("require_approval"))
        req = wf.request_approval(what="w", why="y", risk="r")
    with WalWriter(path, fsync=False) as w:
        again = Workflow.resume(w, "wf-1", clock=FakeClock())
        assert again.state == "awaiting_approval"
        assert again.pending_request == req
        with pytest.raises(WorkflowTransitionError):
            again.take_off(PLAN)  # never auto-approved
        again.record_approval(_respond(req.plan_token, "approve"))
        again.run_take_off(PLAN, dict)
        assert again.state == "completed"


def test_resume_continues_from_the_last_completed_step(tmp_path: Path) -> None:
    path = tmp_path / "wf.jsonl"
    with WalWriter(path, fsync=False) as w:
        wf = _start(w)
        wf.record_policy(_evaluation("allow"))
    with WalWriter(path, fsync=False) as w:
        again = Workflow.resume(w, "wf-1")
        assert again.state == "cleared" and again.record.pending_steps == ["take_off", "audit", "completion"]
        again.run_take_off(PLAN, dict)


def test_broken_chain_halts_with_an_audit_event(tmp_path: Path) -> None:
    path = tmp_path / "wf.jsonl"
    with WalWriter(path, fsync=False) as w:
        _start(w).record_policy(_evaluation("require_approval"))
    lines = path.read_bytes().splitlines(keepends=True)
    rec = json.loads(lines[1])
    rec["data"]["mode"] = "take-off"  # edit history
    lines[1] = json.dumps(rec, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    events: list[AuditEvent] = []
    with WalWriter(path, fsync=False) as w, pytest.raises(WalCorruptError) as info:
        Workflow.resume(w, "wf-1", audit_sink=events.append)
    assert info.value.seq == 2
    assert [e.event_type for e in events] == ["workflow_halt", "workflow_failure"]
    last = read_wal(path).records[-1]
    assert last["entry_type"] == "workflow_failed" and last["data"]["reason"] == "wal_corrupt"


def test_inconsistent_entries_halt(tmp_path: Path) -> None:
    path = tmp_path / "wf.jsonl"
    with WalWriter(path, fsync=False) as w:
        w.append({"v": 1, "workflow_id": "x", "entry_type": "workflow_started", "data": {"plan_token": "sha256:0"}})
        w.append({"v": 1, "workflow_id": "x", "entry_type": "step_started", "data": {"step": "take_off"}})
    with WalWriter(path, fsync=False) as w, pytest.raises(WorkflowTransitionError):
        Workflow.resume(w, "x")
    assert read_wal(path).records[-1]["data"]["reason"] == "wal_inconsistent"


def test_stored_plan_that_no_longer_matches_its_token_halts(tmp_path: Path) -> None:
    path = tmp_path / "wf.jsonl"
    with WalWriter(path, fsync=False) as w:
        w.append({"v": 1, "workflow_id": "x", "entry_type": "workflow_started",
                  "data": {"plan_token": compute_plan_token({"a": 1}), "plan": {"a": 2}}})
        w.append({"v": 1, "workflow_id": "x", "entry_type": "step_started", "data": {"step": "flight_plan"}})
        w.append({"v": 1, "workflow_id": "x", "entry_type": "step_completed", "data": {"step": "flight_plan"}})
    with WalWriter(path, fsync=False) as w, pytest.raises(PlanTokenMismatchError):
        Workflow.resume(w, "x")


def test_changed_artifact_halts_on_resume(tmp_path: Path) -> None:
    ws = create_workspace(tmp_path / "ws", "task-1")
    (ws.artifacts_dir / "capture.pcap").write_bytes(b"\xd4\xc3\xb2\xa1" + b"\0" * 20)
    art = register_artifact(ws, "capture.pcap", "evidence", now=NOW)
    path = tmp_path / "wf.jsonl"
    plan = {"steps": ["analyse"], "artifacts": [art.sha256]}
    with WalWriter(path, fsync=False) as w:
        _start(w, plan=plan, artifacts=[art]).record_policy(_evaluation("allow"))
    with WalWriter(path, fsync=False) as w:
        assert Workflow.resume(w, "wf-1", workspace=ws).state == "cleared"
    (ws.artifacts_dir / "capture.pcap").write_bytes(b"tampered")
    with WalWriter(path, fsync=False) as w, pytest.raises(ArtifactError):
        Workflow.resume(w, "wf-1", workspace=ws)
    assert replay_workflows(path)["wf-1"].failure_reason == "artifact_invalid"


def test_written_ahead_denial_is_finished_after_restart(tmp_path: Path) -> None:
    path = tmp_path / "wf.jsonl"
    with WalWriter(path, fsync=False) as w:
        wf = _start(w)
        # simulate a crash between policy_evaluated(deny) and workflow_failed
        w.append({"v": 1, "workflow_id": "wf-1", "entry_type": "policy_evaluated",
                  "data": {"evaluation": _evaluation("deny").model_dump(mode="json")}})
    assert replay_workflows(path)["wf-1"].state == "denied"
    with WalWriter(path, fsync=False) as w:
        assert Workflow.resume(w, "wf-1").state == "failed"
    assert wf.workflow_id == "wf-1"


def test_audit_stage_catches_an_invalid_artifact(tmp_path: Path) -> None:
    ws = create_workspace(tmp_path / "ws", "t")
    with WalWriter(tmp_path / "wf.jsonl", fsync=False) as w:
        wf = _start(w)
        wf.record_policy(_evaluation("allow"))
        wf.take_off(PLAN)
        (ws.artifacts_dir / "out.txt").write_text("result")
        wf.record_artifact(register_artifact(ws, "out.txt", "log", now=NOW))
        (ws.artifacts_dir / "out.txt").write_text("changed")
        wf.complete_take_off({})
        with pytest.raises(ArtifactError):
            wf.audit(ws)
        assert wf.state == "failed" and wf.record.failure_reason == "artifact_invalid"


# ---- the table itself --------------------------------------------------------------------------

_EVENTS: list[tuple[str, dict[str, Any]]] = [
    ("workflow_started", {"plan_token": compute_plan_token(PLAN), "plan": PLAN}),
    ("step_started", {"step": "flight_plan"}),
    ("step_completed", {"step": "flight_plan"}),
    ("policy_evaluated", {"evaluation": _evaluation("allow").model_dump(mode="json")}),
    ("policy_evaluated", {"evaluation": _evaluation("require_approval").model_dump(mode="json")}),
    ("approval_requested", {"request": {"plan_token": compute_plan_token(PLAN), "what": "w", "why": "y",
                                        "risk": "r", "requested_at": NOW.isoformat()}}),
    ("approval_received", {"response": {"plan_token": compute_plan_token(PLAN), "decision": "approve",
                                        "decided_at": NOW.isoformat()}}),
    ("plan_token_verified", {"ok": True, "expected": compute_plan_token(PLAN), "actual": compute_plan_token(PLAN)}),
    ("step_started", {"step": "take_off"}),
    ("step_completed", {"step": "take_off"}),
    ("step_started", {"step": "audit"}),
    ("step_completed", {"step": "audit"}),
    ("workflow_completed", {}),
    ("workflow_failed", {"reason": "x"}),
]


def _entry(i: int, seq: int) -> WalEntry:
    etype, data = _EVENTS[i]
    return WalEntry.model_validate({"workflow_id": "w", "entry_type": etype, "data": data, "seq": seq,
                                    "ts": NOW.isoformat(), "prev_sha256": None, "sha256": "sha256:x"})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(_EVENTS) - 1), max_size=30))
def test_no_sequence_of_events_can_skip_a_stage(choices: list[int]) -> None:
    """Whatever events arrive, a completed workflow went through every stage in order."""
    record = None
    for seq, i in enumerate(choices, start=1):
        try:
            record = step(record, _entry(i, seq))
        except WorkflowTransitionError:
            continue
        assert record.state in TRANSITIONS
        if record.state == "completed":
            steps = record.completed_steps
            expected = ["flight_plan", "preflight", "take_off", "audit", "completion"]
            if any(p.outcome == "require_approval" for p in record.policy_results):
                expected.insert(2, "approval")
            assert steps == expected
            assert record.token_verified


def test_every_state_has_a_row_and_terminal_states_have_no_exit() -> None:
    assert TRANSITIONS["completed"] == {} and TRANSITIONS["failed"] == {}
    for state, moves in TRANSITIONS.items():
        if state not in (None, "completed", "failed"):
            assert moves[("workflow_failed", None)] == "failed"


def test_illegal_entries_never_reach_the_wal(wal: WalWriter) -> None:
    wf = _start(wal)
    wf.record_policy(_evaluation("require_approval"))
    req = wf.request_approval(what="w", why="y", risk="r")
    n = len(read_wal(wal.path).records)
    with pytest.raises(WorkflowTransitionError, match="modified plan"):
        wf.record_approval(_respond(req.plan_token, "modify"))  # modify without the modified plan
    assert len(read_wal(wal.path).records) == n and wf.state == "awaiting_approval"
    assert replay_workflows(wal.path)["wf-1"] == wf.record


def test_corrupt_wal_halts_a_finished_workflow_without_an_illegal_entry(tmp_path: Path) -> None:
    path = tmp_path / "wf.jsonl"
    with WalWriter(path, fsync=False) as w:
        wf = _start(w)
        wf.record_policy(_evaluation("allow"))
        wf.run_take_off(PLAN, dict)
    lines = path.read_bytes().splitlines(keepends=True)
    del lines[3]
    path.write_bytes(b"".join(lines))
    n = len(read_wal(path).records)
    events: list[AuditEvent] = []
    with WalWriter(path, fsync=False) as w, pytest.raises(WalCorruptError):
        Workflow.resume(w, "wf-1", audit_sink=events.append)
    assert [e.event_type for e in events] == ["workflow_halt"]
    assert len(read_wal(path).records) == n


def test_plan_can_stay_out_of_the_wal_and_still_binds(tmp_path: Path) -> None:
    path = tmp_path / "wf.jsonl"
    secret_plan = {"argv": ["az", "keyvault", "secret", "set", "--value", "hunter2"]}
    with WalWriter(path, fsync=False) as w:
        wf = Workflow.start(w, secret_plan, workflow_id="s", record_plan=False)
        wf.record_policy(_evaluation("allow"))
    assert "hunter2" not in path.read_text()
    with WalWriter(path, fsync=False) as w:
        again = Workflow.resume(w, "s")
        assert again.record.plan is None and again.record.plan_token == compute_plan_token(secret_plan)
        with pytest.raises(PlanTokenMismatchError):
            again.take_off(dict(secret_plan, argv=["az", "keyvault", "secret", "delete"]))
