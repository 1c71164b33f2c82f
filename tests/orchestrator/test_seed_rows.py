"""Seed 000 "Error Handling" and "Edge Cases" rows not named elsewhere, each against the lab world.

Each test is named after its row (``test_error_row_...``, ``test_edge_case_...``). Azure-side
causes are the lab's injectable cloud faults; what the lab cannot cause is a local fault of the
same kind: a full disk is a size-limited tmpfs mounted for the test (skipped, with the reason, where
mounting is not permitted), a concurrent caller is a real second thread.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from netghost.lab.az import run_az
from netghost.lab.az._capture_store import EMPTY_PCAP
from netghost.lab.world import SCENARIO_DIR, CloudFaultSpec
from netghost.shell import HitlDecision

from .conftest import START, Lab, make_lab, request

ENOSPC_TEXT = "No space left on device"


def _check(orch, task_id: str) -> dict:  # type: ignore[no-untyped-def]
    return orch.orchestrate({"intent": "check_task", "task_id": task_id})


def _calls(lab: Lab, needle: str) -> list[str]:
    return [c for c in lab.shell.calls if needle in c]


@dataclass
class Hooked:
    """The lab's in-process shell with a hook run before (``before``) or after (``after``) a command."""

    inner: Any
    before: Callable[[str], None] = lambda _command: None
    after: Callable[[str, dict[str, Any]], None] = lambda _command, _response: None
    responses: list[dict[str, Any]] = field(default_factory=list)

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        self.before(request["command"])
        response = self.inner.execute(request)
        self.responses.append(response)
        self.after(request["command"], response)
        return response


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mount a size-limited tmpfs (``size`` as mount takes it); unmounted at teardown."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        where = tmp_path / f"small_fs_{len(mounted)}"
        where.mkdir()
        if shutil.which("mount") is None:
            pytest.skip("no mount(8) here: cannot make a full disk")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.skip(f"mounting a size-limited tmpfs is not permitted here (needs root/CAP_SYS_ADMIN): "
                        f"{done.stderr.strip() or done.returncode}")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", str(where)], capture_output=True, check=False)


def _fill(directory: Path) -> None:
    """Write one file into ``directory`` until its filesystem is full."""
    with (directory / "filler").open("wb", buffering=0) as fh:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    fh.write(b"\0" * size)
            except OSError:
                continue


# ---- Error Handling ------------------------------------------------------------------------------

def _occupy_the_task_name(lab: Lab) -> None:
    """A capture someone else made under the name the task will get (its id is the lab second)."""
    name = f"ghost_web-vm-01_{START:%Y%m%dT%H%M%S}"
    code, _out, err = run_az(["network", "watcher", "packet-capture", "create", "-g", "prod-rg", "-n", name,
                              "--vm", "web-vm-01", "--storage-account", "forensicssa", "--time-limit", "300"], lab.env)
    assert code == 0, err


@pytest.mark.parametrize(("fault", "reason", "code"), [
    ("capture-quota", "quota_exceeded", "(PacketCaptureQuotaExceeded)"),
    ("capture-name-conflict", "capture_name_conflict", "(PacketCaptureSessionAlreadyExists)"),
])
def test_error_row_azure_provisioning_fails_create_returns_non_zero_FAILED_detail_from_stderr(
        lab: Lab, fault: str, reason: str, code: str) -> None:
    """Seed: FAILED, error detail from the shell response's stderr, the cleanup plan runs with nothing to
    clean. With a name conflict the capture of that name is someone else's: cleanup must leave it."""
    orch = lab.orchestrator(scan_azure_orphans=False)
    if fault == "capture-quota":
        lab.state.inject_fault(CloudFaultSpec(kind="capture-quota", region="eastus", limit=0))
    else:
        _occupy_the_task_name(lab)
    before = sorted(lab.captures())
    resp = orch.orchestrate(request())
    assert (resp["status"], resp["state"], resp["failure_reason"]) == ("task_failed", "FAILED", reason), resp
    assert resp["error_detail"].startswith("Azure provisioning failed: " + code)
    assert resp["cleanup_status"] == "skipped" and "No cloud resources were created." in resp["message"]
    record = orch.rt.registry.get(resp["task_id"])
    assert record is not None and not record.create_issued
    assert sorted(lab.captures()) == before and _calls(lab, "packet-capture delete") == []
    assert len(lab.hitl.asked) == 1  # the create only


