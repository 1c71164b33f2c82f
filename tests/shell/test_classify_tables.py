"""The built-in tables load, carry a justification per rule, and malformed tables are refused."""

from __future__ import annotations

import pytest

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
