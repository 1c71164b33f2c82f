"""The terminal approval prompt: seed 001 §10's "SAFETY SHELL ALERT" box and its [A]/[D]/[M] choice.

Why it reads from a given stream instead of calling ``input()``: the agent may run with stdin redirected
(CI, a pipe), and the tests drive it through a real pseudo-terminal; both need the same code path. On end
of input it raises ``EOFError`` and on Ctrl-C ``KeyboardInterrupt`` propagates; the shell turns both into
``denied`` / ``user_abandoned`` (fail closed), so this module never has to guess a default.

The box shows the approval deadline (the shell's ``approval_timeout_s``). The gate stops waiting at the
deadline whatever the prompt does; on a terminal the prompt also stops reading then (or when the gate
leaves on Ctrl-C), so that a prompt nobody answered cannot swallow the line typed for the next one.
"""

from __future__ import annotations

import select
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TextIO

from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from netghost.governance import ApprovalRequest
from netghost.safetext import visible
from netghost.shell.gate import TERMINAL_HUMAN, HitlCallback, HitlDecision, current_prompt, fail_closed

__all__ = ["edit_line", "make_terminal_callback", "prompt_decision", "render_alert", "terminal_hitl_callback", "visible"]

_MAX_ATTEMPTS = 5
_POLL_S = 0.25  # how often a terminal read looks whether the gate has left
_CHOICES = {
    "a": "approve",
    "approve": "approve",
    "d": "deny",
    "deny": "deny",
    "m": "modify",
    "modify": "modify",
}


def render_alert(request: ApprovalRequest) -> Panel:
    """The boxed alert for ``request`` (tier, classification, command, every argv element, risk, reasoning).

    Every field is passed through :func:`visible` and wrapped in :class:`Text` (no rich markup), so neither
    terminal escapes nor markup in the AI's text can redraw the box.
    """
    ctx = request.context
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(
        "TIER:",
        Text(
            f"{visible(ctx.get('tier', '?'))}  |  CLASSIFICATION: {visible(ctx.get('classification', 'RISKY'))}"
        ),
    )
    grid.add_row("COMMAND:", Text(visible(request.what)))
    argv = ctx.get("argv")
    if isinstance(argv, list | tuple) and argv:
        grid.add_row("ARGV:", _argv_text(argv))
    grid.add_row("RISK:", Text(visible(request.risk, multiline=True)))
    grid.add_row("REASONING:", Text(visible(request.why or "(none given)", multiline=True)))
    if ctx.get("environment"):
        grid.add_row("TARGET:", Text(visible(ctx["environment"])))
    deadline = _deadline_text(ctx)
    if deadline:
        grid.add_row("ANSWER BY:", Text(deadline, style="bold"))
    title = Text("SAFETY SHELL ALERT", style="bold red", justify="center")
    choices = Text("[A]pprove   [D]eny   [M]odify command", style="bold")
    return Panel(Group(title, grid, Text(""), choices), box=box.SQUARE, border_style="red", expand=False)


def _deadline_text(ctx: dict[str, Any]) -> str:
    """``2026-11-22 06:05:00 UTC (300 s; no answer = denied)``, or "" when the request names no deadline."""
    raw = ctx.get("approval_deadline")
    if not isinstance(raw, str):
        return ""
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        return visible(raw)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    shown = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    timeout = ctx.get("approval_timeout_s")
    within = f"{timeout:g} s; " if isinstance(timeout, int | float) and not isinstance(timeout, bool) else ""
    return f"{shown} ({within}no answer = denied)"


def _argv_text(argv: list[Any] | tuple[Any, ...]) -> Text:
    """One line per argv element, numbered and quoted, so no element can hide in another's text."""
    width = len(str(len(argv) - 1))
    lines = [f"[{i:>{width}}] {_quote(visible(a))}" for i, a in enumerate(argv)]
    return Text("\n".join(lines))


def _quote(text: str) -> str:
    return "'" + text.replace("'", "\\'") + "'"


def make_terminal_callback(stdin: TextIO | None = None, console: Console | None = None) -> HitlCallback:
    """A HITL callback that shows the alert on ``console`` and reads the answer from ``stdin``.

    Args:
        stdin: Where answers are read (``sys.stdin`` at call time when None).
        console: Where the box and prompts go (a stdout console when None).
    """

    def callback(request: ApprovalRequest) -> HitlDecision:
        return _prompt(request, stdin or sys.stdin, console or Console(highlight=False))

    return callback


def terminal_hitl_callback(request: ApprovalRequest) -> HitlDecision:
    """The default callback: the alert box on stdout, the answer from stdin.

    Raises:
        EOFError: stdin closed before an answer (the shell records ``user_abandoned``).
        KeyboardInterrupt: Ctrl-C at the prompt (likewise).
    """
    return _prompt(request, sys.stdin, Console(highlight=False))


def _prompt(request: ApprovalRequest, stdin: TextIO, console: Console) -> HitlDecision:
    return prompt_decision(request, stdin, console, render_alert)


