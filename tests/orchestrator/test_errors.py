"""Seed 000 "Error Handling" rows answered as responses (never raised), and the registry's warnings."""

from __future__ import annotations

from netghost.lab.world import CloudFaultSpec

from .conftest import Lab, request


def test_unknown_intent(lab: Lab) -> None:
    resp = lab.orchestrator().orchestrate({"intent": "reboot_vm"})
    assert (resp["status"], resp["error"]) == ("error", "unknown_intent")


def test_unknown_task_id_in_check_task(lab: Lab) -> None:
    resp = lab.orchestrator().orchestrate({"intent": "check_task", "task_id": "ghost_nope_20250101T000000"})
    assert (resp["error"], resp["message"]) == ("unknown_task", "No task found with ID: ghost_nope_20250101T000000")


def test_brain_sends_capture_traffic_with_no_storage_account(lab: Lab) -> None:
    req = request()
    del req["parameters"]["storage_account"]
    resp = lab.orchestrator().orchestrate(req)
    assert (resp["error"], resp["message"]) == ("missing_parameter", "storage_account is required")


def test_duration_over_300_is_invalid_parameter(lab: Lab) -> None:
    resp = lab.orchestrator().orchestrate(request(duration_seconds=301))
    assert resp["error"] == "invalid_parameter" and lab.captures() == []


def test_non_existent_vm_DETECTING_to_FAILED_resource_not_found(lab: Lab) -> None:
    resp = lab.orchestrator().orchestrate(request(target="nope-vm"))
    assert (resp["status"], resp["failure_reason"], resp["cleanup_status"]) == (
        "task_failed", "target_not_found", "skipped")
    assert lab.hitl.asked == []


def test_network_watcher_not_enabled_in_region_named_with_fix(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="no-network-watcher", region="eastus"))
    resp = lab.orchestrator(scan_azure_orphans=False).orchestrate(request())
    assert resp["failure_reason"] == "network_watcher_not_enabled"
    assert "az network watcher configure" in resp["error_detail"] and lab.hitl.asked == []


def test_storage_inaccessible_DETECTING_to_FAILED_before_anything_exists(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="storage-auth-failure", account="forensicssa"))
    resp = lab.orchestrator().orchestrate(request())
    assert resp["failure_reason"] == "storage_auth_failed" and lab.captures() == []


def test_check_task_on_a_terminal_state_is_idempotent(lab: Lab) -> None:
    orch = lab.orchestrator()
    failed = orch.orchestrate(request(target="nope-vm"))
    again = orch.orchestrate({"intent": "check_task", "task_id": failed["task_id"]})
    cancel = orch.orchestrate({"intent": "cancel_task", "task_id": failed["task_id"]})
    assert again["state"] == cancel["state"] == "FAILED"


def test_task_registry_file_corrupted_line_skipped_with_a_named_warning(lab: Lab) -> None:
    orch = lab.orchestrator()
    task_id = orch.orchestrate(request())["task_id"]
    orch.close()
    path = orch.rt.registry.path
    with path.open("ab") as fh:
        fh.write(b"{not json}\n")
    again = lab.orchestrator()
    assert again.rt.registry.get(task_id) is not None
    assert any(f"{path} line" in w and "corrupt_line" in w for w in again.rt.registry.warnings)


def test_task_registry_file_not_writable_degrades_to_memory(lab: Lab) -> None:
    (lab.root / "audit").write_text("a file where the registry directory should be\n")  # root ignores chmod
    orch = lab.orchestrator()
    resp = orch.orchestrate(request())
    assert resp["state"] == "PROVISIONING" and not orch.rt.registry.durable
    assert any("memory only" in w for w in orch.rt.registry.warnings)
