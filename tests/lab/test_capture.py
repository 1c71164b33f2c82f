"""The packet-capture lifecycle on the lab clock, and the blob it leaves behind."""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable

import pytest

from netghost.errors import LabError
from netghost.lab.az import _capture_store as capture_store
from netghost.lab.az._capture_store import EMPTY_PCAP, capture_status
from netghost.lab.clock import LabClock, format_azure_time, scale_from_env

from .conftest import Lab

CREATE = ("network watcher packet-capture create -g prod-rg -n {name} --vm web-vm-01 --storage-account forensicssa "
          "--storage-path https://forensicssa.blob.core.windows.net/captures/{name}.cap --time-limit {limit}")


def _status(lab: Lab, name: str) -> dict:
    result = lab.az(f"network watcher packet-capture show-status -l eastus -n {name}")
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_lifecycle_time_exceeded_and_blob_at_announced_path(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("healthy")
    created = lab.az(CREATE.format(name="ghost_web-vm-01_20260101T000000", limit=60))
    assert created.code == 0, created.err
    doc = json.loads(created.out)
    assert doc["provisioningState"] == "Succeeded"
    assert doc["target"].endswith("/virtualMachines/web-vm-01")
    path = doc["storageLocation"]["storagePath"]
    assert path == "https://forensicssa.blob.core.windows.net/captures/ghost_web-vm-01_20260101T000000.cap"
    assert _status(lab, "ghost_web-vm-01_20260101T000000")["packetCaptureStatus"] == "Running"
    exists = "storage blob exists --account-name forensicssa -c captures -n ghost_web-vm-01_20260101T000000.cap --auth-mode login --query exists -o tsv"
    assert lab.az(exists).out == "false\n"
    lab.state.advance_clock(61)
    status = _status(lab, "ghost_web-vm-01_20260101T000000")
    assert (status["packetCaptureStatus"], status["stopReason"], status["packetCaptureError"]) == (
        "Stopped", "TimeExceeded", [])
    show = lab.az("network watcher packet-capture show -l eastus -n ghost_web-vm-01_20260101T000000 "
                  "--query provisioningState -o tsv")
    assert show.out == "Succeeded\n"  # never 'Stopped': provisioningState is the ARM state
    assert lab.az(exists).out == "true\n"
    blobs = json.loads(lab.az("storage blob list --account-name forensicssa -c captures --auth-mode login").out)
    assert [b["name"] for b in blobs] == ["ghost_web-vm-01_20260101T000000.cap"]


def test_manual_stop_and_no_wait_starts_not_started(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("healthy")
    assert lab.az(CREATE.format(name="ghost_a", limit=600) + " --no-wait").out == ""
    assert _status(lab, "ghost_a")["packetCaptureStatus"] == "NotStarted"
    lab.state.advance_clock(5)
    assert _status(lab, "ghost_a")["packetCaptureStatus"] == "Running"
    stop = lab.az("network watcher packet-capture stop -l eastus -n ghost_a")
    assert (stop.code, stop.out) == (0, "")
    status = _status(lab, "ghost_a")
    assert (status["packetCaptureStatus"], status["stopReason"]) == ("Stopped", "Manual")
    assert lab.az("network watcher packet-capture stop -l eastus -n ghost_a").code == 0
    lab.state.advance_clock(600)
    assert _status(lab, "ghost_a")["stopReason"] == "Manual"  # the earlier end wins


def test_default_storage_path_creates_network_watcher_logs(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("healthy")
    result = lab.az("network watcher packet-capture create -g prod-rg -n ghost_d --vm web-vm-01 "
                    "--storage-account forensicssa --time-limit 10 --query storageLocation.storagePath -o tsv")
    path = result.out.strip()
    assert path.startswith("https://forensicssa.blob.core.windows.net/network-watcher-logs/subscriptions/")
    assert "/virtualmachines/web-vm-01/" in path and path.endswith(".cap")
    lab.state.advance_clock(20)
    blob = path.split("/network-watcher-logs/", 1)[1]
    listed = lab.az("storage blob list --account-name forensicssa -c network-watcher-logs --auth-mode login "
                    "--prefix subscriptions/ --query [].name -o tsv")
    assert listed.out == blob + "\n"


def test_list_delete_and_not_found(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("healthy")
    lab.az(CREATE.format(name="ghost_one", limit=60))
    lab.az(CREATE.format(name="other", limit=60))
    names = lab.az("network watcher packet-capture list -l eastus --query \"[?starts_with(name, 'ghost_')].name\" -o tsv")
    assert names.out == "ghost_one\n"
    assert lab.az("network watcher packet-capture delete -l eastus -n ghost_one").code == 0
    missing = lab.az("network watcher packet-capture show-status -l eastus -n ghost_one")
    assert missing.code == 3 and missing.err.startswith("ERROR: (NotFound) Resource /subscriptions/")
    assert lab.az("network watcher packet-capture delete -l eastus -n ghost_one").code == 0


def test_blob_holds_the_synthesized_window(make_lab: Callable[..., Lab], monkeypatch: pytest.MonkeyPatch,
                                            tmp_path) -> None:
    calls: list[tuple[str, float, float]] = []

    def synthesize_capture(world, vm_name: str, start: float, end: float) -> bytes:
        calls.append((vm_name, start, end))
        return EMPTY_PCAP + b"\x00" * 16

    monkeypatch.setattr(capture_store, "synthesize_capture", synthesize_capture)
    lab = make_lab("nsg-deny")
    lab.az(CREATE.format(name="ghost_s", limit=30))
    lab.state.advance_clock(45)
    target = tmp_path / "out.cap"
    result = lab.az(f"storage blob download --account-name forensicssa -c captures -n ghost_s.cap -f {target} "
                    "--auth-mode login --no-progress -o none")
    assert (result.code, result.out, result.err) == (0, "", "")
    assert target.read_bytes() == EMPTY_PCAP + b"\x00" * 16
    assert len(calls) == 1
    vm_name, start, end = calls[0]
    assert vm_name == "web-vm-01" and end - start == pytest.approx(30.0)


def test_empty_pcap_is_a_valid_libpcap_header() -> None:
    magic, major, minor, _zone, _sig, snaplen, linktype = struct.unpack("<IHHiIII", EMPTY_PCAP)
    assert (len(EMPTY_PCAP), magic, major, minor, linktype) == (24, 0xA1B2C3D4, 2, 4, 1)
    assert snaplen > 0


def test_a_60s_capture_completes_quickly_with_the_scale_set(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("healthy", scale=600.0)
    lab.az(CREATE.format(name="ghost_fast", limit=60))
    deadline = time.monotonic() + 2.0
    status = _status(lab, "ghost_fast")["packetCaptureStatus"]
    while status != "Stopped" and time.monotonic() < deadline:
        time.sleep(0.02)
        status = _status(lab, "ghost_fast")["packetCaptureStatus"]
    assert status == "Stopped"


def test_clock_scaling_is_continuous() -> None:
    wall = [1000.0]
    clock = LabClock.start(lab_start=5000.0, scale=10.0, wall=lambda: wall[0])
    wall[0] += 3
    assert clock.now() == 5030.0
    clock.rescale(1.0)
    wall[0] += 3
    assert clock.now() == 5033.0
    clock.advance(7)
    assert clock.now() == 5040.0
    with pytest.raises(LabError):
        clock.advance(-1)
    assert LabClock.from_json(clock.to_json(), wall=lambda: wall[0]).now() == 5040.0


@pytest.mark.parametrize(("raw", "ok"), [("", 1.0), ("60", 60.0), ("0.5", 0.5), ("0", None), ("x", None), ("-3", None)])
def test_scale_from_env(raw: str, ok: float | None) -> None:
    if ok is None:
        with pytest.raises(LabError):
            scale_from_env({"NETGHOST_LAB_CLOCK_SCALE": raw})
    else:
        assert scale_from_env({"NETGHOST_LAB_CLOCK_SCALE": raw}) == ok


def test_capture_status_is_a_pure_function_of_time() -> None:
    rec = {"created": 100.0, "time_limit": 60, "stopped_at": None}
    assert capture_status(rec, 100.5)["status"] == "NotStarted"
    assert capture_status(rec, 120.0)["status"] == "Running"
    done = capture_status(rec, 200.0)
    assert (done["status"], done["stop_reason"], done["end"]) == ("Stopped", "TimeExceeded", 161.0)
    assert format_azure_time(0) == "1970-01-01T00:00:00.0000000Z"


def test_state_survives_a_new_process_view(make_lab: Callable[..., Lab]) -> None:
    """A resumed agent (a new LabState on the same directory) sees the same running capture."""
    from netghost.lab.state import LabState

    lab = make_lab("healthy")
    lab.az(CREATE.format(name="ghost_resume", limit=300))
    again = LabState(lab.state.root)
    assert "eastus/ghost_resume" in again.captures()
    assert again.world().name == "healthy"


def test_storage_account_name_is_expanded_with_the_vm_group(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("healthy")
    base = "network watcher packet-capture create -g hub-rg -n ghost_fw --vm fw-vm-01 --time-limit 10 "
    wrong = lab.az(base + "--storage-account forensicssa")
    assert wrong.code == 1 and wrong.err.startswith("ERROR: (InvalidResourceReference) Resource /subscriptions/")
    assert "/resourceGroups/hub-rg/providers/Microsoft.Storage/storageAccounts/forensicssa" in wrong.err
    sa_id = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/prod-rg/providers/Microsoft.Storage/storageAccounts/forensicssa"
    right = lab.az(base + f"--storage-account {sa_id}")
    assert right.code == 0, right.err


def test_azure_md_minimal_sequence_end_to_end(make_lab: Callable[..., Lab], tmp_path) -> None:
    """AZURE.md §6, command for command, as the orchestrator will issue it."""
    lab = make_lab("nsg-deny")
    target = lab.az('vm show -g prod-rg -n web-vm-01 --query "{id:id, location:location}" -o tsv')
    vm_id, location = target.out.rstrip("\n").split("\t")
    assert location == "eastus" and vm_id.endswith("/web-vm-01")
    watchers = lab.az(f"network watcher list --query \"[?location=='{location}'].name\" -o tsv")
    assert watchers.out == "NetworkWatcher_eastus\n"
    exists = lab.az("storage container exists --account-name forensicssa -n captures --auth-mode login "
                    "--query exists -o tsv")
    assert exists.out == "true\n"
    name = "ghost_web-vm-01_20250115T143200"
    path = lab.az(f"network watcher packet-capture create -g prod-rg -n {name} --vm web-vm-01 "
                  "--storage-account forensicssa --storage-path https://forensicssa.blob.core.windows.net/captures "
                  "--time-limit 60 --query storageLocation.storagePath -o tsv").out.strip()
    assert path.startswith("https://forensicssa.blob.core.windows.net/captures/") and path.endswith(".cap")
    poll = f"network watcher packet-capture show-status -l {location} -n {name} --query packetCaptureStatus -o tsv"
    assert lab.az(poll).out == "Running\n"
    lab.state.advance_clock(60)
    assert lab.az(poll).out == "Stopped\n"
    container, blob = path.split(".blob.core.windows.net/", 1)[1].split("/", 1)
    local = tmp_path / f"{name}.cap"
    download = lab.az(f"storage blob download --account-name forensicssa -c {container} -n {blob} -f {local} "
                      "--auth-mode login --no-progress -o none")
    assert (download.code, download.out) == (0, "")
    assert local.read_bytes()[:4] == b"\xd4\xc3\xb2\xa1"
    assert lab.az(f"network watcher packet-capture delete -l {location} -n {name}").code == 0
    assert lab.az(f"storage blob delete --account-name forensicssa -c {container} -n {blob} --auth-mode login").code == 0
    again = lab.az(f"storage blob delete --account-name forensicssa -c {container} -n {blob} --auth-mode login")
    assert again.code == 3  # "already deleted"
    sweep = lab.az(f"network watcher packet-capture list -l {location} --query \"[?starts_with(name, 'ghost_')].name\" -o tsv")
    assert sweep.out == ""


def test_capture_on_a_stopped_vm_errors_and_location_display_names_work(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("udr-dead-appliance")
    sa_id = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/prod-rg/providers/Microsoft.Storage/storageAccounts/forensicssa"
    created = lab.az(f"network watcher packet-capture create -g hub-rg -n ghost_fw --vm fw-vm-01 --storage-account {sa_id}")
    assert created.code == 0, created.err
    status = json.loads(lab.az('network watcher packet-capture show-status -l "East US" -n ghost_fw').out)
    assert (status["packetCaptureStatus"], status["packetCaptureError"]) == ("Error", ["AgentStopped"])


def test_scale_set_at_reset_survives_a_scrubbed_environment(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("healthy", scale=50.0)
    lab.env.pop("NETGHOST_LAB_CLOCK_SCALE")
    assert lab.az("account show -o none").code == 0
    assert json.loads((lab.state.root / "clock.json").read_text())["scale"] == 50.0
    lab.env["NETGHOST_LAB_CLOCK_SCALE"] = "5"
    lab.az("account show -o none")
    assert json.loads((lab.state.root / "clock.json").read_text())["scale"] == 5.0
