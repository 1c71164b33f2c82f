"""Orphan detection at start-up, three layers (seed 000 "Orphan Detection").

1. Registries: tasks of *earlier* sessions still active (abandoned) or never cleaned (COMPLETED with
   cleanup pending, FAILED/TIMED_OUT not cleaned, a partial cleanup), and the tasks an *earlier run of
   this same session* left uncleaned (a resumed session's own: every task already in the registry when
   the orchestrator is built was created by an earlier run). This session's tasks still on their way
   are not orphans: the resume reconciles them with ``check_task``.
2. Azure: ``ghost_*`` capture sessions no registry knows, in every region the registries or the
   subscription's watchers name (``packet-capture list -l``), and ``ghost_*`` blobs no task knows in
   every storage container the registries name (``storage blob list --prefix ghost_``): SAFE reads,
   no prompt. An untracked blob is named by its URL, so ``cleanup_task`` can delete exactly it.
3. Local: ``ghost_*`` files older than ``local_artifact_max_age_days`` in the workspaces.
The result is returned by the first ``list_tasks``; cleaning any of it goes through the HITL gate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netghost.contracts import (
    IN_FLIGHT_TASK_STATES,
    TERMINAL_TASK_STATES,
    StorageAuthMode,
    TaskRecord,
    TaskState,
)
from netghost.orchestrator import _commands as cmd
from netghost.orchestrator._plan import bindings, split_blob_url
from netghost.orchestrator._runtime import Runtime, parse_json

__all__ = ["clean_orphan", "detect_orphans"]

S = TaskState


def _layer1(rt: Runtime) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for task_id, record in rt.registry.tasks.items():
        session = rt.registry.session_of(task_id)
        if session == rt.session_id and (record.state in IN_FLIGHT_TASK_STATES or record.state == S.CLEANING_UP):
            if record.state == S.CLEANING_UP:  # a run stopped mid-cleanup: finishing it is cleanup_task's
                found.append({"kind": "needs_cleanup", "task_id": task_id, "session_id": session,
                              "state": record.state.value, "cleanup_status": record.cleanup_status})
            continue
        if record.state not in TERMINAL_TASK_STATES and record.state not in (S.COMPLETED, S.FAILED, S.TIMED_OUT):
            found.append({"kind": "abandoned_task", "task_id": task_id, "session_id": session,
                          "state": record.state.value, "target": record.target})
        elif _needs_cleanup(record):
            found.append({"kind": "needs_cleanup", "task_id": task_id, "session_id": session,
                          "state": record.state.value, "cleanup_status": record.cleanup_status})
    return found


def _needs_cleanup(record: TaskRecord) -> bool:
    if record.state == S.COMPLETED:
        return record.cleanup_status in (None, "pending", "partial")
    if record.state in (S.FAILED, S.TIMED_OUT):
        return record.cleanup_status is None
    return record.state == S.DONE and record.cleanup_status == "partial"


def _regions(rt: Runtime) -> list[str]:
    regions = {r.location for r in rt.registry.tasks.values() if r.location}
    ran = rt.run_free(cmd.watcher_list(), "Startup orphan detection: which regions have a Network Watcher.")
    if ran.outcome == "ok":
        regions.update(str(x).lower() for x in parse_json(ran.output) or [])
    return sorted(regions)


def _layer2(rt: Runtime) -> list[dict[str, Any]]:
    known = set(rt.registry.tasks)
    prefix = rt.config.capture_name_prefix + "_"
    found: list[dict[str, Any]] = []
    for region in _regions(rt):
        ran = rt.run_free(cmd.capture_list(region), "Startup orphan detection: scanning for ghost_* packet captures "
                                                   "that may have been left by a previous session.")
        if ran.outcome != "ok":
            rt.say(f"[yellow]orphan scan of {region} failed: {ran.error_text()}[/]")
            continue
        for name in parse_json(ran.output) or []:
            if isinstance(name, str) and name.startswith(prefix) and name not in known:
                found.append({"kind": "untracked_azure", "name": name, "resource_type": "packet_capture",
                              "resource_group": f"NetworkWatcherRG ({region})"})
    return found


def _containers(rt: Runtime) -> list[tuple[str, str, StorageAuthMode]]:
    """``(account, container, auth mode)`` of every storage container a registry record names."""
    places: dict[tuple[str, str], StorageAuthMode] = {}
    for record in rt.registry.tasks.values():
        if not record.storage_account:
            continue
        parts = split_blob_url(record.storage_path or "")
        account, container = (parts[0], parts[1]) if parts else (record.storage_account, record.storage_container)
        places.setdefault((account, container), record.storage_auth_mode or rt.config.storage_auth_mode)
    return [(account, container, auth) for (account, container), auth in sorted(places.items())]


def _known_blobs(rt: Runtime) -> set[str]:
    """Blob names a task owns: ``{task_id}.cap`` (or its ``storagePath``) and a scale set's ``_<n>.cap``."""
    known: set[str] = set()
    for record in rt.registry.tasks.values():
        bound = bindings(record.task_id, record.location, record.storage_path, record.storage_container)
        known.update({f"{record.task_id}.cap", str(bound["blob"])})
    return known


