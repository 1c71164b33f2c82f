"""Issue 16 properties: re-quoting, az command-word case, `=@` placements and wrappers never lower
the verdict of a command from the generated corpus (SAFE < RISKY < FORBIDDEN)."""

from __future__ import annotations

import json
import random
import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.shell.classify import classify
from tests.shell.redteam_corpus import OUT, WRAPPERS, recase_az, requote

RANK = {"SAFE": 0, "RISKY": 1, "FORBIDDEN": 2}
ROWS = [json.loads(line) for line in OUT.read_text(encoding="utf-8").splitlines() if line.strip()]
ARGVS = [tuple(shlex.split(r["command"])) for r in ROWS]
AZ_ARGVS = [a for a in ARGVS if a[0] == "az"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ARGVS), st.integers(0, 2**32))
def test_requoting_never_lowers(argv: tuple[str, ...], seed: int) -> None:
    base = classify(shlex.join(argv)).verdict
    assert RANK[classify(requote(list(argv), random.Random(seed))).verdict] >= RANK[base]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(AZ_ARGVS), st.integers(0, 2**32))
def test_az_case_never_lowers(argv: tuple[str, ...], seed: int) -> None:
    base = classify(shlex.join(argv)).verdict
    assert classify(shlex.join(recase_az(list(argv), random.Random(seed)))).verdict == base


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ARGVS), st.sampled_from(WRAPPERS), st.sampled_from(WRAPPERS))
def test_wrappers_never_lower(argv: tuple[str, ...], w1: list[str], w2: list[str]) -> None:
    base = classify(shlex.join(argv)).verdict
    once = classify(shlex.join([*w1, *argv])).verdict
    twice = classify(shlex.join([*w1, *w2, *argv])).verdict
    floor = max(RANK[base], RANK["RISKY"])  # a wrapper is never SAFE itself
    assert RANK[once] >= floor and RANK[twice] >= floor


_AT_PLACEMENTS = [lambda p: ["@" + p], lambda p: ["--subscription=@" + p], lambda p: ["-s=@" + p],
                  lambda p: ["--query", "k=@" + p], lambda p: ["-o=@" + p], lambda p: ["--query=@" + p]]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(AZ_ARGVS), st.sampled_from(_AT_PLACEMENTS),
       st.sampled_from(["/etc/hostname", "~/.azure/msal_token_cache.json", "x.txt", "~/.ssh/id_rsa", "-"]))  # fmt: skip
def test_at_file_forms_never_lower_and_are_never_safe(argv: tuple[str, ...], place: object, path: str) -> None:
    base = classify(shlex.join(argv)).verdict
    got = classify(shlex.join([*argv, *place(path)])).verdict  # type: ignore[operator]
    assert got != "SAFE"
    assert RANK[got] >= RANK[base]
    if ".azure" in path or ".ssh" in path:
        assert got == "FORBIDDEN"
