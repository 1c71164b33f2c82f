"""A scale-set target (``--target-type AzureVMSS``): detected in DETECTING, one blob per instance
(``<storagePath minus .cap>_<instanceId>.cap``, found with ``blob list --prefix``), each downloaded,
hashed, analysed and cleaned."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from netghost.lab.world import CloudFaultSpec

from .conftest import Lab, make_lab, request

SCENARIOS = Path(__file__).resolve().parents[2] / "src" / "netghost" / "lab" / "scenarios"


def _vmss_world(tmp_path: Path, *, deny_host_agent: bool = False) -> Path:
    data = yaml.safe_load((SCENARIOS / "healthy.yaml").read_text())
    if deny_host_agent:  # the web subnet's NSG (the scale set's) denies the host agent outbound
        nsg = next(n for n in data["nsgs"] if n["name"] == "nsg-web")
        nsg["rules"].append({"name": "DenyWireServerOutbound", "priority": 150, "direction": "Outbound",
                             "access": "Deny", "protocol": "*", "destination_address_prefix": "168.63.129.16/32"})
    data["vm_scale_sets"] = [{"name": "web-vmss", "resource_group": "prod-rg"}]
    for index in range(3):
        data["vms"].append({"name": f"web-vmss_{index}", "resource_group": "prod-rg", "scale_set": "web-vmss",
                            "instance_id": str(index), "nics": [{"subnet": "vnet-prod/web",
                                                                 "private_ip": f"10.1.1.{10 + index}"}],
                            "services": [{"port": 443, "name": "nginx"}]})
    path = tmp_path / "vmss.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def vlab(tmp_path: Path) -> Lab:
    return make_lab(tmp_path, str(_vmss_world(tmp_path)))


def test_vmss_target_detected_created_with_target_type_one_blob_per_instance_cleaned(vlab: Lab) -> None:
    orch = vlab.orchestrator()
    first = orch.orchestrate(request(target="web-vmss"))
    assert first["state"] == "PROVISIONING", first
    record = orch.rt.registry.get(first["task_id"])
    assert record is not None and record.target_type == "vmss"
    create = next(c for c in vlab.shell.calls if "packet-capture create" in c)
    assert "--target-type AzureVMSS --target web-vmss" in create and "--vm " not in create
    vlab.clock.advance(65)
    done = orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})
    assert done["status"] == "task_completed", done
    task_id = first["task_id"]
    assert sorted(vlab.blobs()) == [f"{task_id}_{i}.cap" for i in range(3)]
    instances = [k for k in done["result"]["artifact_hashes"] if k.endswith(".cap")]
    assert sorted(instances) == [f"{task_id}_{i}.cap" for i in range(3)]
    assert Path(done["result"]["report_path"]).is_file()
    files = done["result"]["instance_pcap_paths"]
    assert [Path(f).name for f in files] == [f"{task_id}_{i}.cap" for i in range(3)]
    assert all(Path(f).is_file() for f in files) and done["result"]["local_pcap_path"] == files[0]
    engine = [c for c in vlab.shell.calls if c.startswith("pcap-forensics")]
    # the lead instance's own analysis, then one fleet run over every instance (each one's report inside it)
    assert len(engine) == 1 + 1 and f"{task_id}_0.cap" in engine[0] and " --fleet " in engine[-1]
    fleet_dir = Path(done["result"]["fleet_report_path"]).parent
    assert sorted(p.name for p in (fleet_dir / "captures").iterdir()) == [f"{task_id}_{i}.cap" for i in range(3)]
    fleet = [k for k in done["result"]["artifact_hashes"] if k.endswith("fleet_report.md")]
    assert len(fleet) == 1  # registered as evidence
    assert len(vlab.hitl.asked) == 1 + 3  # create + one download per instance; the local fleet run is SAFE
    report = done["result"]["fleet_report_path"]
    assert report is not None and report.endswith("fleet/fleet_report.md") and Path(report).is_file()
    summary = Path(done["result"]["report_path"].replace("_forensic_report.md", "_executive_summary.md"))
    text = summary.read_text(encoding="utf-8")
    assert "## Fleet: every instance compared" in text and f"- Fleet report: {report}" in text
    assert "3 instance captures, 3 analysed, 0 failed" in text
    # the summary was registered with the section in it: its evidence hash is of the final text
    assert "sha256:" + hashlib.sha256(summary.read_bytes()).hexdigest() in done["result"]["artifact_hashes"].values()
    cleaned = orch.orchestrate({"intent": "cleanup_task", "task_id": task_id})
    assert cleaned["cleanup_status"] == "completed", cleaned
    assert vlab.captures() == [] and vlab.blobs() == []
    assert not list(Path(record.local_pcap_path or "").parent.glob("*.cap"))


def test_vmss_stopped_instance_drops_out_of_the_capture(vlab: Lab) -> None:
    vlab.state.inject_fault(CloudFaultSpec(kind="vm-stopped", vm="web-vmss_1"))
    orch = vlab.orchestrator()
    first = orch.orchestrate(request(target="web-vmss"))
    vlab.clock.advance(65)
    done = orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})
    assert done["status"] == "task_completed", done
    assert sorted(vlab.blobs()) == [f"{first['task_id']}_{i}.cap" for i in (0, 2)]


def test_neither_vm_nor_scale_set_is_target_not_found(vlab: Lab) -> None:
    resp = vlab.orchestrator().orchestrate(request(target="web-vmsx"))
    assert resp["failure_reason"] == "target_not_found" and vlab.captures() == []


def test_vmss_detecting_checks_instance_power_states_and_the_subnet_nsg(vlab: Lab) -> None:
    vlab.orchestrator().orchestrate(request(target="web-vmss"))
    calls = vlab.shell.calls
    assert any("vmss list-instances -g prod-rg -n web-vmss --expand instanceView" in c for c in calls)
    assert any("network vnet subnet show --ids" in c and "/subnets/web" in c for c in calls)
    assert any("network nsg show --ids" in c and "/networkSecurityGroups/nsg-web" in c for c in calls)


def test_vmss_every_instance_stopped_is_vmss_not_running_before_anything_exists(vlab: Lab) -> None:
    for index in range(3):
        vlab.state.inject_fault(CloudFaultSpec(kind="vm-stopped", vm=f"web-vmss_{index}"))
    resp = vlab.orchestrator().orchestrate(request(target="web-vmss"))
    assert (resp["status"], resp["failure_reason"]) == ("task_failed", "vmss_not_running"), resp
    assert "az vmss start -g prod-rg -n web-vmss" in resp["error_detail"] and vlab.captures() == []


def test_vmss_nsg_denying_the_host_agent_is_a_named_stop(tmp_path: Path) -> None:
    lab = make_lab(tmp_path, str(_vmss_world(tmp_path, deny_host_agent=True)))
    resp = lab.orchestrator().orchestrate(request(target="web-vmss"))
    assert (resp["status"], resp["failure_reason"]) == ("task_failed", "nsg_blocks_host_agent"), resp
    assert "DenyWireServerOutbound" in resp["error_detail"] and lab.captures() == [] and lab.hitl.asked == []


def test_without_a_fleet_run_each_instance_is_analysed_on_its_own(vlab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet run is optional: when it fails, every other instance gets its own analysis and the task
    still completes, with no fleet report and no fleet section in the lead summary."""
    from netghost.orchestrator import _commands

    monkeypatch.setattr(_commands, "engine_fleet", lambda engine, local, out: [*engine, "--fleet", "--no-such-option"])
    orch = vlab.orchestrator()
    first = orch.orchestrate(request(target="web-vmss"))
    vlab.clock.advance(65)
    done = orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})
    assert done["status"] == "task_completed", done
    task_id = first["task_id"]
    engine = [c for c in vlab.shell.calls if c.startswith("pcap-forensics")]
    runs = [c for c in engine if "--fleet" not in c]
    assert [any(f"{task_id}_{i}.cap" in c for c in runs) for i in range(3)] == [True, True, True]
    assert len(engine) == 3 + 1 and done["result"].get("fleet_report_path") is None
    summary = Path(done["result"]["report_path"].replace("_forensic_report.md", "_executive_summary.md"))
    assert "## Fleet" not in summary.read_text(encoding="utf-8")
