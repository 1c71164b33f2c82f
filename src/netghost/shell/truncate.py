"""Format-aware truncation of command output to what a model turn can afford.

Why format-aware: a JSON document cut at line 200 is no longer JSON, and the model then guesses at its
shape; a table without its header is a wall of numbers; a log without its tail hides the error. So JSON is
shrunk *structurally* (long lists keep their first items plus a marker item, long strings keep a prefix plus
a marker) and re-serialised; tables keep the header (and its ``----`` rule) plus the first and last rows;
plain text keeps its head and tail around a marker line.

The budget is 200 lines and ~4,000 tokens (estimated as 4 characters per token, which is close for
English and JSON and errs on the short side for base64 and hex).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "MAX_CHARS",
    "MAX_LINES",
    "MAX_TOKENS",
    "Truncation",
    "detect_format",
    "estimate_tokens",
    "truncate",
]

MAX_LINES = 200
MAX_TOKENS = 4_000
CHARS_PER_TOKEN = 4
MAX_CHARS = MAX_TOKENS * CHARS_PER_TOKEN
_MAX_LINE_CHARS = 1_000
_MAX_DEPTH = 200  # JSON nested deeper than this is shown as text: recursion limits are not a format

Format = Literal["json", "table", "text"]
_RULE_LINE = re.compile(r"^[\s\-=+|:]*-{3,}[\s\-=+|:]*$")
_COLUMNS = re.compile(r"\S+(?:\s\S+)*")


@dataclass(frozen=True)
class Truncation:
    """The text to show and the ``output_metadata`` fields that describe the cut."""

    text: str
    truncation_applied: bool
    original_lines: int
    shown_lines: int
    format: Format


def estimate_tokens(text: str) -> int:
    """A cheap token estimate (ceil of characters / 4); no tokenizer dependency for a budget check."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _count_lines(text: str) -> int:
    return len(text.splitlines())


def _fits(text: str, max_lines: int, max_chars: int) -> bool:
    return _count_lines(text) <= max_lines and len(text) <= max_chars


