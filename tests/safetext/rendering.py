"""What a real renderer makes of our Markdown, and the inverse of ``visible`` (the tests' oracles)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt

from netghost.safetext import is_hidden

__all__ = ["Rendered", "render", "unvisible"]

# CommonMark plus the GFM pieces a reader's viewer adds: tables, strikethrough, and linkify (bare URLs,
# domains and e-mail addresses become links, as GFM's extended autolinks and markdown-it's linkify do).
_MD = MarkdownIt("commonmark", {"linkify": True}).enable(["table", "strikethrough", "linkify"])
# The same with typographic replacements ("--" to a dash, quotes curled): they change how text looks,
# never what elements exist, so only the structure is compared under them.
_TYPO = MarkdownIt("commonmark", {"linkify": True, "typographer": True}).enable(
    ["table", "strikethrough", "linkify", "replacements", "smartquotes"])


class Rendered(HTMLParser):
    """The elements (with their attributes) and the text of an HTML fragment."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, tuple[tuple[str, str | None], ...]]] = []
        self.parts: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, tuple(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, tuple(attrs)))

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    @property
    def tags(self) -> set[str]:
        """The element names used."""
        return {tag for tag, _ in self.elements}

    @property
    def attributes(self) -> set[tuple[str, str | None]]:
        """Every (name, value) attribute on any element."""
        return {a for _, attrs in self.elements for a in attrs}

    @property
    def text(self) -> str:
        """The text, tags removed, entities decoded."""
        return "".join(self.parts)


def render(markdown: str, *, typographer: bool = False) -> Rendered:
    """``markdown`` rendered by markdown-it (CommonMark + GFM tables + linkify), parsed back."""
    return Rendered((_TYPO if typographer else _MD).render(markdown))


_ESCAPE = re.compile(r"x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})")


def _canonical(code: int) -> str:
    return f"x{code:02x}" if code <= 0xFF else f"u{code:04x}" if code <= 0xFFFF else f"U{code:08x}"


def unvisible(shown: str, *, multiline: bool = False) -> str:
    """The text ``visible(text, multiline=...)`` was made from (the escapes read back)."""
    out: list[str] = []
    i = 0
    while i < len(shown):
        if shown[i] != "\\":
            out.append(shown[i])
            i += 1
            continue
        j = i
        while j < len(shown) and shown[j] == "\\":
            j += 1
        run = j - i
        m = _ESCAPE.match(shown, j)
        code = int(next(g for g in m.groups() if g), 16) if m else -1
        if m and code <= 0x10FFFF and _canonical(code).lower() == m.group().lower() and is_hidden(
                chr(code), multiline=multiline):
            out.append("\\" * (run // 2))
            if run % 2:
                out.append(chr(code))
                i = m.end()
            else:
                i = j
            continue
        out.append("\\" * run)
        i = j
    return "".join(out)