def test_error_row_disk_full_during_blob_download_FAILED_cloud_cleaned_partial_file_removed(
        lab: Lab, small_fs: Callable[[str], Path]) -> None:
    """A 64 KiB filesystem under the workspace: az writes part of the ~300 KiB capture, then fails with
    ENOSPC's text. Each attempt's partial file is removed, the task FAILS after the retry, and the
    capture and its blob are deleted."""
    disk = small_fs("64k")
    partial: list[int] = []

    def after(command: str, _response: dict[str, Any]) -> None:
        if "storage blob download" in command:
            argv = shlex.split(command)
            local = Path(argv[argv.index("-f") + 1])
            partial.append(local.stat().st_size if local.exists() else -1)

    shell = Hooked(lab.shell, after=after)
    orch = lab.orchestrator(shell=shell, local_capture_dir=str(disk))
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    resp = _check(orch, first["task_id"])
    assert (resp["status"], resp["failure_reason"]) == ("task_failed", "download_failed"), resp
    assert resp["error_detail"].count(ENOSPC_TEXT) == 2 and "attempt 2" in resp["error_detail"]
    assert len(partial) == 2 and all(size > 0 for size in partial)  # az had written part of the file
    assert resp["cleanup_status"] == "completed" and lab.captures() == [] and lab.blobs() == []
    assert not list(disk.rglob("*.cap"))  # the partial file is gone


def test_error_row_pcap_engine_produces_empty_output_COMPLETED_with_paths_recorded(tmp_path: Path) -> None:
    """A healthy world: the engine finds nothing ("no findings"); the task still completes with both paths."""
    lab = make_lab(tmp_path, "healthy")
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    resp = _check(orch, first["task_id"])
    assert (resp["status"], resp["state"]) == ("task_completed", "COMPLETED"), resp
    semantic, report = Path(resp["result"]["semantic_json_path"]), Path(resp["result"]["report_path"])
    assert semantic.is_file() and report.is_file()
    assert json.loads(semantic.read_text())["findings"] == [] and "No findings" in report.read_text()
    assert {semantic.name, report.name} <= set(resp["result"]["artifact_hashes"])


def test_error_row_concurrent_check_task_for_same_task_second_call_reads_the_first_ones_state(lab: Lab) -> None:
    """Back to back, the second call reads what the first left (no second poll, download or analysis)."""
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    one = _check(orch, first["task_id"])
    calls = len(lab.shell.calls)
    two = _check(orch, first["task_id"])
    assert one["state"] == two["state"] == "COMPLETED" and one["result"] == two["result"]
    assert len(lab.shell.calls) == calls


def test_error_row_concurrent_check_task_for_same_task_from_two_threads_is_serialized(lab: Lab) -> None:
    """A real second thread calls check_task while the first is downloading: it waits for the first call
    (calls are serialized) and then reads COMPLETED; one download, one analysis, one download prompt."""
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    second: dict[str, Any] = {}
    blocked: list[bool] = []
    other = threading.Thread(target=lambda: second.update(_check(orch, first["task_id"])))

    def before(command: str) -> None:
        if "storage blob download" in command and not blocked:
            other.start()
            other.join(timeout=0.2)  # the point of the test is a real concurrent caller
            blocked.append(other.is_alive())

    orch.rt.shell = Hooked(lab.shell, before=before)
    one = _check(orch, first["task_id"])
    other.join(timeout=30)
    assert blocked == [True] and not other.is_alive()
    assert one["state"] == second["state"] == "COMPLETED" and one["result"] == second["result"]
    assert len(_calls(lab, "storage blob download")) == 1 and len(_calls(lab, "pcap-forensics")) == 1
    assert len(lab.hitl.asked) == 2  # create, download


def _terminal(lab: Lab, orch, kind: str) -> str:  # type: ignore[no-untyped-def]
    if kind == "FAILED":
        return str(orch.orchestrate(request(target="nope-vm"))["task_id"])
    if kind == "CANCELLED":
        lab.hitl.script["packet-capture create"] = HitlDecision.deny()
        return str(orch.orchestrate(request())["task_id"])
    task_id = str(orch.orchestrate(request())["task_id"])
    lab.clock.advance(65)
    _check(orch, task_id)
    orch.orchestrate({"intent": "cleanup_task", "task_id": task_id})
    return task_id


