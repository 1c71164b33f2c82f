"""What the Cloud Orchestrator runs against the lab (issue 11): every command with its real syntax,
output shape, error text and exit code, scale-set captures, and the cloud faults its preflight names."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import netghost.lab as face
from netghost.errors import LabError
from netghost.lab.az._capture_store import EMPTY_PCAP
from netghost.lab.az._cloud_faults import STORAGE_RBAC_TEXT
from netghost.lab.world import SCENARIO_DIR, CloudFaultSpec

from .conftest import Lab

SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"
RG = f"{SUB}/resourceGroups/prod-rg/providers"
CREATE = ("network watcher packet-capture create -g prod-rg -n {name} --vm web-vm-01 --storage-account forensicssa "
          "--storage-path https://forensicssa.blob.core.windows.net/captures/{name}.cap --time-limit 60")
VMSS_CREATE = ("network watcher packet-capture create -g prod-rg -n {name} --target-type AzureVMSS --target web-vmss "
               "--storage-account forensicssa --storage-path https://forensicssa.blob.core.windows.net/captures/{name}.cap "
               "--time-limit 60")
STATUS = "network watcher packet-capture show-status -l eastus -n {name}"
LOGIN = "--account-name forensicssa --auth-mode login"
NOT_FOUND = ("ERROR: (ResourceNotFound) The Resource '{what}' under resource group 'prod-rg' was not found. For more "
             "details please go to https://aka.ms/ARMResourceNotFoundFix\nCode: ResourceNotFound\nMessage: The "
             "Resource '{what}' under resource group 'prod-rg' was not found. For more details please go to "
             "https://aka.ms/ARMResourceNotFoundFix\n")


def _world_with_scale_set(tmp_path: Path) -> Path:
    """healthy, plus the scale set web-vmss (instances 0, 1, 2 in the web subnet) serving HTTPS and the
    AKS cluster aks-prod."""
    data = yaml.safe_load((SCENARIO_DIR / "healthy.yaml").read_text())
    data["aks_clusters"] = [{"name": "aks-prod", "resource_group": "prod-rg"}]
    data["vm_scale_sets"] = [{"name": "web-vmss", "resource_group": "prod-rg"}]
    for index in range(3):
        data["vms"].append({"name": f"web-vmss_{index}", "resource_group": "prod-rg", "scale_set": "web-vmss",
                            "instance_id": str(index), "nics": [{"subnet": "vnet-prod/web",
                                                                 "private_ip": f"10.1.1.{10 + index}"}],
                            "services": [{"port": 443, "name": "nginx"}]})
        data["traffic"].append({"name": f"internet-to-vmss{index}", "client": f"203.0.113.{20 + index}",
                                "server": f"web-vmss_{index}", "port": 443, "app": "https"})
    path = tmp_path / "vmss.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def lab(make_lab: Callable[..., Lab], tmp_path: Path) -> Lab:
    return make_lab(_world_with_scale_set(tmp_path))


def _inject(lab: Lab, **fields: object) -> None:
    lab.state.inject_fault(CloudFaultSpec.model_validate(fields))


def _status(lab: Lab, name: str) -> dict[str, object]:
    result = lab.az(STATUS.format(name=name))
    assert result.code == 0, result.err
    status: dict[str, object] = json.loads(result.out)
    return status


# ---- DETECTING -------------------------------------------------------------------------------

RESOURCE_IDS = [
    (f"{RG}/Microsoft.Compute/virtualMachines/web-vm-01", "Microsoft.Compute/virtualMachines"),
    (f"{RG}/Microsoft.Compute/virtualMachineScaleSets/web-vmss", "Microsoft.Compute/virtualMachineScaleSets"),
    (f"{RG}/Microsoft.Compute/virtualMachineScaleSets/web-vmss/virtualMachines/1",
     "Microsoft.Compute/virtualMachineScaleSets/virtualMachines"),
    (f"{RG}/Microsoft.Network/networkInterfaces/web-vm-01VMNic", "Microsoft.Network/networkInterfaces"),
    (f"{RG}/Microsoft.Network/networkSecurityGroups/nsg-web", "Microsoft.Network/networkSecurityGroups"),
    (f"{RG}/Microsoft.Network/virtualNetworks/vnet-prod", "Microsoft.Network/virtualNetworks"),
    (f"{RG}/Microsoft.Network/virtualNetworks/vnet-prod/subnets/web", "Microsoft.Network/virtualNetworks/subnets"),
    (f"{RG}/Microsoft.Network/routeTables/rt-web", "Microsoft.Network/routeTables"),
    (f"{RG}/Microsoft.Storage/storageAccounts/forensicssa", "Microsoft.Storage/storageAccounts"),
    (f"{SUB}/resourceGroups/NetworkWatcherRG/providers/Microsoft.Network/networkWatchers/NetworkWatcher_eastus",
     "Microsoft.Network/networkWatchers"),
    (f"{RG}/Microsoft.Network/privateDnsZones/prod.internal", "Microsoft.Network/privateDnsZones"),
    (f"{RG}/Microsoft.ContainerService/managedClusters/aks-prod", "Microsoft.ContainerService/ManagedClusters"),
]


@pytest.mark.parametrize(("rid", "rtype"), RESOURCE_IDS, ids=[t for _, t in RESOURCE_IDS])
def test_resource_show_ids_type_for_every_kind(lab: Lab, rid: str, rtype: str) -> None:
    result = lab.az(f"resource show --ids {rid} --query type -o tsv")
    assert (result.code, result.out, result.err) == (0, f"{rtype}\n", "")
    doc = json.loads(lab.az(f"resource show --ids {rid}").out)
    assert doc["id"] == rid
    assert isinstance(doc["properties"], dict)


@pytest.mark.parametrize(("rid", "what"), [
    (f"{RG}/Microsoft.Network/virtualNetworks/vnet-prod/subnets/nope", "Microsoft.Network/virtualNetworks/vnet-prod/subnets/nope"),
    (f"{RG}/Microsoft.Compute/virtualMachineScaleSets/nope", "Microsoft.Compute/virtualMachineScaleSets/nope"),
    (f"{RG}/Microsoft.Compute/virtualMachines/web-vmss_0", "Microsoft.Compute/virtualMachines/web-vmss_0"),
    (f"{RG}/Microsoft.ContainerService/managedClusters/nope", "Microsoft.ContainerService/managedClusters/nope"),
])
def test_resource_show_missing_kinds_exit_3(lab: Lab, rid: str, what: str) -> None:
    result = lab.az(f"resource show --ids {rid} --query type -o tsv")
    assert (result.code, result.out, result.err) == (3, "", NOT_FOUND.format(what=what))


def test_resource_show_a_child_by_parent(lab: Lab) -> None:
    result = lab.az("resource show -g prod-rg -n web --parent virtualNetworks/vnet-prod "
                    "--resource-type Microsoft.Network/subnets --query id -o tsv")
    assert result.out == f"{RG}/Microsoft.Network/virtualNetworks/vnet-prod/subnets/web\n"


def test_aks_cluster_show_and_what_a_vm_lookup_says_of_it(lab: Lab) -> None:
    """An AKS cluster answers ``aks show`` (name or id); ``vm show``/``vmss show`` of its name are 404s."""
    rid = f"{RG}/Microsoft.ContainerService/managedClusters/aks-prod"
    shown = lab.az('aks show -g prod-rg -n aks-prod --query "{id:id, location:location}" -o tsv')
    assert (shown.code, shown.out, shown.err) == (0, f"{rid}\teastus\n", "")
    doc = json.loads(lab.az(f"aks show --ids {rid}").out)
    assert (doc["type"], doc["provisioningState"], doc["agentPoolProfiles"][0]["count"]) == (
        "Microsoft.ContainerService/ManagedClusters", "Succeeded", 3)
    missing = lab.az("aks show -g prod-rg -n nope")
    assert (missing.code, missing.err) == (3, NOT_FOUND.format(what="Microsoft.ContainerService/managedClusters/nope"))
    assert lab.az("aks show -g nope-rg -n aks-prod").err.startswith("ERROR: (ResourceGroupNotFound) ")
    assert lab.az("aks show -n aks-prod").code == 2
    assert lab.az("vm show -g prod-rg -n aks-prod").code == 3
    assert lab.az("vmss show -g prod-rg -n aks-prod").code == 3


def test_vm_id_location_and_power_state(lab: Lab) -> None:
    assert lab.az('vm show -g prod-rg -n web-vm-01 --query "{id:id, location:location}" -o tsv').out == \
        f"{RG}/Microsoft.Compute/virtualMachines/web-vm-01\teastus\n"
    assert lab.az("vm show -g prod-rg -n web-vm-01 -d --query powerState -o tsv").out == "VM running\n"
    _inject(lab, kind="vm-stopped", vm="web-vm-01", power_state="deallocated")
    assert lab.az("vm show -g prod-rg -n web-vm-01 --show-details --query powerState -o tsv").out == "VM deallocated\n"
    view = lab.az("vm get-instance-view -g prod-rg -n web-vm-01 "
                  "--query \"instanceView.statuses[?starts_with(code,'PowerState/')].code\" -o tsv")
    assert (view.code, view.out) == (0, "PowerState/deallocated\n")


def test_scale_set_instances_are_not_vms(lab: Lab) -> None:
    assert "web-vmss_0" not in lab.az("vm list -g prod-rg --query [].name -o tsv").out
    result = lab.az("vm show -g prod-rg -n web-vmss_0")
    assert (result.code, result.err) == (3, NOT_FOUND.format(what="Microsoft.Compute/virtualMachines/web-vmss_0"))
    shown = lab.az('vmss show -g prod-rg -n web-vmss --query "{id:id, location:location}" -o tsv')
    assert shown.out == f"{RG}/Microsoft.Compute/virtualMachineScaleSets/web-vmss\teastus\n"
    instances = lab.az("vmss list-instances -g prod-rg -n web-vmss --expand instanceView "
                       "--query \"[].[instanceId, instanceView.statuses[1].code]\" -o tsv")
    assert instances.out == "0\tPowerState/running\n1\tPowerState/running\n2\tPowerState/running\n"
    assert lab.az("vmss extension list -g prod-rg --vmss-name web-vmss --query [].name -o tsv").out == \
        "NetworkWatcherAgentLinux\n"


EXT_QUERY = "vm extension list -g prod-rg --vm-name web-vm-01 --query \"[?publisher=='Microsoft.Azure.NetworkWatcher'].{name:name,state:provisioningState}\" -o tsv"
EXT_SHOW = "vm extension show -g prod-rg --vm-name web-vm-01 -n NetworkWatcherAgentLinux"


def test_watcher_extension_states(lab: Lab) -> None:
    assert lab.az(EXT_QUERY).out == "NetworkWatcherAgentLinux\tSucceeded\n"
    assert lab.az(EXT_SHOW + " --query provisioningState -o tsv").out == "Succeeded\n"
    _inject(lab, kind="extension-failed", vm="web-vm-01")
    assert lab.az(EXT_QUERY).out == "NetworkWatcherAgentLinux\tFailed\n"
    assert lab.az(EXT_SHOW + " --query provisioningState -o tsv").out == "Failed\n"
    view = json.loads(lab.az("vm get-instance-view -g prod-rg -n web-vm-01").out)
    assert view["instanceView"]["extensions"][0]["statuses"][0]["code"] == "ProvisioningState/failed/1"
    assert lab.az(CREATE.format(name="ghost_f")).code == 0  # ARM accepts; the agent never starts
    status = _status(lab, "ghost_f")
    assert (status["packetCaptureStatus"], status["packetCaptureError"]) == ("Error", ["AgentStopped"])


def test_watcher_extension_missing(lab: Lab) -> None:
    _inject(lab, kind="extension-missing", vm="web-vm-01")
    assert lab.az(EXT_QUERY).out == ""
    result = lab.az(EXT_SHOW)
    what = "Microsoft.Compute/virtualMachines/web-vm-01/extensions/NetworkWatcherAgentLinux"
    assert (result.code, result.err) == (3, NOT_FOUND.format(what=what))


def test_watcher_per_region(lab: Lab) -> None:
    query = "network watcher list --query \"[?location=='{loc}'].name\" -o tsv"
    assert lab.az(query.format(loc="eastus")).out == "NetworkWatcher_eastus\n"
    assert lab.az(query.format(loc="westus3")).out == ""
    assert lab.az('network watcher list --query "[].location" -o tsv').out == "eastus\n"


def test_effective_nsg_and_a_blocked_wireserver(lab: Lab) -> None:
    nsg = "network nic list-effective-nsg -g prod-rg -n web-vm-01VMNic"
    deny = "[?access=='Deny' && destinationAddressPrefix=='168.63.129.16'].name"
    assert lab.az(f'{nsg} --query "value[].effectiveSecurityRules[]|{deny}" -o tsv').out == ""
    assert lab.az(CREATE.format(name="ghost_before")).code == 0
    _inject(lab, kind="wireserver-blocked", vm="web-vm-01")
    result = lab.az(f'{nsg} --query "value[].effectiveSecurityRules[]|{deny}" -o tsv')
    assert (result.code, result.out) == (0, "securityRules/DenyWireServerOutbound\n")
    flow = lab.az("network watcher test-ip-flow -g prod-rg --vm web-vm-01 --direction Outbound --protocol TCP "
                  "--local 10.1.1.4:* --remote 168.63.129.16:80 -o tsv")
    assert flow.out == "Deny\tsecurityRules/DenyWireServerOutbound\n"
    before = _status(lab, "ghost_before")  # running when the rule landed: the agent lost its host
    assert (before["packetCaptureStatus"], before["packetCaptureError"]) == ("Error", ["AgentStopped"])
    assert lab.az(CREATE.format(name="ghost_after")).code == 0
    assert _status(lab, "ghost_after")["packetCaptureError"] == ["AgentStopped"]


def test_a_world_that_declares_the_wireserver_deny(make_lab: Callable[..., Lab], tmp_path: Path) -> None:
    data = yaml.safe_load((SCENARIO_DIR / "healthy.yaml").read_text())
    nsg = next(n for n in data["nsgs"] if n["name"] == "nsg-web")
    nsg["rules"].append({"name": "DenyAzurePlatform", "priority": 300, "direction": "Outbound", "access": "Deny",
                         "destination_address_prefix": "168.63.129.16"})
    path = tmp_path / "blocked.yaml"
    path.write_text(yaml.safe_dump(data))
    lab = make_lab(path)
    assert lab.az(CREATE.format(name="ghost_w")).code == 0
    assert _status(lab, "ghost_w")["packetCaptureError"] == ["AgentStopped"]


# ---- storage: preflight, download, cleanup ---------------------------------------------------

def test_storage_account_show_and_container_create(lab: Lab) -> None:
    assert lab.az("storage account show -n forensicssa -g prod-rg --query id -o tsv").out == \
        f"{RG}/Microsoft.Storage/storageAccounts/forensicssa\n"
    assert lab.az(f"storage container exists {LOGIN} -n pcaps --query exists -o tsv").out == "false\n"
    first = lab.az(f"storage container create {LOGIN} -n pcaps")
    assert (first.code, first.out, first.err) == (0, '{\n  "created": true\n}\n', "")
    assert lab.az(f"storage container create {LOGIN} -n pcaps").out == '{\n  "created": false\n}\n'
    assert lab.az(f"storage container exists {LOGIN} -n pcaps -o tsv").out == "True\n"
    again = lab.az(f"storage container create {LOGIN} -n pcaps --fail-on-exist")
    assert again.code == 1
    assert again.err.startswith("ERROR: The specified container already exists.\nRequestId:")
    assert again.err.endswith("\nErrorCode:ContainerAlreadyExists\n")


def test_an_account_no_world_holds_fails_as_the_real_cli_does_in_each_mode(lab: Lab) -> None:
    """Login mode asks ARM nothing: the data-plane host does not resolve (exit 1; the real CLI retries first).
    Key mode and ``account show`` without ``-g`` look the name up in the subscription's list: the
    validator's "not found" (exit 2). With ``-g`` or ``--ids`` ARM answers ResourceNotFound (exit 3)."""
    login = lab.az("storage container exists --account-name nosuchsa -n captures --auth-mode login")
    assert (login.code, login.out) == (1, "")
    assert login.err.startswith("ERROR: <urllib3.connection.HTTPSConnection object at 0x")
    assert "Failed to resolve 'nosuchsa.blob.core.windows.net' ([Errno -2] Name or service not known)" in login.err
    key = lab.az("storage container exists --account-name nosuchsa -n captures --auth-mode key")
    assert (key.code, key.err.splitlines()[-1]) == (2, "ERROR: Storage account 'nosuchsa' not found.")
    assert key.err.startswith("WARNING: \nThere are no credentials provided in your command")
    show = lab.az("storage account show -n nosuchsa --query id -o json")
    assert (show.code, show.out, show.err) == (2, "", "ERROR: Storage account 'nosuchsa' not found.\n")
    by_id = lab.az(f"storage account show --ids {RG}/Microsoft.Storage/storageAccounts/nosuchsa")
    assert by_id.code == 3 and by_id.err.startswith("ERROR: (ResourceNotFound) The Resource "
                                                    "'Microsoft.Storage/storageAccounts/nosuchsa' under resource group "
                                                    "'prod-rg' was not found.")
    assert lab.az("storage account show -n forensicssa --query location -o tsv").out == "eastus\n"


