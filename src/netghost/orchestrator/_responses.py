"""Responses to the Brain, built from task records and validated by the contracts before they leave.

A task's ``status`` follows from its state; after cleanup (CLEANING_UP, DONE) it is the outcome the
task had before cleanup, kept in ``failure_reason`` (``cancelled``, ``max_polls_exceeded`` / ``capture_overdue``, any
other name = failed, none = completed). The Brain never sees shell fields (classification, exit
codes): only orchestration-level status, paths, hashes and the reasons.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from netghost.contracts import IN_FLIGHT_TASK_STATES, TaskRecord, TaskState, parse_orchestrator_response

__all__ = ["error_response", "list_response", "outcome_state", "status_of", "task_response"]

S = TaskState
TIMEOUT_REASONS = frozenset({"max_polls_exceeded", "capture_overdue"})
"""The failure reasons of a TIMED_OUT task (the poll count, the time window)."""
_PENDING = IN_FLIGHT_TASK_STATES


def status_of(record: TaskRecord, *, waiting_for_partner: bool = False) -> str:
    """The seed's response status for a record."""
    if record.state in _PENDING or waiting_for_partner:
        return "task_pending"
    reason = record.failure_reason
    if record.state == S.TIMED_OUT or reason in TIMEOUT_REASONS:
        return "task_timed_out"
    if record.state == S.CANCELLED or reason == "cancelled":
        return "task_cancelled"
    if record.state == S.FAILED or reason is not None:
        return "task_failed"
    return "task_completed"


_OUTCOME_OF: dict[str, TaskState] = {"task_completed": S.COMPLETED, "task_failed": S.FAILED,
                                     "task_timed_out": S.TIMED_OUT, "task_cancelled": S.CANCELLED}


def outcome_state(record: TaskRecord) -> TaskState:
    """The state a task's capture ended in, also once its cleanup ran (CLEANING_UP, DONE).

    Seed 000's paired response shows a partner that failed as ``FAILED`` although the automatic
    cleanup has long moved it on: what the Brain needs is how the partner's capture ended.
    """
    if record.state in (S.CLEANING_UP, S.DONE):
        return _OUTCOME_OF.get(status_of(record), record.state)
    return record.state


def _instance_files(record: TaskRecord) -> list[str]:
    """A scale-set task's instance captures (``<stem>_<instanceId>.cap``) as registered, by instance id.

    Read from the artifact hashes, not the disk, so the list stays the same after cleanup removed them.
    """
    if record.target_type != "vmss" or not record.local_pcap_path:
        return []
    local = PurePath(record.local_pcap_path)
    found: list[tuple[int, str]] = []
    for rel in record.artifact_hashes:
        name = PurePath(rel).name
        tail = name.removeprefix(local.stem + "_").removesuffix(local.suffix)
        if name.startswith(local.stem + "_") and name.endswith(local.suffix) and tail.isdigit():
            found.append((int(tail), str(local.parent / rel)))
    return [path for _n, path in sorted(found)]


def _fleet_report(record: TaskRecord) -> str | None:
    """A scale-set task's fleet report (``fleet/fleet_report.md`` beside the captures), as registered."""
    if not record.local_pcap_path:
        return None
    rel = next((k for k in record.artifact_hashes if PurePath(k).as_posix().endswith("fleet/fleet_report.md")), None)
    return str(PurePath(record.local_pcap_path).parent / rel) if rel else None


def _result(record: TaskRecord, fallback: bool) -> dict[str, Any] | None:
    if record.report_path is None and record.semantic_json_path is None:
        return None
    instances = _instance_files(record)
    common = {"semantic_json_path": record.semantic_json_path,
              "local_pcap_path": instances[0] if instances else record.local_pcap_path,
              "artifact_hashes": dict(record.artifact_hashes), "stop_reason": record.stop_reason,
              "instance_pcap_paths": instances or None, "fleet_report_path": _fleet_report(record)}
    if fallback:
        return {"mode": "single_end_fallback", "report_path": record.report_path or "", **common}
    return {"report_path": record.report_path, "mode": "compare" if record.analysis_mode == "compare" else "single",
            **common}


def task_response(
    record: TaskRecord,
    message: str,
    *,
    elapsed_seconds: float | None = None,
    partner: TaskRecord | None = None,
    waiting_for_partner: bool = False,
) -> dict[str, Any]:
    """The response for one task (``paired_task`` set for dual-end)."""
    status = status_of(record, waiting_for_partner=waiting_for_partner)
    polling = record.state in (S.PROVISIONING, S.WAITING)
    body: dict[str, Any] = {
        "task_id": record.task_id,
        "status": status,
        "state": record.state.value,
        "investigation_context": record.investigation_context,
        "result": _result(record, record.analysis_mode == "single_end_fallback") if status == "task_completed" else None,
        "cleanup_status": record.cleanup_status,
        "error_detail": record.error_detail,
        "failure_reason": record.failure_reason,
        "denied_action": record.denied_action,
        "poll_count": record.poll_count if polling else None,
        "max_polls": record.max_polls if polling else None,
        "elapsed_seconds": elapsed_seconds,
        "duration_seconds": record.duration_seconds,
        "message": message,
    }
    if partner is not None:
        body["paired_task"] = {"task_id": partner.task_id, "state": outcome_state(partner).value,
                               "poll_count": partner.poll_count, "error_detail": partner.error_detail,
                               "cleanup_status": partner.cleanup_status}
    body = {k: v for k, v in body.items() if v is not None}
    parsed = parse_orchestrator_response(body)
    dumped: dict[str, Any] = parsed.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def error_response(error: str, message: str, task_id: str | None = None) -> dict[str, Any]:
    """``{status: "error", error, message}``: no task state changed."""
    body: dict[str, Any] = {"status": "error", "error": error, "message": message}
    if task_id is not None:
        body["task_id"] = task_id
    dumped: dict[str, Any] = parse_orchestrator_response(body).model_dump(mode="json", by_alias=True,
                                                                        exclude_none=True)
    return dumped


def list_response(records: list[TaskRecord], orphans: list[dict[str, Any]], message: str) -> dict[str, Any]:
    """``list_tasks``: every task of the session plus the start-up orphans."""
    body = {"tasks": [r.model_dump(mode="json") for r in records], "orphans": orphans, "message": message}
    dumped: dict[str, Any] = parse_orchestrator_response(body).model_dump(mode="json", by_alias=True)
    return dumped
