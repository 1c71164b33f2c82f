"""Seed 000 "Dual-End Capture Orchestration" and the paired edge-case rows, against the lab world."""

from __future__ import annotations

from pathlib import Path

import pytest

from netghost.governance import file_sha256, open_workspace, validate_artifacts, verify
from netghost.lab.world import CloudFaultSpec
from netghost.shell import HitlDecision

from .conftest import Lab, make_lab, request

PAIR = "web-vm-01 to redis-primary"


def _check(orch, task_id: str) -> dict:  # type: ignore[no-untyped-def]
    return orch.orchestrate({"intent": "check_task", "task_id": task_id})


def test_dual_end_two_linked_tasks_each_with_its_own_hitl_cycle(lab: Lab) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request(target=PAIR))
    a, b = first["task_id"], first["paired_task"]["task_id"]
    assert a.startswith("ghost_web-vm-01_") and b.startswith("ghost_redis-primary_")
    assert orch.rt.registry.get(a).paired_task_id == b and orch.rt.registry.get(b).paired_task_id == a  # type: ignore[union-attr]
    assert first["paired_task"]["state"] == "PROVISIONING" and sorted(lab.captures()) == sorted([a, b])
    assert len(lab.hitl.asked) == 2 and all("packet-capture create" in p for p in lab.hitl.asked)


def test_dual_end_rule3_completed_end_waits_for_partner_paired_status_in_response(lab: Lab) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request(target=PAIR))
    lab.clock.advance(65)
    a = _check(orch, first["task_id"])
    assert (a["status"], a["state"]) == ("task_pending", "COMPLETED")
    assert a["paired_task"] == {"task_id": first["paired_task"]["task_id"], "state": "PROVISIONING", "poll_count": 0}
    assert "Waiting for the paired capture (redis-primary)" in a["message"] and "result" not in a
    assert orch.rt.registry.get(first["task_id"]).report_path is None  # type: ignore[union-attr]  analysis deferred


def test_dual_end_rule4_both_completed_compare_analysis_report_in_both_tasks(lab: Lab) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request(target=PAIR))
    a_id, b_id = first["task_id"], first["paired_task"]["task_id"]
    lab.clock.advance(65)
    _check(orch, a_id)
    b = _check(orch, b_id)
    a = _check(orch, a_id)
    assert b["status"] == a["status"] == "task_completed"
    assert b["result"]["mode"] == a["result"]["mode"] == "compare"
    assert a["result"]["report_path"] == b["result"]["report_path"]  # rule 6
    assert Path(a["result"]["report_path"]).is_file() and "_vs_" in Path(a["result"]["report_path"]).name
    engine = [c for c in lab.shell.calls if c.startswith("pcap-forensics")]
    assert len(engine) == 1 and "--compare" in engine[0]
    assert len(lab.hitl.asked) == 4  # seed: 4 critical-path interruptions (2 per target)


def test_paired_task_one_fails_other_completed_single_end_fallback(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="capture-error", vm="redis-primary", error="CaptureFailed", delay_s=5))
    orch = lab.orchestrator()
    first = orch.orchestrate(request(target=PAIR))
    a_id, b_id = first["task_id"], first["paired_task"]["task_id"]
    lab.clock.advance(65)
    assert _check(orch, a_id)["status"] == "task_pending"
    b = _check(orch, b_id)
    assert b["status"] == "task_failed" and b["cleanup_status"] == "completed"
    a = _check(orch, a_id)
    assert a["status"] == "task_completed" and a["result"]["mode"] == "single_end_fallback"
    assert "CaptureFailed" in a["paired_task"]["error_detail"]
    assert Path(a["result"]["report_path"]).is_file()
    assert not any("--compare" in c for c in lab.shell.calls)


def test_paired_task_partner_create_denied_fallback_without_manual_step(lab: Lab) -> None:
    lab.hitl.script["--vm redis-primary"] = HitlDecision.deny("not that one")
    orch = lab.orchestrator()
    first = orch.orchestrate(request(target=PAIR))
    assert first["paired_task"]["state"] == "CANCELLED"
    lab.clock.advance(65)
    a = _check(orch, first["task_id"])
    assert a["status"] == "task_completed" and a["result"]["mode"] == "single_end_fallback"


def test_dual_end_rule7_cleanup_is_independent(lab: Lab) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request(target=PAIR))
    a_id, b_id = first["task_id"], first["paired_task"]["task_id"]
    lab.clock.advance(65)
    _check(orch, a_id)
    _check(orch, b_id)
    cleaned = orch.orchestrate({"intent": "cleanup_task", "task_id": a_id})
    assert (cleaned["state"], cleaned["cleanup_status"]) == ("DONE", "completed")
    assert lab.captures() == [b_id] and lab.blobs() == [f"{b_id}.cap"]
    assert orch.rt.registry.get(b_id).state.value == "COMPLETED"  # type: ignore[union-attr]
    orch.orchestrate({"intent": "cleanup_task", "task_id": b_id})
    assert lab.captures() == [] and lab.blobs() == []


def test_concurrent_captures_on_the_same_vm_tracked_independently(lab: Lab) -> None:
    orch = lab.orchestrator()
    one = orch.orchestrate(request())
    two = orch.orchestrate(request())
    assert one["task_id"] != two["task_id"] and sorted(lab.captures()) == sorted([one["task_id"], two["task_id"]])


def _engine_calls(lab: Lab) -> list[str]:
    return [c for c in lab.shell.calls if c.startswith("pcap-forensics")]


