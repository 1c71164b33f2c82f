"""Property: the redactor's JSON-string decoder (escaped lines are scanned decoded, their offsets mapped back)
agrees with the plain character-by-character decoding, offsets included, on any body."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.redact._span_rule import decode_json_string

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}


def _by_character(body: str, base: int) -> tuple[str, list[int]]:
    """The reference: one character (or one escape) at a time."""
    chars: list[str] = []
    offsets: list[int] = []
    i = 0
    while i < len(body):
        ch, width = body[i], 1
        if ch == "\\" and i + 1 < len(body):
            esc, width = body[i + 1], 2
            if esc == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2:i + 6]):
                ch, width = chr(int(body[i + 2:i + 6], 16)), 6
            else:
                ch = _ESCAPES.get(esc, esc)
        chars.append(ch)
        offsets.append(base + i)
        i += width
    offsets.append(base + len(body))
    return "".join(chars), offsets


_PIECES = st.sampled_from(["\\", "\\n", "\\t", "\\\\", "\\\"", "\\u", "\\u00e9", "\\uD83D", "\\u12", "\\x",
                           "a", "é", "\n", " ", "key=", "0", "f", "F"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join), st.integers(min_value=0, max_value=1000))
def test_decoding_by_runs_matches_the_character_by_character_reference(body: str, base: int) -> None:
    assert decode_json_string(body, base) == _by_character(body, base)


def test_the_edges_each_decode_as_json_does() -> None:
    assert decode_json_string("a\\nb\\u00e9\\") == ("a\nbé\\", [0, 1, 3, 4, 10, 11])
    assert decode_json_string("\\uzz") == ("uzz", [0, 2, 3, 4])
    assert decode_json_string("") == ("", [0])