def prompt_decision(request: ApprovalRequest, stdin: TextIO, console: Console,
                    render: Callable[[ApprovalRequest], RenderableType]) -> HitlDecision:
    """Show ``render(request)`` and read [A]pprove / [D]eny (+ reason) / [M]odify (+ command, reason).

    The one answer loop for every approval box (the agent draws a box fitted to the terminal): the
    choices, the retries, the deadline-aware read on a terminal and the fail-closed ends live here only.

    Raises:
        EOFError: stdin closed before an answer (the shell records ``user_abandoned``).
        KeyboardInterrupt: Ctrl-C at the prompt (likewise).
        TimeoutError: the gate's deadline passed, or the gate stopped waiting, while reading.
    """
    console.print(render(request))
    for _ in range(_MAX_ATTEMPTS):
        choice = _CHOICES.get(_ask(console, stdin, "Your choice: ").strip().lower())
        if choice == "approve":
            return HitlDecision.approve(by=TERMINAL_HUMAN)
        if choice == "deny":
            reason = _ask(console, stdin, "Denial reason (optional, press Enter to skip): ").strip()
            return HitlDecision.deny(reason=reason, by=TERMINAL_HUMAN)
        if choice == "modify":
            shown = visible(request.what)
            command = edit_line(console, stdin, "Modified command: ", shown).strip()
            if not command:
                console.print("[yellow]No command entered; choose again.[/yellow]")
                continue
            if command == shown.strip():
                console.print("[yellow]The command is unchanged; choose again ([A]pprove runs it as it is).[/yellow]")
                continue
            reason = _ask(console, stdin, "Reason for the change (optional, press Enter to skip): ").strip()
            return HitlDecision.modify(command, reason=reason, by=TERMINAL_HUMAN)
        console.print("[yellow]Please answer A, D or M.[/yellow]")
    console.print("[red]No valid answer; the command is denied.[/red]")
    return HitlDecision.deny(reason="no valid answer at the approval prompt",
                             by=fail_closed("no valid answer at the approval prompt"))


def edit_line(console: Console, stdin: TextIO, prompt: str, initial: str) -> str:
    """One line the person edits, starting from ``initial`` (the command as the box showed it).

    On the process's own terminal the line is GNU readline's, pre-filled through its pre-input hook (cursor
    keys, Ctrl-A/Ctrl-E, Ctrl-U, history), so a long command is changed, never retyped. Elsewhere (a pipe,
    a test stream, no readline) the whole command is printed on one line, unwrapped and copyable, and the
    replacement is read as a plain line. ``initial`` is already passed through :func:`visible`, so nothing
    hidden in the model's text reaches the terminal's line editor.

    Why not the deadline-aware read: a terminal in canonical mode reports nothing until Enter, so waiting
    for input first would take the line away from the editor. The gate's deadline still holds (it fails
    closed when it passes, whatever this read does).

    Raises:
        EOFError: end of input (the shell records ``user_abandoned``).
        KeyboardInterrupt: Ctrl-C.
    """
    editor = _line_editor(stdin)
    if editor is None:
        console.print(Text.assemble(("Current command: ", "bold"), initial), soft_wrap=True)
        return _ask(console, stdin, "Modified command (type the whole command): ")
    console.file.flush()

    def prefill() -> None:
        editor.insert_text(initial)
        editor.redisplay()

    editor.set_pre_input_hook(prefill)
    try:
        return input(prompt)
    finally:
        editor.set_pre_input_hook(None)


def _line_editor(stdin: TextIO) -> Any:
    """The readline module when ``stdin`` is this process's terminal (what ``input()`` edits), else None."""
    try:
        if not (stdin.isatty() and stdin.fileno() == sys.stdin.fileno() and sys.stdout.isatty()):
            return None
    except (OSError, ValueError, AttributeError):
        return None
    try:
        import readline  # noqa: PLC0415  only an interactive modify needs it (absent on some builds)
    except ImportError:
        return None
    return readline


def _ask(console: Console, stdin: TextIO, prompt: str) -> str:
    console.print(prompt, end="", markup=False)
    console.file.flush()
    _wait_for_input(console, stdin)
    line = stdin.readline()
    if line == "":
        console.print()
        raise EOFError("approval prompt reached end of input")
    return line.rstrip("\r\n")


def _wait_for_input(console: Console, stdin: TextIO) -> None:
    """On a terminal under the gate, wait for a line only until the deadline or until the gate leaves.

    Raises:
        TimeoutError: no line came before the deadline, or the gate stopped waiting (Ctrl-C); either way
            the gate has already failed closed and this prompt must not read the next prompt's answer.
    """
    control = current_prompt()
    if control is None or not _is_terminal(stdin):
        return  # a pipe or a test stream: plain readline; the gate's own deadline still holds
    fd = stdin.fileno()
    while True:
        remaining = control.remaining()
        if remaining <= 0:
            if time.monotonic() >= control.deadline:  # not when the gate left early (Ctrl-C)
                console.print()
                console.print("[red]No answer before the deadline; the command is denied.[/red]")
            raise TimeoutError("approval prompt timed out")
        ready, _, _ = select.select([fd], [], [], min(_POLL_S, remaining))
        if ready:
            return


def _is_terminal(stdin: TextIO) -> bool:
    try:
        return stdin.isatty()
    except (OSError, ValueError):
        return False
