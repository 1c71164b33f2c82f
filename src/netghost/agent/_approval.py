"""The approval box and its callbacks: fitted to the terminal, with truthful risk descriptions.

Why not the shell's box as it is: it lists every argv element one per line (an ``az`` create has
nineteen), which pushes the title and the command off an 80×24 screen, and it repeats the tier rule's
reason ("verb 'download' is mutative") where a human needs to know what will actually change. This box
is at most :data:`MAX_BOX_LINES` lines: the command is shown whole, folded, in the lines the other fields
leave (a longer one shows its head and how many characters are not shown; [M]odify puts the whole command
on an editable line, pre-filled), and :func:`describe_risk` says what the command does to the world (a blob download writes a local file
and does not change Azure). The answer is read by the shell's own loop (``prompt_decision``): [A]pprove /
[D]eny (with an optional reason) / [M]odify, the deadline on a terminal, and end of input failing closed
(the shell records ``user_abandoned``); the escaping of hidden characters is the shell's ``visible``.

:func:`lab_approver` answers for ``--yes`` lab runs, and says so in every decision (``--yes (lab WORLD)``):
it approves what the lab simulates and refuses, with the reason, what only a person may approve (the
shell marks it ``needs_person``: a program the lab does not simulate, a capture target nobody read); a
RISKY command the audit shows already ran (or whose outcome is unknown) before a resume is asked again,
or denied when nobody can be asked. :func:`closed_gate` is the policy when nobody can be asked. None of
them prints: the shell's one line per decision names who decided.
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection, Mapping, Sequence
from typing import Any, TextIO

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from netghost.contracts import ApprovalRequest, DecidedBy
from netghost.shell import HitlCallback, HitlDecision, prompt_decision, visible

__all__ = [
    "CLOSED_GATE",
    "MAX_BOX_LINES",
    "closed_gate",
    "decision_text",
    "describe_risk",
    "fold_command",
    "lab_approver",
    "lab_decider",
    "render_box",
    "terminal_approver",
]

MAX_BOX_LINES = 16
CLOSED_GATE = DecidedBy(kind="policy", name="closed_gate", detail="no terminal to ask and --yes not given")
"""The decider when nobody can be asked: every RISKY command is denied (fail closed)."""


def decision_text(record: Mapping[str, Any]) -> str:
    """A record's decision and who made it (``user_approved by --yes (lab nsg-deny)``), for the RCAs."""
    action = str(record.get("action"))
    try:
        who = DecidedBy.model_validate(record["decided_by"]).label()
    except (KeyError, TypeError, ValueError):  # a record written before the shell said who decided
        return action
    return f"{action} by {who}"


def lab_decider(world: str) -> DecidedBy:
    """``--yes`` for a lab world, as the audit, the RCA and the screen name it."""
    return DecidedBy(kind="flag", name="--yes", detail=f"lab {world}")


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


def fold_command(command: str, width: int, max_lines: int) -> str:
    """``command`` whole, folded at ``width`` (at spaces where it can, inside a long word where it must); past
    ``max_lines``, its head and how many characters are not shown, with where to see them all (Modify shows
    the whole command on an editable line). Why not drop words silently: nobody may approve a word they
    did not see without being told so."""
    lines = textwrap.wrap(command, width, break_on_hyphens=False) or [""]
    if len(lines) <= max_lines:
        return "\n".join(lines)
    head = lines[:max_lines]
    note = f"… +{len(command) - sum(map(len, head))} more characters: [M]odify shows it all"
    head[-1] = head[-1][: max(0, width - len(note) - 1)]
    note = f"… +{len(command) - sum(map(len, head))} more characters: [M]odify shows it all"
    return "\n".join([*head[:-1], f"{head[-1]} {note}".lstrip()])


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
    risk = _clip(visible(describe_risk(argv, request.risk)), inner, 3)
    why = _clip(visible(request.why or "(none given)"), inner, 2)
    real = ctx.get("needs_person")
    needs = _clip(visible(str(real)) + ".", inner, 3) if real else ""
    deadline = ctx.get("approval_timeout_s")
    timed = isinstance(deadline, int | float)
    # what is left of MAX_BOX_LINES for the command: borders, title, tier, blank line and choices are fixed
    fixed = 6 + risk.count("\n") + 1 + why.count("\n") + 1 + (needs.count("\n") + 1 if needs else 0) + int(timed)
    grid.add_row("TIER:", Text(f"{ctx.get('tier', '?')}  |  CLASSIFICATION: {ctx.get('classification', 'RISKY')}"))
    grid.add_row("COMMAND:", Text(fold_command(visible(request.what), inner, max(3, MAX_BOX_LINES - fixed))))
    grid.add_row("RISK:", Text(risk))
    grid.add_row("REASONING:", Text(why))
    if needs:  # the sealed lab (it would run for real) or a capture target nobody read: only a person may say yes
        grid.add_row(Text("NEEDS YOU:", style="bold red"), Text(needs))
    if timed:
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


def lab_approver(console: Console, *, world: str = "lab", already_ran: Collection[str] = (),
                 ask_human: HitlCallback | None = None) -> HitlCallback:
    """``--yes`` for lab runs: approve what the lab simulates; refuse what only a person may approve.

    A request the shell marks ``needs_person`` (it would run for real, or a capture target nobody read) is
    refused with its reason: ``--yes`` never approves it, terminal or not (the shell would refuse such an
    approval anyway). A RISKY command the audit shows ran before a resume is asked again, or denied.
    """
    by = lab_decider(world)

    def approve(request: ApprovalRequest) -> HitlDecision:
        real = request.context.get("needs_person")
        if real:
            return HitlDecision.deny(f"--yes approves only what the lab simulates: {real}; a person must approve it "
                                     "at the terminal (run without --yes)", by=by)
        if request.what in already_ran:
            if ask_human is not None:
                console.print(Text("This command already ran (or its outcome is unknown) before the resume: "
                                   "asking again.", style="yellow"))
                return ask_human(request)
            return HitlDecision.deny("already ran before the resume (or its outcome is unknown); --yes does "
                                     "not repeat it without a human", by=by)
        return HitlDecision.approve(reason="approved by --yes for the offline lab", by=by)

    return approve


def closed_gate(request: ApprovalRequest) -> HitlDecision:
    """No terminal and no ``--yes``: every RISKY command is denied (fail closed)."""
    real = request.context.get("needs_person")
    why = f" ({real})" if real else ""
    return HitlDecision.deny(f"no terminal to ask and --yes not given: failing closed{why}", by=CLOSED_GATE)
