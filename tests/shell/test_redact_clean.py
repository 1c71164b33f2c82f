"""clean_text / clean_json: outside text made safe to keep, for every string (a property), and the cut."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from netghost.redact import clean_json, clean_text

_any_text = st.text(st.characters(exclude_categories=()), max_size=200)
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | _any_text,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_any_text, inner, max_size=3),
                     max_leaves=10)


@given(_any_text)
def test_any_string_becomes_strict_utf8_without_nul_and_valid_text_is_kept(text: str) -> None:
    out = clean_text(text)
    out.encode("utf-8")  # strict: raises on a lone surrogate
    assert "\x00" not in out and len(out) == len(text)
    assert all(a == b or (b == "\ufffd" and (a == "\x00" or 0xD800 <= ord(a) <= 0xDFFF)) for a, b in zip(text, out,
                                                                                                     strict=True))
    assert clean_text(out) == out  # idempotent


def test_controls_that_are_text_are_kept_for_the_medium_writers() -> None:
    assert clean_text("a\tb\nc\x1b[31m\u202e") == "a\tb\nc\x1b[31m\u202e"
    assert clean_text("x\ud800y\x00z") == "x\ufffdy\ufffdz"


def test_the_limit_cuts_with_a_marker_that_says_how_much() -> None:
    out = clean_text("A" * 10_000, limit=100)
    assert len(out) <= 100 and out.endswith(f"...[{10_000 - out.index('.'):,} more characters cut]")
    assert clean_text("short", limit=100) == "short"


@given(_json)
def test_any_json_value_can_be_written_as_strict_json(value: object) -> None:
    out = clean_json(value)
    json.dumps(out, ensure_ascii=False, allow_nan=False).encode("utf-8")


def test_non_finite_numbers_and_non_json_values_are_replaced() -> None:
    assert clean_json({"a": math.nan, "b": [math.inf, 1.5], "c": b"\x00"}) == {"a": None, "b": [None, 1.5],
                                                                               "c": "b'\\x00'"}