@pytest.mark.parametrize("kind", ["FAILED", "CANCELLED", "DONE"])
def test_error_row_cancel_task_on_a_terminal_state_returns_it_unchanged_no_error_idempotent(lab: Lab, kind: str) -> None:
    orch = lab.orchestrator()
    task_id = _terminal(lab, orch, kind)
    before = orch.rt.registry.get(task_id)
    calls = len(lab.shell.calls)
    answers = [orch.orchestrate({"intent": "cancel_task", "task_id": task_id, "reason": "done with it"})
               for _ in range(2)]
    assert answers[0] == answers[1] and answers[0]["state"] == kind and answers[0]["status"] != "error"
    assert "nothing to cancel" in answers[0]["message"]
    assert orch.rt.registry.get(task_id) == before and len(lab.shell.calls) == calls


# ---- Edge Cases ----------------------------------------------------------------------------------

def test_edge_case_brain_requests_check_task_before_first_poll_sends_the_first_poll(lab: Lab) -> None:
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    assert (first["state"], first["poll_count"]) == ("PROVISIONING", 0)
    calls = len(lab.shell.calls)
    resp = _check(orch, first["task_id"])  # no time has passed since the create
    assert resp["state"] == "WAITING" and resp["poll_count"] >= 1
    assert "packet-capture show-status" in lab.shell.calls[calls]  # the first thing it sends is the poll
    record = orch.rt.registry.get(first["task_id"])
    assert record is not None and record.timestamps.first_poll == "2026-11-22T05:00:00Z"


def test_edge_case_brain_sends_check_task_rapidly_polls_every_call_backoff_advisory(lab: Lab) -> None:
    """No time passes between the calls (the backoff would ask 5, 10, 20 s): each call still polls,
    with no HITL prompt, and the orchestrator never waits to enforce the interval."""
    orch = lab.orchestrator(poll_burst_limit=1)  # one poll per call: the next backoff exceeds the burst
    first = orch.orchestrate(request(duration_seconds=300))
    counts = [_check(orch, first["task_id"])["poll_count"] for _ in range(4)]
    assert counts == [1, 2, 3, 4]
    assert len(_calls(lab, "packet-capture show-status")) == 4
    assert lab.clock.slept == [] and len(lab.hitl.asked) == 1  # the create only


def test_edge_case_0_byte_capture_no_traffic_COMPLETED_report_notes_no_traffic(lab: Lab) -> None:
    """The lab's idle capture window is a pcap header with no packet (24 bytes, 0 packet bytes).

    A literally empty (0-byte) file is not one the engine reads (pcap-forensics exits 2 "too short for
    a pcap/pcapng header"); what Azure uploads for an idle window has no public source.
    """
    lab.state.inject_fault(CloudFaultSpec(kind="capture-no-traffic", vm="web-vm-01"))
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    resp = _check(orch, first["task_id"])
    assert (resp["status"], resp["state"]) == ("task_completed", "COMPLETED"), resp
    assert Path(resp["result"]["local_pcap_path"]).read_bytes() == EMPTY_PCAP
    report = Path(resp["result"]["report_path"]).read_text()
    assert "No traffic captured: the capture contains no packets." in report
    assert json.loads(Path(resp["result"]["semantic_json_path"]).read_text())["summary"]["packets"] == 0


def test_edge_case_disk_full_during_pcap_engine_analysis_FAILED_cloud_and_partial_local_files_cleaned(
        lab: Lab, small_fs: Callable[[str], Path]) -> None:
    """The download fits a 2 MiB filesystem; it is full by the time the engine writes its outputs. The
    engine fails with ENOSPC's text, the half-written outputs and the capture file are removed, and the
    capture and its blob are deleted."""
    disk = small_fs("2m")
    seen: list[list[str]] = []

    def before(command: str) -> None:
        if command.startswith("pcap-forensics"):
            _fill(disk)

    def after(command: str, _response: dict[str, Any]) -> None:
        if command.startswith("pcap-forensics"):
            seen.append(sorted(p.name for p in disk.rglob("*_semantic.json")))

    orch = lab.orchestrator(shell=Hooked(lab.shell, before=before, after=after), local_capture_dir=str(disk))
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    resp = _check(orch, first["task_id"])
    assert (resp["status"], resp["failure_reason"]) == ("task_failed", "analysis_failed"), resp
    assert ENOSPC_TEXT in resp["error_detail"]
    # the engine writes each output to a temporary file and renames it: whatever it finished before the
    # disk filled (the semantic JSON, or nothing) is removed by the orchestrator and said so
    semantic = f"{first['task_id']}_semantic.json"
    assert seen in ([[semantic]], [[]])
    assert ("partial output" in resp["error_detail"]) == (seen == [[semantic]])
    assert resp["cleanup_status"] == "completed" and lab.captures() == [] and lab.blobs() == []
    artifacts = disk / first["task_id"] / "artifacts"
    assert sorted(p.name for p in artifacts.iterdir()) == []