@pytest.mark.parametrize("second", ["destination", "source"])
def test_comparison_reads_the_source_end_as_capture_A_whichever_end_finishes_second(lab: Lab, second: str) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request(target=PAIR))
    a_id, b_id = first["task_id"], first["paired_task"]["task_id"]
    lab.clock.advance(65)
    order = [a_id, b_id] if second == "destination" else [b_id, a_id]
    assert _check(orch, order[0])["status"] == "task_pending"  # downloaded, waits for its partner
    done = _check(orch, order[1])  # this end runs the comparison
    assert done["status"] == "task_completed" and done["result"]["mode"] == "compare", done
    (engine,) = _engine_calls(lab)
    args = engine.split()
    assert Path(args[1]).name == f"{a_id}.cap" and Path(args[args.index("--compare") + 1]).name == f"{b_id}.cap"
    report = Path(done["result"]["report_path"])
    assert report.name == f"{a_id}_vs_{b_id}_forensic_report.md" and report.is_file()
    other = _check(orch, order[0])
    assert other["result"]["report_path"] == str(report)  # rule 6: both tasks carry the comparison


def test_paired_status_shows_the_partners_outcome_after_its_cleanup(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="capture-error", vm="redis-primary", error="CaptureFailed", delay_s=5))
    orch = lab.orchestrator()
    first = orch.orchestrate(request(target=PAIR))
    a_id, b_id = first["task_id"], first["paired_task"]["task_id"]
    lab.clock.advance(65)
    _check(orch, b_id)
    assert orch.rt.registry.get(b_id).state.value == "DONE"  # type: ignore[union-attr]  cleaned up at once
    a = _check(orch, a_id)
    assert a["paired_task"]["state"] == "FAILED" and a["paired_task"]["cleanup_status"] == "completed"
    assert "CaptureFailed" in a["paired_task"]["error_detail"]
    assert a["message"] == ("Destination capture (redis-primary) failed. Single-end analysis completed on source "
                            "capture only. Azure stopReason: TimeExceeded.")


def test_paired_status_cancelled_partner_and_source_end_fallback_message(lab: Lab) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request(target=PAIR))
    a_id, b_id = first["task_id"], first["paired_task"]["task_id"]
    cancelled = orch.orchestrate({"intent": "cancel_task", "task_id": a_id})
    assert cancelled["state"] == "DONE" and cancelled["cleanup_status"] == "completed"
    lab.clock.advance(65)
    b = _check(orch, b_id)
    assert b["status"] == "task_completed" and b["result"]["mode"] == "single_end_fallback"
    assert b["paired_task"]["state"] == "CANCELLED" and "cancelled by the Brain" in b["paired_task"]["error_detail"]
    assert b["message"].startswith("Source capture (web-vm-01) was cancelled. Single-end analysis completed on "
                                   "destination capture only.")


def test_paired_status_timed_out_partner(lab: Lab) -> None:
    orch = lab.orchestrator(max_polls=1)
    first = orch.orchestrate(request(target=PAIR))
    a_id, b_id = first["task_id"], first["paired_task"]["task_id"]
    b = _check(orch, b_id)  # 0 s into a 60 s capture: one poll, Running, max_polls reached
    assert b["status"] == "task_timed_out" and b["state"] == "DONE"
    lab.clock.advance(65)
    a = _check(orch, a_id)
    assert a["result"]["mode"] == "single_end_fallback" and a["paired_task"]["state"] == "TIMED_OUT"
    assert "timed out" in a["message"]


@pytest.mark.slow
def test_full_dual_end_lifecycle_through_the_real_safe_exec_shell(tmp_path: Path, real_shell_factory) -> None:  # type: ignore[no-untyped-def]
    """Issue 11: both ends through a real SafeExecShell (one process per command) with a scripted human."""
    lab = make_lab(tmp_path)
    shell = real_shell_factory(lab)
    orch = lab.orchestrator(shell=shell, scan_azure_orphans=False)
    first = orch.orchestrate(request(target=PAIR))
    a_id, b_id = first["task_id"], first["paired_task"]["task_id"]
    assert (first["state"], first["paired_task"]["state"]) == ("PROVISIONING", "PROVISIONING"), first
    assert len(lab.hitl.asked) == 2  # one create per end
    lab.clock.advance(65)
    assert _check(orch, a_id)["status"] == "task_pending"  # downloaded; waits for the destination
    b = _check(orch, b_id)
    a = _check(orch, a_id)
    assert a["status"] == b["status"] == "task_completed", (a, b)
    assert len(lab.hitl.asked) == 4  # seed: 4 critical-path interruptions (2 per target)
    report = Path(a["result"]["report_path"])
    assert report == Path(b["result"]["report_path"]) and report.is_file()
    assert report.name == f"{a_id}_vs_{b_id}_forensic_report.md" and Path(a["result"]["semantic_json_path"]).is_file()
    for resp in (a, b):  # every registered artifact hashes to what the result says, and the workspace agrees
        record = orch.rt.registry.get(resp["task_id"])
        assert record is not None and record.workspace is not None
        workspace = open_workspace(Path(record.workspace).parent, record.task_id)
        assert validate_artifacts(workspace)
        for rel, digest in resp["result"]["artifact_hashes"].items():
            assert file_sha256(Path(record.workspace) / "artifacts" / rel) == digest, rel
    for task_id in (a_id, b_id):
        cleaned = orch.orchestrate({"intent": "cleanup_task", "task_id": task_id})
        assert (cleaned["state"], cleaned["cleanup_status"]) == ("DONE", "completed"), cleaned
    assert len(lab.hitl.asked) == 4 + 2 * 3  # one prompt per cleanup delete: capture, blob, local file
    assert not [c for c in lab.captures() if c.startswith("ghost_")]
    assert not [b for b in lab.blobs() if b.startswith("ghost_")]
    assert not list((lab.root / "captures").rglob("*.cap")) and report.is_file()  # deliverables stay
    assert verify(shell.audit_path).ok
    orch.close()
