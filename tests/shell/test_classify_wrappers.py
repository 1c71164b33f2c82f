"""Wrappers (find, env, nice ...) are unwrapped; directory operands are not taken for programs."""

from __future__ import annotations

import pytest

from netghost.shell.classify import classify


@pytest.mark.parametrize("command", ["find . -name x", "find .. -type f", "find . -name '*.cap'"])
def test_find_over_a_directory_is_risky_not_forbidden(command: str) -> None:
    result = classify(command)
    assert (result.verdict, result.tier) == ("RISKY", 3)


@pytest.mark.parametrize(
    "command",
    ["find . -exec sh -c id ';'", "find . -execdir bash -c id ';'", "find . -exec rm {} +", "env . x sudo id",
     "nice -n 5 sudo id"],
)
def test_forbidden_programs_behind_a_wrapper_stay_forbidden(command: str) -> None:
    assert classify(command).verdict == "FORBIDDEN"


@pytest.mark.parametrize("command", ["env . x", "nice . x", "timeout 5 . /tmp/x"])
def test_dot_behind_a_wrapper_is_never_safe(command: str) -> None:
    assert classify(command).verdict == "RISKY"