def test_storage_readable_but_not_writable_with_login(lab: Lab) -> None:
    _inject(lab, kind="storage-auth-failure", account="forensicssa", writes_only=True)
    assert lab.az(f"storage container exists {LOGIN} -n captures --query exists -o tsv").out == "true\n"
    result = lab.az(f"storage container create {LOGIN} -n captures")
    assert (result.code, result.out, result.err) == (1, "", STORAGE_RBAC_TEXT)
    assert lab.az(f"storage blob delete {LOGIN} -c captures -n x.cap").err == STORAGE_RBAC_TEXT
    key = lab.az("storage container create --account-name forensicssa -n captures --auth-mode key")
    assert key.code == 0  # the fault names login; key mode still writes


def test_storage_key_mode_refused(lab: Lab) -> None:
    _inject(lab, kind="storage-auth-failure", auth_mode="key")
    result = lab.az("storage container exists --account-name forensicssa -n captures --auth-mode key")
    assert result.code == 1
    assert result.err.startswith("WARNING: \nThere are no credentials provided in your command")
    assert "ERROR: Key based authentication is not permitted on this storage account.\nRequestId:" in result.err
    assert result.err.endswith("\nErrorCode:KeyBasedAuthenticationNotPermitted\n")
    assert lab.az(f"storage container exists {LOGIN} -n captures -o tsv").out == "True\n"


