"""A console line folded between words at a terminal's width (the [Shell] and orchestrator lines)."""

from __future__ import annotations

import io
import itertools

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from netghost.safetext import fold_offsets, print_folded

WORD = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E) | st.sampled_from("—é→漢"), min_size=1, max_size=90)


def _pieces(plain: str, offsets: list[int]) -> list[str]:
    bounds = [0, *offsets, len(plain)]
    return [plain[a:b] for a, b in itertools.pairwise(bounds)]


def _cells(text: str) -> int:
    return cell_len(text)


@given(words=st.lists(WORD, min_size=1, max_size=40), width=st.integers(20, 120), hang=st.integers(0, 12))
def test_every_line_fits_and_breaks_fall_between_words_unless_a_word_fits_no_line(
        words: list[str], width: int, hang: int) -> None:
    plain = " ".join(words)
    offsets = fold_offsets(plain, width, hang)
    hang = min(hang, width // 2)  # a continuation keeps at least half the line
    pieces = _pieces(plain, offsets)
    assert "".join(pieces) == plain  # nothing lost, nothing added
    for i, piece in enumerate(pieces):
        room = width if i == 0 else width - hang
        assert _cells(piece.rstrip()) <= room, (piece, room)
    for at in offsets:  # inside a word only when that word is wider than any continuation line
        if plain[at - 1] != " ":
            start = plain.rfind(" ", 0, at) + 1
            end = plain.find(" ", at)
            assert _cells(plain[start:end if end >= 0 else len(plain)]) > width - hang, (plain, at)


def test_a_shell_line_at_80_columns_breaks_between_words_with_its_continuations_indented() -> None:
    command = ("az network watcher packet-capture create -g prod-rg --vm web-vm-01 -n ghost_web-vm-01_20261128T120448 "
               "--storage-account forensicssa --time-limit 60 --filters '[{\"protocol\":\"TCP\",\"localPort\":\"6379\"}]'")
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    print_folded(console, Text(f"[Shell] RISKY — approved by --yes (lab nsg-deny): {command}"), hang=8)
    lines = out.getvalue().splitlines()
    assert len(lines) > 1 and all(len(line) <= 80 for line in lines)
    assert all(line.startswith(" " * 8) and line[8] != " " for line in lines[1:])
    assert " ".join(line.strip() for line in lines).endswith(command)  # every word whole, in order
    words = command.split()
    assert all(any(w in line.split() for line in lines) for w in words)


def test_on_a_pipe_a_line_stays_whole() -> None:
    out = io.StringIO()
    text = "[Shell] SAFE — auto-approved: " + "word " * 40
    print_folded(Console(file=out, width=80), Text(text.strip()), hang=8)
    assert out.getvalue() == text.strip() + "\n"
