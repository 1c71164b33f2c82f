"""Plan-tokens: canonical JSON, tagged hashes, and mismatch detection."""

from __future__ import annotations

import hashlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.errors import PlanTokenMismatchError
from netghost.governance.plan_token import (
    canonical_json,
    compute_plan_token,
    sha256_tagged,
    verify_plan_token,
)

PLAN = {"argv": ["az", "vm", "restart", "-n", "vm1"], "cwd": "/tmp", "session_id": "s1", "seq": 3}


def test_canonical_json_sorts_keys_and_is_compact() -> None:
    assert canonical_json({"b": 1, "a": [1, {"d": "é", "c": None}]}) == '{"a":[1,{"c":null,"d":"é"}],"b":1}'


def test_canonical_json_rejects_nan_and_non_json() -> None:
    with pytest.raises(ValueError):
        canonical_json({"x": math.nan})
    with pytest.raises(TypeError):
        canonical_json({"x": {1, 2}})


def test_sha256_tagged_matches_hashlib() -> None:
    assert sha256_tagged("abc") == "sha256:" + hashlib.sha256(b"abc").hexdigest()
    assert sha256_tagged(b"abc") == sha256_tagged("abc")


def test_plan_token_is_key_order_independent() -> None:
    reordered = dict(reversed(list(PLAN.items())))
    assert compute_plan_token(PLAN) == compute_plan_token(reordered)
    assert compute_plan_token(PLAN).startswith("sha256:")


def test_verify_plan_token_accepts_same_plan_and_rejects_changed_argv() -> None:
    token = compute_plan_token(PLAN)
    verify_plan_token(dict(PLAN), token)
    changed = dict(PLAN, argv=["az", "vm", "delete", "-n", "vm1"])
    with pytest.raises(PlanTokenMismatchError) as info:
        verify_plan_token(changed, token)
    assert info.value.expected == token
    assert info.value.actual == compute_plan_token(changed)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=4), kids, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(json_values, json_values)
def test_token_equal_iff_canonical_equal(a: object, b: object) -> None:
    assert (compute_plan_token(a) == compute_plan_token(b)) == (canonical_json(a) == canonical_json(b))
