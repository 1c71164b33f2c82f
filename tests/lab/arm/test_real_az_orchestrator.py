"""The Cloud Orchestrator driving the real azure-cli 2.91 over lab ARM: the capture lifecycle single and
dual-end (under the least-privilege role the README ships, enforced by lab ARM), every preflight stop
reason Azure's answers can cause (a role short of one action included), and orphans after a crash.

The orchestrator is the product's own (``netghost.orchestrator.CloudOrchestrator``) with a real Safe-Exec
Shell whose PATH finds the real ``az`` first (not the lab's shim: the lab ARM access log shows the
requests it made); the lab world plays Azure. Skipped with the reason when azure-cli is absent; failing
when ``NETGHOST_REAL_AZ`` names something that is not a working az.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from netghost.governance import read_wal, verify

from .differential import SHIPPED_ROLE, real_az
from .real import RealLab, real_lab

AZ = real_az()
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(AZ is None, reason="azure-cli (`az`) is not installed and NETGHOST_REAL_AZ is unset")]
SCALE_SET_WORLD = "worlds/scale-set-and-aks.yaml"
PAIR = "web-vm-01 to redis-primary"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert AZ is not None and Path(AZ).is_file(), f"NETGHOST_REAL_AZ={AZ} is not a file"
    return tmp_path_factory.mktemp("az-profile")


@pytest.fixture
def make(tmp_path: Path, template: Path) -> Iterator[Any]:
    labs: list[RealLab] = []

    def build(world: str = "nsg-deny", **kwargs: Any) -> RealLab:
        assert AZ is not None
        lab = real_lab(tmp_path / f"lab{len(labs)}", AZ, world, template=template, **kwargs)
        labs.append(lab)
        return lab

    yield build
    for lab in labs:
        lab.close()


def request(target: str = "web-vm-01", **params: Any) -> dict[str, Any]:
    parameters = {"duration_seconds": 60, "storage_account": "forensicssa", "resource_group": "prod-rg", **params}
    return {"intent": "capture_traffic", "target": target, "parameters": parameters,
            "investigation_context": "web-vm-01 cannot reach redis-primary:6379"}


def _check(orch: Any, task_id: str) -> dict[str, Any]:
    result: dict[str, Any] = orch.orchestrate({"intent": "check_task", "task_id": task_id})
    return result


def _real_az_ran(lab: RealLab, *fragments: str) -> None:
    served = lab.arm_requests()
    for fragment in fragments:
        assert any(fragment in line for line in served), f"lab ARM never served {fragment!r}"


def test_capture_lifecycle_single_end(make: Any) -> None:
    lab = make(role=ROLE)
    shell = lab.shell()
    orch = lab.orchestrator(shell=shell, scan_azure_orphans=False)
    first = orch.orchestrate(request())
    assert first["state"] == "PROVISIONING", first
    lab.state.advance_clock(65)
    done = _check(orch, first["task_id"])
    assert done["status"] == "task_completed", done
    assert Path(done["result"]["report_path"]).is_file()
    cleaned = orch.orchestrate({"intent": "cleanup_task", "task_id": first["task_id"]})
    assert cleaned["cleanup_status"] == "completed", cleaned
    assert lab.captures() == [] and lab.blobs() == []
    assert not Path(done["result"]["local_pcap_path"]).exists()
    assert len(lab.human.asked) == 5  # create, download, then one per cleanup delete: capture, blob, file
    assert verify(shell.audit_path).ok
    audited = [r for r in read_wal(shell.audit_path).records if str(r.get("command", "")).startswith("az ")]
    assert audited and all(r["status"] == "completed" for r in audited)
    _real_az_ran(lab, "PUT management.azure.com", "/packetCaptures/", "/queryStatus -> 202",
                 "GET forensicssa.blob.core.windows.net/captures/", "DELETE forensicssa.blob.core.windows.net",
                 "GET 169.254.169.254/metadata/identity/oauth2/token -> 200")
    orch.close()


def test_capture_lifecycle_dual_end(make: Any) -> None:
    lab = make(role=ROLE)
    orch = lab.orchestrator(scan_azure_orphans=False)
    first = orch.orchestrate(request(target=PAIR))
    a_id, b_id = first["task_id"], first["paired_task"]["task_id"]
    assert (first["state"], first["paired_task"]["state"]) == ("PROVISIONING", "PROVISIONING"), first
    lab.state.advance_clock(65)
    assert _check(orch, a_id)["status"] == "task_pending"  # downloaded; waits for the destination
    b = _check(orch, b_id)
    a = _check(orch, a_id)
    assert a["status"] == b["status"] == "task_completed", (a, b)
    report = Path(a["result"]["report_path"])
    assert report == Path(b["result"]["report_path"]) and report.name == f"{a_id}_vs_{b_id}_forensic_report.md"
    for task_id in (a_id, b_id):
        cleaned = orch.orchestrate({"intent": "cleanup_task", "task_id": task_id})
        assert (cleaned["state"], cleaned["cleanup_status"]) == ("DONE", "completed"), cleaned
    assert lab.captures() == [] and lab.blobs() == [] and report.is_file()
    orch.close()


ROLE: dict[str, Any] = json.loads(SHIPPED_ROLE.read_text())
"""The least-privilege role the README ships: the lifecycle runs under it."""


def _without(action: str) -> dict[str, Any]:
    """The shipped role less one action (an identity someone gave too little)."""
    return {**ROLE, "Actions": [a for a in ROLE["Actions"] if a != action]}


_WITHOUT_CAPTURE_WRITE = _without("Microsoft.Network/networkWatchers/packetCaptures/write")
_WITHOUT_EXTENSION_READ = _without("Microsoft.Compute/virtualMachines/extensions/read")
_STOP_REASONS: list[tuple[str, dict[str, Any], str]] = [
    ("target_not_found", {"req": {"target": "nope-vm"}}, "ResourceNotFound"),
    ("resource_group_not_found", {"req": {"resource_group": "missing-rg"}}, "ResourceGroupNotFound"),
    ("permission_denied", {"role": _WITHOUT_CAPTURE_WRITE}, "AuthorizationFailed"),
    ("detection_failed", {"role": _WITHOUT_EXTENSION_READ}, "AuthorizationFailed"),
    ("aks_not_supported", {"world": SCALE_SET_WORLD, "req": {"target": "aks-prod"}}, ""),
    ("vm_not_running", {"faults": [{"kind": "vm-stopped", "vm": "web-vm-01"}]}, "VM deallocated"),
    ("vmss_not_running", {"world": SCALE_SET_WORLD, "req": {"target": "web-vmss"},
                          "faults": [{"kind": "vm-stopped", "vm": f"web-vmss_{i}"} for i in range(3)]}, ""),
    ("extension_missing", {"faults": [{"kind": "extension-missing", "vm": "web-vm-01"}]}, ""),
    ("extension_not_provisioned", {"faults": [{"kind": "extension-failed", "vm": "web-vm-01"}]}, "Failed"),
    ("network_watcher_not_enabled", {"faults": [{"kind": "no-network-watcher", "region": "eastus"}]}, "eastus"),
    ("nsg_blocks_host_agent", {"faults": [{"kind": "wireserver-blocked", "vm": "web-vm-01"}]},
     "DenyWireServerOutbound"),
    ("storage_container_missing", {"faults": [{"kind": "container-missing", "account": "forensicssa",
                                               "container": "captures"}]}, "az storage container create"),
    ("storage_auth_failed", {"faults": [{"kind": "storage-auth-failure", "account": "forensicssa"}]},
     "You do not have the required permissions"),
    # a mistyped account has no Blob endpoint: the real CLI retries until the shell's timeout (the simulator
    # answers storage_not_found at once: limitation "mistyped-account-in-login-mode")
    ("storage_inaccessible", {"req": {"storage_account": "nosuchaccount"}}, ""),
    ("quota_exceeded", {"faults": [{"kind": "capture-quota", "region": "eastus", "limit": 0}]},
     "PacketCaptureQuotaExceeded"),
    ("create_failed", {"req": {"target": "fw-vm-01", "resource_group": "hub-rg"}}, "InvalidResourceReference"),
]
"""(stop reason, how to cause it: world, faults, role, request parameters; text its detail must hold)."""


@pytest.mark.parametrize(("reason", "setup", "detail"), _STOP_REASONS, ids=[r[0] for r in _STOP_REASONS])
def test_each_stop_reason_from_real_az_answers(make: Any, reason: str, setup: dict[str, Any], detail: str) -> None:
    lab = make(setup.get("world", "nsg-deny"), faults=setup.get("faults", ()), role=setup.get("role"))
    orch = lab.orchestrator(scan_azure_orphans=False)
    req = dict(setup.get("req", {}))
    target = req.pop("target", "web-vm-01")
    resp = orch.orchestrate(request(target, **req))
    assert (resp["status"], resp["state"], resp["failure_reason"]) == ("task_failed", "FAILED", reason), resp
    assert detail in (resp.get("error_detail") or "") + resp.get("message", ""), resp
    assert lab.captures() == []
    orch.close()


def test_a_capture_name_already_taken_is_a_named_conflict(make: Any) -> None:
    lab = make()
    taken = f"ghost_web-vm-01_{lab.state.clock().now_dt():%Y%m%dT%H%M%S}"  # the name the task will get
    made = subprocess.run([str(AZ), "network", "watcher", "packet-capture", "create", "-g", "prod-rg", "-n", taken,
                           "--vm", "web-vm-01", "--storage-account", "forensicssa", "--time-limit", "300", "-o", "none"],
                          env={**os.environ, **lab.env}, capture_output=True, text=True, timeout=180, check=False)
    assert made.returncode == 0, made.stderr
    resp = lab.orchestrator(scan_azure_orphans=False).orchestrate(request())
    assert (resp["state"], resp["failure_reason"]) == ("FAILED", "capture_name_conflict"), resp
    assert "PacketCaptureSessionAlreadyExists" in resp["error_detail"] and lab.captures() == [taken]


_CRASH = """
import json, os, signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.lab.arm.real import RealLab
from netghost.lab import LabState, Resident
root = Path(sys.argv[2]); env = json.loads(sys.argv[3]); path = sys.argv[4]
state = LabState(root / "lab")
lab = RealLab(root, state, Resident(state.root, True), path, env)
shell = lab.shell("crashed")
run = shell.execute
def execute(request):
    response = run(request)
    if "packet-capture create" in request["command"]:
        os.kill(os.getpid(), signal.SIGKILL)  # Azure made the capture; the session never heard
    return response