def detect_format(text: str) -> Format:
    """Classify output as ``json``, ``table`` (az ``-o table``, ss, netstat) or ``text``."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[", '"') and _parse_json(stripped) is not None:
        return "json"
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) >= 3:
        if _RULE_LINE.match(lines[1]):
            return "table"
        header = re.split(r"\s{2,}|\t", lines[0].strip())
        if len(header) >= 3 and all(re.match(r"[A-Za-z#]", h) for h in header):
            wide = sum(1 for line in lines[1:] if len(re.split(r"\s{2,}|\t", line.strip())) >= 3)
            if wide >= 0.8 * (len(lines) - 1):
                return "table"
    return "text"


def _parse_json(text: str) -> Any | None:
    """The parsed document, or None when it is not JSON (or nests deeper than the parser's stack)."""
    if _too_deep(text):
        return None
    try:
        value: Any = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value


def _too_deep(text: str, limit: int = _MAX_DEPTH) -> bool:
    """Whether brackets nest deeper than ``limit`` (ignoring brackets inside strings), in one pass.

    json.loads and json.dumps recurse per level; '[' * 5000 would raise RecursionError there, so such a
    document is treated as text (head and tail) instead.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def truncate(text: str, *, max_lines: int = MAX_LINES, max_tokens: int = MAX_TOKENS) -> Truncation:
    """Cut ``text`` to the budget, keeping it readable in its own format.

    Args:
        text: Already-redacted output.
        max_lines: Line budget (200 by default).
        max_tokens: Token budget (~4,000 by default, estimated as characters / 4).

    Returns:
        A :class:`Truncation`; when nothing had to be cut, ``text`` is returned unchanged.
    """
    max_chars = max_tokens * CHARS_PER_TOKEN
    fmt = detect_format(text)
    original_lines = _count_lines(text)
    if _fits(text, max_lines, max_chars):
        return Truncation(text, False, original_lines, original_lines, fmt)
    if fmt == "json":
        try:
            out = _truncate_json(_parse_json(text.strip()), max_lines, max_chars)
        except RecursionError:  # deeper than Python's stack: keep it as text, which never fails
            fmt = "text"
            out = _truncate_lines(text.splitlines(), max_lines, max_chars, keep_header=0)
    elif fmt == "table":
        out = _truncate_lines(text.splitlines(), max_lines, max_chars, keep_header=_header_size(text))
    else:
        out = _truncate_lines(text.splitlines(), max_lines, max_chars, keep_header=0)
    return Truncation(out, True, original_lines, _count_lines(out), fmt)


def _header_size(text: str) -> int:
    lines = text.splitlines()
    return 2 if len(lines) > 1 and _RULE_LINE.match(lines[1]) else 1


def _truncate_lines(lines: list[str], max_lines: int, max_chars: int, *, keep_header: int) -> str:
    """Keep ``keep_header`` lines, then as much head and tail as fits, around one marker line."""
    clipped = [_clip_line(line) for line in lines]
    header, body = clipped[:keep_header], clipped[keep_header:]
    room = max(max_lines - len(header) - 1, 2)
    head_n = (room + 1) // 2
    tail_n = room - head_n
    while True:
        head, tail = body[:head_n], body[len(body) - tail_n :] if tail_n else []
        omitted = len(body) - len(head) - len(tail)
        what = "rows" if keep_header else "lines"
        marker = f"... [{omitted} {what} truncated; {len(lines)} {what} in all] ..."
        parts = [*header, *head, marker, *tail] if omitted > 0 else [*header, *body]
        out = "\n".join(parts)
        if len(out) <= max_chars or head_n + tail_n <= 1:
            return out if len(out) <= max_chars else out[: max_chars - 40] + "\n... [output truncated] ..."
        # Over the character budget: drop lines from the middle, keeping head and tail balanced.
        if head_n >= tail_n and head_n > 1:
            head_n -= max(1, head_n // 4)
        else:
            tail_n -= max(1, tail_n // 4)


def _clip_line(line: str) -> str:
    if len(line) <= _MAX_LINE_CHARS:
        return line
    cut = len(line) - _MAX_LINE_CHARS
    return line[:_MAX_LINE_CHARS] + f" ... [{cut} chars truncated]"


# --- JSON ----------------------------------------------------------------------------------------------

_LIMITS = ((50, 2000), (20, 500), (10, 200), (5, 120), (3, 80), (2, 60), (1, 40), (0, 20))


def _truncate_json(value: Any, max_lines: int, max_chars: int) -> str:
    """Shrink lists, objects and strings step by step until the indented document fits."""
    for max_items, max_str in _LIMITS:
        out = json.dumps(_shrink(value, max_items, max_str), indent=2, ensure_ascii=False)
        if _fits(out, max_lines, max_chars):
            return out
    summary = {
        "_truncated": "output too large to show; narrow the query (--query, --output tsv, filters)",
        "type": type(value).__name__,
        "preview": json.dumps(value, ensure_ascii=False)[: min(2000, max_chars // 2)],
    }
    return json.dumps(summary, indent=2, ensure_ascii=False)


_ARM_ID = re.compile(r"/subscriptions/[^\s]{1,480}", re.IGNORECASE)
"""An ARM resource id: the one string the model must see whole to name the resource it read."""


def _shrink(value: Any, max_items: int, max_str: int) -> Any:
    if isinstance(value, str):
        if len(value) <= max_str or _ARM_ID.fullmatch(value):  # an id cut short names no resource
            return value
        return value[:max_str] + f"...[truncated {len(value) - max_str} chars]"
    if isinstance(value, list):
        kept: list[Any] = [_shrink(v, max_items, max_str) for v in value[:max_items]]
        if len(value) > max_items:
            kept.append(f"[truncated: {len(value) - max_items} more items of {len(value)}]")
        return kept
    if isinstance(value, dict):
        items = list(value.items())
        out = {k: _shrink(v, max_items, max_str) for k, v in items[: max(max_items, 1) * 4]}
        if len(items) > len(out):
            out["_truncated"] = f"{len(items) - len(out)} more keys of {len(items)}"
        return out
    return value
