"""Console output as seed 000 "Console Output" shows it, rendered with rich, plus a live progress line.

The orchestrator speaks in ``[Cloud Orchestrator] ...`` blocks (rich markup allowed); the HITL boxes
and the ``[Shell] ...`` lines are the shell's. The seed's ``provisioningState`` in the poll line is
``packetCaptureStatus`` here (AZURE.md: completion is read from ``show-status``). While a burst polls
on a terminal, :class:`ProgressLine` shows one transient status line (spinner, poll count, status,
the next wait); on anything else it prints nothing. Tests render into
``Console(file=io.StringIO(), width=100)`` and compare text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.errors import MarkupError
from rich.markup import escape
from rich.text import Text

from netghost.safetext import guard_console, print_folded, show_hidden

__all__ = [
    "ProgressLine",
    "completed_lines",
    "console_sayer",
    "format_duration",
    "new_task_lines",
    "own_markup_only",
    "provisioning_lines",
    "target_lines",
]

_TAG = "[bold]\\[Cloud Orchestrator][/]"

_OWN_TAGS = frozenset({"bold", "yellow", "red", "green", "dim", "/", "/bold", "/yellow", "/red", "/green", "/dim"})
"""The only markup the orchestrator's lines mean; every other ``[...]`` in a line is text."""

_TAG_RE = re.compile(r"(\\*)\[([^\[\]]*)\]")


def own_markup_only(text: str) -> str:
    """``text`` with every rich tag but the orchestrator's own colours escaped, so it prints as text.

    Why: a line interpolates tool text (az errors, resource names, targets) and rich reads any
    ``[...]`` in it as markup: ``[conceal]`` or ``[black on black]`` hides what follows, ``[link=...]``
    makes a hyperlink, a style imitates the shell's lines. Allowing only the handful of colour tags the
    orchestrator writes bounds what tool text can do to the line to colouring a part of it.
    """
    def one(match: re.Match[str]) -> str:
        escaped = len(match.group(1)) % 2 == 1  # an odd run of backslashes: rich prints the bracket
        return match.group(0) if escaped or match.group(2) in _OWN_TAGS else escape(match.group(0))

    return _TAG_RE.sub(one, text)


def console_sayer(console: Console | None) -> Callable[[str], None]:
    """A ``say(text)`` that prints to ``console`` (stderr by default: stdout belongs to the caller)."""
    target = guard_console(console if console is not None else Console(stderr=True, highlight=False))

    def say(text: str) -> None:
        # the lines hold tool text (az errors, targets): a bracket in it that reads as a broken tag
        # must not stop the task with a traceback; the line is then printed as it is, without markup
        try:
            line = Text.from_markup(own_markup_only(text), emoji=False)
        except MarkupError:
            line = Text(show_hidden(text))
        # on a terminal folded between words, continuations under the line's text; on a pipe one line
        print_folded(target, line, hang=len(line.plain) - len(line.plain.lstrip(" ")) + 2)

    return say


def format_duration(seconds: float) -> str:
    """``5m 30s`` as the seed prints durations (``45s`` under a minute)."""
    whole = round(seconds)
    return f"{whole // 60}m {whole % 60}s" if whole >= 60 else f"{whole}s"


def new_task_lines(task_id: str, target: str) -> list[str]:
    """The seed's opening block for a new task."""
    return [f"{_TAG} New task: {task_id}", "      Intent: capture_traffic",
            f"      Target: {target} (detecting type...)", ""]


def target_lines(target_type: str, duration_s: int, account: str, container: str) -> list[str]:
    """After DETECTING: what was found and what will be captured where."""
    kind = "VM scale set" if target_type == "vmss" else target_type.upper()
    return [f"{_TAG} Target type: {kind}. Using Network Watcher packet capture.",
            f"      Capture duration: {duration_s} seconds", f"      Storage: {account}/{container}", ""]


def provisioning_lines(task_id: str) -> list[str]:
    """The create went through."""
    return [f"{_TAG} Task {task_id}: PROVISIONING",
            "      Status: Packet capture starting. Check back in ~5-10 seconds.", ""]


def completed_lines(task_id: str, semantic: str | None, report: str | None, duration_s: float | None,
                    cloud_resources: int, *, fleet_report: str | None = None) -> list[str]:
    """The closing block: deliverables (the fleet report first when several targets were captured),
    duration, what cleanup is still pending."""
    lines = [f"{_TAG} Task {task_id}: COMPLETED"]
    if fleet_report:
        lines.append(f"      Fleet Report: {fleet_report}")
    if semantic:
        lines.append(f"      Semantic JSON: {semantic}")
    if report:
        lines.append(f"      Forensic Report: {report}")
    if duration_s is not None:
        lines.append(f"      Duration: {format_duration(duration_s)}")
    lines.append(f"      Cleanup: {cloud_resources} cloud resources pending deletion")
    return lines


class ProgressLine:
    """One live, transient status line while a burst polls; a no-op when the console is no terminal."""

    def __init__(self, console: Console | None) -> None:
        self._console = console if console is not None else Console(stderr=True)
        self._status: Any = None

    def update(self, text: str | None) -> None:
        """Show ``text`` (start the line on first use); ``None`` removes the line."""
        if not self._console.is_terminal:
            return
        if text is None:
            if self._status is not None:
                self._status.stop()
                self._status = None
            return
        if self._status is None:
            self._status = self._console.status(Text(show_hidden(text)), spinner="dots")
            self._status.start()
        else:
            self._status.update(Text(show_hidden(text)))
