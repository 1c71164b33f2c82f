"""At every end of a session, each task it created is cleaned up, or listed loudly with the commands that clean it.

Why a sweep at the end: a model may start captures and never clean them (a hijacked one does so on
purpose), a Ctrl-C or a brain error can stop the loop between a capture and its cleanup, and an
exception can stop it anywhere. Whatever ended the session, :func:`sweep` drives every task of the
session (earlier runs of a resumed session included: the task registry is the source of truth, not the
session file) to a cleaned end through the orchestrator: a task still on its way is cancelled (its
automatic cleanup follows), an ended one gets ``cleanup_task``. Every delete still goes through the
shell's gate, so a human may refuse it. What is left after that is a :class:`Leftover`: shown on screen
(:func:`show`), written in the RCA (from the registry alone, :func:`leftovers`), and the process exits
with :data:`EXIT_LEFTOVERS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from netghost.agent._dispatch import EndsTasks, OrchestratorLike
from netghost.agent._exit_codes import ExitCode
from netghost.contracts import IN_FLIGHT_TASK_STATES
from netghost.governance import replay_latest

__all__ = ["EXIT_LEFTOVERS", "Leftover", "leftovers", "needs_cleanup", "session_tasks", "show", "state_label", "sweep"]

EXIT_LEFTOVERS = ExitCode.LEFTOVERS
"""The exit code when cloud or local resources of the session remain (listed with the commands that clean them)."""

_IN_FLIGHT = frozenset(s.value for s in IN_FLIGHT_TASK_STATES)
_CLEAN = ("completed", "skipped")
_KINDS = (("packet-capture delete", "capture session"), ("storage blob delete", "capture blob"),
          ("rm ", "local capture file"))


@dataclass(frozen=True)
class Leftover:
    """A task whose resources may remain: what they are, and the exact commands that remove them."""

    task_id: str
    state: str
    target: str
    items: tuple[tuple[str, str], ...]
    """``(what, command)`` pairs: ``("capture blob", "az storage blob delete ...")``."""


def session_tasks(registry: Path) -> dict[str, dict[str, Any]]:
    """The last record of every task in a session's registry (empty when it has none)."""
    return replay_latest(registry, "task_id") if registry.exists() else {}


def needs_cleanup(task: Mapping[str, Any]) -> bool:
    """Might resources of this task remain (in Azure or on disk)?"""
    state, cleanup = str(task.get("state")), task.get("cleanup_status")
    if cleanup in _CLEAN:
        return False
    if state in _IN_FLIGHT:
        return True  # still on its way: it is cancelled (nothing may exist yet, but it must not go on)
    if state == "DONE":
        return cleanup == "partial"
    if state in ("CANCELLED", "ABANDONED"):
        return bool(task.get("create_issued") or task.get("artifact_hashes"))
    return state in ("COMPLETED", "FAILED", "TIMED_OUT", "CLEANING_UP")


def state_label(task: Mapping[str, Any]) -> str:
    """A task's state as a report shows it: a cleaned-up task (DONE, CLEANING_UP) with how its capture ended.

    Why: cleanup moves every task to DONE, a capture cancelled by Ctrl-C as much as one analysed; the
    named reason it stopped (``failure_reason``: ``cancelled``, ``max_polls_exceeded`` ...) tells them apart.
    """
    state, reason = str(task.get("state")), task.get("failure_reason")
    return f"{state} ({reason})" if state in ("DONE", "CLEANING_UP") and reason else state


def _what(command: str) -> str:
    return next((label for marker, label in _KINDS if marker in command), "resource")


def leftovers(tasks: Mapping[str, Mapping[str, Any]]) -> list[Leftover]:
    """The tasks whose resources may remain, each with its unexecuted cleanup commands (registry records only)."""
    out: list[Leftover] = []
    for task_id, task in tasks.items():
        if not needs_cleanup(task):
            continue
        steps = [s for s in task.get("cleanup_plan") or [] if isinstance(s, Mapping) and not s.get("executed")]
        if not task.get("create_issued") and not task.get("artifact_hashes"):
            continue  # nothing was ever created for it: no resource can remain
        items = tuple((_what(str(s.get("command", ""))), str(s.get("command", ""))) for s in steps)
        if items:
            out.append(Leftover(task_id, str(task.get("state")), str(task.get("target") or ""), items))
    return out


def sweep(orchestrator: OrchestratorLike, registry: Path, *, say: Callable[[str], None],
          stop: Callable[[], bool] = lambda: False, cause: str = "the session ended") -> list[Leftover]:
    """Clean every task of the session that needs it, then what is left.

    Args:
        orchestrator: the session's orchestrator (every delete goes through the shell's gate).
        registry: the session's task registry.
        say: prints one line.
        stop: True once the user pressed Ctrl-C during the sweep: stop asking, list what is left.
        cause: why the session ended (the agent's words): a task still on its way is recorded as cancelled
            because of it, so a capture Ctrl-C stopped never reads like one that ran its course.
    """
    pending = {t: r for t, r in session_tasks(registry).items() if needs_cleanup(r)}
    if pending:
        say(f"Cleaning up {len(pending)} task(s) this session created: {', '.join(pending)}")
    try:
        for task_id, record in pending.items():
            if stop():
                break
            if str(record.get("state")) in _IN_FLIGHT and isinstance(orchestrator, EndsTasks):
                orchestrator.cancel_at_session_end(task_id, f"{cause}: nothing may keep running after it")
            elif str(record.get("state")) in _IN_FLIGHT:
                orchestrator.orchestrate({"intent": "cancel_task", "task_id": task_id,
                                          "reason": f"{cause}: nothing may keep running after it"})
            else:
                orchestrator.orchestrate({"intent": "cleanup_task", "task_id": task_id})
    except KeyboardInterrupt:  # Ctrl-C while a delete ran: stop here and say what is left
        say("Cleanup interrupted (Ctrl-C).")
    return leftovers(session_tasks(registry))


def show(console: Console, left: list[Leftover], *, resume: str | None = None) -> None:
    """The loud list: every resource that remains and the exact command that removes it (one per line)."""
    if not left:
        return
    console.print()
    console.print(Text(f"[LEFT BEHIND] {len(left)} task(s) of this session still hold resources; they may incur "
                       "charges:", style="bold red"), soft_wrap=True)
    for item in left:
        console.print(Text(f"  Task {item.task_id} ({item.state}, target {item.target or '?'})", style="bold"),
                      soft_wrap=True)
        for what, command in item.items:
            console.print(Text.assemble((f"    {what}: ", "yellow"), command), soft_wrap=True)
    tail = "  Run each command above, or resume the session to finish the cleanup"
    console.print(Text(tail + (f": {resume}" if resume else ".") + f" (exit code {int(EXIT_LEFTOVERS)})",
                       style="bold red"), soft_wrap=True)
