"""Text made safe to keep: the one function every outside string passes where it enters the product.

Why one function at the entrance and not a guard in each writer: a string from the model, a tool or the
user's terminal is stored (journal, WAL, session file), shown (console) and sent back (the next request)
by many writers, and each strict writer (UTF-8 encoding of the hash-chained WAL, ``argv`` with no NUL,
the terminal) broke differently on the same input. A Python ``str`` can hold what no UTF-8 file can: a
lone surrogate (``"\\ud800"``, from JSON escapes or from ``surrogateescape``-decoded bytes). So each
entrance (the model's reply, the user's intent and answers, a tool's result) passes its text through
:func:`clean_text` once, and everything behind it may stay strict.

What it changes, and only that: lone surrogates and NUL become U+FFFD (the replacement character, so a
reader sees that something was there), and a string longer than ``limit`` is cut with a marker that
says how much was dropped. Control characters that are valid text (newline, tab, ESC) are kept: the
console neutralises them for the terminal, the Markdown and HTML writers for theirs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["clean_json", "clean_text"]

_BAD = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def clean_text(value: str, *, limit: int | None = None) -> str:
    """``value`` with lone surrogates and NUL replaced by U+FFFD, cut to ``limit`` characters.

    Args:
        value: any Python string.
        limit: the longest string kept (the marker counts towards it); ``None`` keeps any length.

    Returns:
        A string every UTF-8 writer accepts; the same object when nothing needed changing.
    """
    if not value.isascii() or "\x00" in value:
        value = _BAD.sub(REPLACEMENT, value)
    if limit is not None and len(value) > limit:
        keep = limit
        for _ in range(3):  # the marker's length depends on the count it states: settle both
            marker = f"...[{len(value) - keep:,} more characters cut]"
            keep = max(0, limit - len(marker))
        value = value[:keep] + f"...[{len(value) - keep:,} more characters cut]"
    return value


def clean_json(value: Any, *, limit: int | None = None) -> Any:
    """A JSON-like value (dicts, lists, strings, numbers) with every string and key passed through
    :func:`clean_text`; non-finite floats (``NaN``, ``Infinity``: no JSON writer of ours accepts them)
    become ``None``, and anything that is not JSON data becomes its cleaned ``str``.

    Recursion follows the value's own nesting: callers bound the depth of what they accept first (the
    model's arguments are refused past a documented depth before they get here).
    """
    if isinstance(value, str):
        return clean_text(value, limit=limit)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {clean_text(str(k), limit=limit): clean_json(v, limit=limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v, limit=limit) for v in value]
    return clean_text(str(value), limit=limit)
