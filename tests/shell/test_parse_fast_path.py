"""The plain-line fast path of parse_command gives exactly the grammar's answer.

A line of plain words and whole quoted strings skips tree-sitter (a third of the classifier's cost on
long diagnostics). Nothing may change for such a line: the same argv, never flagged, and every line
outside the class still goes through the grammar, which refuses what it refuses. bash itself checks
both paths in test_parse_bash_oracle.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.shell.classify._parse import ParsedCommand, _parse_with_grammar, _plain_argv, parse_command

DATA = Path(__file__).resolve().parents[1] / "data" / "shell"
_WORD_CHARS = "abcXYZ0129-_./:=@%,+"
_ANY = "abX09 -_./:=@%,+'\"$`\\[]{}~#;&|<>()!^*?"


def _corpus_commands() -> list[str]:
    out: list[str] = []
    for path in sorted(DATA.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                command = json.loads(line).get("command")
                if isinstance(command, str):
                    out.append(command)
    return out


def test_every_corpus_line_the_fast_path_takes_parses_the_same_through_the_grammar() -> None:
    commands = _corpus_commands()
    taken = 0
    for command in commands:
        fast = _plain_argv(command)
        if fast is None:
            continue
        taken += 1
        assert _parse_with_grammar(command) == ParsedCommand(fast, False), command
    assert taken > len(commands) // 2  # the path is really used: most diagnostics are plain lines


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("az network nsg rule list -g rg --nsg-name n --query \"[?access=='Deny']\" -o json",
         ("az", "network", "nsg", "rule", "list", "-g", "rg", "--nsg-name", "n", "--query", "[?access=='Deny']", "-o", "json")),
        ("curl -s -o /dev/null -w '%{http_code}' https://a.example", ("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "https://a.example")),
        ("  dig +short  db.internal ", ("dig", "+short", "db.internal")),
        ("printf '' \"\"", ("printf", "", "")),
    ],
)  # fmt: skip
def test_plain_lines_take_the_fast_path(command: str, argv: tuple[str, ...]) -> None:
    assert _plain_argv(command) == argv
    assert parse_command(command) == ParsedCommand(argv, False)


@pytest.mark.parametrize(
    "command",
    [
        "ping == x",  # tree-sitter reads a bare == as a test operator and refuses it
        "time ping x",  # a reserved word first
        "export A=1",  # a declaration
        "123 x",  # a number is no command name
        "A=1 ping x",  # an assignment
        "ping --query='x'",  # a quote glued to a word
        'ping "a$HOME"',  # an expansion inside double quotes
        'ping "a\\"b"',  # an escape inside double quotes
        "ping ~/x",  # a tilde
        "ping a;b",  # an operator
    ],
)
def test_lines_outside_the_class_go_to_the_grammar(command: str) -> None:
    assert _plain_argv(command) is None
    assert parse_command(command) == _parse_with_grammar(command)


_PLAIN_WORD = st.text(alphabet=_WORD_CHARS, min_size=1, max_size=8)
_TOKEN = st.one_of(
    _PLAIN_WORD,
    st.text(alphabet=_ANY, max_size=8).map(lambda t: "'" + t.replace("'", "") + "'"),
    st.text(alphabet=_ANY, max_size=8).map(lambda t: '"' + t + '"'),
    st.text(alphabet=_ANY, min_size=1, max_size=4),
    st.sampled_from(["==", "=", "!", "in", "do", "time", "--", "-"]),
)
_FIRST = st.one_of(st.sampled_from(["ping", "az", "./x", "/usr/bin/x", "_a", "x.y", "a+b", "-", ".", "if", "1a", "123"]), _TOKEN)


@settings(max_examples=3000, deadline=None)
@given(_FIRST, st.lists(st.tuples(st.sampled_from([" ", "  "]), _TOKEN), max_size=7), st.sampled_from(["", " "]))
def test_generated_lines_parse_the_same_on_both_paths(first: str, rest: list[tuple[str, str]], tail: str) -> None:
    command = first + "".join(gap + token for gap, token in rest) + tail
    fast = _plain_argv(command)
    if fast is not None:
        assert _parse_with_grammar(command) == ParsedCommand(fast, False), command
