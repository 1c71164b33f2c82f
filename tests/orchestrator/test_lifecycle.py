"""Single-end lifecycle against the lab world: capture_traffic -> check_task -> COMPLETED -> cleanup."""

from __future__ import annotations

from pathlib import Path

import pytest

from netghost.governance import file_sha256, read_wal, verify
from netghost.lab.world import CloudFaultSpec
from netghost.shell import HitlDecision

from .conftest import Lab, make_lab, request


def _check(orch, task_id: str) -> dict:  # type: ignore[no-untyped-def]
    return orch.orchestrate({"intent": "check_task", "task_id": task_id})


def test_full_lifecycle_in_process_prompts_hashes_and_nothing_left(lab: Lab) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    assert (first["status"], first["state"]) == ("task_pending", "PROVISIONING")
    lab.clock.advance(65)
    done = _check(orch, first["task_id"])
    assert (done["status"], done["state"]) == ("task_completed", "COMPLETED")
    result = done["result"]
    for path_key in ("local_pcap_path", "semantic_json_path", "report_path"):
        assert Path(result[path_key]).is_file()
    assert result["stop_reason"] == "TimeExceeded"
    pcap = Path(result["local_pcap_path"])
    assert result["artifact_hashes"][pcap.name] == file_sha256(pcap)
    assert len(lab.hitl.asked) == 2  # create + download: the seed's critical path
    cleaned = orch.orchestrate({"intent": "cleanup_task", "task_id": first["task_id"]})
    assert (cleaned["state"], cleaned["cleanup_status"]) == ("DONE", "completed")
    assert len(lab.hitl.asked) == 2 + 3  # one per cleanup delete: capture, blob, local file
    assert lab.captures() == [] and lab.blobs() == []
    assert not pcap.exists() and Path(result["report_path"]).is_file()  # deliverables stay


@pytest.mark.slow
def test_full_lifecycle_through_the_real_safe_exec_shell(tmp_path: Path, real_shell_factory) -> None:  # type: ignore[no-untyped-def]
    lab = make_lab(tmp_path)
    shell = real_shell_factory(lab)
    orch = lab.orchestrator(shell=shell, scan_azure_orphans=False)
    first = orch.orchestrate(request())
    assert first["state"] == "PROVISIONING", first
    lab.clock.advance(65)
    done = _check(orch, first["task_id"])
    assert done["status"] == "task_completed", done
    assert Path(done["result"]["report_path"]).is_file()
    cleaned = orch.orchestrate({"intent": "cleanup_task", "task_id": first["task_id"]})
    assert cleaned["cleanup_status"] == "completed"
    assert len(lab.hitl.asked) == 5
    assert lab.captures() == [] and lab.blobs() == []
    assert not Path(done["result"]["local_pcap_path"]).exists()
    assert verify(shell.audit_path).ok
    records = read_wal(shell.audit_path).records
    audited = {r["audit_id"] for r in records}
    registry = read_wal(orch.rt.registry.path).records
    assert set(registry[-1]["shell_audit_ids"]) <= audited
    orch.close()


def test_burst_polling_backs_off_and_returns_pending_within_the_burst(lab: Lab) -> None:
    orch = lab.orchestrator(max_polls=20)
    first = orch.orchestrate(request(duration_seconds=300))
    pending = _check(orch, first["task_id"])
    assert (pending["status"], pending["state"]) == ("task_pending", "WAITING")
    assert lab.clock.slept == [5.0, 10.0, 20.0]  # 5+10+20 = 35 s; the next 30 s would pass the 45 s burst
    assert pending["poll_count"] == 4


def test_WAITING_to_TIMED_OUT_max_polls_exceeded_cleans_up(lab: Lab) -> None:
    orch = lab.orchestrator(max_polls=3)
    first = orch.orchestrate(request(duration_seconds=300))
    timed = _check(orch, first["task_id"])
    assert timed["status"] == "task_timed_out" and timed["cleanup_status"] == "completed"
    assert lab.captures() == []


def test_APPROVED_to_CANCELLED_user_denies_create(lab: Lab) -> None:
    lab.hitl.script["packet-capture create"] = HitlDecision.deny("not now")
    orch = lab.orchestrator()
    resp = orch.orchestrate(request())
    assert (resp["status"], resp["state"], resp["denied_action"]) == ("task_cancelled", "CANCELLED", "user_denied")
    assert resp["cleanup_status"] == "skipped" and lab.captures() == []


def test_DOWNLOADING_to_CANCELLED_user_denies_download_capture_still_cleaned(lab: Lab) -> None:
    lab.hitl.script["blob download"] = HitlDecision.deny()
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    resp = _check(orch, first["task_id"])
    assert resp["status"] == "task_cancelled" and resp["cleanup_status"] == "completed"
    assert lab.captures() == [] and lab.blobs() == []


def test_WAITING_to_FAILED_poll_returns_Error(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="capture-error", vm="web-vm-01", error="CaptureFailed", delay_s=5))
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(10)
    resp = _check(orch, first["task_id"])
    assert resp["status"] == "task_failed" and "CaptureFailed" in resp["error_detail"]
    assert resp["cleanup_status"] == "completed" and lab.captures() == []


def test_network_lost_during_polling_transient_failure_neither_advances_nor_fails(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="poll-transient", count=2))
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    resp = _check(orch, first["task_id"])
    assert resp["status"] == "task_completed"


def test_capture_completes_but_blob_not_yet_available_one_retry_after_5s(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="blob-late", delay_s=4))
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(61)
    resp = _check(orch, first["task_id"])
    assert resp["status"] == "task_completed", resp
    assert 5.0 in lab.clock.slept


def test_DOWNLOADING_to_FAILED_download_failed_after_retry(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="download-failure", count=2))
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    resp = _check(orch, first["task_id"])
    assert resp["status"] == "task_failed" and "attempt 2" in resp["error_detail"]
    assert lab.captures() == [] and lab.blobs() == []


def test_ANALYZING_to_FAILED_engine_error_cleans_cloud_and_local(lab: Lab) -> None:
    lab.shell.fail_engine = True
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    resp = _check(orch, first["task_id"])
    assert resp["status"] == "task_failed" and "PCAP Engine failed" in resp["error_detail"]
    assert lab.captures() == [] and lab.blobs() == []
    assert not list((lab.root / "captures").glob("*/artifacts/*.cap"))


def test_cleanup_denied_is_partial_and_warns(lab: Lab) -> None:
    lab.hitl.script["blob delete"] = HitlDecision.deny()
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    _check(orch, first["task_id"])
    resp = orch.orchestrate({"intent": "cleanup_task", "task_id": first["task_id"]})
    assert resp["cleanup_status"] == "partial" and lab.blobs() and lab.captures() == []
    console_text = orch.rt.say.__closure__[0].cell_contents.file.getvalue()  # type: ignore[union-attr]
    assert "may incur charges" in console_text
