"""Organisation policy: prefix rules, verified examples, strictest wins, never loosens FORBIDDEN."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from netghost.errors import PolicyError
from netghost.shell.classify import classify
from netghost.shell.classify._policy_file import OrgPolicy, load_org_policy, parse_org_policy

POLICY_TOML = """
[[rule]]
id = "appgw-health-ok"
prefix = ["az", "network", "application-gateway", "show-backend-health"]
decision = "SAFE"
justification = "Read-only POST reporting backend probe health."
match = ["az network application-gateway show-backend-health -g rg -n gw"]
not_match = ["az network application-gateway update -g rg -n gw"]

[[rule]]
id = "blob-download-ok"
prefix = ["az", "storage", "blob", "download"]
decision = "allow"
justification = "Capture downloads into the workspace are routine here."
match = ["az storage blob download --account-name sa -c c -n b -f /tmp/x.cap"]

[[rule]]
id = "no-public-dig"
prefix = ["dig", ["@8.8.8.8", "@1.1.1.1"]]
decision = "FORBIDDEN"
justification = "Queries must go to the corporate resolvers."
match = ["dig @8.8.8.8 example.com"]
not_match = ["dig @10.0.0.53 example.com"]

[[rule]]
id = "curl-prompt"
prefix = ["curl"]
decision = "prompt"
justification = "Every HTTP probe is reviewed in this tenant."
match = ["curl -s https://example.com"]

[[rule]]
id = "curl-ok"
prefix = ["curl", "-s"]
decision = "SAFE"
justification = "Tries to allow curl -s; the stricter curl-prompt rule must win."
match = ["curl -s https://example.com"]

[[rule]]
id = "rm-capture-ok"
prefix = ["rm", ["-f", "-rf"]]
decision = "SAFE"
justification = "Tries to relax rm; rm -rf / stays FORBIDDEN whatever this says."
match = ["rm -f /tmp/captures/a.cap"]
"""


@pytest.fixture
def policy(tmp_path: Path) -> OrgPolicy:
    p = tmp_path / "org.toml"
    p.write_text(POLICY_TOML, encoding="utf-8")
    return load_org_policy(p)


def test_policy_hash_is_sha256_of_the_file_bytes(policy: OrgPolicy) -> None:
    assert policy.hash == "sha256:" + hashlib.sha256(POLICY_TOML.encode()).hexdigest()
    c = classify("ping -c 1 x", policy)
    assert (c.verdict, c.policy_hash, c.policy_rule) == ("SAFE", policy.hash, None)


def test_relaxes_a_named_risky_command(policy: OrgPolicy) -> None:
    assert classify("az network application-gateway update -g rg -n gw").verdict == "RISKY"
    assert classify("az storage blob download --account-name sa -c c -n b -f /tmp/x.cap").verdict == "RISKY"
    c = classify("az storage blob download --account-name sa -c c -n b -f /tmp/x.cap", policy)
    assert (c.verdict, c.tier, c.policy_rule) == ("SAFE", 2, "blob-download-ok")
    assert "organisation policy" in c.reason


def test_tightens_safe_to_forbidden_and_risky(policy: OrgPolicy) -> None:
    # Issue 28: a query to a public resolver is RISKY already (outside the scope); the rule makes it FORBIDDEN.
    assert classify("dig @8.8.8.8 example.com").verdict == "RISKY"
    c = classify("dig @8.8.8.8 example.com", policy)
    assert (c.verdict, c.tier, c.error, c.policy_rule) == ("FORBIDDEN", 0, "forbidden_command", "no-public-dig")
    assert classify("dig @10.0.0.53 example.com", policy).verdict == "RISKY"  # example.com: not the investigation's
    assert classify("dig @10.0.0.53 db.corp.internal", policy).verdict == "SAFE"


def test_strictest_matching_rule_wins(policy: OrgPolicy) -> None:
    c = classify("curl -s https://example.com", policy)
    assert (c.verdict, c.policy_rule) == ("RISKY", "curl-prompt")


def test_never_loosens_forbidden(policy: OrgPolicy) -> None:
    c = classify("rm -rf /", policy)
    assert (c.verdict, c.policy_rule) == ("FORBIDDEN", None)
    assert classify("rm -f /tmp/captures/a.cap", policy).verdict == "SAFE"
    assert classify("ping x; rm -rf /", policy).verdict == "FORBIDDEN"


def test_does_not_relax_argument_hazards(tmp_path: Path) -> None:
    text = b"""
