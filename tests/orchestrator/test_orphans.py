"""Seed 000 "Orphan Detection": three layers at construction, returned once by the first list_tasks."""

from __future__ import annotations

import os
from pathlib import Path

from netghost.lab.az import run_az

from .conftest import Lab, request

STRAY = "ghost_stray-vm_20261101T000000"


def _stray_capture(lab: Lab) -> None:
    code, _out, err = run_az(["network", "watcher", "packet-capture", "create", "-g", "prod-rg", "-n", STRAY, "--vm",
                              "redis-primary", "--storage-account", "forensicssa", "--time-limit", "60"], lab.env)
    assert code == 0, err


def _stale_file(lab: Lab, name: str, days: float) -> Path:
    path = lab.root / "captures" / "ghost_old_20260101T000000" / "artifacts" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xd4\xc3\xb2\xa1")
    moment = lab.clock.now().timestamp() - days * 86400
    os.utime(path, (moment, moment))
    return path


def _kinds(orphans: list[dict]) -> list[str]:
    return [o["kind"] for o in orphans]


def test_layer1_task_in_non_terminal_state_from_a_previous_session_is_abandoned(lab: Lab) -> None:
    old = lab.orchestrator(session="s0")
    task_id = old.orchestrate(request())["task_id"]
    old.close()
    orphans = lab.orchestrator(session="s1").orchestrate({"intent": "list_tasks"})["orphans"]
    assert orphans == [{"kind": "abandoned_task", "task_id": task_id, "session_id": "s0", "state": "PROVISIONING",
                        "target": "web-vm-01"}]


def test_layer1_completed_with_cleanup_pending_needs_cleanup_and_cleanup_task_clears_it(lab: Lab) -> None:
    old = lab.orchestrator(session="s0")
    task_id = old.orchestrate(request())["task_id"]
    lab.clock.advance(65)
    assert old.orchestrate({"intent": "check_task", "task_id": task_id})["state"] == "COMPLETED"
    old.close()
    new = lab.orchestrator(session="s1")
    orphans = new.orchestrate({"intent": "list_tasks"})["orphans"]
    assert [(o["kind"], o["task_id"], o["state"]) for o in orphans] == [("needs_cleanup", task_id, "COMPLETED")]
    cleaned = new.orchestrate({"intent": "cleanup_task", "task_id": task_id})
    assert cleaned["cleanup_status"] == "completed" and lab.captures() == [] and lab.blobs() == []


def test_layer1_done_or_cancelled_tasks_are_terminal_no_action(lab: Lab) -> None:
    old = lab.orchestrator(session="s0")
    old.orchestrate(request(target="nope-vm"))  # FAILED in DETECTING: cleanup "skipped", nothing to offer
    task_id = old.orchestrate(request())["task_id"]
    old.orchestrate({"intent": "cancel_task", "task_id": task_id})
    old.close()
    assert lab.orchestrator(session="s1").orchestrate({"intent": "list_tasks"})["orphans"] == []


def test_layer2_ghost_capture_in_azure_no_registry_knows_is_untracked_and_can_be_deleted(lab: Lab) -> None:
    _stray_capture(lab)
    orch = lab.orchestrator()
    orphans = orch.orchestrate({"intent": "list_tasks"})["orphans"]
    assert [(o["kind"], o["name"]) for o in orphans] == [("untracked_azure", STRAY)]
    resp = orch.orchestrate({"intent": "cleanup_task", "task_id": STRAY})
    assert resp["orphans"] == [] and lab.captures() == []
    assert lab.hitl.asked == [f"az network watcher packet-capture delete -l eastus -n {STRAY}"]


def test_layer2_scan_is_safe_reads_only_no_prompt(lab: Lab) -> None:
    _stray_capture(lab)
    lab.orchestrator()
    assert lab.hitl.asked == []
    assert any("packet-capture list -l eastus" in c for c in lab.shell.calls)


def test_layer3_stale_ghost_files_flagged_fresh_and_foreign_ignored(lab: Lab) -> None:
    stale_cap = _stale_file(lab, "ghost_old_20260101T000000.cap", 8)
    stale_md = _stale_file(lab, "ghost_old_20260101T000000_forensic_report.md", 30)
    _stale_file(lab, "ghost_old_20260101T000000_semantic.json", 2)  # younger than 7 days
    _stale_file(lab, "notes.txt", 90)  # not ghost_*
    orch = lab.orchestrator()
    orphans = orch.orchestrate({"intent": "list_tasks"})["orphans"]
    assert sorted((o["path"], o["artifact"]) for o in orphans) == sorted(
        [(str(stale_cap), "capture"), (str(stale_md), "analysis")])
    orch.orchestrate({"intent": "cleanup_task", "task_id": str(stale_cap)})
    assert not stale_cap.exists() and stale_md.exists() and len(lab.hitl.asked) == 1


