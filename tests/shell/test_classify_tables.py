"""The built-in tables load, carry a justification per rule, and malformed tables are refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.shell.classify import classify
from netghost.shell.classify._az import compile_az
from netghost.shell.classify._options import compile_spec, parse_options
from netghost.shell.classify._tables import load_tables
from netghost.shell.classify._tier0 import compile_tier0
from netghost.shell.classify._values import compile_check


def test_every_rule_has_justification_and_examples() -> None:
    t = load_tables()
    assert len(t.tier0.rules) >= 30
    for r in t.tier0.rules:
        assert r.justification and r.advice and r.match, r.id
    for name, spec in t.tier1.items():
        assert spec.justification and spec.match and spec.not_match, name
    assert {"ping", "dig", "nslookup", "host", "traceroute", "tracepath", "mtr", "ss", "netstat", "curl"} <= set(t.tier1)
    assert t.az.examples and t.tier3_reasons["rm"] and "env" in t.wrappers


def test_tier0_compile_refuses_malformed_rules() -> None:
    with pytest.raises(ValueError, match="justification"):
        compile_tier0([{"id": "x", "binaries": ["a"], "justification": "", "advice": "y"}])
    with pytest.raises(ValueError, match="unknown fields"):
        compile_tier0([{"id": "x", "bins": ["a"], "justification": "j", "advice": "a"}])
    with pytest.raises(ValueError):
        compile_tier0([{"id": "x", "justification": "j", "advice": "a"}, {"id": "x", "justification": "j", "advice": "a"}])


def test_option_spec_compile_refuses_malformed_tables() -> None:
    with pytest.raises(ValueError, match="justification"):
        compile_spec("x", {"short_flags": "a"})
    with pytest.raises(ValueError, match="unknown fields"):
        compile_spec("x", {"justification": "j", "flagz": "a"})
    with pytest.raises(ValueError, match="unknown value check"):
        compile_spec("x", {"justification": "j", "short_values": {"c": "integer:1..2"}})


def test_az_compile_refuses_rules_without_justification() -> None:
    raw = {
        "verbs": {"justification": "j", "safe": ["list"], "safe_families": "list", "sensitive_word": "key", "mutating_words": []},
        "rest": {"justification": "j", "hosts": [], "safe_options": []},
        "forbidden": [{"id": "f", "verbs": ["x"], "justification": "", "advice": "a"}],
    }
    with pytest.raises(ValueError):
        compile_az(raw)


def test_option_parser_expands_clusters_prefixes_and_attached_values() -> None:
    spec = load_tables().tier1["curl"]
    p = parse_options(spec, ["-sSo-", "--max-t", "5", "--no-progress-meter", "https://a.example"])
    assert p.problem is None
    assert ("-o", "-") in p.options and ("-m", "5") in p.options
    assert parse_options(spec, ["-sXPOST", "https://a.example"]).problem is not None
    assert "ambiguous" in (parse_options(spec, ["--re", "https://a.example"]).problem or "")
    ss = load_tables().tier1["ss"]
    assert parse_options(ss, ["--fam=inet", "-t"]).problem is None
    assert parse_options(ss, ["--kil", "dst", "x"]).problem is not None


@pytest.mark.parametrize(
    ("spec", "good", "bad"),
    [("int:1..10", "10", "11"), ("num:0.2..1", "0.5", "0.1"), ("enum:a,b", "a", "A"), ("ienum:a,b", "A", "c"),
     ("re:[0-9]+", "12", "1a"), ("devnull_or_stdout", "/dev/null", "/tmp/x"), ("workpath", "out/x", "/etc/x")],
)  # fmt: skip
def test_value_checks(spec: str, good: str, bad: str) -> None:
    check = compile_check(spec)
    assert check(good) is None
    assert check(bad) is not None


def test_az_help_is_safe_but_never_for_emitters() -> None:
    assert classify("az vm create --help").verdict == "SAFE"
    assert classify("az account get-access-token --help").verdict == "FORBIDDEN"


def _vocabulary() -> tuple[list[str], list[str]]:
    """Every word and flag the az rules key on, plus words that match none of them."""
    t = load_tables().az
    words: set[str] = {"network", "vm", "show", "list", "create", "storage", "account", "x-y"}
    flags: set[str] = {"--name", "--query", "-g", "--output"}
    for rs in (t.forbidden, t.risky):
        for r in rs.rules:
            words |= set(r.verbs) | set(r.nouns)
            words |= {w for path in r.suffixes + r.groups + r.except_groups for w in path}
            flags |= set(r.flags) | {f[:5] for f in r.flags}
    words |= {"list-keys", "show-secrets", "regenerate-key", "grant-access", "generate-sas", "renew"}
    flags |= {"--show-secrets", "--include-keys", "--with-tokens"}
    return sorted(words), sorted(flags)


_WORDS, _FLAGS = _vocabulary()


@settings(max_examples=400, deadline=None)
@given(
    group=st.lists(st.sampled_from(_WORDS), min_size=0, max_size=5),
    flags=st.lists(st.sampled_from(_FLAGS), max_size=4),
)
def test_indexed_az_rules_pick_the_same_rule_as_a_scan_of_the_table(group: list[str], flags: list[str]) -> None:
    """The word index only narrows which rules are tried: the first match in table order is the
    one a scan of every rule finds, for any group and options."""
    t = load_tables().az
    g = tuple(group)
    for rs in (t.forbidden, t.risky):
        scanned = next((r for r in rs.rules if r.matches(g, flags)), None)
        assert rs.first_match(g, flags) is scanned


_SYN = ["a", "b", "c", "d"]
_SYN_FLAGS = ["--alpha", "--alp", "--beta", "--gamma"]


@st.composite
def _synthetic_rules(draw: st.DrawFn) -> list[dict[str, object]]:
    """Small random az rule tables keyed on every kind of key a rule has."""
    paths = st.lists(st.sampled_from(_SYN), min_size=1, max_size=3).map(" ".join)
    rules = []
    for i in range(draw(st.integers(1, 6))):
        rule: dict[str, object] = {"id": f"r{i}", "justification": "j", "advice": "a"}
        rule["verbs"] = draw(st.lists(st.sampled_from(_SYN), max_size=2))
        rule["nouns"] = draw(st.lists(st.sampled_from(_SYN), max_size=2))
        rule["suffixes"] = draw(st.lists(paths, max_size=2))
        rule["groups"] = draw(st.lists(paths, max_size=2))
        rule["except_groups"] = draw(st.lists(paths, max_size=1))
        rule["flags"] = draw(st.lists(st.sampled_from(["--alpha", "--beta"]), max_size=1))
        if draw(st.booleans()):
            rule["require_flags"] = ["--gamma"]
        if draw(st.integers(0, 5)) == 0:
            rule["verb_regex"] = "^c$"
        rules.append(rule)
    return rules


@settings(max_examples=300, deadline=None)
@given(
    raw=_synthetic_rules(),
    group=st.lists(st.sampled_from(_SYN), max_size=4),
    flags=st.lists(st.sampled_from(_SYN_FLAGS), max_size=3),
)
def test_index_of_any_rule_table_finds_the_first_rule_a_scan_finds(
    raw: list[dict[str, object]], group: list[str], flags: list[str]
) -> None:
    """Same property on random tables, so every key kind (verb, noun, suffix, group, flag and its
    abbreviation, regex) is exercised whatever today's az.toml happens to use."""
    table = compile_az(
        {
            "verbs": {"safe": [], "safe_families": "x", "sensitive_word": "x", "mutating_words": [], "justification": "j"},
            "rest": {"hosts": [], "safe_options": [], "justification": "j"},
            "risky": raw,
        }
    )
    g = tuple(group)
    scanned = next((r for r in table.risky.rules if r.matches(g, flags)), None)
    assert table.risky.first_match(g, flags) is scanned


def test_each_az_table_answers_from_its_own_settings() -> None:
    """Memoised answers live with their table: another table (another policy, a test's) never takes its
    answer for the same command."""
    from netghost.shell.classify._az import az_read_is_stable

    def table(volatile: list[str]) -> object:
        return compile_az({
            "verbs": {"safe": [], "safe_families": "x", "sensitive_word": "x", "mutating_words": [], "justification": "j"},
            "rest": {"hosts": [], "safe_options": [], "justification": "j"},
            "cache": {"volatile_verbs": volatile, "justification": "j"},
        })

    args = ["network", "watcher", "packet-capture", "show-status", "-l", "eastus", "-n", "x"]
    plain, volatile = table([]), table(["show-status"])
    for _ in range(2):  # the second round is answered from each table's memo
        assert az_read_is_stable(plain, args) is True
        assert az_read_is_stable(volatile, args) is False
