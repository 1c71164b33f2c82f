"""Preflight policy: Rego via regopy (pre-built bundle) plus the Python floor rules (CabinCrew §6)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from regopy import Interpreter

from netghost.errors import PolicyError
from netghost.governance.policy import (
    PolicyEngine,
    command_facts,
    default_policy_sources,
    lint_rego,
    strictest,
)

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def engine() -> PolicyEngine:
    return PolicyEngine()


@pytest.mark.parametrize(
    ("argv", "verdict", "outcome"),
    [
        (["ping", "-c", "4", "10.0.0.4"], "SAFE", "allow"),
        (["dig", "+short", "example.com"], "SAFE", "allow"),
        (["az", "network", "nsg", "rule", "list", "-g", "rg"], "SAFE", "allow"),
        (["curl", "-sk", "https://10.0.0.4"], "SAFE", "warn"),  # combined -sk split in Python
        (["curl", "--insecure", "https://10.0.0.4"], "SAFE", "warn"),
        (["az", "vm", "run-command", "invoke", "-g", "rg", "-n", "vm"], "RISKY", "require_approval"),
        (["az", "vm", "restart", "-n", "vm"], None, "require_approval"),  # Rego alone: Azure write verb
        (["sudo", "ss"], "FORBIDDEN", "deny"),
    ],
)
def test_default_policy_outcomes(engine: PolicyEngine, argv: list[str], verdict: str | None, outcome: str) -> None:
    result = engine.evaluate(command_facts(argv, verdict=verdict), now=NOW)
    assert result.outcome == outcome, result.reasons
    assert result.policy_hash == engine.policy_hash
    assert result.evaluated_at == NOW


def test_every_outcome_carries_policy_and_facts_hash(engine: PolicyEngine) -> None:
    a = engine.evaluate(command_facts(["ping", "x"]), now=NOW)
    b = engine.evaluate(command_facts(["ping", "y"]), now=NOW)
    assert a.policy_hash.startswith("sha256:") and a.facts_sha256 != b.facts_sha256


def test_capture_plan_rules(engine: PolicyEngine) -> None:
    plan = {"kind": "capture_plan", "capture_duration_s": 120, "has_cleanup": True, "unplanned_steps": 0,
            "creates_resources": False}
    assert engine.evaluate(plan, now=NOW).outcome == "allow"
    assert engine.evaluate(dict(plan, has_cleanup=False), now=NOW).outcome == "warn"
    assert engine.evaluate(dict(plan, creates_resources=True), now=NOW).outcome == "require_approval"
    # 10000 > 3600 with plain `>` (correct in regopy, unlike min/max)
    assert engine.evaluate(dict(plan, capture_duration_s=10000), now=NOW).outcome == "deny"
    assert engine.evaluate(dict(plan, capture_duration_s=999), now=NOW).outcome == "allow"


def test_python_floor_holds_without_any_rego(tmp_path: Path) -> None:
    bare = PolicyEngine(include_default=False)
    assert bare.evaluate(command_facts(["rm", "-rf", "/"], verdict="FORBIDDEN"), now=NOW).outcome == "deny"
    assert bare.evaluate(command_facts(["az", "vm", "restart"], verdict="RISKY"), now=NOW).outcome == "require_approval"
    assert bare.evaluate({"no": "kind"}, now=NOW).outcome == "deny"
    assert bare.evaluate(command_facts(["ping", "x"], verdict="SAFE"), now=NOW).outcome == "allow"
    assert bare.policy_hash != PolicyEngine().policy_hash


def test_user_policy_directory_can_tighten(tmp_path: Path) -> None:
    (tmp_path / "org.rego").write_text(
        "package netghost.preflight\nimport rego.v1\n"
        'deny contains "dig is banned here" if { input.argv0 == "dig" }\n'
        'warn contains "pings are logged" if { input.argv0 == "ping" }\n'
    )
    eng = PolicyEngine([tmp_path])
    assert eng.evaluate(command_facts(["dig", "x"], verdict="SAFE"), now=NOW).outcome == "deny"
    ping = eng.evaluate(command_facts(["ping", "x"], verdict="SAFE"), now=NOW)
    assert ping.outcome == "warn" and ping.reasons == ["rego: pings are logged"]
    assert eng.policy_hash != PolicyEngine().policy_hash
    # a user policy cannot loosen: FORBIDDEN stays denied
    assert eng.evaluate(command_facts(["sudo", "ss"], verdict="FORBIDDEN"), now=NOW).outcome == "deny"


def test_policy_hash_changes_when_a_policy_file_changes(tmp_path: Path) -> None:
    f = tmp_path / "org.rego"
    f.write_text('package netghost.preflight\nimport rego.v1\nwarn contains "a" if { input.x == 1 }\n')
    first = PolicyEngine([tmp_path]).policy_hash
    f.write_text('package netghost.preflight\nimport rego.v1\nwarn contains "b" if { input.x == 1 }\n')
    assert PolicyEngine([tmp_path]).policy_hash != first


def test_bad_policies_raise_policy_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="does not exist"):
        PolicyEngine([tmp_path / "nope"])
    with pytest.raises(PolicyError, match=r"no \.rego"):
        PolicyEngine([tmp_path])
    (tmp_path / "broken.rego").write_text("package netghost.preflight\n this is not rego\n")
    with pytest.raises(PolicyError, match="does not compile"):
        PolicyEngine([tmp_path])


def test_strictest_order() -> None:
    assert strictest([]) == "allow"
    assert strictest(["warn", "allow"]) == "warn"
    assert strictest(["warn", "deny", "require_approval"]) == "deny"


def test_shipped_policy_passes_the_lint() -> None:
    sources = default_policy_sources()
    assert [name for name, _ in sources] == ["preflight.rego"]
    for name, src in sources:
        lint_rego(name, src)


# ---- regopy 1.5.2 bug regressions (DEPENDENCIES.md §(a)) -------------------------------------
# Each test pins the buggy behaviour of the raw library (so an upgrade that fixes it is noticed)
# and checks that our policy path is protected from it.


def _query(q: str) -> object:
    out = Interpreter().query(q)
    return json.loads(str(out))["bindings"]["x"]


def test_regopy_bug1_min_max_sort_compare_numbers_as_strings() -> None:
    assert _query("x := min([2, 10])") == 10
    assert _query("x := max([2, 10])") == 2
    assert _query("x := sort([2, 10, 9])") == [10, 2, 9]
    assert _query("x := 10 < 9") is False  # plain comparison is right: policies may use it
    for src in ("x := min([1, 2])", "y := max(a)", "z := sort(b)"):
        with pytest.raises(PolicyError, match="min/max/sort"):
            lint_rego("user.rego", f"package p\n{src}\n")
    lint_rego("user.rego", "package p\n# min(x) in a comment is fine\n")


def test_regopy_bug2_some_index_value_in_comprehension_is_rejected() -> None:
    out = Interpreter().query('x := [i | some i, t in ["-a", "b"]; startswith(t, "-")]')
    assert not out.ok()  # rego-cpp reports "Invalid collection" instead of evaluating
    assert str(out) == "<error>"
    with pytest.raises(PolicyError, match="Invalid collection"):
        lint_rego("user.rego", 'package p\nx := [i | some i, t in input.a; startswith(t, "-")]\n')


def test_regopy_bug3_some_i_semicolon_silently_yields_nothing() -> None:
    arr = '["-a", "b", "-c"]'
    assert _query(f'x := [i | some i; startswith({arr}[i], "-")]') == []
    assert _query(f'x := [i | t := {arr}[i]; startswith(t, "-")]') == [0, 2]  # the working form
    with pytest.raises(PolicyError, match="silently"):
        lint_rego("user.rego", 'package p\nx := [i | some i; startswith(input.a[i], "-")]\n')


def test_regopy_bug4_results_read_as_json_while_output_alive_stay_stable(engine: PolicyEngine) -> None:
    # The use-after-free needs a Node from a temporary Output; the engine only ever does
    # json.loads(str(output)) with `output` bound, which must stay stable over many calls.
    facts = [command_facts(["curl", "-sk", "x"]), command_facts(["ping", "x"]), command_facts(["sudo", "x"], verdict="FORBIDDEN")]
    seen = {engine.evaluate(facts[i % 3], now=NOW).outcome for i in range(1000)}
    assert seen == {"warn", "allow", "deny"}


_BUNDLE_ROUND_TRIP = """
import json, sys
from datetime import UTC, datetime
from pathlib import Path
from netghost.errors import PolicyError
from netghost.governance.policy import PolicyEngine, command_facts
now = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
org, bundle = Path(sys.argv[1]), Path(sys.argv[2])
built = PolicyEngine([org])
loaded = PolicyEngine.from_bundle(built.save_bundle(bundle))
cases = [(["dig", "x"], "SAFE"), (["curl", "-sk", "x"], "SAFE"), (["az", "vm", "restart"], None), (["ping", "x"], "SAFE")]
same = [loaded.evaluate(command_facts(a, verdict=v), now=now) == built.evaluate(command_facts(a, verdict=v), now=now)
        for a, v in cases]
