"""Console output as seed 000 "Console Output" shows it, rendered with rich.

The orchestrator speaks in ``[Cloud Orchestrator] ...`` lines (rich markup allowed); the HITL boxes
are the shell's. Tests render into ``Console(file=io.StringIO(), width=100)`` and compare text.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

__all__ = ["console_sayer", "new_task_lines"]


def console_sayer(console: Console | None) -> Callable[[str], None]:
    """A ``say(text)`` that prints to ``console`` (stderr by default: stdout belongs to the caller)."""
    target = console if console is not None else Console(stderr=True, highlight=False)

    def say(text: str) -> None:
        target.print(text, highlight=False, soft_wrap=True)

    return say


def new_task_lines(task_id: str, target: str, duration_s: int, account: str, container: str) -> list[str]:
    """The seed's opening block for a new task."""
    return [
        f"[bold][Cloud Orchestrator][/] New task: {task_id}",
        "      Intent: capture_traffic",
        f"      Target: {target} (detecting type...)",
        f"      Capture duration: {duration_s} seconds",
        f"      Storage: {account}/{container}",
    ]
