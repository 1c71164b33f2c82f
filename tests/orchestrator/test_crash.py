"""Crash and resume (issue 11): SIGKILL the orchestrator's process in each non-terminal state, then a new
orchestrator on the same task_dir finishes the task, or fails it cleanly, or offers its cleanup through
orphan detection. Every case ends with the lab holding no ghost_* capture or blob and with exactly one
create ever sent for the task. The child is ``_crash_child`` (a real process, really killed)."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from netghost.contracts import CHAIN_FIELD_NAMES, TaskState
from netghost.governance import WalWriter, read_wal

from .conftest import Lab, request

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _child(lab: Lab, req: dict[str, Any], kill_on: str, when: str = "before") -> int:
    proc = subprocess.run([sys.executable, "-m", "tests.orchestrator._crash_child", str(lab.root), json.dumps(req),
                           kill_on, when], cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    return proc.returncode


def _resumed(lab: Lab) -> Any:
    return lab.orchestrator(session="resumed", clock=lambda: lab.state.clock().now_dt(),
                            sleeper=lab.state.advance_clock)


def _last(lab: Lab) -> dict[str, Any]:
    records = read_wal(lab.root / "audit" / "orchestrator_tasks_crashed.jsonl").records
    return records[-1]


def _creates_sent(lab: Lab) -> int:
    """Creates the resumed orchestrator sent (the killed child sent at most one; a second create of the
    same name would also fail in the lab with a conflict, so a completed task proves there was one)."""
    return sum("packet-capture create" in c for c in lab.shell.calls)


def _finish(lab: Lab, orch: Any, task_id: str) -> dict[str, Any]:
    for _ in range(3):  # a 60 s capture outlasts one 45 s burst: a task resumed before its create needs two
        lab.state.advance_clock(65)
        done = orch.orchestrate({"intent": "check_task", "task_id": task_id})
        if done["status"] != "task_pending":
            break
    assert done["status"] == "task_completed", json.dumps(done)
    assert orch.orchestrate({"intent": "cleanup_task", "task_id": task_id})["cleanup_status"] == "completed"
    return done


def _clean(lab: Lab) -> None:
    assert lab.captures() == [] and lab.blobs() == []


@pytest.mark.parametrize(("kill_on", "when", "state_at_kill"), [
    ("storage container exists", "before", "DETECTING"),
    ("packet-capture create", "after", "APPROVED"),
    ("sleep", "-", "WAITING"),
    ("storage blob download", "before", "DOWNLOADING"),
    ("storage blob download", "after", "DOWNLOADING"),
    ("pcap-forensics", "before", "ANALYZING"),
], ids=["DETECTING", "APPROVED-create-ran", "WAITING", "DOWNLOADING-at-prompt", "DOWNLOADING-file-written",
        "ANALYZING"])
def test_sigkill_in_state_then_new_orchestrator_finishes_the_task(lab: Lab, kill_on: str, when: str,
                                                                   state_at_kill: str) -> None:
    early = state_at_kill in ("DETECTING", "APPROVED")
    code = _child(lab, request(duration_seconds=60), kill_on if early else "", when)
    if early:
        assert code == -signal.SIGKILL
    else:  # capture_traffic ran to PROVISIONING; the check_task is the one killed
        assert code == 0
        task_id = _last(lab)["task_id"]
        lab.state.advance_clock(65 if state_at_kill != "WAITING" else 0)
        code = _child(lab, {"intent": "check_task", "task_id": task_id}, kill_on, when)
        assert code == -signal.SIGKILL
    last = _last(lab)
    assert last["state"] == state_at_kill and last["create_issued"] == (state_at_kill != "DETECTING")
    orch = _resumed(lab)
    orphans = orch.orchestrate({"intent": "list_tasks"})["orphans"]
    assert [(o["kind"], o["task_id"], o["state"]) for o in orphans] == [("abandoned_task", last["task_id"],
                                                                        state_at_kill)]
    done = _finish(lab, orch, last["task_id"])
    assert Path(done["result"]["report_path"]).is_file()
    assert _creates_sent(lab) == (1 if state_at_kill == "DETECTING" else 0)  # the resumed one never re-creates
    downloads = sum("storage blob download" in c for c in lab.shell.calls)
    # the file the killed child downloaded is kept (it matches the blob): no second download, no prompt
    kept = (kill_on, when) == ("storage blob download", "after") or state_at_kill == "ANALYZING"
    assert downloads == (0 if kept else 1)
    _clean(lab)


def test_a_download_registered_just_before_a_crash_is_analysed_not_downloaded_again(lab: Lab) -> None:
    """The registry's last record is DOWNLOADING with the capture's hash already registered (the process
    died before it moved on): the capture on disk is analysed, nothing is downloaded or asked again."""
    assert _child(lab, request(duration_seconds=60), "") == 0
    task_id = _last(lab)["task_id"]
    lab.state.advance_clock(65)
    assert _child(lab, {"intent": "check_task", "task_id": task_id}, "") == 0
    path = lab.root / "audit" / "orchestrator_tasks_crashed.jsonl"
    registered = [r for r in read_wal(path).records if r["state"] == "DOWNLOADING" and r["artifact_hashes"]]
    assert registered and Path(registered[-1]["local_pcap_path"]).is_file()
    writer = WalWriter(path)  # the crash: the registry's last word is that record
    writer.append({k: v for k, v in registered[-1].items() if k not in CHAIN_FIELD_NAMES})
    writer.close()
    orch = _resumed(lab)
    done = orch.orchestrate({"intent": "check_task", "task_id": task_id})
    assert done["status"] == "task_completed", done
    assert not [c for c in lab.shell.calls if "storage blob download" in c or "storage blob show" in c]
    assert orch.orchestrate({"intent": "cleanup_task", "task_id": task_id})["cleanup_status"] == "completed"
    _clean(lab)


def test_a_partial_file_left_by_a_killed_download_is_replaced_not_analysed(lab: Lab) -> None:
    assert _child(lab, request(duration_seconds=60), "") == 0
    task_id = _last(lab)["task_id"]
    lab.state.advance_clock(65)
    assert _child(lab, {"intent": "check_task", "task_id": task_id}, "storage blob download", "after") \
        == -signal.SIGKILL
    local = Path(_last(lab)["local_pcap_path"])
    whole = local.read_bytes()
    local.write_bytes(whole[: len(whole) // 2])  # what a download killed half-way leaves
    orch = _resumed(lab)
    done = orch.orchestrate({"intent": "check_task", "task_id": task_id})
    assert done["status"] == "task_completed", done
    shown = next(i for i, c in enumerate(lab.shell.calls) if "storage blob show" in c)
    again = [i for i, c in enumerate(lab.shell.calls) if "storage blob download" in c]
    assert len(again) == 1 and shown < again[0]  # checked against the blob, then downloaded again
    assert local.read_bytes() == whole  # the analysed file is the whole blob, registered with its hash
    digest = "sha256:" + hashlib.sha256(whole).hexdigest()
    assert _last_task(lab)["artifact_hashes"][local.name] == digest
    assert orch.orchestrate({"intent": "cleanup_task", "task_id": task_id})["cleanup_status"] == "completed"
    _clean(lab)


def _last_task(lab: Lab) -> dict[str, Any]:
    return read_wal(lab.root / "audit" / "orchestrator_tasks_resumed.jsonl").records[-1]


def test_sigkill_at_the_create_prompt_show_says_none_create_reissued_after_a_second_approval(lab: Lab) -> None:
    assert _child(lab, request(), "packet-capture create", "before") == -signal.SIGKILL
    last = _last(lab)
    assert (last["state"], last["create_issued"]) == ("APPROVED", True)
    assert lab.captures() == []
    orch = _resumed(lab)
    done = _finish(lab, orch, last["task_id"])
    assert Path(done["result"]["report_path"]).is_file()
    show = next(i for i, c in enumerate(lab.shell.calls) if "packet-capture show " in c)
    create = next(i for i, c in enumerate(lab.shell.calls) if "packet-capture create" in c)
    assert show < create and _creates_sent(lab) == 1  # Azure asked first; the human approved the create again
    assert sum("packet-capture create" in p for p in lab.hitl.asked) == 1
    _clean(lab)


def test_provisioning_left_by_a_dead_session_is_resumed(lab: Lab) -> None:
    assert _child(lab, request(), "no-such-command") == 0  # the process ends with the task in PROVISIONING
    last = _last(lab)
    assert last["state"] == TaskState.PROVISIONING.value
    orch = _resumed(lab)
    _finish(lab, orch, last["task_id"])
    _clean(lab)


def test_sigkill_during_cleanup_then_cleanup_task_finishes_it(lab: Lab) -> None:
    assert _child(lab, request(), "") == 0
    task_id = _last(lab)["task_id"]
    lab.state.advance_clock(65)
    assert _child(lab, {"intent": "check_task", "task_id": task_id}, "") == 0
    assert _child(lab, {"intent": "cleanup_task", "task_id": task_id}, "packet-capture delete", "after") \
        == -signal.SIGKILL
    assert _last(lab)["state"] == "CLEANING_UP"
    orch = _resumed(lab)
    orphans = orch.orchestrate({"intent": "list_tasks"})["orphans"]
    assert [o["task_id"] for o in orphans] == [task_id]
    resp = orch.orchestrate({"intent": "cleanup_task", "task_id": task_id})
    assert (resp["state"], resp["cleanup_status"]) == ("DONE", "completed"), resp
    _clean(lab)
