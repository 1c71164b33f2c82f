"""Property: re-quoting, extra whitespace or escaping that leaves the argv unchanged never lowers
the verdict (SAFE < RISKY < FORBIDDEN), and the parser returns exactly that argv."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.shell.classify import classify
from netghost.shell.classify._parse import ParsedCommand, parse_command

RANK = {"SAFE": 0, "RISKY": 1, "FORBIDDEN": 2}
CORPUS = Path(__file__).resolve().parents[1] / "data" / "shell" / "commands_dev.jsonl"


def _seed_argvs() -> list[tuple[str, ...]]:
    extra = [
        "ping -c 4 10.0.0.4", "curl -sS -o /dev/null -w '%{http_code}' https://example.com", "rm -rf /",
        "az storage account keys list -n sa", "python pcap_forensics.py a.cap --semantic-dir s --report-dir r",
        "curl -sXPOST https://a.example", "ss -tan '( dport = :443 )'", "dig @8.8.8.8 +short example.com",
        "az vm list --query \"[?name=='a b'].id\" -o tsv", "curl -s 'https://x.example/a?b=1&c=\"2\"'",
    ]  # fmt: skip
    commands = [json.loads(line)["command"] for line in CORPUS.read_text(encoding="utf-8").splitlines()] + extra
    argvs = []
    for cmd in commands:
        parsed = parse_command(cmd)
        if isinstance(parsed, ParsedCommand) and not parsed.unquoted_special:
            argvs.append(parsed.argv)
    return argvs


SEEDS = _seed_argvs()
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")


def _single(tok: str) -> str:
    return "'" + tok.replace("'", "'\"'\"'") + "'"


def _double(tok: str) -> str:
    return '"' + "".join("\\" + c if c in '\\"$`' else c for c in tok) + '"'


def _backslashed(tok: str) -> str:
    # Escaping every character is argv-preserving outside quotes (a backslash flags the word,
    # which may only raise the verdict).
    return "".join("\\" + c if c != "\n" else c for c in tok) if tok else "''"


@st.composite
def rendering(draw: st.DrawFn) -> tuple[tuple[str, ...], str]:
    argv = draw(st.sampled_from(SEEDS))
    words = []
    for i, tok in enumerate(argv):
        style = draw(st.sampled_from(["plain", "shlex", "single", "double", "split", "backslash"]))
        if style == "plain" and tok and set(tok) <= _PLAIN:
            w = tok
        elif style == "single":
            w = _single(tok)
        elif style == "double":
            w = _double(tok)
        elif style == "split" and len(tok) >= 2:
            cut = draw(st.integers(1, len(tok) - 1))
            w = draw(st.sampled_from([_single, _double, shlex.quote]))(tok[:cut]) + draw(
                st.sampled_from([_single, _double, shlex.quote])
            )(tok[cut:])
        elif style == "backslash" and i > 0:
            w = _backslashed(tok)
        else:
            w = shlex.quote(tok)
        words.append(w)
    seps = [" " * draw(st.integers(1, 3)) for _ in words]
    text = " " * draw(st.integers(0, 2)) + "".join(w + s for w, s in zip(words, seps, strict=True))
    return argv, text


@settings(max_examples=300, deadline=None)
@given(rendering())
def test_requoting_never_lowers_the_verdict(case: tuple[tuple[str, ...], str]) -> None:
    argv, text = case
    base = classify(shlex.join(argv))
    got = classify(text)
    assert RANK[got.verdict] >= RANK[base.verdict], (text, base.reason, got.reason)
    parsed = parse_command(text)
    if isinstance(parsed, ParsedCommand):
        assert parsed.argv == argv
    else:
        assert got.verdict == "FORBIDDEN"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SEEDS))
def test_canonical_quoting_round_trips(argv: tuple[str, ...]) -> None:
    parsed = parse_command(shlex.join(argv))
    assert isinstance(parsed, ParsedCommand)
    assert parsed.argv == argv


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=0, max_size=60))
def test_any_string_classifies_without_raising(text: str) -> None:
    c = classify(text)
    assert c.verdict in RANK
    if not all(" " <= ch <= "~" for ch in text):
        assert c.verdict == "FORBIDDEN"


# Option-shaped words of every odd form (`-=x`, `-`, `--=`, `-a=`, clusters, unicode dashes' neighbours) after
# any command of the corpus: the classifier must answer, never raise (a model's malformed option crashed the
# az option scan with an IndexError on `-=x`).
_ODD_OPTION = st.text(alphabet="-=abcxyzAZ019_.:@/", min_size=1, max_size=6).map(lambda s: "-" + s)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SEEDS), st.lists(_ODD_OPTION, min_size=1, max_size=3))
def test_any_option_shaped_word_gets_a_verdict(argv: tuple[str, ...], extra: list[str]) -> None:
    verdict = classify(shlex.join([*argv, *extra])).verdict
    assert verdict in RANK
