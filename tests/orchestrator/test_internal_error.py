"""``orchestrate()`` never raises (seed 000): an unexpected exception from a dependency becomes an
``internal_error`` response naming the exception, its traceback goes to the log, and the task the
request was moving is recorded FAILED (``internal_error``) and cleaned up: nothing is left half-done."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pytest

from .conftest import InProcessShell, Lab, request


@dataclass
class FailingShell:
    """The lab shell, except that a command containing one of ``fail_on`` raises (a broken dependency)."""

    inner: InProcessShell
    fail_on: list[str] = field(default_factory=list)
    raised: int = 0

    def execute(self, req: dict[str, Any]) -> dict[str, Any]:
        if any(needle in req["command"] for needle in self.fail_on):
            self.raised += 1
            raise RuntimeError(f"boom {self.raised}")
        return self.inner.execute(req)


def _failing(lab: Lab, *fail_on: str) -> FailingShell:
    return FailingShell(lab.shell, list(fail_on))


def test_exception_while_polling_is_internal_error_task_failed_and_cleaned(
        lab: Lab, caplog: pytest.LogCaptureFixture) -> None:
    shell = _failing(lab)
    orch = lab.orchestrator(shell=shell)
    task_id = orch.orchestrate(request())["task_id"]
    shell.fail_on.append("show-status")
    lab.clock.advance(65)
    with caplog.at_level(logging.ERROR, logger="netghost.orchestrator"):
        resp = orch.orchestrate({"intent": "check_task", "task_id": task_id})
    assert (resp["status"], resp["error"], resp["task_id"]) == ("error", "internal_error", task_id)
    assert "RuntimeError: boom 1" in resp["message"] and "recorded FAILED" in resp["message"]
    record = orch.rt.registry.get(task_id)
    assert record is not None and record.failure_reason == "internal_error"
    assert (record.state.value, record.cleanup_status) == ("DONE", "completed")
    assert "RuntimeError: boom 1" in (record.error_detail or "")
    assert lab.captures() == [] and lab.blobs() == []
    logged = [r for r in caplog.records if r.exc_info]
    assert logged and logged[0].exc_info[0] is RuntimeError  # type: ignore[index]  never swallowed silently
    assert "Traceback" in caplog.text and "boom 1" in caplog.text
    again = orch.orchestrate({"intent": "check_task", "task_id": task_id})  # an ordinary, idempotent answer now
    assert (again["status"], again["failure_reason"]) == ("task_failed", "internal_error")


def test_exception_in_detecting_fails_the_new_task_nothing_was_created(lab: Lab) -> None:
    orch = lab.orchestrator(shell=_failing(lab, "storage container exists"))
    resp = orch.orchestrate(request())
    assert resp["error"] == "internal_error" and resp["task_id"].startswith("ghost_web-vm-01_")
    record = orch.rt.registry.get(resp["task_id"])
    assert record is not None and (record.state.value, record.cleanup_status) == ("FAILED", "skipped")
    assert lab.captures() == [] and lab.hitl.asked == []


def test_exception_again_during_the_cleanup_leaves_done_partial_and_cleanup_task_finishes(lab: Lab) -> None:
    shell = _failing(lab)
    orch = lab.orchestrator(shell=shell)
    task_id = orch.orchestrate(request())["task_id"]
    shell.fail_on += ["show-status", "packet-capture delete"]
    resp = orch.orchestrate({"intent": "check_task", "task_id": task_id})
    assert resp["error"] == "internal_error"
    record = orch.rt.registry.get(task_id)
    assert record is not None and (record.state.value, record.cleanup_status) == ("DONE", "partial")
    assert lab.captures() == [task_id]  # the delete never ran: cleanup_task retries it
    shell.fail_on.clear()
    cleaned = orch.orchestrate({"intent": "cleanup_task", "task_id": task_id})
    assert (cleaned["state"], cleaned["cleanup_status"]) == ("DONE", "completed") and lab.captures() == []


def test_a_failing_non_shell_dependency_the_sleeper(lab: Lab) -> None:
    def sleeper(_seconds: float) -> None:
        raise ZeroDivisionError("sleeper broke")

    orch = lab.orchestrator(sleeper=sleeper)
    task_id = orch.orchestrate(request(duration_seconds=300))["task_id"]
    resp = orch.orchestrate({"intent": "check_task", "task_id": task_id})
    assert resp["error"] == "internal_error" and "ZeroDivisionError: sleeper broke" in resp["message"]
    assert orch.rt.registry.get(task_id).failure_reason == "internal_error"  # type: ignore[union-attr]
    assert lab.captures() == []


def test_exception_outside_any_task_is_internal_error_without_a_task(lab: Lab) -> None:
    orch = lab.orchestrator()
    orch.rt.registry.tasks = None  # type: ignore[assignment]  a broken registry: list_tasks raises TypeError
    resp = orch.orchestrate({"intent": "list_tasks"})
    assert (resp["status"], resp["error"]) == ("error", "internal_error") and "task_id" not in resp
    assert "AttributeError" in resp["message"] or "TypeError" in resp["message"]