outcomes = [loaded.evaluate(command_facts(a, verdict=v), now=now).outcome for a, v in cases]
try:
    PolicyEngine.from_bundle(org)
    refused = ""
except PolicyError as exc:
    refused = str(exc)
print(json.dumps({"hash_equal": loaded.policy_hash == built.policy_hash, "same": same,
                  "outcomes": outcomes, "refused": refused}))
"""


def test_prebuilt_bundle_round_trip(tmp_path: Path) -> None:
    # rego-cpp's bundle save/load aborts the process ("double free") once llvmlite (numba, which the
    # forensics engine may load) lives in the same process. The product never holds both; one pytest
    # process can, so the round trip runs in a fresh interpreter.
    (tmp_path / "org").mkdir()
    (tmp_path / "org" / "org.rego").write_text(
        'package netghost.preflight\nimport rego.v1\ndeny contains "no dig" if { input.argv0 == "dig" }\n'
    )
    proc = subprocess.run([sys.executable, "-c", _BUNDLE_ROUND_TRIP, str(tmp_path / "org"), str(tmp_path / "bundle")],
                          capture_output=True, text=True, check=True)
    result = json.loads(proc.stdout)
    assert result["hash_equal"]
    assert result["same"] == [True, True, True, True]
    assert result["outcomes"][0] == "deny"  # the org policy's rule survived the bundle
    assert "not a policy bundle" in result["refused"]


def test_capture_plan_facts_feed_the_default_policy(engine: PolicyEngine) -> None:
    from netghost.governance.policy import capture_plan_facts

    plan = [
        ["az", "storage", "account", "create", "-n", "ghostsa", "-g", "rg"],
        ["az", "network", "watcher", "packet-capture", "create", "-g", "rg", "--vm", "vm1", "-n", "ghost_cap"],
        ["az", "network", "watcher", "packet-capture", "show", "-n", "ghost_cap"],
        ["az", "network", "watcher", "packet-capture", "delete", "-n", "ghost_cap"],
    ]
    facts = capture_plan_facts(plan, capture_duration_s=300, planned_steps=plan)
    assert facts["creates_resources"] and facts["has_cleanup"] and facts["unplanned_steps"] == 0
    assert engine.evaluate(facts, now=NOW).outcome == "require_approval"
    sneaky = [*plan[:3], ["az", "vm", "run-command", "invoke", "-n", "vm1"]]
    facts = capture_plan_facts(sneaky, capture_duration_s=300, planned_steps=plan)
    assert facts["unplanned_steps"] == 1 and not facts["has_cleanup"]
    assert engine.evaluate(facts, now=NOW).outcome == "deny"
