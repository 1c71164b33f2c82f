"""The approval box and its callbacks: fitted to the terminal, with truthful risk descriptions.

Why not the shell's box as it is: it lists every argv element one per line (an ``az`` create has
nineteen), which pushes the title and the command off an 80×24 screen, and it repeats the tier rule's
reason ("verb 'download' is mutative") where a human needs to know what will actually change. This box
is at most :data:`MAX_BOX_LINES` lines: the command is summarised to fit (its argv is in the audit),
and :func:`describe_risk` says what the command does to the world (a blob download writes a local file
and does not change Azure). The answer is read by the shell's own loop (``prompt_decision``): [A]pprove /
[D]eny (with an optional reason) / [M]odify, the deadline on a terminal, and end of input failing closed
(the shell records ``user_abandoned``); the escaping of hidden characters is the shell's ``visible``.

:func:`lab_approver` answers "approve" for ``--yes`` lab runs, except for a RISKY command the audit
shows already ran (or whose outcome is unknown) before a resume: that one is asked again, or denied
when nobody can be asked.
"""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Collection, Sequence
from typing import Any, TextIO

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from netghost.contracts import ApprovalRequest
from netghost.shell import HitlCallback, HitlDecision, prompt_decision, visible

__all__ = [
    "MAX_BOX_LINES",
    "closed_gate",
    "describe_risk",
    "lab_approver",
    "render_box",
    "summarise_command",
    "terminal_approver",
]

MAX_BOX_LINES = 16


def _option(argv: Sequence[str], *names: str) -> str | None:
    for i, word in enumerate(argv):
        for name in names:
            if word == name and i + 1 < len(argv):
                return argv[i + 1]
            if word.startswith(name + "="):
                return word.split("=", 1)[1]
    return None


def _az_words(argv: Sequence[str]) -> list[str]:
    words: list[str] = []
    for word in argv[1:]:
        if word.startswith("-"):
            break
        words.append(word)
    return words


def _describe_az(argv: Sequence[str]) -> str | None:
    words = _az_words(argv)
    if not words:
        return None
    verb, group = words[-1], " ".join(words[:-1])
    name = _option(argv, "--name", "-n") or ""
    if group == "storage blob" and verb == "download":
        target = _option(argv, "--file", "-f") or "a local file"
        return f"Writes {target} on this machine from Azure Storage (blob {name}); it does not change Azure."
    if verb == "download":
        return "Writes a local file from Azure; it does not change Azure."
    if group.endswith("packet-capture") and verb == "create":
        vm = _option(argv, "--vm", "--target") or "the VM"
        account = _option(argv, "--storage-account") or "a storage account"
        return (f"Starts a packet capture on {vm} in Azure: creates a Network Watcher capture {name} and "
                f"writes its blob to {account}. Billed; deleted by cleanup.")
    if verb in ("delete", "remove", "purge"):
        return f"Deletes {group} {name} in Azure. This cannot be undone.".replace("  ", " ")
    if verb in ("create", "update", "set", "add", "start", "stop", "restart", "deallocate", "invoke",
                "run-command", "upload"):
        return f"Changes Azure state: az {group} {verb} {name}".rstrip() + "."
    return None


def describe_risk(argv: Sequence[str], fallback: str) -> str:
    """What running ``argv`` does, in words a human approving it needs (``fallback``: the tier's reason)."""
    if not argv:
        return fallback
    program = argv[0].rsplit("/", 1)[-1]
    if program == "az":
        return _describe_az(argv) or fallback
    files = [a for a in argv[1:] if not a.startswith("-")]
    if program == "cat":
        return f"Reads {', '.join(files) or 'a file'} on this machine and shows it to the model; changes nothing."
    if program == "rm":
        return f"Deletes {', '.join(files) or 'files'} on this machine."
    if program in ("pcap-forensics", "python", "python3") and any(f.endswith((".cap", ".pcap", ".pcapng")) for f in files):
        return "Runs the local PCAP forensic engine on a capture; writes its reports on this machine."
    return fallback


