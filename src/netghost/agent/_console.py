"""The console of seed 001 §10 (rich): banners, orphan lines, ``[Ghost Agent]``, ``[Shell]``, ``[ERROR]``.

:class:`GhostConsole` is the loop's :class:`~netghost.agent._loop.Ui` on a terminal (or a pipe). Every
text that came from the model, a command, a tool or the user is redacted (:mod:`netghost.redact`), has
its hidden characters shown as escapes (:func:`~netghost.safetext.visible`) and is printed as
:class:`~rich.text.Text` (never as markup), so nothing it holds can leak a secret, restyle, redraw,
retitle or hyperlink the terminal. The console it is given also gets the
:func:`~netghost.safetext.guard_console` hook, so what other parts print on it (the orchestrator's
task blocks, the approval box) cannot emit a control sequence either. Without a terminal
(``interactive`` False) choices take their defaults and questions get "" (seed: a text-only turn then
counts as Done).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping
from types import FrameType
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from netghost import __version__
from netghost.contracts import DecidedBy
from netghost.redact import redact
from netghost.safetext import guard_console, print_folded, visible

__all__ = ["BANNER_RULE", "GhostConsole", "InterruptFlag", "format_duration", "shown"]

BANNER_RULE = "═" * 54
VERSION = f"v{__version__}"
"""The banner's version: the package's own, the one ``ghost-agent --version`` prints."""


def format_duration(seconds: float) -> str:
    """``8m 32s`` (seed 001 §10's closing banner)."""
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


def shown(text: object, *, multiline: bool = True) -> str:
    """``text`` as the console prints it: redacted, then every hidden character shown as an escape."""
    return visible(redact(str(text)).text, multiline=multiline)


class GhostConsole:
    """Prints as seed 001 §10 shows and asks through ``stdin``.

    Args:
        console: where everything goes.
        stdin: where answers are read.
        interactive: a human is there to answer (stdin is a terminal).
    """

    def __init__(self, console: Console, stdin: TextIO | None = None, *, interactive: bool = False) -> None:
        self.console = guard_console(console)
        self.stdin = stdin or sys.stdin
        self.interactive = interactive

    # ---- the loop's Ui ------------------------------------------------------------------------------

    def brain(self, text: str) -> None:
        """``[Ghost Agent] <text>`` with a blank line before it."""
        self.console.print()
        self.console.print(Text.assemble(("[Ghost Agent] ", "bold cyan"), shown(text)))

    def error(self, text: str) -> None:
        """``[ERROR] <text>``."""
        self.console.print(Text.assemble(("[ERROR] ", "bold red"), shown(text)))

    def notice(self, text: str) -> None:
        """A plain line, never wrapped (a resume command must stay copyable)."""
        self.console.print(Text(shown(text)), soft_wrap=True)

    def choose(self, question: str, options: Mapping[str, str], default: str) -> str:
        """Ask until one of ``options``' keys (or its word) is typed; ``default`` without a terminal or at EOF."""
        if not self.interactive:
            return default
        words = {**{k: k for k in options}, **{v.lower(): k for k, v in options.items()}}
        for _ in range(5):
            answer = self.ask(f"{question} > ").strip().lower()
            if answer in words:
                return words[answer]
            if answer == "" and not self.interactive:
                return default
            self.console.print(Text(f"Please answer {' / '.join(k.upper() for k in options)}.", style="yellow"))
        return default

    def ask(self, prompt: str) -> str:
        """One line from ``stdin`` ("" without a terminal or at end of input)."""
        if not self.interactive:
            return ""
        self.console.print(Text(shown(prompt)), end="")
        self.console.file.flush()
        line = self.stdin.readline()
        if line == "":
            self.interactive = False  # nobody is there any more: defaults from now on
            self.console.print()
            return ""
        return line.rstrip("\r\n")

    # ---- seed 001 §10's other lines -----------------------------------------------------------------

    def banner(self, session_id: str, *, resumed_from: str | None = None) -> None:
        """The opening banner."""
        self.console.print(BANNER_RULE, style="bold")
        title = f"  UNIFIED GHOST AGENT  {VERSION}  |  Session: {shown(session_id, multiline=False)}"
        self.console.print(Text(title + ("  (resumed)" if resumed_from else ""), style="bold"))
        self.console.print(BANNER_RULE, style="bold")

    def closing(self, report: str, *, confidence: str, turns: int, duration_s: float) -> None:
        """The closing banner: where the RCA is, confidence, turns, duration."""
        self.console.print()
        self.console.print(BANNER_RULE, style="bold")
        self.console.print(Text(f"  RCA REPORT WRITTEN: {shown(report, multiline=False)}", style="bold"),
                           soft_wrap=True)  # copyable
        self.console.print(Text(f"  Confidence: {shown(confidence, multiline=False)}  |  Turns: {turns}  |  "
                                f"Duration: {format_duration(duration_s)}"))
        self.console.print(BANNER_RULE, style="bold")

    def ok(self, text: str) -> None:
        """``  [OK] <text>``."""
        self.console.print(Text.assemble("  ", ("[OK]", "green"), f" {shown(text)}"))

    def warn(self, text: str) -> None:
        """``  [WARN] <text>``."""
        self.console.print(Text.assemble("  ", ("[WARN]", "yellow"), f" {shown(text)}"))

    def shell_line(self, command: str, response: Mapping[str, Any]) -> None:
        """One line per decision: ``[Shell] RISKY — approved by --yes (lab nsg-deny): <command>``.

        Who decided comes from the shell's ``decided_by`` (the human at the terminal, ``--yes``, an MCP
        client, a policy); a SAFE command auto-approved by the built-in tiers says only "auto-approved".
        The command is the model's (redacted, one logical line as in the audit record; a terminal shows it
        folded between words, continuations indented under the text, a pipe gets it whole); the
        classification, action, reason and decider come from the shell but are shown the same way.
        """
        cls = shown(response.get("classification"), multiline=False)
        action = response.get("action")
        said = shown(command, multiline=False)
        who = _decider_words(response.get("decided_by"))
        if action == "auto_approved":
            by = f" by {who}" if who and "safe_tier" not in who else ""
            line = Text.assemble(("[Shell] ", "bold"), ("SAFE", "green"), f" — auto-approved{by}: {said}")
        elif action == "blocked":
            instead = response.get("modified_command")
            said = f"{shown(instead, multiline=False)}  (a replacement for: {said})" if instead else said
            line = Text.assemble(("[Shell] ", "bold"), ("FORBIDDEN", "red"), f" — blocked: {said}")
        elif action == "user_modified":  # what ran is the person's command; the model's is named after it
            ran = shown(response.get("modified_command") or "", multiline=False)
            line = Text.assemble(("[Shell] ", "bold"), (cls, "yellow"), f" — {_verb(action, who)}, ran: {ran}",
                                 (f"  (instead of: {said})", "dim"))
        elif action == "user_approved":
            line = Text.assemble(("[Shell] ", "bold"), (cls, "yellow"), f" — {_verb(action, who)}: {said}")
        else:
            reason = response.get("denial_reason")
            why = f' (reason: "{shown(reason, multiline=False)}")' if reason else ""
            line = Text.assemble(("[Shell] ", "bold"), (cls, "yellow"), f" — {_verb(action, who)}: {said}{why}")
        print_folded(self.console, line, hang=len("[Shell] "))  # a terminal: folded between words


_VERBS = {"user_approved": "approved", "user_modified": "modified", "user_denied": "denied",
          "user_abandoned": "abandoned"}


def _decider_words(value: object) -> str | None:
    """Who decided, in words (None for a record written before the shell said)."""
    if not isinstance(value, Mapping):
        return None
    try:
        return shown(DecidedBy.model_validate(value).label(), multiline=False)
    except ValueError:
        return None


def _verb(action: object, who: str | None) -> str:
    if who is None:
        return shown(action, multiline=False).replace("_", " ")
    return f"{_VERBS.get(str(action), shown(action, multiline=False))} by {who}"


class InterruptFlag:
    """Remembers a Ctrl-C that the approval gate turned into a denial, so the loop can stop after it.

    The gate catches the ``KeyboardInterrupt`` that reaches the waiting thread and fails closed; this
    handler still raises it (the gate's contract) but notes it first. Installed on the main thread only.
    """

    def __init__(self) -> None:
        self.set = False
        self._previous: Any = None

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.set = True
        raise KeyboardInterrupt

    def install(self) -> InterruptFlag:
        """Take over SIGINT (restore with :meth:`restore`)."""
        self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def restore(self) -> None:
        """Give SIGINT back."""
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def __call__(self) -> bool:
        return self.set
