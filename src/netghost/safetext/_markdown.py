"""Untrusted text inside a Markdown document: shown as written, never read as Markdown.

Why escape by construction rather than filter: a report that quotes a model or a tool must not let
that text open HTML, a link, an autolink, an image, a heading, a table, a list or a code fence that
swallows the rest of the page, nor an entity that decodes into one of those; and a filter that knows
the dangerous constructs of one renderer misses the next renderer's. So every function here puts the
text where no construct can start: either every Markdown-significant character is backslash-escaped
(CommonMark lets any ASCII punctuation be escaped, and an escaped character is always literal), or the
text sits in a code span or fenced block whose fence is longer than any backtick run in it.

The escaped set is all ASCII punctuation but ``, ; % ? /``, which no CommonMark, GFM or markdown-it
construct starts with. ``.``, ``:`` and ``@`` are escaped too, so that linkifying renderers (GFM's
extended autolinks, markdown-it's ``linkify``) find no bare domain, URL or e-mail address; ``'`` and
``"`` so that typographic replacements leave the text as written. Two are left where the grammar
gives them no power, so that ids and commands stay readable and greppable in the raw file: ``_``
between two letters or digits (an intraword underscore can neither open nor close emphasis:
CommonMark's flanking rules), and ``-`` anywhere but at the start of a line (where it would start a
list, a thematic break or a setext heading). Hidden characters are shown first
(:func:`~netghost.safetext.visible`), because a Markdown report is read in terminals too.

Leading and trailing whitespace of a line is dropped (four leading spaces would open a code block;
two trailing ones a line break): what is shown is the text, not its indentation.
"""

from __future__ import annotations

import re

from netghost.safetext._terminal import visible

__all__ = ["MD_SIGNIFICANT", "md_block", "md_code", "md_fence", "md_inline"]

MD_SIGNIFICANT = frozenset("!\"#$&'()*+-.:<=>@[\\]^_`{|}~")
"""The characters :func:`md_inline` escapes with a backslash."""

_SIGNIFICANT = re.compile(
    "[" + re.escape("".join(sorted(MD_SIGNIFICANT - {"_", "-"}))) + "]"  # always escaped
    r"|(?<![^\W_])_|_(?![^\W_])"  # an underscore not between two letters or digits
    r"|^-"  # a hyphen starting the line
)
_BACKTICKS = re.compile(r"`+")


def _escape_line(line: str) -> str:
    return _SIGNIFICANT.sub(lambda m: "\\" + m.group(), line.strip())


def md_inline(text: object) -> str:
    """``text`` as literal inline Markdown on one line (a table cell, a list item, a sentence).

    Newlines, tabs and every hidden character are shown as escapes (see
    :func:`~netghost.safetext.visible`), so the result is always one line; rendered, it reads exactly
    as ``visible(text)`` with its outer whitespace stripped.
    """
    return _escape_line(visible(text))


def md_block(text: object) -> str:
    """``text`` as literal Markdown paragraphs (a summary): its lines kept, nothing else structural.

    Blank lines separate paragraphs as they did; every other line is escaped like :func:`md_inline`
    (tabs and hidden characters shown, outer whitespace dropped).
    """
    lines = visible(text, multiline=True).split("\n")
    return "\n".join(_escape_line(line.replace("\t", " ")) for line in lines).strip("\n")


def _fence_len(text: str, least: int) -> int:
    return max([least, *(len(m.group()) + 1 for m in _BACKTICKS.finditer(text))])


def md_code(text: object, *, table: bool = False) -> str:
    """``text`` as an inline code span (a command, a path, a DNS name): shown exactly, greppable.

    The fence is one backtick longer than the longest backtick run in the text, so nothing inside
    can close it; a space pads it where CommonMark would otherwise eat one. Code spans hold no
    Markdown, links or entities. In a GFM table cell (``table``) every ``|`` is written ``\\|``, which
    the table reads as a pipe inside the cell (GFM spec, tables), not as the cell's end.
    """
    shown = visible(text)
    if not shown:
        return ""
    fence = "`" * _fence_len(shown, 1)
    pad = " " if shown[0] == "`" or shown[-1] == "`" or (shown[0] == " " and shown[-1] == " " and shown.strip()) else ""
    body = shown.replace("|", "\\|") if table else shown
    return f"{fence}{pad}{body}{pad}{fence}"


def md_fence(text: object, info: str = "text") -> str:
    """``text`` as a fenced code block (an executive summary, an output): lines and indentation kept.

    The fence is longer than any backtick run in the text, so no line of it can close the block
    early; hidden characters are shown (tabs and newlines kept).
    """
    shown = visible(text, multiline=True).rstrip("\n")
    fence = "`" * _fence_len(shown, 3)
    return f"{fence}{info}\n{shown}\n{fence}"
