"""A PolicyError names the file (and the rule) at fault, so a caller need not parse the message."""

from __future__ import annotations

from pathlib import Path

import pytest

from netghost.errors import PolicyError
from netghost.governance.policy import PolicyEngine, lint_rego, load_policy_dir


def test_policy_error_is_a_value_error_with_empty_fields_by_default() -> None:
    err = PolicyError("bad")
    assert isinstance(err, ValueError)
    assert (str(err), err.path, err.rule) == ("bad", None, None)


def test_policy_directory_errors_carry_the_directory(tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as missing:
        load_policy_dir(tmp_path / "nope")
    assert missing.value.path == tmp_path / "nope"
    with pytest.raises(PolicyError) as empty:
        PolicyEngine([tmp_path])
    assert empty.value.path == tmp_path
    assert str(empty.value) == f"policy directory {tmp_path} holds no .rego file"


def test_lint_error_carries_the_policy_name() -> None:
    with pytest.raises(PolicyError) as info:
        lint_rego("org/user.rego", "package p\nx := min([1, 2])\n")
    assert info.value.path == "org/user.rego"
    assert info.value.rule is None
    assert str(info.value).startswith("org/user.rego:2: ")


def test_bundle_error_carries_the_directory(tmp_path: Path) -> None:
    # The manifest is read first, so a directory without one never reaches rego-cpp's loader.
    with pytest.raises(PolicyError, match="not a policy bundle") as info:
        PolicyEngine.from_bundle(tmp_path)
    assert info.value.path == tmp_path