def test_blob_show_exists_download_delete(lab: Lab, tmp_path: Path) -> None:
    assert lab.az(CREATE.format(name="ghost_s")).code == 0
    lab.state.advance_clock(62)
    blob = f"{LOGIN} -c captures -n ghost_s.cap"
    shown = json.loads(lab.az(f"storage blob show {blob}").out)
    assert (shown["name"], shown["container"], shown["properties"]["contentRange"]) == ("ghost_s.cap", "captures", None)
    assert lab.az(f"storage blob list {LOGIN} -c captures --prefix ghost_s --query [].name -o tsv").out == "ghost_s.cap\n"
    assert lab.az(f"storage blob exists {blob} --query exists -o tsv").out == "true\n"
    local = tmp_path / "ghost_s.cap"
    got = lab.az(f"storage blob download {blob} -f {local} --no-progress -o none")
    assert (got.code, got.out, got.err) == (0, "", "")
    assert local.read_bytes()[:4] == EMPTY_PCAP[:4]
    assert (lab.az(f"storage blob delete {blob}").code, lab.az(f"storage blob delete {blob}").code) == (0, 3)
    missing = lab.az(f"storage blob show {blob}")
    assert missing.code == 3 and missing.err.endswith("\nErrorCode:BlobNotFound\n")