shell.execute = execute
lab.orchestrator("crashed", shell=shell, scan_azure_orphans=False).orchestrate(json.loads(sys.argv[5]))
"""


def test_a_capture_left_by_a_crashed_session_is_found_by_the_next_ones_orphan_scan(make: Any, tmp_path: Path) -> None:
    lab = make()
    root = Path(__file__).resolve().parents[3]
    child = subprocess.run([sys.executable, "-c", _CRASH, str(root), str(lab.root), json.dumps(lab.env), lab.path,
                            json.dumps(request())], capture_output=True, text=True, timeout=600, check=False)
    assert child.returncode == -signal.SIGKILL, child.stderr
    (left,) = lab.captures()
    tracked = lab.orchestrator("next", scan_azure_orphans=True).orchestrate({"intent": "list_tasks"})["orphans"]
    assert [(o["kind"], o["task_id"]) for o in tracked] == [("abandoned_task", left)], tracked
    other_dir = tmp_path / "elsewhere"  # a session that has no registry of it: only Azure knows
    orch = lab.orchestrator("fresh", task_dir=str(other_dir), scan_azure_orphans=True)
    untracked = orch.orchestrate({"intent": "list_tasks"})["orphans"]
    assert ("untracked_azure", left) in [(o["kind"], o["name"]) for o in untracked], untracked
    cleaned = orch.orchestrate({"intent": "cleanup_task", "task_id": left})
    assert cleaned["orphans"] == [] and lab.captures() == [], cleaned
    _real_az_ran(lab, "GET management.azure.com/subscriptions/", "/packetCaptures -> 200",
                 f"DELETE management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
                 f"NetworkWatcherRG/providers/Microsoft.Network/networkWatchers/NetworkWatcher_eastus/packetCaptures/{left}")
    orch.close()
    shutil.rmtree(other_dir, ignore_errors=True)
