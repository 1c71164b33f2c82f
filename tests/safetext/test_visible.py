"""The console neutraliser: nothing hidden comes out, and what comes out reads back exactly."""

from __future__ import annotations

import io
import re
import sys
import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from netghost.safetext import guard_console, is_hidden, show_hidden, visible
from netghost.shell import visible as shell_visible

from .rendering import unvisible

# Any code point (surrogates included), mixed with the characters that stress the escapes: backslashes,
# the letters and digits of an escape, and the hidden characters the issue saw (ESC, OSC, bidi, ZW).
_TRICKY = st.sampled_from(["\\", "x", "u", "U", "1", "b", "2", "0", "e", "f", "\x1b", "\x9b", "\u202e",
                           "\u200b", "\n", "\t", "\r", "\x07", "\U000e0041", "\ufeff", "\u2028"])
ANY_TEXT = st.lists(st.one_of(st.characters(codec=None, exclude_categories=()), _TRICKY), max_size=60).map("".join)
_SGR = re.compile(r"\x1b\[[0-9;]*m")


@settings(max_examples=600, deadline=None)
@given(ANY_TEXT, st.booleans())
@example("\\x1b", False)
@example("\\\x1b", False)
@example("a\\\\u202e b \\U000e0041 \\x41 \\", True)
def test_nothing_hidden_comes_out_and_it_reads_back(text: str, multiline: bool) -> None:
    shown = visible(text, multiline=multiline)
    assert not any(is_hidden(c, multiline=multiline) for c in shown)
    assert unvisible(shown, multiline=multiline) == text
    assert show_hidden(shown) == shown or not multiline  # the console hook never escapes twice


@settings(deadline=None)
@given(st.text(alphabet=st.characters(codec="ascii", min_codepoint=0x20, max_codepoint=0x7E, exclude_characters="\\")))
def test_plain_text_is_shown_as_it_is(text: str) -> None:
    assert visible(text) == text


def test_ordinary_backslashes_stay_single() -> None:
    assert visible(r'C:\Users\x and {"a": "\u0026"} \n') == r'C:\Users\x and {"a": "\u0026"} \n'
    assert visible("\x1b[2J") == "\\x1b[2J" and visible("\u202e") == "\\u202e" and visible("\U000e0041") == "\\U000e0041"
    assert visible(r"\x1b") == r"\\x1b"  # text that reads as an escape is not taken for one


def test_every_control_format_and_separator_character_is_hidden() -> None:
    """The table against this Python's Unicode database: Cc, Cf, Cs, Zl and Zp, every code point."""
    missed = [f"U+{cp:04X}" for cp in range(sys.maxunicode + 1)
              if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Cs", "Zl", "Zp") and not is_hidden(chr(cp))]
    assert missed == []
    # and the default-ignorable characters outside those categories (fillers, variation selectors, CGJ)
    for cp in (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180F, 0x3164, 0xFE00, 0xFE0F, 0xFFA0, 0xE0100):
        assert is_hidden(chr(cp)), hex(cp)
    assert not is_hidden("\n", multiline=True) and not is_hidden("\t", multiline=True) and is_hidden("\n")


def test_the_shell_uses_the_one_implementation() -> None:
    assert shell_visible is visible


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return guard_console(Console(file=out, force_terminal=True, color_system="truecolor", width=200)), out


def test_the_console_hook_lets_no_sequence_through_whoever_prints() -> None:
    console, out = _terminal()
    hostile = "\x1b]0;pwned\x07 \x1b[2J \x1b]8;;https://evil.example/\x07click\x1b]8;;\x07 \u202eexe.txt \x9b2J"
    console.print(hostile)  # a str with no markup intent
    console.print(Text("status: " + hostile, style="bold"))
    console.print("[link=https://evil.example]markup link[/link] and [bold]bold[/bold]")
    console.print(Panel(Text(hostile)))  # a renderable another part built
    written = out.getvalue()
    rest = _SGR.sub("", written)
    assert "\x1b" not in rest and "\x9b" not in rest and "\u202e" not in rest and "\x07" not in rest
    assert "\\x1b]0;pwned" in rest and "\\u202eexe.txt" in rest  # shown, not obeyed
    assert "evil.example" not in rest.replace("https://evil.example/", "")  # the link target is never emitted
    assert "\x1b]8;" not in written


def test_the_hook_is_installed_once_and_escapes_nothing_twice() -> None:
    console, out = _terminal()
    guard_console(console)
    console.print(Text(visible("a\x1bb \\x1b")))
    assert _SGR.sub("", out.getvalue()).strip() == "a\\x1bb \\\\x1b"