# ---- packet capture: scale sets, early stops, unknown outcomes --------------------------------

def test_scale_set_capture_one_blob_per_instance(lab: Lab) -> None:
    result = lab.az(VMSS_CREATE.format(name="ghost_v") + " --include 0 2")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["targetType"] == "AzureVMSS"
    assert doc["target"] == f"{RG}/Microsoft.Compute/virtualMachineScaleSets/web-vmss"
    assert doc["scope"] == {"exclude": [], "include": ["0", "2"]}
    assert doc["storageLocation"]["storagePath"] == "https://forensicssa.blob.core.windows.net/captures/ghost_v.cap"
    lab.state.advance_clock(62)
    status = _status(lab, "ghost_v")
    assert (status["packetCaptureStatus"], status["stopReason"]) == ("Stopped", "TimeExceeded")
    names = lab.az(f"storage blob list {LOGIN} -c captures --prefix ghost_v --query [].name -o tsv").out
    assert names == "ghost_v_0.cap\nghost_v_2.cap\n"
    blobs = lab.state.storage()["forensicssa"]["captures"]
    bodies = [lab.state.blob_body(blobs[n]) for n in ("ghost_v_0.cap", "ghost_v_2.cap")]
    assert b"\x0a\x01\x01\x0a" in bodies[0] and b"\x0a\x01\x01\x0c" in bodies[1]  # each instance's own IP
    assert b"\x0a\x01\x01\x0c" not in bodies[0]


