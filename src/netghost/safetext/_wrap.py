"""One console line folded at the terminal's width between words, its continuations indented.

Why not the terminal's own wrap: it cuts at the last column, inside a word (``az network watcher packet-c``
/ ``apture delete``), and a reader can no longer tell a command's words apart. Why not rich's wrap: it
has no hanging indent, so a continuation starts in the column of the ``[Shell]`` tag and reads as a new
line. Here a line breaks at spaces; a word wider than the room left (a long path) is cut where it must,
as the approval box folds a command. On anything but a terminal (a pipe, a log file) a line stays one
line, whole, so it can be searched and copied.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

__all__ = ["fold_offsets", "print_folded"]

_TOKEN = re.compile(r"\S+\s*|\s+")
_MIN_PIECE = 8  # a word too wide for any line starts on the current one if this much room is left


def _cut(word: str, room: int) -> int:
    """How many characters of ``word`` fit in ``room`` cells (at least one, so a line always advances)."""
    used = 0
    for i, ch in enumerate(word):
        used += cell_len(ch)
        if used > room:
            return max(i, 1)
    return len(word)


def _hang(width: int, hang: int) -> int:
    return min(max(hang, 0), max(width, 10) // 2)


def fold_offsets(plain: str, width: int, hang: int) -> list[int]:
    """Where ``plain`` breaks into lines of ``width`` cells, the continuations ``hang`` cells narrower.

    Breaks fall after a run of spaces (the spaces stay at the end of the line before); a word wider
    than any line starts where it is (if a few cells are left) and is cut inside. Returns the offsets where each continuation starts.
    """
    width = max(width, 10)
    hang = _hang(width, hang)
    offsets: list[int] = []
    room, used = width, 0
    for m in _TOKEN.finditer(plain):
        pos, word = m.start(), m.group().rstrip()
        while word and used + cell_len(word) > room:
            if used == 0 or (cell_len(word) > width - hang and room - used >= _MIN_PIECE):
                take = _cut(word, room - used)  # wider than any line: it fills this one, cut where it must
                pos, word = pos + take, word[take:]
            offsets.append(pos)
            room, used = width - hang, 0
        used += cell_len(plain[pos:m.end()])
    return offsets


def print_folded(console: Console, line: Text, hang: int = 0) -> None:
    """Print ``line`` folded between words at the console's width (a terminal), continuations indented by
    ``hang`` spaces; on anything else, as one line."""
    if not console.is_terminal:
        console.print(line, soft_wrap=True)
        return
    hang = _hang(console.width, hang)
    offsets = fold_offsets(line.plain, console.width, hang)
    parts = line.divide(offsets) if offsets else [line]
    for i, part in enumerate(parts):
        part.rstrip()
        console.print(Text.assemble(" " * hang, part) if i else part, soft_wrap=True)
