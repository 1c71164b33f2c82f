"""The session budgets: the data file, the user's overrides, and the capture ones enforced by the policy.

The capture budgets are decided by ``capture.rego`` at preflight (the same policy evaluation that holds
the per-capture limits), from facts counted over the session's registry, earlier runs of a resumed
session included. A refused capture fails before anything exists, with the budget, its limit and the
count in its reason, and the policy's hash in the task record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from netghost.errors import PolicyError
from netghost.orchestrator import BUDGET_NAMES, Budgets, budget_message
from tests.orchestrator.conftest import Lab, request


def test_the_defaults_come_from_the_data_file_and_fit_a_real_investigation() -> None:
    b = Budgets.defaults()
    assert b.as_dict() == {"calls_per_turn": 32, "hypotheses_per_session": 30, "concurrent_captures": 4,
                           "capture_seconds": 1800, "capture_bytes": 2 * 1024**3}
    assert set(b.as_dict()) == set(BUDGET_NAMES)


def test_overrides_environment_then_flags_the_last_word_wins() -> None:
    env = {"NETGHOST_BUDGETS": "capture_seconds=3600, concurrent-captures=8"}
    b = Budgets.load(env, ["capture_seconds=600", "capture_bytes=512M"])
    assert (b.capture_seconds, b.concurrent_captures, b.capture_bytes) == (600, 8, 512 * 1024**2)
    assert Budgets.load({}, []) == Budgets.defaults()


@pytest.mark.parametrize("item", ["calls_per_turn=0", "calls_per_turn=-1", "calls_per_turn=1G", "nope=3",
                                  "capture_seconds", "capture_seconds=ten", "=4"])
def test_a_bad_override_is_refused_by_name(item: str) -> None:
    with pytest.raises(PolicyError, match="--budget"):
        Budgets.load({}, [item])


def test_the_refusal_names_the_budget_the_limit_the_count_and_how_to_raise_it() -> None:
    text = budget_message("concurrent_captures", 4, 5, "This capture was not started.")
    assert text.startswith("Budget concurrent_captures exceeded: limit 4 captures, count 5 captures.")
    assert "--budget concurrent_captures=N" in text and "NETGHOST_BUDGETS" in text


def test_concurrent_captures_past_the_budget_fail_before_anything_exists(lab: Lab) -> None:
    orch = lab.orchestrator(budgets=Budgets.defaults().with_items(["concurrent_captures=2"], "test"),
                            scan_azure_orphans=False)
    first = orch.orchestrate(request("web-vm-01"))
    second = orch.orchestrate(request("redis-primary"))
    third = orch.orchestrate(request("web-vm-01"))
    assert first["status"] == second["status"] == "task_pending"
    assert third["status"] == "task_failed" and third["state"] == "FAILED"
    assert "Budget concurrent_captures exceeded: limit 2 captures, count 3 captures" in third["message"]
    record = orch.rt.registry.get(third["task_id"])
    assert record is not None and record.failure_reason == "policy_denied" and record.policy_outcome == "deny"
    assert record.policy_hash and not record.create_issued
    assert len(lab.captures()) == 2  # the third never reached Azure
    orch.orchestrate({"intent": "cancel_task", "task_id": first["task_id"]})
    fourth = orch.orchestrate(request("web-vm-01"))  # one ended: there is room again
    assert fourth["status"] == "task_pending", fourth


def test_capture_seconds_and_bytes_count_every_capture_of_the_session(lab: Lab, tmp_path: Path) -> None:
    budgets = Budgets.defaults().with_items(["capture_seconds=150", "capture_bytes=250M"], "test")
    orch = lab.orchestrator(budgets=budgets, scan_azure_orphans=False)
    assert orch.orchestrate(request(duration_seconds=60))["status"] == "task_pending"
    refused = orch.orchestrate(request("redis-primary", duration_seconds=100))
    assert "Budget capture_seconds exceeded: limit 150 s, count 160 s" in refused["message"]
    assert orch.orchestrate(request("redis-primary", duration_seconds=90))["status"] == "task_pending"
    # 100 MiB per capture (the capture's size limit): a third one would plan 300 MiB
    small = budgets.with_items(["capture_seconds=1000"], "test")
    orch.close()
    again = lab.orchestrator(budgets=small, scan_azure_orphans=False)  # a resumed run: the same registry
    refused = again.orchestrate(request(duration_seconds=10))
    assert "Budget capture_bytes exceeded: limit 262144000 bytes, count 314572800 bytes" in refused["message"]


def test_a_dual_end_capture_counts_two(lab: Lab) -> None:
    orch = lab.orchestrator(budgets=Budgets.defaults().with_items(["concurrent_captures=1"], "test"),
                            scan_azure_orphans=False)
    res = orch.orchestrate(request("web-vm-01 to redis-primary"))
    partner = orch.rt.registry.get(res["paired_task"]["task_id"]) if res.get("paired_task") else None
    states = sorted([res["state"], partner.state.value if partner else "?"])
    assert "FAILED" in states, res
    assert len(lab.captures()) == 1