def _is_known_blob(name: str, known: set[str]) -> bool:
    if name in known:
        return True
    head, _, tail = name.removesuffix(".cap").rpartition("_")  # a scale-set instance: <stem>_<id>.cap
    return tail.isdigit() and f"{head}.cap" in known


def _blob_orphans(rt: Runtime) -> list[dict[str, Any]]:
    prefix = rt.config.capture_name_prefix + "_"
    known = _known_blobs(rt)
    found: list[dict[str, Any]] = []
    for account, container, auth in _containers(rt):
        ran = rt.run_free(cmd.blob_list(account, container, prefix, auth),
                          f"Startup orphan detection: scanning storage {account}/{container} for ghost_* capture "
                          f"blobs that no task knows.")
        if ran.outcome != "ok":
            rt.say(f"[yellow]orphan scan of storage {account}/{container} failed: {ran.error_text()}[/]")
            continue
        for name in parse_json(ran.output) or []:
            if isinstance(name, str) and name.startswith(prefix) and not _is_known_blob(name, known):
                found.append({"kind": "untracked_azure", "name": cmd.blob_url(account, container, name),
                              "resource_type": "storage_blob", "resource_group": None})
    return found


def _layer3(rt: Runtime) -> list[dict[str, Any]]:
    base = Path(rt.config.local_capture_dir)
    limit = rt.config.local_artifact_max_age_days * 86400.0
    now = rt.now().timestamp()
    found: list[dict[str, Any]] = []
    prefix = rt.config.capture_name_prefix + "_"
    try:
        files = sorted(base.glob(f"{prefix}*/artifacts/{prefix}*"))
    except OSError:
        return found
    for path in files:
        try:
            age = now - path.stat().st_mtime
        except OSError:
            continue
        if age > limit and path.is_file():
            artifact = "capture" if path.suffix in (".cap", ".pcap") else "analysis"
            found.append({"kind": "stale_local_file", "path": str(path), "artifact": artifact,
                          "age_days": round(age / 86400.0, 2)})
    return found


def clean_orphan(rt: Runtime, orphan: dict[str, Any], count: int) -> bool:
    """Delete one untracked ``ghost_*`` capture or stale local file through the HITL gate; True when gone.

    Only what detection found can be named here (the caller looks the orphan up in its own list),
    so this is no general delete: the orphan list is the plan of the start-up cleanup.
    """
    why = f"Startup cleanup: {count} orphaned resources from previous sessions."
    blob = split_blob_url(str(orphan.get("name", ""))) if orphan.get("resource_type") == "storage_blob" else None
    if blob is not None:
        account, container, name = blob
        ran = rt.run_free(cmd.blob_delete(account, container, name, _auth_for(rt, account)),
                          f"{why} Deleting capture blob {orphan['name']} that no task knows.")
    elif orphan["kind"] == "untracked_azure":
        region = str(orphan["resource_group"]).rpartition("(")[2].rstrip(")")
        ran = rt.run_free(cmd.capture_delete(region, str(orphan["name"])), f"{why} Deleting packet capture "
                                                                          f"{orphan['name']} that no registry knows.")
    else:
        ran = rt.run_free(cmd.remove_file(str(orphan["path"])), f"{why} Removing stale local artifact "
                                                                f"{orphan['path']}.")
    return ran.outcome == "ok" or (ran.outcome == "failed" and ran.exit_code == 3)


def _auth_for(rt: Runtime, account: str) -> StorageAuthMode:
    """The auth mode the registries used for ``account`` (the configured one when none did)."""
    return next((auth for acc, _c, auth in _containers(rt) if acc == account), rt.config.storage_auth_mode)


def detect_orphans(rt: Runtime) -> list[dict[str, Any]]:
    """All three layers, in order."""
    found = _layer1(rt)
    if rt.config.scan_azure_orphans:
        found += _layer2(rt) + _blob_orphans(rt)
    return found + _layer3(rt)
