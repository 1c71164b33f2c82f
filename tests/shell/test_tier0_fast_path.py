"""Tier 0's fast path answers as the general rule matcher does.

Why: :func:`match_tier0` tests a rule with a single kind of argument condition (written files, one argument
regex, a credential operand) directly, instead of through :meth:`Tier0Rule.matches_args`. That is a second
spelling of the same conditions: if either changes alone, a FORBIDDEN command could slip. The reference
below is the walk every rule went through before the fast path (binaries from the index, a rule about written
files skipped for a command that writes none, then ``matches_args``), run over every command of the shell's
corpora, with and without a home and working directory.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from netghost.redact import PathContext
from netghost.shell.classify._parse import ParsedCommand, parse_command
from netghost.shell.classify._tables import load_tables
from netghost.shell.classify._tier0 import (
    Tier0Index,
    Tier0Rule,
    match_tier0,
    with_path_variants,
    write_targets,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "shell"
CONTEXTS = [None, PathContext(cwd="/home/azureuser/work", home="/home/azureuser")]


def _argvs() -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for path in sorted(DATA.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            command = json.loads(line).get("command") if line.strip() else None
            parsed = parse_command(command) if isinstance(command, str) else None
            if isinstance(parsed, ParsedCommand) and parsed.argv:
                out.append(parsed.argv)
    return out


def _reference(index: Tier0Index, argv: Sequence[str], ctx: PathContext | None) -> Tier0Rule | None:
    name = argv[0].rsplit("/", 1)[-1]
    raw = list(argv[1:])
    args = with_path_variants(raw)
    written = write_targets(name, raw, ctx.cwd if ctx else None)
    for rule in index.for_name(name):
        if (rule.target_regex is not None or rule.write_class) and not written:
            continue
        if rule.matches_args(name, args, raw, lambda: written, ctx):
            return rule
    return None


ARGVS = _argvs()


@pytest.mark.parametrize("ctx", CONTEXTS, ids=["no-context", "home-and-cwd"])
def test_the_fast_path_finds_the_rule_the_general_matcher_finds(ctx: PathContext | None) -> None:
    index = load_tables().tier0
    assert len(ARGVS) > 1000 and any(rule.shape for rule in index.rules)  # the corpora and the fast path exist
    differ = [(" ".join(argv), getattr(match_tier0(index, argv, ctx), "id", None),
               getattr(_reference(index, argv, ctx), "id", None))
              for argv in ARGVS if match_tier0(index, argv, ctx) is not _reference(index, argv, ctx)]
    assert differ == []