[[rule]]
prefix = ["az", "network", "watcher", "packet-capture", "create"]
decision = "SAFE"
justification = "Captures are routine."
match = ["az network watcher packet-capture create -g rg -n c --vm v"]
"""
    pol = parse_org_policy(text)
    assert classify("az network watcher packet-capture create -g rg -n c --vm v", pol).verdict == "SAFE"
    c = classify("az network watcher packet-capture create -g rg -n c --vm v --filters @/etc/passwd", pol)
    assert c.verdict == "RISKY"
    assert pol.rules[0].id == "az network watcher packet-capture create"


def test_yaml_policy(tmp_path: Path) -> None:
    p = tmp_path / "org.yaml"
    p.write_text(
        "rule:\n  - prefix: [ss]\n    decision: FORBIDDEN\n    justification: no socket listing\n    match: ['ss -tlnp']\n",
        encoding="utf-8",
    )
    pol = load_org_policy(p)
    assert classify("ss -tlnp", pol).verdict == "FORBIDDEN"


BAD = {
    "no justification": '[[rule]]\nprefix = ["ss"]\ndecision = "RISKY"\nmatch = ["ss"]\n',
    "bad decision": '[[rule]]\nprefix = ["ss"]\ndecision = "MAYBE"\njustification = "x"\nmatch = ["ss"]\n',
    "match fails": '[[rule]]\nprefix = ["ss"]\ndecision = "RISKY"\njustification = "x"\nmatch = ["ping x"]\n',
    "not_match matches": '[[rule]]\nprefix = ["ss"]\ndecision = "RISKY"\njustification = "x"\nmatch = ["ss"]\nnot_match = ["ss -t"]\n',
    "no match examples": '[[rule]]\nprefix = ["ss"]\ndecision = "RISKY"\njustification = "x"\n',
    "unknown field": '[[rule]]\nprefix = ["ss"]\ndecision = "RISKY"\njustification = "x"\nmatch = ["ss"]\nwhen = 1\n',
    "empty prefix": '[[rule]]\nprefix = []\ndecision = "RISKY"\njustification = "x"\nmatch = ["ss"]\n',
    "safe whole program": '[[rule]]\nprefix = ["curl"]\ndecision = "SAFE"\njustification = "x"\nmatch = ["curl x"]\n',
    "loosen forbidden": '[[rule]]\nprefix = ["rm", "-rf"]\ndecision = "SAFE"\njustification = "x"\nmatch = ["rm -rf /"]\n',
    "unparsable example": '[[rule]]\nprefix = ["ss"]\ndecision = "RISKY"\njustification = "x"\nmatch = ["ss | sh"]\n',
    "duplicate ids": '[[rule]]\nid = "a"\nprefix = ["ss"]\ndecision = "RISKY"\njustification = "x"\nmatch = ["ss"]\n[[rule]]\nid = "a"\nprefix = ["ip"]\ndecision = "RISKY"\njustification = "x"\nmatch = ["ip a"]\n',
    "not toml": "[[rule]\n",
    "extra top level": 'x = 1\n',
}


@pytest.mark.parametrize("text", BAD.values(), ids=BAD.keys())
def test_invalid_policies_raise_policy_error(text: str) -> None:
    with pytest.raises(PolicyError):
        parse_org_policy(text.encode())


def test_missing_file_raises_policy_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError):
        load_org_policy(tmp_path / "missing.toml")


def test_shipped_example_policy_loads_and_applies() -> None:
    example = Path(__file__).resolve().parents[1] / "data" / "shell" / "org_policy_example.toml"
    pol = load_org_policy(example)
    assert len(pol.rules) == 4
    assert classify("az network application-gateway show-backend-health -g r -n a", pol).policy_rule == "appgw-backend-health"
    assert classify("az monitor activity-log list -g rg-app --offset 1h", pol).verdict == "RISKY"
    assert classify("dig @1.1.1.1 x.contoso.com", pol).verdict == "FORBIDDEN"
