"""The small Markdown subset our reports write, turned into HTML without trusting any of its text.

Why here: the forensic report's HTML is converted from its Markdown, and the agent's HTML RCA shows the
engine's executive summary; both hold tool text (DNS names from packets, a model's narrative) that the
Markdown side escaped with :func:`~netghost.safetext.md_inline`. The converter must read those escapes
back (or the page shows backslashes) and must emit no element but the two it knows (``code`` and
``strong``): every other character is HTML-escaped, hidden characters shown.
"""

from __future__ import annotations

import html
import re

from netghost.safetext._terminal import visible

__all__ = ["md_inline_html"]

_TOKEN = re.compile(
    r"\\(?P<esc>[!-/:-@\[-`{-~])"  # a backslash escape: the character itself
    r"|(?<!`)(?P<fence>`+)(?!`)(?P<code>.+?)(?<!`)(?P=fence)(?!`)"  # a code span: its text, literally
    r"|\*\*(?P<strong>(?:\\.|[^*\\])+)\*\*"  # bold: its text, itself inline Markdown
)


def _text(value: str) -> str:
    return html.escape(visible(value, multiline=True), quote=True)


def md_inline_html(text: str) -> str:
    """One line of our inline Markdown (escapes, code spans, ``**bold**``) as HTML; nothing else is markup."""
    out: list[str] = []
    last = 0
    for m in _TOKEN.finditer(text):
        out.append(_text(text[last:m.start()]))
        if m.group("esc") is not None:
            out.append(_text(m.group("esc")))
        elif m.group("code") is not None:
            code = m.group("code")
            if code.startswith(" ") and code.endswith(" ") and code.strip():
                code = code[1:-1]  # CommonMark strips one padding space from each side
            out.append(f"<code>{_text(code)}</code>")
        else:
            out.append(f"<strong>{md_inline_html(m.group('strong'))}</strong>")
        last = m.end()
    out.append(_text(text[last:]))
    return "".join(out)