def summarise_command(command: str, width: int, max_lines: int = 3) -> str:
    """``command`` if it fits in ``max_lines`` lines of ``width``, else its head and ``… (+N more words)``."""
    if len(command) <= width * max_lines:
        return command
    budget = width * max_lines - 24
    try:
        words = shlex.split(command)
    except ValueError:
        return command[:budget] + " …"
    shown: list[str] = []
    used = 0
    for word in words:
        quoted = shlex.quote(word)
        if used + len(quoted) + 1 > budget:
            break
        shown.append(quoted)
        used += len(quoted) + 1
    rest = len(words) - len(shown)
    return " ".join(shown) + (f" … (+{rest} more words)" if rest else "")


def _clip(text: str, width: int, lines: int) -> str:
    wrapped = textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False) or [""]  # names keep whole
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: max(0, width - 1)] + "…"
    return "\n".join(wrapped)


def render_box(request: ApprovalRequest, width: int = 80) -> Panel:
    """The SAFETY SHELL ALERT box for ``request``, at most :data:`MAX_BOX_LINES` lines within ``width``."""
    ctx: dict[str, Any] = dict(request.context)
    inner = max(30, min(width, 100) - 4 - 12)
    argv = [str(a) for a in ctx.get("argv") or []]
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True, width=10)
    grid.add_column(overflow="fold", width=inner)
    grid.add_row("TIER:", Text(f"{ctx.get('tier', '?')}  |  CLASSIFICATION: {ctx.get('classification', 'RISKY')}"))
    grid.add_row("COMMAND:", Text(visible(summarise_command(request.what, inner))))
    grid.add_row("RISK:", Text(_clip(visible(describe_risk(argv, request.risk)), inner, 3)))
    grid.add_row("REASONING:", Text(_clip(visible(request.why or "(none given)"), inner, 2)))
    deadline = ctx.get("approval_timeout_s")
    if isinstance(deadline, int | float):
        grid.add_row("ANSWER IN:", Text(f"{deadline:g} s (no answer = denied)"))
    title = Text("SAFETY SHELL ALERT", style="bold red", justify="center")
    choices = Text("[A]pprove   [D]eny   [M]odify command", style="bold")
    return Panel(Group(title, grid, Text(""), choices), box=box.SQUARE, border_style="red",
                 width=min(width, inner + 16))


def terminal_approver(console: Console, stdin: TextIO) -> HitlCallback:
    """The interactive callback: the fitted box, then the shell's own [A]/[D]/[M] answer loop."""

    def ask(request: ApprovalRequest) -> HitlDecision:
        return prompt_decision(request, stdin, console, lambda r: render_box(r, console.width))

    return ask


def lab_approver(console: Console, *, already_ran: Collection[str] = (),
                 ask_human: HitlCallback | None = None) -> HitlCallback:
    """``--yes`` for lab runs: approve, except a RISKY command the audit shows ran before (ask, or deny)."""

    def approve(request: ApprovalRequest) -> HitlDecision:
        if request.what in already_ran:
            if ask_human is not None:
                console.print(Text("This command already ran (or its outcome is unknown) before the resume: "
                                   "asking again.", style="yellow"))
                return ask_human(request)
            return HitlDecision.deny("already ran before the resume (or its outcome is unknown); --yes does "
                                     "not repeat it without a human")
        console.print(Text.assemble("[Shell] ", ("RISKY", "yellow"), f" — approved by --yes (lab): {request.what}"),
                      soft_wrap=True)
        return HitlDecision.approve(reason="approved by --yes for the offline lab")

    return approve


def closed_gate(request: ApprovalRequest) -> HitlDecision:
    """No terminal and no ``--yes``: every RISKY command is denied (fail closed)."""
    return HitlDecision.deny("no terminal to ask and --yes not given: failing closed")