def _world_with_aks(tmp_path: Path) -> Path:
    data = yaml.safe_load((SCENARIO_DIR / "nsg-deny.yaml").read_text())
    data["aks_clusters"] = [{"name": "aks-prod", "resource_group": "prod-rg"}]
    path = tmp_path / "aks.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_edge_case_paired_task_one_target_is_vm_other_is_aks_informational_vm_goes_on_single_end(
        tmp_path: Path) -> None:
    lab = make_lab(tmp_path, str(_world_with_aks(tmp_path)))
    orch = lab.orchestrator()
    first = orch.orchestrate(request(target="web-vm-01 to aks-prod"))
    aks_id = first["paired_task"]["task_id"]
    assert first["state"] == "PROVISIONING"
    aks = orch.rt.registry.get(aks_id)
    assert aks is not None and (aks.target_type, aks.state.value, aks.failure_reason, aks.cleanup_status) == (
        "aks", "FAILED", "aks_not_supported", "skipped")
    assert "AKS capture pipeline not yet available" in (aks.error_detail or "")
    assert len(_calls(lab, "az aks show")) == 1 and len(_calls(lab, "packet-capture create")) == 1
    assert lab.captures() == [first["task_id"]] and len(lab.hitl.asked) == 1
    lab.clock.advance(65)
    resp = _check(orch, first["task_id"])
    assert resp["status"] == "task_completed" and resp["result"]["mode"] == "single_end_fallback", resp
    assert "AKS capture pipeline not yet available" in resp["message"]
    assert Path(resp["result"]["report_path"]).is_file()
    alone = _check(orch, aks_id)
    assert alone["failure_reason"] == "aks_not_supported" and alone["paired_task"]["state"] == "COMPLETED"


def test_edge_case_task_id_collision_same_target_same_second_suffixed_not_overwritten(lab: Lab) -> None:
    """Departure from the seed: it lets a same-second twin overwrite the first task (last record wins).
    That would orphan the first capture (its record gone, its cloud resources never cleaned) and the two
    would share one capture name, which Azure refuses. ``_task_id`` suffixes ``-2``, ``-3`` instead."""
    orch = lab.orchestrator()
    ids = [orch.orchestrate(request())["task_id"] for _ in range(3)]
    base = f"ghost_web-vm-01_{START:%Y%m%dT%H%M%S}"
    assert ids == [base, f"{base}-2", f"{base}-3"]
    assert all(orch.rt.registry.get(t) is not None for t in ids) and sorted(lab.captures()) == sorted(ids)


def test_edge_case_cleanup_command_refers_to_already_deleted_resource_treated_as_cleaned(lab: Lab) -> None:
    """The capture is deleted out of band before cleanup; the blob vanishes between ``blob exists`` and
    ``blob delete`` (exit 3 BlobNotFound). Both count as cleaned: every step executed, status completed."""
    orch = lab.orchestrator()
    first = orch.orchestrate(request())
    lab.clock.advance(65)
    done = _check(orch, first["task_id"])
    assert done["status"] == "task_completed"
    code, _out, err = run_az(["network", "watcher", "packet-capture", "delete", "-l", "eastus", "-n",
                              first["task_id"]], lab.env)
    assert code == 0 and lab.captures() == [], err

    def before(command: str) -> None:
        if "storage blob delete" in command:
            assert lab.state.delete_blob("forensicssa", "captures", f"{first['task_id']}.cap")

    shell = Hooked(lab.shell, before=before)
    orch.rt.shell = shell
    resp = orch.orchestrate({"intent": "cleanup_task", "task_id": first["task_id"]})
    assert (resp["state"], resp["cleanup_status"]) == ("DONE", "completed"), resp
    blob_delete = next(r for r in shell.responses if "storage blob delete" in r["command"])
    assert blob_delete["exit_code"] == 3 and "ErrorCode:BlobNotFound" in blob_delete["stderr"]
    record = orch.rt.registry.get(first["task_id"])
    assert record is not None and all(step.executed for step in record.cleanup_plan)
    assert lab.blobs() == [] and not Path(done["result"]["local_pcap_path"]).exists()
