"""CloudOrchestrator: ``orchestrate(request) -> response`` for the five intents; it never raises.

Dispatch validates the request with the contracts (an unknown intent, a missing or invalid
parameter become ``error`` responses), then each intent drives task records through the transition
table (:mod:`._states`), saving every transition to the registry before acting on it. Every command
goes through ``shell.execute`` via :class:`._runtime.Runtime` (plan membership, audit ids); the
orchestrator starts no process. Dual-end requests (``"A to B"``) become two linked tasks.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console

from netghost.contracts import (
    IN_FLIGHT_TASK_STATES,
    TERMINAL_TASK_STATES,
    CaptureTrafficRequest,
    CleanupStep,
    TaskRecord,
    TaskState,
    TaskTimestamps,
    parse_orchestrator_request,
)
from netghost.errors import NetGhostError, OrchestratorError
from netghost.governance import PolicyEngine, create_workspace
from netghost.orchestrator._budgets import capture_budget_facts
from netghost.orchestrator._cleanup import cleanup_plan, run_cleanup
from netghost.orchestrator._console import ProgressLine, console_sayer, new_task_lines, target_lines
from netghost.orchestrator._lifecycle import analyse, download, provision, settle_unknown_create
from netghost.orchestrator._naming import resolve_target, task_id_base
from netghost.orchestrator._orphans import clean_orphan, detect_orphans
from netghost.orchestrator._plan import (
    PlanInputs,
    build_plan,
    compare_order,
    load_policy,
    plan_token,
    preflight,
    storage_account_ref,
)
from netghost.orchestrator._polling import burst_poll
from netghost.orchestrator._preflight import detect, fail
from netghost.orchestrator._registry import Registry
from netghost.orchestrator._responses import error_response, list_response, status_of, task_response
from netghost.orchestrator._runtime import Config, PlanViolation, Runtime, ShellLike
from netghost.orchestrator._states import TRANSITIONS

__all__ = ["CloudOrchestrator"]

S = TaskState
_AUTO_CLEANUP = frozenset({S.FAILED, S.TIMED_OUT, S.CANCELLED})
_INTERRUPTIBLE = IN_FLIGHT_TASK_STATES
"""States a request can leave a task in mid-way; an internal error moves such a task to FAILED."""
_log = logging.getLogger(__name__)


class CloudOrchestrator:
    """Packet captures as persistent, plan-bound, crash-safe tasks (seed 000, issue 11).

    Args:
        shell: the Safe-Exec Shell (anything with ``execute({command, reasoning}) -> dict``).
        session_id: names the registry file; shared with the shell for audit correlation.
        task_dir: directory of every session's ``orchestrator_tasks_{session_id}.jsonl``.
        **config: seed 000 "Configuration" (``max_polls``: default sized from each capture's time limit,
            ``initial_poll_interval``, ``max_poll_interval``, ``local_capture_dir``, ``storage_container``,
            ``capture_name_prefix``, ``poll_burst_limit``, ``local_artifact_max_age_days``) plus
            ``storage_auth_mode`` (login|key), ``engine_command`` (argv prefix of the forensics engine),
            ``capture_limit_bytes``, ``max_capture_bytes``, ``download_retry_delay_s``, ``scan_azure_orphans``,
            ``poll_margin_s`` (how long past a capture's time limit polling goes on), ``clock`` and ``sleeper``
            (default: wall time and a real ``time.sleep``, what the real cloud needs; the lab injects its
            accelerated clock, tests a fake one), ``budgets`` (the session's :class:`Budgets`; the capture ones
            are enforced at preflight), ``console`` (rich) and ``policy`` (a PolicyEngine; default: governance's
            policy plus the orchestrator's capture limits and budgets).

    Raises:
        OrchestratorError: an unknown configuration key (the only thing the constructor refuses).
    """

    def __init__(self, shell: ShellLike, session_id: str, task_dir: str = "./audit/", **config: Any) -> None:
        console: Console | None = config.pop("console", None)
        policy: PolicyEngine | None = config.pop("policy", None)
        names = {f.name for f in dataclasses.fields(Config)}
        unknown = sorted(set(config) - names)
        if unknown:
            raise OrchestratorError(f"unknown orchestrator configuration: {', '.join(unknown)}")
        if "engine_command" in config:
            config["engine_command"] = tuple(config["engine_command"])
        cfg = Config(**config)
        say = console_sayer(console)
        registry = Registry(Path(task_dir), session_id, clock=cfg.clock, warn=lambda t: say(f"[yellow]{t}[/]"))
        self.rt = Runtime(shell, session_id, registry, cfg, say, ProgressLine(console).update)
        self._policy = policy
        self.orphans: list[dict[str, Any]] = detect_orphans(self.rt)
        self._orphans_reported = False
        self._lock = threading.RLock()

    # ---- the one entry point -----------------------------------------------------------------

    def orchestrate(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Dispatch one request; every error is a response, nothing is raised (seed 000).

        An exception a handler did not turn into a task outcome becomes an ``error`` response:
        ``invalid_parameter`` for the project's own errors and the OS/value errors a request can
        cause, ``internal_error`` for anything else; either way with the exception's type and
        message, its traceback logged, and every task the request had moved recorded FAILED
        (``failure_reason`` ``internal_error``) and cleaned up, so none is left half-done.

        Calls are serialized (seed 000: the orchestrator is single-threaded): a second call made while
        one runs, e.g. a concurrent ``check_task`` of the same task, waits and then reads the state the
        first one left, so it never polls, downloads or analyses the same task twice at once.
        """
        with self._lock:
            self.rt.touched.clear()
            try:
                return self._dispatch(request)
            except Exception as exc:  # the contract: orchestrate never raises
                return self._unexpected(request, exc)

    def cancel_at_session_end(self, task_id: str, cause: str) -> dict[str, Any]:
        """Cancel a task still on its way because the session is ending (``cause``: Ctrl-C, an error ...).

        Why not ``cancel_task``: its reason is the model's text (seed 001 Tool 4), so a record made from
        it cannot say who stopped the task. This entry is the agent's own, called by its end-of-session
        sweep: the record keeps ``failure_reason`` ``cancelled`` (the task reads as cancelled, also once
        its cleanup moved it to DONE) and its ``error_detail`` names the session's end as the cause, never
        the model. The automatic cleanup follows as for any cancellation. Like :meth:`orchestrate`, it
        never raises.

        Args:
            task_id: a task of this session.
            cause: why the session ended, in the agent's words (not the model's).
        """
        with self._lock:
            self.rt.touched.clear()
            try:
                record = self.rt.registry.get(task_id)
                if record is None:
                    return error_response("unknown_task", f"No task found with ID: {task_id}", task_id=task_id)
                return self._cancel(record, f"cancelled because {cause}, before the task finished")
            except Exception as exc:  # as orchestrate(): never raises
                return self._unexpected({"intent": "cancel_task", "task_id": task_id}, exc)

    def close(self) -> None:
        """Release the registry file."""
        self.rt.registry.close()

    def _unexpected(self, request: Mapping[str, Any], exc: Exception) -> dict[str, Any]:
        """Log ``exc`` with its traceback, fail the tasks it interrupted, answer with an error response."""
        known = isinstance(exc, (NetGhostError, OSError, ValueError))
        code = "invalid_parameter" if known else "internal_error"
        text = f"{type(exc).__name__}: {exc}"
        intent = request.get("intent") if isinstance(request, Mapping) else None
        _log.error("orchestrate(%s) failed: %s", intent, text, exc_info=exc)
        self.rt.say(f"[red][Cloud Orchestrator] {'request failed' if known else 'internal error'}: {text}[/]")
        failed = [task_id for task_id in list(self.rt.touched) if self._fail_interrupted(task_id, exc)]
        task_id = failed[0] if failed else (
            str(request["task_id"]) if isinstance(request, Mapping) and request.get("task_id") else None)
        tail = f"; task {', '.join(failed)} recorded FAILED (internal_error)" if failed else ""
        prefix = "request failed" if known else "internal error"
        return error_response(code, f"{prefix}: {text}{tail}", task_id=task_id)

    def _fail_interrupted(self, task_id: str, exc: Exception) -> bool:
        """Record a task an exception interrupted as FAILED and run its cleanup; True when it was failed.

        A cleanup the exception interrupted (or one that raises again) ends DONE with ``partial``
        cleanup: ``cleanup_task`` retries it and start-up orphan detection offers it.
        """
        record = self.rt.registry.get(task_id)
        if record is None:
            return False
        failed = False
        try:
            if record.state in _INTERRUPTIBLE:
                record = self.rt.move(record, S.FAILED, failure_reason="internal_error",
                                      error_detail=f"internal error: {type(exc).__name__}: {exc}")
                failed = True
                record = self._auto_cleanup(record)
        except Exception:  # a second failure is logged; the task is settled below
            _log.exception("cleanup of task %s after an internal error failed", task_id)
        try:
            record = self.rt.registry.get(task_id) or record
            if record.state == S.CLEANING_UP:
                self.rt.move(record, S.DONE, cleanup_status="partial")
        except Exception:  # the registry itself is failing: logged, nothing more to do
            _log.exception("task %s could not be settled after an internal error", task_id)
        return failed

    def _dispatch(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(request, Mapping):
            return error_response("invalid_parameter", "request must be a JSON object")
        try:
            parsed = parse_orchestrator_request(request)
        except ValidationError as exc:
            return _validation_error(request, exc)
        if isinstance(parsed, CaptureTrafficRequest):
            return self._capture(parsed)
        if parsed.intent == "list_tasks":
            return self._list()
        record = self.rt.registry.get(parsed.task_id)
        if record is None and parsed.intent == "cleanup_task" and self._orphan(parsed.task_id) is not None:
            return self._cleanup_orphan(parsed.task_id)
        if record is None:
            return error_response("unknown_task", f"No task found with ID: {parsed.task_id}", task_id=parsed.task_id)
        if parsed.intent == "check_task":
            return self._check(record)
        if parsed.intent == "cancel_task":
            return self._cancel(record, f"cancelled by the Brain{': ' + parsed.reason if parsed.reason else ''}")
        return self._cleanup(record)

    # ---- capture_traffic ---------------------------------------------------------------------

    def _policy_engine(self) -> PolicyEngine:
        if self._policy is None:
            self._policy = load_policy()
        return self._policy

    def _new_task(self, req: CaptureTrafficRequest, target: str, partner_pcap: str | None,
                  task_id: str, *, source: bool = True) -> TaskRecord:
        req, target = resolve_target(req, target)  # a full ARM id: the VM it names, in its resource group
        cfg, params = self.rt.config, req.parameters
        auth = params.storage_auth_mode or cfg.storage_auth_mode
        account, account_id = storage_account_ref(params.storage_account)
        workspace = create_workspace(cfg.local_capture_dir, task_id)
        local = str(workspace.artifacts_dir / f"{task_id}.cap")
        inputs = PlanInputs(task_id, target, params.resource_group, account, cfg.storage_container,
                            auth, params.duration_seconds, cfg.capture_limit_bytes, local,
                            str(workspace.artifacts_dir), cfg.engine_command, partner_pcap=partner_pcap,
                            source=source, storage_account_id=account_id)
        plan = build_plan(inputs)
        now = self.rt.now()
        record = TaskRecord(
            task_id=task_id, session_id=self.rt.session_id, intent="capture_traffic", target=target,
            state=S.CREATED, investigation_context=req.investigation_context or "", parameters=params,
            storage_account=account, storage_container=cfg.storage_container,
            storage_blob_name=f"{task_id}.cap", local_pcap_path=local,
            max_polls=cfg.poll_budget(params.duration_seconds),
            timestamps=TaskTimestamps(created=now.isoformat(timespec="seconds").replace("+00:00", "Z")),
            storage_auth_mode=auth, plan=plan, plan_token=plan_token(task_id, plan), workspace=str(workspace.root),
        )
        mine = [r for t, r in self.rt.registry.tasks.items() if self.rt.registry.session_of(t) == self.rt.session_id]
        budgets = capture_budget_facts(cfg.budgets, mine, duration_s=params.duration_seconds,
                                       limit_bytes=cfg.capture_limit_bytes, default_limit_bytes=cfg.capture_limit_bytes)
        evaluation = preflight(self._policy_engine(), plan, inputs, max_capture_bytes=cfg.max_capture_bytes, now=now,
                               budgets=budgets)
        record = record.model_copy(update={"cleanup_plan": [CleanupStep(command=c.command)
                                                            for c in cleanup_plan(record)],
                                           "policy_outcome": evaluation.outcome,
                                           "policy_hash": evaluation.policy_hash})
        self.rt.save(record)
        for line in new_task_lines(task_id, target):
            self.rt.say(line)
        record = self.rt.move(record, S.DETECTING)
        if evaluation.outcome == "deny":
            return fail(self.rt, record, "policy_denied", detail="; ".join(evaluation.reasons))
        return record

    def _task_id(self, target: str) -> str:
        stamp = self.rt.now().strftime("%Y%m%dT%H%M%S")
        base = task_id_base(self.rt.config.capture_name_prefix, target, stamp)  # bounded, safe, distinct
        task_id, n = base, 2
        while self.rt.registry.get(task_id) is not None or (Path(self.rt.config.local_capture_dir) / task_id).exists():
            task_id, n = f"{base}-{n}", n + 1  # departure: the seed lets a same-second twin overwrite
        return task_id

    def _capture(self, req: CaptureTrafficRequest) -> dict[str, Any]:
        targets = [t.strip() for t in req.target.split(" to ")]
        if len(targets) == 2 and all(targets):
            return self._capture_dual(req, targets[0], targets[1])
        if len(targets) != 1:
            return error_response("invalid_parameter", f"target must be 'VM' or 'VM_A to VM_B', got {req.target!r}")
        record = self._new_task(req, targets[0], None, self._task_id(targets[0]))
        record = self._start(record)
        return task_response(record, _message(record))

    def _start(self, record: TaskRecord) -> TaskRecord:
        """DETECTING -> APPROVED -> create; stops at PROVISIONING (or an outcome)."""
        try:
            if record.state == S.DETECTING:
                record = detect(self.rt, record)
                if record.state == S.APPROVED and record.parameters is not None:
                    for line in target_lines(record.target_type or "vm", record.parameters.duration_seconds,
                                             record.storage_account or "", record.storage_container):
                        self.rt.say(line)
            if record.state == S.APPROVED:
                record = provision(self.rt, record)
        except PlanViolation as exc:
            record = self._halt(record, exc)
        return self._auto_cleanup(record)

    def _capture_dual(self, req: CaptureTrafficRequest, a: str, b: str) -> dict[str, Any]:
        id_a, id_b = self._task_id(a), self._task_id(b)
        if id_b == id_a:
            id_b += "-2"
        local = {t: str(Path(self.rt.config.local_capture_dir) / t / "artifacts" / f"{t}.cap") for t in (id_a, id_b)}
        rec_a = self._new_task(req, a, local[id_b], id_a)
        rec_b = self._new_task(req, b, local[id_a], id_b, source=False)
        rec_a = self.rt.save(rec_a.model_copy(update={"paired_task_id": id_b}))
        rec_b = self.rt.save(rec_b.model_copy(update={"paired_task_id": id_a}))
        rec_a = self._start(rec_a)
        rec_b = self._start(self.rt.registry.get(id_b) or rec_b)
        return task_response(rec_a, _message(rec_a) + f" Paired with {id_b} ({rec_b.state.value}).", partner=rec_b)

    # ---- check_task --------------------------------------------------------------------------

    def _check(self, record: TaskRecord) -> dict[str, Any]:
        try:
            record = self._advance(record)
        except PlanViolation as exc:
            record = self._halt(record, exc)
        record = self._auto_cleanup(record)
        return self._respond(record)

    def _advance(self, record: TaskRecord) -> TaskRecord:
        """Drive the task as far as it can go in one burst (resuming any state after a restart).

        A task resumed before its capture exists (CREATED, DETECTING, APPROVED) goes through
        detection and the create, then on through the same burst as any running task.
        """
        if record.state in (S.CREATED, S.DETECTING):
            record = self.rt.move(record, S.DETECTING) if record.state == S.CREATED else record
            record = self._start(record)
        elif record.state == S.APPROVED and record.create_issued:
            # a restart after the create was sent: ask Azure first; re-create only if it has no such capture,
            # through the plan and a new HITL prompt (settle_unknown_create), never blindly
            try:
                record = settle_unknown_create(self.rt, record, "the orchestrator stopped while the create ran",
                                               may_recreate=True)
            except PlanViolation as exc:
                record = self._halt(record, exc)
        elif record.state == S.APPROVED:
            record = self._start(record)
        return self._run_capture(record)

    def _run_capture(self, record: TaskRecord) -> TaskRecord:
        """PROVISIONING -> WAITING -> burst poll -> download -> analysis, as far as one call goes."""
        if record.state == S.PROVISIONING:
            record = self.rt.move(record, S.WAITING)
        if record.state == S.WAITING:
            record = burst_poll(self.rt, record, lambda: self.rt.now().timestamp())
        if record.state == S.DOWNLOADING:
            record = download(self.rt, record)
        downloaded = record.state == S.DOWNLOADING and bool(record.artifact_hashes)
        if downloaded or record.state == S.ANALYZING or (record.state == S.COMPLETED and record.semantic_json_path is None):
            return self._analyse(record)
        return record

    def _analyse(self, record: TaskRecord) -> TaskRecord:
        partner = self.rt.registry.get(record.paired_task_id) if record.paired_task_id else None
        if partner is None:
            record = self.rt.move(record, S.ANALYZING) if record.state != S.ANALYZING else record
            return analyse(self.rt, record)
        downloaded = record.artifact_hashes and partner.artifact_hashes
        if partner.failure_reason is not None and status_of(partner) != "task_completed":
            record = self.rt.move(record, S.ANALYZING, analysis_mode="single_end_fallback") \
                if record.state != S.ANALYZING else record.model_copy(update={"analysis_mode": "single_end_fallback"})
            return analyse(self.rt, record)
        if partner.state == S.COMPLETED and downloaded:
            record = self.rt.move(record, S.ANALYZING) if record.state != S.ANALYZING else record
            record = analyse(self.rt, record, partner)
            if record.state == S.COMPLETED:  # seed Dual-End rule 6: the comparison is both tasks' report
                self.rt.save(partner.model_copy(update={
                    "report_path": record.report_path, "semantic_json_path": record.semantic_json_path,
                    "analysis_mode": "compare"}))
            return record
        if record.state == S.ANALYZING:  # download done, the partner is not ready: defer (rule 3)
            return record
        return self.rt.move(record, S.COMPLETED) if record.state == S.DOWNLOADING else record

    # ---- cancel, cleanup, list ---------------------------------------------------------------

    def _cancel(self, record: TaskRecord, detail: str) -> dict[str, Any]:
        """Cancel ``record`` (``detail``: who cancelled it and why), then its automatic cleanup."""
        if record.state in TERMINAL_TASK_STATES or record.state in (S.FAILED, S.TIMED_OUT, S.CLEANING_UP):
            return self._respond(record, "Task already ended; nothing to cancel.")
        if S.CANCELLED not in TRANSITIONS[record.state]:
            return self._respond(record, "Task already completed; use cleanup_task to remove its resources.")
        record = self.rt.move(record, S.CANCELLED, failure_reason="cancelled", error_detail=detail)
        return self._respond(self._auto_cleanup(record))

    def _cleanup(self, record: TaskRecord) -> dict[str, Any]:
        if (record.state == S.DONE and record.cleanup_status != "partial") or (record.state == S.CANCELLED and \
                not record.create_issued):
            return self._respond(record, "Nothing left to clean up.")
        if S.CLEANING_UP not in TRANSITIONS[record.state] and record.state != S.CLEANING_UP:
            return self._respond(record, f"Task is {record.state.value}: cleanup is possible once it has ended.")
        try:
            if record.state == S.CLEANING_UP:  # a restart during cleanup: finish it
                record = run_cleanup_resume(self.rt, record)
            else:
                record = run_cleanup(self.rt, record, f"Cleanup for task {record.task_id}: removing transient "
                                                      f"cloud resources.")
        except PlanViolation as exc:
            record = self._halt(record, exc)
        return self._respond(record)

    def _orphan(self, name: str) -> dict[str, Any] | None:
        """An untracked capture (by name) or a stale file (by path) that start-up detection found."""
        return next((o for o in self.orphans if name in (o.get("name"), o.get("path"))
                     and o["kind"] in ("untracked_azure", "stale_local_file")), None)

    def _cleanup_orphan(self, name: str) -> dict[str, Any]:
        """``cleanup_task`` on an orphan that has no task: one delete through the HITL gate."""
        orphan = self._orphan(name)
        assert orphan is not None
        count = sum(o["kind"] in ("untracked_azure", "stale_local_file") for o in self.orphans)
        if not clean_orphan(self.rt, orphan, count):
            return list_response([], [orphan], f"Orphan {name} not deleted. It may incur charges.")
        self.orphans.remove(orphan)
        return list_response([], [], f"Orphan {name} deleted.")

    def _list(self) -> dict[str, Any]:
        mine = [r for t, r in self.rt.registry.tasks.items() if self.rt.registry.session_of(t) == self.rt.session_id]
        orphans = [] if self._orphans_reported else self.orphans
        self._orphans_reported = True
        warnings = self.rt.registry.warnings
        message = f"{len(mine)} task(s), {len(orphans)} orphan(s)." + (f" {len(warnings)} registry warning(s): "
                                                                         + "; ".join(warnings) if warnings else "")
        return list_response(mine, orphans, message)

    # ---- shared ------------------------------------------------------------------------------

    def _auto_cleanup(self, record: TaskRecord) -> TaskRecord:
        """Seed 000 Cleanup Triggers: FAILED, TIMED_OUT and CANCELLED clean up at once (if anything exists)."""
        if record.state not in _AUTO_CLEANUP or record.cleanup_status is not None:
            return record
        if not record.create_issued and not record.artifact_hashes:
            return self.rt.save(record.model_copy(update={"cleanup_status": "skipped"}))
        try:
            return run_cleanup(self.rt, record, f"Automatic cleanup after task {record.task_id} ended "
                                                f"{record.state.value}: {record.error_detail or ''}".strip())
        except PlanViolation as exc:
            return self._halt(record, exc)

    def _halt(self, record: TaskRecord, exc: PlanViolation) -> TaskRecord:
        """Stop a task whose plan broke: an audited FAILED record; nothing else runs for it."""
        self.rt.say(f"[red]{record.task_id}: halted[/] {exc.detail}")
        update = {"failure_reason": exc.reason, "error_detail": f"halted: {exc.detail}", "cleanup_status": "skipped"}
        if S.FAILED in TRANSITIONS[record.state]:
            return self.rt.move(record, S.FAILED, **update)
        return self.rt.save(record.model_copy(update=update))

    def _respond(self, record: TaskRecord, message: str | None = None) -> dict[str, Any]:
        partner = self.rt.registry.get(record.paired_task_id) if record.paired_task_id else None
        waiting = partner is not None and record.state in (S.COMPLETED, S.ANALYZING) and \
            record.semantic_json_path is None
        return task_response(record, message or _message(record, partner), partner=partner,
                             elapsed_seconds=_elapsed(self.rt.now(), record), waiting_for_partner=waiting)


def run_cleanup_resume(rt: Runtime, record: TaskRecord) -> TaskRecord:
    """Finish a cleanup a restart interrupted: step back into DONE's retry path."""
    record = rt.move(record, S.DONE, cleanup_status="partial")
    return run_cleanup(rt, record, f"Resuming the cleanup of task {record.task_id} after a restart.")


def _elapsed(now: datetime, record: TaskRecord) -> float:
    created = datetime.fromisoformat(record.timestamps.created.replace("Z", "+00:00"))
    return max(0.0, (now - created).total_seconds())


def _message(record: TaskRecord, partner: TaskRecord | None = None) -> str:
    state = record.state
    if state == S.PROVISIONING:
        return f"Packet capture starting on {record.target}. Check back in ~5-10 seconds."
    if state == S.WAITING:
        return f"Packet capture running on {record.target}. packetCaptureStatus: {record.capture_status or 'unknown'}."
    if state in (S.COMPLETED, S.ANALYZING) and partner is not None and record.semantic_json_path is None:
        return f"Capture downloaded. Waiting for the paired capture ({partner.target}) before comparison analysis."
    status = status_of(record)
    if status == "task_completed":
        tail = f" Azure stopReason: {record.stop_reason}." if record.stop_reason else ""
        if record.analysis_mode == "single_end_fallback":
            return _fallback_message(record, partner) + tail
        return "Capture complete. Forensic report generated." + tail
    if status == "task_pending":
        return f"Task {record.task_id} is {state.value}."
    cleanup = {"completed": " Cloud resources cleaned up.", "partial": " Cleanup partial: resources remain.",
               "skipped": " No cloud resources were created."}.get(record.cleanup_status or "", "")
    return f"Capture {status.removeprefix('task_')}: {record.error_detail or record.failure_reason}.{cleanup}"


def _fallback_message(record: TaskRecord, partner: TaskRecord | None) -> str:
    """Seed 000: "Destination capture failed. Single-end analysis completed on source capture only." """
    order = compare_order(record.plan)
    source = order is None or order[0] == record.local_pcap_path
    ended = {"task_timed_out": "timed out", "task_cancelled": "was cancelled"}.get(
        status_of(partner) if partner is not None else "", "failed")
    if partner is not None and partner.failure_reason == "aks_not_supported":
        ended = "is an AKS cluster (AKS capture pipeline not yet available)"
    other = f" ({partner.target})" if partner is not None else ""
    return (f"{'Destination' if source else 'Source'} capture{other} {ended}. Single-end analysis completed on "
            f"{'source' if source else 'destination'} capture only.")


def _validation_error(request: Mapping[str, Any], exc: ValidationError) -> dict[str, Any]:
    """Map a contract failure to the seed's error codes."""
    errors = exc.errors()
    task_id = request.get("task_id") if isinstance(request.get("task_id"), str) and request.get("task_id") else None
    kinds = {e["type"] for e in errors}
    if kinds & {"union_tag_invalid", "union_tag_not_found"}:
        return error_response("unknown_intent", f"Unsupported intent: {request.get('intent')!r}")
    missing = [e for e in errors if e["type"] == "missing"]
    if missing:
        field = str(missing[0]["loc"][-1])
        return error_response("missing_parameter", f"{field} is required", task_id=task_id)
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"][1:]) or "request"
    return error_response("invalid_parameter", f"{where}: {first['msg']}", task_id=task_id)

