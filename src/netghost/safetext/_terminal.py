"""What a terminal shows of untrusted text: every character that could redraw or hide something, as an escape.

Why escapes rather than dropping: a human reading a command, a model's reasoning or a tool's output must
see that something was hidden there (a right-to-left override, a clear-screen, an OSC 8 hyperlink).
Why one table for the whole product: the approval box, the console, the RCA reports and the MCP
outputs must agree on what counts as hidden, and a character added here is covered everywhere.

The table (:data:`HIDDEN`) is: C0 controls and DEL (ESC starts every escape sequence), C1 controls
(U+0080-009F: 8-bit CSI, OSC, ST), every format character (Unicode category Cf: bidi embeddings,
overrides and isolates, zero-width spaces and joiners, word joiner, invisible operators, BOM, tag
characters, interlinear annotation marks), the line and paragraph separators (Zl, Zp), lone
surrogates (Cs), and the remaining default-ignorable code points that render as nothing (the
combining grapheme joiner, Hangul fillers, Khmer inherent vowels, variation selectors, and the code
points Unicode reserves as default-ignorable). A test checks the table against ``unicodedata``.

The escapes are injective, so what is shown can always be read back exactly (:func:`visible` never
maps two texts to one display): a hidden character becomes ``\\xHH`` (up to U+00FF), ``\\uHHHH`` or
``\\UHHHHHHHH``; a run of literal backslashes is doubled only where it stands before a hidden
character or before text that reads as such an escape, so ordinary backslashes (paths, JSON escapes
of visible characters) are shown as they are.
"""

from __future__ import annotations

import re

__all__ = ["HIDDEN", "is_hidden", "show_hidden", "visible"]

HIDDEN = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (tab and newline handled by the caller's mode), DEL, C1
    "\u00ad\u034f\u061c\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\ud800-\udfff"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
"""A regex character class body (without brackets) of the hidden characters other than tab and newline."""

_HIDDEN_CHAR = re.compile(f"[{HIDDEN}]")
_LINE = re.compile(f"[{HIDDEN}\t\n]")
_MULTILINE = re.compile(f"[{HIDDEN}]")
# A run of backslashes, then what decides whether it must be doubled: a hidden character (its escape
# starts with a backslash) or text that reads like the canonical escape of one.
_RUN = re.compile(r"\\+")
_LOOKALIKE = re.compile(r"x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})")


def is_hidden(char: str, *, multiline: bool = False) -> bool:
    """True when ``char`` (one character) is shown as an escape by :func:`visible` in that mode."""
    return (_MULTILINE if multiline else _LINE).fullmatch(char) is not None


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _reads_as_escape(text: str, at: int, hidden: re.Pattern[str]) -> bool:
    """``text[at:]`` starts with a hidden character, or with ``xHH``/``uHHHH``/``UHHHHHHHH`` naming one in
    its canonical form (the form :func:`visible` writes)."""
    if at >= len(text):
        return False
    if hidden.match(text, at):
        return True
    m = _LOOKALIKE.match(text, at)
    if m is None:
        return False
    hexa = next(g for g in m.groups() if g is not None)
    code = int(hexa, 16)
    if code > 0x10FFFF:
        return False
    canonical = _escape(chr(code))[1:]
    return canonical.lower() == m.group().lower() and hidden.fullmatch(chr(code)) is not None


def visible(text: object, *, multiline: bool = False) -> str:
    """``text`` with every hidden character shown as an escape (see the module docstring).

    Args:
        text: Any value; non-strings are shown through ``str``.
        multiline: Keep newlines and tabs (reasoning and outputs have lines); a command, an id or a
            table cell keeps neither.

    Returns:
        Text with no character of :data:`HIDDEN` (and no tab or newline unless ``multiline``), from
        which the original can be read back exactly.
    """
    raw = str(text)
    hidden = _MULTILINE if multiline else _LINE
    if "\\" not in raw and hidden.search(raw) is None:
        return raw
    out: list[str] = []
    last = 0
    for m in _RUN.finditer(raw):
        if not _reads_as_escape(raw, m.end(), hidden):
            continue
        out.append(hidden.sub(lambda h: _escape(h.group()), raw[last:m.start()]))
        out.append(m.group() * 2)
        last = m.end()
    out.append(hidden.sub(lambda h: _escape(h.group()), raw[last:]))
    return "".join(out)


def show_hidden(text: str) -> str:
    """Only the hidden characters of ``text`` escaped (tab and newline kept), backslashes untouched.

    For a last line of defence over text that :func:`visible` has already shown (a console's rendered
    segments): applied to such text it changes nothing, so nothing is escaped twice.
    """
    if _HIDDEN_CHAR.search(text) is None:
        return text
    return _HIDDEN_CHAR.sub(lambda h: _escape(h.group()), text)
