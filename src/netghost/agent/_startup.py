"""Start-up (seed 001 §3 steps 5-8): the orphan report in five buckets and the cleanup offer.

The orchestrator detects orphans when it is built; ``list_tasks`` returns them. The buckets are the
seed's: abandoned tasks, tasks needing cleanup, partially cleaned tasks (the CLI's own scan: cleanup
``partial``), untracked ``ghost_*`` Azure resources and stale local files. Cleaning goes through
``cleanup_task`` (each delete is RISKY: the human gate asks); a cleanup that stays partial is noted in
the session's ``manual_cleanup_pending``.

A resumed session's own tasks from its earlier runs are in the scan too: the cleanup its predecessor
announced (every task that ended without being cleaned) is finished here, without the [C]/[S]/[R]
offer (the predecessor's end already announced it), each delete still through the gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netghost.agent._console import GhostConsole
from netghost.agent._dispatch import OrchestratorLike
from netghost.contracts import SessionState

__all__ = ["BUCKETS", "classify_orphans", "report_orphans"]

BUCKETS = ("abandoned_tasks", "needs_cleanup", "partially_cleaned", "untracked_azure", "stale_local_files")
_KIND = {"abandoned_task": "abandoned_tasks", "needs_cleanup": "needs_cleanup",
         "untracked_azure": "untracked_azure", "stale_local_file": "stale_local_files"}


def classify_orphans(listing: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The five buckets of a ``list_tasks`` response."""
    buckets: dict[str, list[dict[str, Any]]] = {b: [] for b in BUCKETS}
    for orphan in listing.get("orphans") or []:
        if orphan.get("cleanup_status") == "partial":
            buckets["partially_cleaned"].append(dict(orphan))
        elif orphan.get("kind") in _KIND:
            buckets[_KIND[orphan["kind"]]].append(dict(orphan))
    seen = {o.get("task_id") for o in buckets["partially_cleaned"]}
    for task in listing.get("tasks") or []:
        if task.get("cleanup_status") == "partial" and task.get("task_id") not in seen:
            buckets["partially_cleaned"].append({"kind": "needs_cleanup", **dict(task)})
    return buckets


def _name(orphan: Mapping[str, Any]) -> str:
    return str(orphan.get("task_id") or orphan.get("name") or orphan.get("path") or "?")


def _print(ui: GhostConsole, buckets: Mapping[str, list[dict[str, Any]]]) -> int:
    tasks = buckets["abandoned_tasks"] + buckets["needs_cleanup"] + buckets["partially_cleaned"]
    if tasks:
        for o in tasks:
            ui.warn(f"Task {_name(o)}: {o.get('state', '?')}, cleanup {o.get('cleanup_status') or 'pending'}")
    else:
        ui.ok("No orphaned tasks found.")
    for o in buckets["untracked_azure"]:
        ui.warn(f"Untracked Azure resource {_name(o)} ({o.get('resource_type', 'packet_capture')})")
    if buckets["stale_local_files"]:
        for o in buckets["stale_local_files"]:
            ui.warn(f"Stale local file {_name(o)} ({float(o.get('age_days', 0)):.0f} days old)")
    else:
        ui.ok("No stale local files found.")
    return sum(len(v) for v in buckets.values())


def _finish_predecessor(ui: GhostConsole, orchestrator: OrchestratorLike, state: SessionState,
                        buckets: dict[str, list[dict[str, Any]]]) -> None:
    """Clean the tasks an earlier run of this session left uncleaned (and take them out of the buckets)."""
    for bucket in ("needs_cleanup", "partially_cleaned", "abandoned_tasks"):
        mine = [o for o in buckets[bucket] if o.get("session_id") == state.session_id]
        buckets[bucket] = [o for o in buckets[bucket] if o not in mine]
        for orphan in mine:
            ui.warn(f"Task {_name(orphan)} of an earlier run of this session: {orphan.get('state', '?')}, cleanup "
                    f"{orphan.get('cleanup_status') or 'pending'}: finishing the cleanup its run announced.")
            result = orchestrator.orchestrate({"intent": "cleanup_task", "task_id": _name(orphan)})
            if result.get("cleanup_status") == "partial" and _name(orphan) not in state.manual_cleanup_pending:
                state.manual_cleanup_pending.append(_name(orphan))
            elif result.get("cleanup_status") == "completed" and _name(orphan) in state.manual_cleanup_pending:
                state.manual_cleanup_pending.remove(_name(orphan))


def report_orphans(ui: GhostConsole, orchestrator: OrchestratorLike, state: SessionState) -> dict[str, list[dict[str, Any]]]:
    """Steps 5-8: ask ``list_tasks``, print the buckets, offer cleanup, clean what the user chose."""
    listing = orchestrator.orchestrate({"intent": "list_tasks"})
    buckets = classify_orphans(listing)
    _finish_predecessor(ui, orchestrator, state, buckets)
    if _print(ui, buckets) == 0:
        return buckets
    choice = ui.choose("[C]lean up now  [S]kip  [R]eview each one", {"c": "clean", "s": "skip", "r": "review"},
                       default="s")
    if choice == "s":
        ui.notice("Cleanup skipped; the orphans will be offered again next time.")
        return buckets
    for bucket in BUCKETS:
        for orphan in buckets[bucket]:
            if choice == "r" and ui.choose(f"Clean up {_name(orphan)}? [Y]es / [N]o", {"y": "yes", "n": "no"},
                                           default="n") != "y":
                continue
            result = orchestrator.orchestrate({"intent": "cleanup_task", "task_id": _name(orphan)})
            if result.get("cleanup_status") == "partial":
                state.manual_cleanup_pending.append(_name(orphan))
                ui.warn(f"Task {_name(orphan)}: partial cleanup — some resources require manual deletion.")
    return buckets
