"""Named DETECTING stop reasons, Azure-side failures at create and during the capture, cancel_task, and
the create whose outcome is unknown (seed 000 Error Handling / Edge Cases, issue 11 "Preflight")."""

from __future__ import annotations

import pytest

from netghost.lab.world import CloudFaultSpec

from .conftest import Lab, request


def _check(orch, task_id: str) -> dict:  # type: ignore[no-untyped-def]
    return orch.orchestrate({"intent": "check_task", "task_id": task_id})


def _creates(lab: Lab) -> list[str]:
    return [c for c in lab.shell.calls if "packet-capture create" in c]


# ---- DETECTING -> FAILED with a named reason and a fix; nothing created, nobody asked -------------

@pytest.mark.parametrize(("fault", "reason", "fix"), [
    ({"kind": "vm-stopped", "vm": "web-vm-01"}, "vm_not_running", "az vm start -g prod-rg -n web-vm-01"),
    ({"kind": "vm-stopped", "vm": "web-vm-01", "power_state": "stopped"}, "vm_not_running", "az vm start"),
    ({"kind": "extension-missing", "vm": "web-vm-01"}, "extension_missing", "az vm extension set"),
    ({"kind": "extension-failed", "vm": "web-vm-01"}, "extension_not_provisioned", "provisioningState Failed"),
    ({"kind": "wireserver-blocked", "vm": "web-vm-01"}, "nsg_blocks_host_agent", "DenyWireServerOutbound"),
    ({"kind": "container-missing", "account": "forensicssa", "container": "captures"}, "storage_container_missing",
     "az storage container create"),
    ({"kind": "storage-auth-failure", "account": "forensicssa"}, "storage_auth_failed", "storage_auth_mode='key'"),
    ({"kind": "no-network-watcher", "region": "eastus"}, "network_watcher_not_enabled",
     "az network watcher configure -g NetworkWatcherRG -l eastus"),
], ids=lambda v: v["kind"] if isinstance(v, dict) else None)
def test_DETECTING_to_FAILED_named_stop_reason_before_anything_exists(lab: Lab, fault: dict, reason: str,
                                                                       fix: str) -> None:
    lab.state.inject_fault(CloudFaultSpec.model_validate(fault))
    resp = lab.orchestrator(scan_azure_orphans=False).orchestrate(request())
    assert (resp["status"], resp["state"], resp["failure_reason"]) == ("task_failed", "FAILED", reason), resp
    assert fix in resp["error_detail"] and resp["cleanup_status"] == "skipped"
    assert lab.hitl.asked == [] and lab.captures() == [] and _creates(lab) == []


def test_resource_group_not_found_DETECTING_to_FAILED(lab: Lab) -> None:
    resp = lab.orchestrator().orchestrate(request(resource_group="missing-rg"))
    assert (resp["status"], resp["failure_reason"]) == ("task_failed", "resource_group_not_found")
    assert lab.captures() == []


def test_storage_key_mode_passes_when_login_is_refused(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="storage-auth-failure", account="forensicssa"))
    resp = lab.orchestrator().orchestrate(request(storage_auth_mode="key"))
    assert resp["state"] == "PROVISIONING", resp


@pytest.mark.parametrize("auth", ["login", "key"])
@pytest.mark.parametrize("account", ["forensicsas", "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
                                     "prod-rg/providers/Microsoft.Storage/storageAccounts/forensicsas"])
def test_a_mistyped_storage_account_is_storage_not_found_from_arm_before_its_data_plane(
        lab: Lab, auth: str, account: str) -> None:
    """Issue 24 bug 3: in login mode the data plane of an unknown account retries until the shell's timeout; ARM
    answers at once, so the account is resolved there first and the data plane is never asked."""
    resp = lab.orchestrator().orchestrate(request(storage_account=account, storage_auth_mode=auth))
    assert (resp["status"], resp["failure_reason"]) == ("task_failed", "storage_not_found"), resp
    assert "az storage account list" in resp["error_detail"] and "eastus" in resp["error_detail"]
    assert any("storage account show" in c for c in lab.shell.calls)
    assert not any("storage container exists" in c for c in lab.shell.calls) and lab.captures() == []


def test_an_account_arm_will_not_show_is_checked_on_its_data_plane(lab: Lab) -> None:
    """An identity with a data-plane role on the account only cannot read it through ARM: a warning, not a stop."""
    run = lab.shell._run

    def no_arm_read(argv: list[str]) -> tuple[int, str, str]:
        if argv[1:4] == ["storage", "account", "show"]:
            return 1, "", ("ERROR: (AuthorizationFailed) The client 'ghost@contoso.com' with object id '0' does not "
                           "have authorization to perform action 'Microsoft.Storage/storageAccounts/read' over scope "
                           "'/subscriptions/0/resourceGroups/prod-rg/providers/Microsoft.Storage/storageAccounts/"
                           "forensicssa' or the scope is invalid.\n")
        return run(argv)

    lab.shell._run = no_arm_read  # type: ignore[method-assign]
    resp = lab.orchestrator().orchestrate(request())
    assert resp["state"] == "PROVISIONING", resp
    assert any("storage container exists" in c for c in lab.shell.calls)