def test_scale_set_capture_exclude_and_stopped_instance(lab: Lab) -> None:
    _inject(lab, kind="vm-stopped", vm="web-vmss_1", power_state="stopped")
    assert lab.az(VMSS_CREATE.format(name="ghost_x") + " --exclude 2").code == 0
    lab.state.advance_clock(62)
    names = lab.az(f"storage blob list {LOGIN} -c captures --prefix ghost_x --query [].name -o tsv").out
    assert names == "ghost_x_0.cap\n"  # instance 1 is stopped, 2 excluded


def test_scale_set_target_missing_and_vm_flag(lab: Lab) -> None:
    missing = lab.az(VMSS_CREATE.format(name="ghost_m").replace("--target web-vmss", "--target nope"))
    assert (missing.code, missing.err) == (3, NOT_FOUND.format(what="Microsoft.Compute/virtualMachineScaleSets/nope"))
    wrong = lab.az(VMSS_CREATE.format(name="ghost_m").replace("--target web-vmss", "--vm web-vmss"))
    assert (wrong.code, wrong.err) == (1, "ERROR: usage error: --vm NAME_OR_ID | --target NAME_OR_ID\n")


@pytest.mark.parametrize("reason", ["BytesExceeded", "TimeExceeded"])
def test_capture_that_stops_early(lab: Lab, reason: str) -> None:
    _inject(lab, kind="capture-early-stop", vm="web-vm-01", delay_s=10, stop_reason=reason)
    assert lab.az(CREATE.format(name="ghost_e")).code == 0
    lab.state.advance_clock(5)
    assert _status(lab, "ghost_e")["packetCaptureStatus"] == "Running"
    lab.state.advance_clock(6)
    status = _status(lab, "ghost_e")
    assert (status["packetCaptureStatus"], status["stopReason"], status["packetCaptureError"]) == \
        ("Stopped", reason, [])
    assert lab.az(f"storage blob exists {LOGIN} -c captures -n ghost_e.cap --query exists -o tsv").out == "true\n"


