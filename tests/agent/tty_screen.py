"""A pseudo-terminal's transcript as the screen shows it: lines without escape sequences, and the
``[Shell]`` lines a terminal folds joined again into the logical line they print."""

from __future__ import annotations

import re

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
HANG = " " * len("[Shell] ")


def screen_lines(transcript: str) -> list[str]:
    """The transcript's lines, escape sequences and carriage returns removed, right spaces stripped."""
    return [line.rstrip() for line in ANSI.sub("", transcript).split("\n")]


def logical_lines(lines: list[str]) -> list[str]:
    """``lines`` with each ``[Shell]`` line's continuations (indented under its text) joined back with a
    space (the fold falls between words; a word too long for any line, cut inside, reads with a space)."""
    out: list[str] = []
    for line in lines:
        rest = line[len(HANG):]
        if out and out[-1].startswith("[Shell] ") and line.startswith(HANG) and rest[:1] not in ("", " "):
            out[-1] += " " + rest
        else:
            out.append(line)
    return out