# ---- PROVISIONING -> FAILED (create exits non-zero): nothing to clean -----------------------------

def test_PROVISIONING_to_FAILED_capture_quota_exceeded(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="capture-quota", region="eastus", limit=0))
    resp = lab.orchestrator().orchestrate(request())
    assert (resp["status"], resp["failure_reason"]) == ("task_failed", "quota_exceeded"), resp
    assert resp["cleanup_status"] == "skipped" and lab.captures() == []


def test_PROVISIONING_to_WAITING_azure_returns_provisioning_id_storage_path_read_back(lab: Lab) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    record = orch.rt.registry.get(first["task_id"])
    assert record is not None and record.storage_path.endswith(f"/captures/{first['task_id']}.cap")
    assert record.location == "eastus" and record.vm_id.endswith("/virtualMachines/web-vm-01")
    assert _check(orch, first["task_id"])["state"] == "WAITING"


# ---- early stop, the agent stopping mid-capture ----------------------------------------------

def test_capture_stops_early_stop_reason_in_response_and_result(lab: Lab) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="capture-early-stop", vm="web-vm-01", delay_s=20))
    orch = lab.orchestrator()
    first = orch.orchestrate(request(duration_seconds=120))
    lab.clock.advance(25)
    resp = _check(orch, first["task_id"])
    assert resp["status"] == "task_completed", resp
    assert resp["result"]["stop_reason"] == "BytesExceeded" and "stopReason: BytesExceeded" in resp["message"]
    assert orch.rt.registry.get(first["task_id"]).stop_reason == "BytesExceeded"  # type: ignore[union-attr]


def test_WAITING_to_FAILED_vm_stopped_during_capture_agent_stopped(lab: Lab) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request(duration_seconds=120))
    lab.clock.advance(10)
    lab.state.inject_fault(CloudFaultSpec(kind="vm-stopped", vm="web-vm-01"))
    resp = _check(orch, first["task_id"])
    assert resp["status"] == "task_failed" and "AgentStopped" in resp["error_detail"], resp
    assert resp["cleanup_status"] == "completed" and lab.captures() == []


# ---- the create whose outcome is unknown: show first, never a second capture ---------------------

@pytest.mark.parametrize("message", [None, "HTTPSConnectionPool: Read timed out. (read timeout=60)"])
def test_create_unknown_outcome_asks_azure_and_adopts_never_creates_twice(lab: Lab, message: str | None) -> None:
    lab.state.inject_fault(CloudFaultSpec(kind="create-unknown-outcome", count=1, message=message))
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    assert first["state"] == "PROVISIONING", first
    assert len(_creates(lab)) == 1 and lab.captures() == [first["task_id"]]
    shows = [c for c in lab.shell.calls if "packet-capture show " in c]
    assert shows and lab.shell.calls.index(shows[0]) > lab.shell.calls.index(_creates(lab)[0])
    lab.clock.advance(65)
    assert _check(orch, first["task_id"])["status"] == "task_completed"
    assert len(_creates(lab)) == 1


# ---- cancel_task ------------------------------------------------------------------------------

@pytest.mark.parametrize("when", ["PROVISIONING", "WAITING"])
def test_cancel_task_on_an_active_task_cleans_what_exists(lab: Lab, when: str) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request(duration_seconds=300))
    if when == "WAITING":
        assert _check(orch, first["task_id"])["state"] == "WAITING"
    resp = orch.orchestrate({"intent": "cancel_task", "task_id": first["task_id"], "reason": "hypothesis refuted"})
    assert (resp["status"], resp["state"], resp["cleanup_status"]) == ("task_cancelled", "DONE", "completed"), resp
    assert "hypothesis refuted" in resp["error_detail"] and lab.captures() == [] and lab.blobs() == []


def test_cancel_task_on_a_completed_task_points_to_cleanup(lab: Lab) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    _check(orch, first["task_id"])
    resp = orch.orchestrate({"intent": "cancel_task", "task_id": first["task_id"]})
    assert resp["state"] == "COMPLETED" and "cleanup_task" in resp["message"]


def test_user_denies_create_CANCELLED_no_resources_no_cleanup_needed(lab: Lab) -> None:
    from netghost.shell import HitlDecision

    lab.hitl.script["packet-capture create"] = HitlDecision.deny()
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    resp = orch.orchestrate({"intent": "cleanup_task", "task_id": first["task_id"]})
    assert resp["state"] == "CANCELLED" and resp["message"] == "Nothing left to clean up."
    assert len(lab.hitl.asked) == 1


def test_nsg_check_survives_a_rule_list_the_shell_truncated() -> None:
    from netghost.orchestrator._preflight import blocking_rule

    deny = {"name": "securityRules/DenyWire", "direction": "Outbound", "access": "Deny", "priority": 100,
            "protocol": "All", "destinationAddressPrefix": "168.63.129.16/32", "destinationPortRange": "0-65535"}
    truncated = {"value": [{"effectiveSecurityRules": [deny, "... 12 more items"]}, "... 1 more item"]}
    assert blocking_rule(truncated) == "securityRules/DenyWire"
    assert blocking_rule({"value": ["... 3 more items"]}) is None
