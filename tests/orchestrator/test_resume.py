"""Resume in-process (cheap twins of test_crash's SIGKILL cases): a shell that raises a BaseException
(which ``orchestrate`` does not catch, as a crash is not caught) leaves the registry exactly where a kill
would; a second orchestrator on the same task_dir resumes the task with ``check_task``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from netghost.shell import HitlDecision

from .conftest import InProcessShell, Lab, request


class Crash(BaseException):
    """The process died (not an error the orchestrator may catch)."""


@dataclass
class CrashingShell:
    inner: InProcessShell
    crash_on: str

    def execute(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.crash_on in req["command"]:
            raise Crash(req["command"])
        return self.inner.execute(req)


def _crash(lab: Lab, crash_on: str, **params: Any) -> str:
    orch = lab.orchestrator(session="crashed", shell=CrashingShell(lab.shell, crash_on), scan_azure_orphans=False)
    with pytest.raises(Crash):
        orch.orchestrate(request(**params))
    orch.close()
    (task_id,) = orch.rt.registry.tasks
    return task_id


def _check(orch: Any, task_id: str) -> dict[str, Any]:
    return orch.orchestrate({"intent": "check_task", "task_id": task_id})


def test_resumed_in_DETECTING_check_task_runs_the_whole_normal_flow(lab: Lab) -> None:
    task_id = _crash(lab, "storage container exists", duration_seconds=20)
    orch = lab.orchestrator(session="resumed")
    assert orch.rt.registry.get(task_id).state.value == "DETECTING"  # type: ignore[union-attr]
    done = _check(orch, task_id)  # detect, create, burst-poll 5+10+20 s past the 20 s capture, download, analyse
    assert (done["status"], done["state"]) == ("task_completed", "COMPLETED"), done
    assert sum("packet-capture create" in c for c in lab.shell.calls) == 1
    assert len(lab.hitl.asked) == 2
    assert "packet-capture create" in lab.hitl.asked[0] and "storage blob download" in lab.hitl.asked[1]


def test_resumed_in_DETECTING_long_capture_is_polling_after_the_first_check(lab: Lab) -> None:
    task_id = _crash(lab, "storage container exists", duration_seconds=120)
    resp = _check(lab.orchestrator(session="resumed"), task_id)
    assert (resp["status"], resp["state"]) == ("task_pending", "WAITING") and resp["poll_count"] >= 1


def test_killed_at_the_create_prompt_show_says_none_create_reissued_after_a_second_approval(lab: Lab) -> None:
    task_id = _crash(lab, "packet-capture create", duration_seconds=20)
    orch = lab.orchestrator(session="resumed")
    record = orch.rt.registry.get(task_id)
    assert record is not None and (record.state.value, record.create_issued) == ("APPROVED", True)
    done = _check(orch, task_id)
    assert done["status"] == "task_completed", done
    calls = lab.shell.calls
    show = next(i for i, c in enumerate(calls) if "packet-capture show " in c)
    create = [i for i, c in enumerate(calls) if "packet-capture create" in c]
    assert len(create) == 1 and show < create[0]  # asked Azure first; one capture only
    assert sum("packet-capture create" in p for p in lab.hitl.asked) == 1  # approved again by the human
    assert lab.captures() == [task_id]


def test_killed_at_the_create_prompt_second_approval_denied_cancels_nothing_created(lab: Lab) -> None:
    task_id = _crash(lab, "packet-capture create")
    lab.hitl.script["packet-capture create"] = HitlDecision.deny("changed my mind")
    resp = _check(lab.orchestrator(session="resumed"), task_id)
    assert (resp["status"], resp["denied_action"], resp["cleanup_status"]) == (
        "task_cancelled", "user_denied", "skipped"), resp
    assert lab.captures() == []


def test_killed_at_the_create_prompt_plan_broken_no_recreate(lab: Lab) -> None:
    task_id = _crash(lab, "packet-capture create")
    orch = lab.orchestrator(session="resumed")
    record = orch.rt.registry.get(task_id)
    assert record is not None and record.plan is not None
    tampered = [s for s in record.plan if "create" not in s]  # the create is no longer in the plan
    orch.rt.registry.tasks[task_id] = record.model_copy(update={"plan": tampered})
    resp = _check(orch, task_id)
    assert resp["status"] == "task_failed" and resp["failure_reason"] == "plan_token_mismatch", resp
    assert not any("packet-capture create" in c for c in lab.shell.calls) and lab.captures() == []
