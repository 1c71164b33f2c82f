"""Burst polling: the backoff schedule and one ``check_task``'s loop of show-status calls.

Interval before poll ``n+1`` is ``min(initial * 2^(n-1), max)`` (seed 000: 5, 10, 20, 30, 30 ...).
A burst polls, sleeps through the configured sleeper (a real ``time.sleep`` unless one is injected)
and polls again until the capture leaves ``Running`` or the next sleep would pass
``poll_burst_limit``. Completion is read from ``packetCaptureStatus`` (``Stopped`` -> download,
``Error`` -> FAILED with ``packetCaptureError``), never from ``provisioningState``. A poll that fails
(network, a transient 500) changes nothing and is not a failure of the capture; the capture missing
(exit 3) is.

The budget is time first: a capture still not stopped ``poll_margin_s`` after its time limit (counted
from the create, on the orchestrator's clock, so every az call's latency counts) is TIMED_OUT
``capture_overdue``; the poll count (``max_polls``, sized from the time limit) only stops a runaway
(``max_polls_exceeded``). Neither ends a task before Azure could have stopped the capture on its own
unless ``max_polls`` was set explicitly.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from netghost.contracts import TaskRecord, TaskState
from netghost.orchestrator import _commands as cmd
from netghost.orchestrator._runtime import Runtime, parse_json

__all__ = ["backoff", "burst_poll", "poll_deadline"]


def backoff(attempt: int, initial: float, maximum: float) -> float:
    """Seconds to wait after poll ``attempt`` (1-based): ``min(initial * 2^(attempt-1), maximum)``."""
    return float(min(initial * 2 ** (attempt - 1), maximum))


def poll_deadline(record: TaskRecord, margin_s: float) -> datetime | None:
    """When a still-running capture is overdue: its start (the create's answer) + time limit + margin."""
    started = record.timestamps.provisioned or record.timestamps.created
    if record.parameters is None or not started:
        return None
    begun = datetime.fromisoformat(started.replace("Z", "+00:00"))
    return begun + timedelta(seconds=record.parameters.duration_seconds + margin_s)


def _poll_once(rt: Runtime, record: TaskRecord) -> TaskRecord:
    """One show-status; returns the record in WAITING, DOWNLOADING, FAILED or TIMED_OUT."""
    argv = cmd.capture_status(record.location or "", record.task_id)
    record, ran = rt.run(record, argv, "Poll the packet capture's status (read-only).")
    count = record.poll_count + 1
    now = rt.now().isoformat(timespec="seconds").replace("+00:00", "Z")
    stamps = record.timestamps.model_copy(update={"last_poll": now, "first_poll": record.timestamps.first_poll or now})
    doc = parse_json(ran.output) if ran.outcome == "ok" else None
    if ran.outcome == "failed" and ran.exit_code == 3:
        return rt.move(record, TaskState.FAILED, poll_count=count, timestamps=stamps, failure_reason="capture_missing",
                       error_detail=f"the capture session is gone from Azure: {ran.error_text()}")
    status = doc.get("packetCaptureStatus") if isinstance(doc, dict) else None
    if status == "Stopped":
        reason = doc.get("stopReason") if isinstance(doc, dict) else None
        rt.say(f"[Cloud Orchestrator] Poll {count}/{record.max_polls}: packetCaptureStatus = Stopped"
               + (f" (stopReason {reason})" if reason else ""))
        return rt.move(record, TaskState.DOWNLOADING, poll_count=count, timestamps=stamps,
                       capture_status=status, stop_reason=reason)
    if status == "Error":
        errors = ", ".join(str(e) for e in (doc.get("packetCaptureError") or [])) if isinstance(doc, dict) else ""
        return rt.move(record, TaskState.FAILED, poll_count=count, timestamps=stamps, capture_status=status,
                       failure_reason="capture_error",
                       error_detail=f"Azure reports the capture failed: packetCaptureError [{errors}]")
    shown = status or f"poll failed ({ran.error_text()})"
    rt.say(f"[Cloud Orchestrator] Poll {count}/{record.max_polls}: packetCaptureStatus = {shown}")
    deadline = poll_deadline(record, rt.config.poll_margin_s)
    if deadline is not None and rt.now() >= deadline:
        limit = record.parameters.duration_seconds if record.parameters else 0
        return rt.move(record, TaskState.TIMED_OUT, poll_count=count, timestamps=stamps, capture_status=status,
                       failure_reason="capture_overdue",
                       error_detail=f"Azure operation did not complete within polling window (the capture's {limit} s "
                                    f"time limit plus {rt.config.poll_margin_s:g} s).")
    if count >= record.max_polls:
        return rt.move(record, TaskState.TIMED_OUT, poll_count=count, timestamps=stamps, capture_status=status,
                       failure_reason="max_polls_exceeded",
                       error_detail="Azure operation did not complete within polling window.")
    return rt.move(record, TaskState.WAITING, poll_count=count, timestamps=stamps,
                   capture_status=status or record.capture_status)


def burst_poll(rt: Runtime, record: TaskRecord, monotonic: Callable[[], float]) -> TaskRecord:
    """Poll until the capture is no longer running or the burst window is spent (a live line meanwhile)."""
    try:
        return _burst(rt, record, monotonic)
    finally:
        rt.progress(None)


def _wall(cloud_s: float, scale: float) -> str:
    """``cloud_s`` of the cloud's clock as wall seconds a person waits (``0.1 s``, ``5 s``)."""
    wall = cloud_s / scale if scale > 0 else cloud_s
    return f"{wall:.1f} s" if wall < 1 else f"{wall:.0f} s"


def _burst(rt: Runtime, record: TaskRecord, monotonic: Callable[[], float]) -> TaskRecord:
    cfg = rt.config
    start = monotonic()
    while True:
        record = _poll_once(rt, record)
        if record.state != TaskState.WAITING:
            return record
        wait = backoff(record.poll_count, cfg.initial_poll_interval, cfg.max_poll_interval)
        if monotonic() - start + wait > cfg.poll_burst_limit:
            return record
        rt.progress(f"{record.task_id}: {record.capture_status or 'no status yet'}, next check in "
                    f"{_wall(wait, cfg.clock_scale)} (check {record.poll_count} of {record.max_polls})")
        cfg.sleeper(wait)