def test_vm_stopped_mid_capture(lab: Lab) -> None:
    assert lab.az(CREATE.format(name="ghost_p")).code == 0
    lab.state.advance_clock(20)
    _inject(lab, kind="vm-stopped", vm="web-vm-01")
    lab.state.advance_clock(60)
    status = _status(lab, "ghost_p")
    assert (status["packetCaptureStatus"], status["packetCaptureError"]) == ("Error", ["AgentStopped"])
    assert "stopReason" not in status
    assert lab.az(f"storage blob exists {LOGIN} -c captures -n ghost_p.cap --query exists -o tsv").out == "false\n"


def test_unknown_outcome_create_leaves_a_capture_that_show_finds(lab: Lab) -> None:
    _inject(lab, kind="create-unknown-outcome")
    lost = lab.az(CREATE.format(name="ghost_u"))
    assert (lost.code, lost.out) == (1, "")
    assert lost.err == ("ERROR: (InternalServerError) An error occurred.\nCode: InternalServerError\n"
                        "Message: An error occurred.\n")
    shown = lab.az("network watcher packet-capture show -l eastus -n ghost_u --query name -o tsv")
    assert (shown.code, shown.out) == (0, "ghost_u\n")
    assert _status(lab, "ghost_u")["packetCaptureStatus"] == "Running"
    again = lab.az(CREATE.format(name="ghost_u"))  # a blind retry would collide with it
    assert again.code == 1 and "(PacketCaptureSessionAlreadyExists)" in again.err
    assert lab.az(CREATE.format(name="ghost_u2")).code == 0  # count=1: the next create is clean


