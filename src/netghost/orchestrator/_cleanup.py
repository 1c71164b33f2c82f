"""Cleanup plans: registered before any resource exists, run cloud first, each delete through the HITL gate.

The plan is the task's ``cleanup_plan`` (``{command, executed}``), written at creation: delete the
capture session, delete its blob, remove the downloaded capture file. Running it skips what is
already gone without bothering the human (a capture never created, a blob ``exists`` says is not
there, a local file that is not on disk) and counts it as cleaned; every real delete is a RISKY
command the user approves. A denied delete leaves the resource: cleanup is ``partial`` and the user
is warned it may cost money. Analysis outputs (semantic JSON, reports) are deliverables and stay.
"""

from __future__ import annotations

from pathlib import Path

from netghost.contracts import CleanupStep, TaskRecord, TaskState
from netghost.orchestrator import _commands as cmd
from netghost.orchestrator._lifecycle import instance_files
from netghost.orchestrator._plan import bindings
from netghost.orchestrator._runtime import Runtime, parse_json

__all__ = ["cleanup_plan", "run_cleanup"]


def _targets(record: TaskRecord) -> tuple[list[str], list[str], list[str], list[str]]:
    """(capture delete, blob exists, blob delete, rm) argv, bound to the record's values."""
    bound = bindings(record.task_id, record.location, record.storage_path, record.storage_container)
    account, auth = record.storage_account or "", record.storage_auth_mode or "login"
    container, blob = str(bound["container"]), str(bound["blob"])
    return (cmd.capture_delete(record.location or "{location}", record.task_id),
            cmd.blob_exists(account, container, blob, auth),
            cmd.blob_delete(account, container, blob, auth),
            cmd.remove_file(record.local_pcap_path or ""))


def cleanup_plan(record: TaskRecord) -> list[CleanupStep]:
    """The three cleanup steps of a capture task, in execution order (cloud first, local last)."""
    delete, _exists, blob_delete, rm = _targets(record)
    return [CleanupStep(command=cmd.render(argv)) for argv in (delete, blob_delete, rm)]


def _refresh(record: TaskRecord) -> list[CleanupStep]:
    """Re-render the steps with values learned since creation, keeping their executed flags."""
    fresh = cleanup_plan(record)
    old = record.cleanup_plan
    return [s.model_copy(update={"executed": old[i].executed if i < len(old) else False})
            for i, s in enumerate(fresh)]


def run_cleanup(rt: Runtime, record: TaskRecord, why: str) -> TaskRecord:
    """Run every unexecuted step; the task ends DONE (all executed) or DONE with ``partial`` cleanup."""
    record = rt.move(record, TaskState.CLEANING_UP, cleanup_plan=_refresh(record))
    delete, exists, blob_delete, rm = _targets(record)
    steps = list(record.cleanup_plan)
    denied: list[str] = []
    for index, (argv, name) in enumerate(((delete, "capture"), (blob_delete, "blob"), (rm, "file"))):
        if steps[index].executed:
            continue
        record, done = _one(rt, record, name, argv, exists=exists, why=why)
        if done:
            steps[index] = steps[index].model_copy(update={"executed": True})
            record = rt.save(record.model_copy(update={"cleanup_plan": steps}))
        else:
            denied.append(_resource_name(record, name))
    status = "completed" if not denied else "partial"
    for resource in denied:
        rt.say(f"[yellow]Resource {resource} not deleted. It may incur charges.[/]")
    return rt.move(record, TaskState.DONE, cleanup_status=status, cleanup_plan=steps)


def _resource_name(record: TaskRecord, kind: str) -> str:
    if kind == "capture":
        return record.task_id
    if kind == "blob":
        return record.storage_path or f"{record.task_id}.cap"
    return record.local_pcap_path or ""


def _one(rt: Runtime, record: TaskRecord, kind: str, argv: list[str], *, exists: list[str],
         why: str) -> tuple[TaskRecord, bool]:
    """Run one cleanup step; True when the resource is gone afterwards (or never existed)."""
    if (kind == "capture" and not (record.create_issued or record.azure_operation_id)) or \
            (kind == "capture" and record.location is None):
        return record, True
    if record.target_type == "vmss" and kind in ("blob", "file"):
        return _instances(rt, record, kind, why)
    if kind == "file" and (not record.local_pcap_path or not Path(record.local_pcap_path).exists()):
        return record, True
    if kind == "blob":
        if not record.create_issued:
            return record, True
        record, ran = rt.run(record, exists, f"Cleanup: is the capture blob still there? {why}")
        doc = parse_json(ran.output) if ran.outcome == "ok" else None
        if isinstance(doc, dict) and doc.get("exists") is False:
            return record, True
    record, ran = rt.run(record, argv, f"Cleanup of {kind}: {why}")
    if ran.outcome == "ok":
        return record, True
    if ran.outcome == "failed" and ran.exit_code == 3:  # already gone (BlobNotFound / NotFound): cleaned
        return record, True
    return record, False


def _instances(rt: Runtime, record: TaskRecord, kind: str, why: str) -> tuple[TaskRecord, bool]:
    """A scale-set capture's per-instance blobs (listed by prefix) or local files: one delete each."""
    if kind == "file":
        argvs = [cmd.remove_file(str(f)) for f in instance_files(record)]
    else:
        if not record.create_issued:
            return record, True
        bound = bindings(record.task_id, record.location, record.storage_path, record.storage_container)
        account, auth = record.storage_account or "", record.storage_auth_mode or "login"
        record, ran = rt.run(record, cmd.blob_list(account, str(bound["container"]), str(bound["blob_prefix"]), auth),
                             f"Cleanup: which per-instance capture blobs are left? {why}")
        if ran.outcome != "ok":
            return record, False
        names = [b for b in parse_json(ran.output) or [] if isinstance(b, str) and b.endswith(".cap")]
        argvs = [cmd.blob_delete(account, str(bound["container"]), b, auth) for b in sorted(names)]
    gone = True
    for argv in argvs:
        record, ran = rt.run(record, argv, f"Cleanup of {kind}: {why}")
        gone = gone and (ran.outcome == "ok" or (ran.outcome == "failed" and ran.exit_code == 3))
    return record, gone
