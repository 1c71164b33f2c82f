"""Each cloud-API fault, injected, gives the documented error text and exit code."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from netghost.lab.az._cloud_faults import STORAGE_RBAC_TEXT
from netghost.lab.world import CLOUD_FAULT_KINDS, CloudFaultSpec

from .conftest import Lab

CREATE = ("network watcher packet-capture create -g prod-rg -n {name} --vm web-vm-01 --storage-account forensicssa "
          "--storage-path https://forensicssa.blob.core.windows.net/captures/{name}.cap --time-limit 60")
LOGIN = "--account-name forensicssa --auth-mode login"


@pytest.fixture
def healthy(make_lab: Callable[..., Lab]) -> Lab:
    return make_lab("healthy")


def _inject(lab: Lab, **fields: object) -> None:
    lab.state.inject_fault(CloudFaultSpec.model_validate(fields))


def _finish(lab: Lab, name: str) -> None:
    assert lab.az(CREATE.format(name=name)).code == 0
    lab.state.advance_clock(62)


def test_every_kind_is_covered_here() -> None:
    tested = {"extension-missing", "no-network-watcher", "container-missing", "storage-auth-failure",
              "capture-error", "poll-transient", "blob-late", "download-failure", "capture-name-conflict",
              "capture-quota"}
    # the orchestrator's preflight faults are tested in test_orchestrator_commands.py
    tested |= {"extension-failed", "vm-stopped", "wireserver-blocked", "capture-early-stop", "create-unknown-outcome"}
    tested |= {"capture-no-traffic"}
    assert tested == set(CLOUD_FAULT_KINDS)


def test_extension_missing(healthy: Lab) -> None:
    _inject(healthy, kind="extension-missing", vm="web-vm-01")
    result = healthy.az(CREATE.format(name="ghost_e"))
    assert result.code == 1
    assert result.err.startswith("ERROR: (AzureNetworkWatcherExtensionNotInstalled) ")
    assert "\nCode: AzureNetworkWatcherExtensionNotInstalled\nMessage: " in result.err
    conn = healthy.az("network watcher test-connectivity -g prod-rg --source-resource web-vm-01 "
                      "--dest-address 10.1.2.4 --dest-port 6379")
    assert conn.code == 1
    assert healthy.az("network watcher packet-capture list -l eastus -o tsv").out == ""


def test_extension_missing_from_the_world_itself(make_lab: Callable[..., Lab], tmp_path: Path) -> None:
    text = (Path(__file__).parent.parent.parent / "src/netghost/lab/scenarios/healthy.yaml").read_text()
    text = text.replace("- name: web-vm-01\n", "- name: web-vm-01\n  extensions: []\n", 1)
    world = tmp_path / "noext.yaml"
    world.write_text(text)
    lab = make_lab(world)
    assert lab.az("vm extension list -g prod-rg --vm-name web-vm-01").out == "[]\n"
    assert lab.az(CREATE.format(name="ghost_e")).code == 1


def test_custom_message_overrides_the_default(healthy: Lab) -> None:
    _inject(healthy, kind="extension-missing", message="Agent not found on the VM.")
    result = healthy.az(CREATE.format(name="ghost_e"))
    assert "Message: Agent not found on the VM.\n" in result.err


def test_no_network_watcher(healthy: Lab) -> None:
    _inject(healthy, kind="no-network-watcher", region="eastus")
    expected = "ERROR: network watcher is not enabled for region eastus.\n"
    for command in (CREATE.format(name="ghost_w"), "network watcher packet-capture list -l eastus",
                    "network watcher show-next-hop -g prod-rg --vm web-vm-01 --source-ip 10.1.1.4 --dest-ip 8.8.8.8"):
        result = healthy.az(command)
        assert (result.code, result.err) == (1, expected), command
    assert healthy.az("network watcher list --query \"[?location=='eastus'].name\" -o tsv").out == ""


def test_container_missing(healthy: Lab, tmp_path: Path) -> None:
    _inject(healthy, kind="container-missing", container="captures")
    exists = healthy.az(f"storage container exists {LOGIN} -n captures -o tsv")
    assert (exists.code, exists.out) == (0, "False\n")
    listing = healthy.az(f"storage blob list {LOGIN} -c captures")
    assert listing.code == 3
    assert listing.err.startswith("ERROR: The specified container does not exist.\nRequestId:")
    assert listing.err.endswith("ErrorCode:ContainerNotFound\n")
    _finish(healthy, "ghost_c")
    status = json.loads(healthy.az("network watcher packet-capture show-status -l eastus -n ghost_c").out)
    assert (status["packetCaptureStatus"], status["packetCaptureError"]) == ("Error", ["StorageFailed"])
    download = healthy.az(f"storage blob download {LOGIN} -c captures -n ghost_c.cap -f {tmp_path / 'x.cap'}")
    assert download.code == 3 and "ErrorCode:ContainerNotFound" in download.err


def test_storage_auth_failure(healthy: Lab) -> None:
    _inject(healthy, kind="storage-auth-failure")
    result = healthy.az(f"storage container exists {LOGIN} -n captures -o tsv")
    assert (result.code, result.out, result.err) == (1, "", STORAGE_RBAC_TEXT)
    key_mode = healthy.az("storage container exists --account-name forensicssa -n captures -o tsv")
    assert key_mode.code == 0 and key_mode.out == "True\n" and key_mode.err.startswith("WARNING: \nThere are no credentials")
    quiet = healthy.az("storage container exists --account-name forensicssa -n captures -o tsv --only-show-errors")
    assert quiet.err == ""


def test_capture_error(healthy: Lab) -> None:
    _inject(healthy, kind="capture-error", delay_s=10, error="AgentStopped")
    assert healthy.az(CREATE.format(name="ghost_x")).code == 0
    healthy.state.advance_clock(5)
    running = json.loads(healthy.az("network watcher packet-capture show-status -l eastus -n ghost_x").out)
    assert running["packetCaptureStatus"] == "Running"
    healthy.state.advance_clock(10)
    status = json.loads(healthy.az("network watcher packet-capture show-status -l eastus -n ghost_x").out)
    assert (status["packetCaptureStatus"], status["packetCaptureError"]) == ("Error", ["AgentStopped"])
    assert "stopReason" not in status
    assert healthy.az(f"storage blob exists {LOGIN} -c captures -n ghost_x.cap --query exists -o tsv").out == "false\n"


def test_poll_transient(healthy: Lab) -> None:
    assert healthy.az(CREATE.format(name="ghost_p")).code == 0
    _inject(healthy, kind="poll-transient", count=2)
    poll = "network watcher packet-capture show-status -l eastus -n ghost_p --query packetCaptureStatus -o tsv"
    for _ in range(2):
        result = healthy.az(poll)
        assert result.code == 1
        assert result.err == ("ERROR: (InternalServerError) An error occurred.\nCode: InternalServerError\n"
                              "Message: An error occurred.\n")
    assert healthy.az(poll).out == "Running\n"


def test_blob_late(healthy: Lab, tmp_path: Path) -> None:
    _inject(healthy, kind="blob-late", delay_s=30)
    _finish(healthy, "ghost_l")
    target = tmp_path / "late.cap"
    early = healthy.az(f"storage blob download {LOGIN} -c captures -n ghost_l.cap -f {target} --no-progress -o none")
    assert early.code == 3 and early.err.startswith("ERROR: The specified blob does not exist.\n")
    assert early.err.endswith("ErrorCode:BlobNotFound\n") and not target.exists()
    healthy.state.advance_clock(31)
    late = healthy.az(f"storage blob download {LOGIN} -c captures -n ghost_l.cap -f {target} --no-progress -o none")
    assert late.code == 0 and target.read_bytes()[:4] == b"\xd4\xc3\xb2\xa1"


def test_download_failure(healthy: Lab, tmp_path: Path) -> None:
    _inject(healthy, kind="download-failure", count=1)
    _finish(healthy, "ghost_f")
    command = f"storage blob download {LOGIN} -c captures -n ghost_f.cap -f {tmp_path / 'f.cap'} -o none"
    first = healthy.az(command)
    assert first.code == 1
    assert first.err.startswith("ERROR: Server encountered an internal error. Please try again after some time.\n")
    assert first.err.endswith("ErrorCode:InternalError\n")
    assert healthy.az(command).code == 0


def test_capture_no_traffic(healthy: Lab, tmp_path: Path) -> None:
    from netghost.lab.az._capture_store import EMPTY_PCAP

    _inject(healthy, kind="capture-no-traffic", vm="web-vm-01")
    _finish(healthy, "ghost_q")
    status = json.loads(healthy.az("network watcher packet-capture show-status -l eastus -n ghost_q").out)
    assert (status["packetCaptureStatus"], status["stopReason"]) == ("Stopped", "TimeExceeded")
    target = tmp_path / "q.cap"
    got = healthy.az(f"storage blob download {LOGIN} -c captures -n ghost_q.cap -f {target} --no-progress -o none")
    assert got.code == 0 and target.read_bytes() == EMPTY_PCAP  # the header, no packet
    other = CREATE.format(name="ghost_r").replace("web-vm-01", "redis-primary")
    assert healthy.az(other).code == 0
    healthy.state.advance_clock(62)
    full = tmp_path / "r.cap"
    assert healthy.az(f"storage blob download {LOGIN} -c captures -n ghost_r.cap -f {full} -o none").code == 0
    assert full.stat().st_size > len(EMPTY_PCAP)  # only the named VM is idle


def test_capture_name_conflict(healthy: Lab) -> None:
    assert healthy.az(CREATE.format(name="ghost_n")).code == 0
    again = healthy.az(CREATE.format(name="ghost_n"))
    assert again.code == 1 and again.err.startswith("ERROR: (PacketCaptureSessionAlreadyExists) ")
    _inject(healthy, kind="capture-name-conflict", message="Conflict: name in use.")
    assert "Message: Conflict: name in use.\n" in healthy.az(CREATE.format(name="ghost_n")).err


def test_capture_quota(healthy: Lab) -> None:
    _inject(healthy, kind="capture-quota", region="eastus", limit=1)
    assert healthy.az(CREATE.format(name="ghost_q1")).code == 0
    second = healthy.az(CREATE.format(name="ghost_q2"))
    assert second.code == 1 and second.err.startswith("ERROR: (PacketCaptureQuotaExceeded) ")
    assert "limit of 1" in second.err
    assert healthy.az("network watcher packet-capture stop -l eastus -n ghost_q1").code == 0
    assert healthy.az(CREATE.format(name="ghost_q2")).code == 0


def test_rbac_denials(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab()  # the conformance world: noaccess-rg and denied_cap are refused
    result = lab.az("vm show -g noaccess-rg -n web-vm-01")
    assert result.code == 1 and result.err.startswith("ERROR: (AuthorizationFailed) The client 'ghost-sp'")
    missing_rg = lab.az("vm show -g missing-rg -n web-vm-01")
    assert missing_rg.code == 3 and "(ResourceGroupNotFound)" in missing_rg.err


def test_world_declared_cloud_faults_apply(tmp_path: Path, make_lab: Callable[..., Lab]) -> None:
    text = (Path(__file__).parent.parent.parent / "src/netghost/lab/scenarios/healthy.yaml").read_text()
    text += "cloud_faults:\n  - {kind: poll-transient, count: 1}\n"
    world = tmp_path / "flaky.yaml"
    world.write_text(text)
    lab = make_lab(world)
    assert lab.az(CREATE.format(name="ghost_y")).code == 0
    assert lab.az("network watcher packet-capture show -l eastus -n ghost_y").code == 1
    assert lab.az("network watcher packet-capture show -l eastus -n ghost_y").code == 0
