"""The terminal approval prompt: seed 001 §10's "SAFETY SHELL ALERT" box and its [A]/[D]/[M] choice.

Why it reads from a given stream instead of calling ``input()``: the agent may run with stdin redirected
(CI, a pipe), and the tests drive it through a real pseudo-terminal; both need the same code path. On end
of input it raises ``EOFError`` and on Ctrl-C ``KeyboardInterrupt`` propagates; the shell turns both into
``denied`` / ``user_abandoned`` (fail closed), so this module never has to guess a default.
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from netghost.governance.approval import ApprovalRequest
from netghost.shell.gate import HitlCallback, HitlDecision

__all__ = ["make_terminal_callback", "render_alert", "terminal_hitl_callback"]

_MAX_ATTEMPTS = 5
_CHOICES = {"a": "approve", "approve": "approve", "d": "deny", "deny": "deny", "m": "modify", "modify": "modify"}


def render_alert(request: ApprovalRequest) -> Panel:
    """The boxed alert for ``request`` (tier, classification, command, risk, reasoning, choices)."""
    ctx = request.context
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("TIER:", f"{ctx.get('tier', '?')}  |  CLASSIFICATION: {ctx.get('classification', 'RISKY')}")
    grid.add_row("COMMAND:", Text(request.what))
    grid.add_row("RISK:", Text(request.risk))
    grid.add_row("REASONING:", Text(request.why or "(none given)"))
    if ctx.get("environment"):
        grid.add_row("TARGET:", str(ctx["environment"]))
    title = Text("SAFETY SHELL ALERT", style="bold red", justify="center")
    choices = Text("[A]pprove   [D]eny   [M]odify command", style="bold")
    return Panel(Group(title, grid, Text(""), choices), box=box.SQUARE, border_style="red", expand=False)


def make_terminal_callback(
    stdin: TextIO | None = None, console: Console | None = None
) -> HitlCallback:
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
    console.print(render_alert(request))
    for _ in range(_MAX_ATTEMPTS):
        choice = _CHOICES.get(_ask(console, stdin, "Your choice: ").strip().lower())
        if choice == "approve":
            return HitlDecision.approve()
        if choice == "deny":
            reason = _ask(console, stdin, "Denial reason (optional, press Enter to skip): ").strip()
            return HitlDecision.deny(reason=reason)
        if choice == "modify":
            command = _ask(console, stdin, "Modified command: ").strip()
            if not command:
                console.print("[yellow]No command entered; choose again.[/yellow]")
                continue
            reason = _ask(console, stdin, "Reason for the change (optional, press Enter to skip): ").strip()
            return HitlDecision.modify(command, reason=reason)
        console.print("[yellow]Please answer A, D or M.[/yellow]")
    console.print("[red]No valid answer; the command is denied.[/red]")
    return HitlDecision.deny(reason="no valid answer at the approval prompt")


def _ask(console: Console, stdin: TextIO, prompt: str) -> str:
    console.print(prompt, end="", markup=False)
    console.file.flush()
    line = stdin.readline()
    if line == "":
        console.print()
        raise EOFError("approval prompt reached end of input")
    return line.rstrip("\r\n")
