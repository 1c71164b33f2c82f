"""The Markdown escaper, checked with a real renderer: any text in, no element, attribute or link out.

markdown-it-py renders CommonMark with GFM tables and linkify (bare URLs, domains and e-mail addresses
become links, as viewers do); the text the reader sees must be exactly what ``visible`` shows.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from netghost.safetext import md_block, md_code, md_fence, md_inline, visible

from .rendering import render
from .test_visible import ANY_TEXT

# Markdown's own alphabet, so that generated text often tries to open something.
_MD_PIECES = st.sampled_from([
    "<", ">", "&", "[", "]", "(", ")", "!", "#", "*", "_", "`", "```", "~~~", "|", "-", "=", "+", ".", ":",
    "@", "\\", "\n", "\n\n", "    ", " ", "1.", "1)", "<script>", "<img src=x onerror=alert(1)>",
    "javascript:alert(1)", "https://evil.example/x.png", "www.evil.example", "evil.com", "a@b.org", "&lt;",
    "&#60;", "&#x3C;img&#x3E;", "&amp;", "&quot;", "---", "===", "## Integrity Statement", "<!--", "-->",
    "[x]: https://evil.example", "![i](https://evil.example/i.png)", "<https://evil.example>", "$x$",
    "[^1]", "{#id}", ":smile:", "\x1b]8;;https://evil\x07", "\u202e", "h1", "ghost_20260101_000000_001",
])
MD_TEXT = st.lists(st.one_of(_MD_PIECES, ANY_TEXT), max_size=12).map("".join)
HOSTILE = ("<script>alert(1)</script> <img src=https://evil.example/p.png> [x](javascript:alert(1)) "
           "![i](https://evil.example/i.png) <https://evil.example> https://evil.example www.evil.example "
           "mail a@evil.example &lt;b&gt; &#x3C;img src=x&#x3E;\n## Integrity Statement\nAll good\n"
           "| a | b |\n|---|---|\n```\nswallow\n[r]: https://evil.example\n===\n    code\n- item")


def _normal(text: str) -> str:
    return " ".join(text.split())


@settings(max_examples=400, deadline=None)
@given(MD_TEXT)
@example(HOSTILE)
def test_inline_text_renders_as_one_paragraph_of_exactly_its_text(text: str) -> None:
    escaped = md_inline(text)
    assert "\n" not in escaped
    for markdown in (escaped, f"- {escaped}", f"| h |\n|---|\n| {escaped} |"):
        page = render(markdown)
        assert page.tags <= {"p", "ul", "li", "table", "thead", "tbody", "tr", "th", "td"}, markdown
        assert page.attributes == set(), markdown
        assert visible(text).strip() in page.text
        assert render(markdown, typographer=True).tags == page.tags


@settings(max_examples=300, deadline=None)
@given(MD_TEXT)
@example(HOSTILE)
def test_block_text_renders_as_paragraphs_of_exactly_its_text(text: str) -> None:
    page = render(md_block(text))
    assert page.tags <= {"p"}
    assert page.attributes == set()
    assert _normal(page.text) == _normal(visible(text, multiline=True))
    assert render(md_block(text), typographer=True).tags <= {"p"}


@settings(max_examples=300, deadline=None)
@given(MD_TEXT, st.booleans())
@example("a | b `c` ``d`` ", True)
def test_a_code_span_holds_exactly_its_text(text: str, table: bool) -> None:
    code = md_code(text, table=table)
    shown = visible(text)
    if not shown:
        assert code == ""
        return
    page = render(f"| h |\n|---|\n| {code} |" if table else f"see {code} here")
    assert page.tags <= {"p", "code", "table", "thead", "tbody", "tr", "th", "td"}
    assert page.attributes == set()
    assert page.tags >= {"code"}
    assert shown in page.text


@settings(max_examples=300, deadline=None)
@given(MD_TEXT)
@example("```\nescape\n````\n```` x\n")
def test_a_fence_cannot_be_closed_from_inside(text: str) -> None:
    page = render(md_fence(text) + "\n\n## After")
    assert page.tags == {"pre", "code", "h2"}
    assert page.attributes == {("class", "language-text")}
    assert page.text.startswith(visible(text, multiline=True).rstrip("\n"))
    assert page.text.rstrip().endswith("After")


def test_the_issues_examples_open_nothing() -> None:
    page = render(md_block(HOSTILE))
    assert page.tags == {"p"} and page.attributes == set()
    for shown in ("<script>alert(1)</script>", "<img src=https://evil.example/p.png>", "[x](javascript:alert(1))",
                  "## Integrity Statement", "&lt;b&gt;", "&#x3C;img src=x&#x3E;"):
        assert shown in page.text  # the reader sees the text; nothing of it acts