def test_orphans_returned_by_the_first_list_tasks_only(lab: Lab) -> None:
    _stray_capture(lab)
    orch = lab.orchestrator()
    assert len(orch.orchestrate({"intent": "list_tasks"})["orphans"]) == 1
    assert orch.orchestrate({"intent": "list_tasks"})["orphans"] == []


def test_empty_task_registry_first_task_in_session(lab: Lab) -> None:
    orch = lab.orchestrator()
    listed = orch.orchestrate({"intent": "list_tasks"})
    assert listed["tasks"] == [] and listed["orphans"] == []
    assert not orch.rt.registry.path.exists() or orch.rt.registry.path.stat().st_size == 0


def _stray_blob(lab: Lab) -> str:
    """A ghost_* blob no task knows (its capture session deleted long ago, or made by hand)."""
    name = f"{STRAY}.cap"
    now = lab.clock.now().timestamp()
    lab.state.put_blob("forensicssa", "captures", name, b"\xd4\xc3\xb2\xa1", created=now, available_at=now)
    return name


def _completed_task(lab: Lab, session: str = "s0") -> str:
    old = lab.orchestrator(session=session)
    task_id = old.orchestrate(request())["task_id"]
    lab.clock.advance(65)
    assert old.orchestrate({"intent": "check_task", "task_id": task_id})["state"] == "COMPLETED"
    old.close()
    return task_id


def test_layer2_ghost_blob_no_task_knows_in_a_registry_named_account_is_untracked(lab: Lab) -> None:
    task_id = _completed_task(lab)
    blob = _stray_blob(lab)
    lab.hitl.asked.clear()
    orch = lab.orchestrator(session="s1")
    assert any("storage blob list --account-name forensicssa -c captures --prefix ghost_" in c
               for c in lab.shell.calls) and lab.hitl.asked == []  # a SAFE read
    orphans = orch.orchestrate({"intent": "list_tasks"})["orphans"]
    url = f"https://forensicssa.blob.core.windows.net/captures/{blob}"
    assert [(o["kind"], o.get("task_id") or o.get("name"), o.get("resource_type")) for o in orphans] == [
        ("needs_cleanup", task_id, None), ("untracked_azure", url, "storage_blob")]  # the task's own blob is known
    resp = orch.orchestrate({"intent": "cleanup_task", "task_id": url})
    assert resp["orphans"] == [] and lab.blobs() == [f"{task_id}.cap"]
    assert lab.hitl.asked == [f"az storage blob delete --account-name forensicssa -c captures -n {blob} "
                              f"--auth-mode login"]


def test_layer2_blob_scan_only_where_a_registry_names_storage_and_scale_set_blobs_are_known(lab: Lab) -> None:
    _stray_blob(lab)
    lab.orchestrator()  # no registry names a storage account: nothing to list, the stray blob is not seen
    assert not any("storage blob list" in c for c in lab.shell.calls)
    from netghost.orchestrator._orphans import _is_known_blob

    known = {"ghost_web-vmss_20261122T050000.cap"}
    assert _is_known_blob("ghost_web-vmss_20261122T050000_2.cap", known)
    assert not _is_known_blob("ghost_web-vmss_20261122T050000_x.cap", known)
    assert not _is_known_blob("ghost_other_20261122T050000.cap", known)


def test_layer1_sees_what_an_earlier_run_of_the_same_session_left_uncleaned(lab: Lab) -> None:
    """A resumed session is built with its own id: the tasks its earlier run created are in the registry
    already. One that ended uncleaned is reported (to be finished); one still on its way is not an orphan
    (the resume reconciles it with check_task)."""
    first = lab.orchestrator(session="s1")
    done_id = first.orchestrate(request())["task_id"]
    lab.clock.advance(65)
    assert first.orchestrate({"intent": "check_task", "task_id": done_id})["state"] == "COMPLETED"
    running_id = first.orchestrate(request("redis-primary", duration_seconds=300))["task_id"]
    first.close()
    again = lab.orchestrator(session="s1")  # the same session, resumed
    orphans = again.orchestrate({"intent": "list_tasks"})["orphans"]
    assert [(o["kind"], o["task_id"], o["session_id"], o["state"]) for o in orphans] == [
        ("needs_cleanup", done_id, "s1", "COMPLETED")]
    assert running_id not in {o["task_id"] for o in orphans}