def test_unknown_outcome_with_a_timeout_text(lab: Lab) -> None:
    text = "HTTPSConnectionPool(host='management.azure.com', port=443): Read timed out. (read timeout=300)"
    _inject(lab, kind="create-unknown-outcome", message=text)
    lost = lab.az(CREATE.format(name="ghost_t"))
    assert (lost.code, lost.err) == (1, f"ERROR: {text}\n")
    assert lab.az("network watcher packet-capture list -l eastus --query [].name -o tsv").out == "ghost_t\n"


def test_quota_and_no_watcher_from_python(lab: Lab) -> None:
    lab.state.inject_fault(face.CloudFaultSpec(kind="capture-quota", region="eastus", limit=1))
    assert lab.az(CREATE.format(name="ghost_q1")).code == 0
    refused = lab.az(CREATE.format(name="ghost_q2"))
    assert refused.code == 1
    assert refused.err.startswith("ERROR: (PacketCaptureQuotaExceeded) ")
    lab.state.inject_fault(face.CloudFaultSpec(kind="no-network-watcher", region="eastus"))
    for verb in ("show-status -n ghost_q1", "list", "stop -n ghost_q1", "delete -n ghost_q1"):
        result = lab.az(f"network watcher packet-capture {verb} -l eastus")
        assert (result.code, result.err) == (1, "ERROR: network watcher is not enabled for region eastus.\n"), verb


def test_the_face_exports_what_the_orchestrator_injects_with() -> None:
    assert {"CloudFaultSpec", "LabState", "CLOUD_FAULT_KINDS", "init_state"} <= set(face.__all__)
    assert {"extension-failed", "vm-stopped", "wireserver-blocked", "capture-early-stop",
            "create-unknown-outcome"} <= set(face.CLOUD_FAULT_KINDS)


def test_world_faults_need_a_vm(lab: Lab) -> None:
    with pytest.raises(LabError, match="vm-stopped needs the VM"):
        _inject(lab, kind="vm-stopped")
