"""The playbook on worlds it was not written for (issue 26): ``tests/data/heldout_worlds/``, never shipped.

They rename everything, change address plans and regions, and combine hop types and faults the shipped worlds
do not (a rule on an appliance's own NIC, a stopped scale-set instance, a site missing a range while its
tunnel is up, a peering half gone beside a decoy, several deny rules of which one decides, one rule name in
two NSGs, a Rejected private endpoint beside a Pending decoy, a zone linked to every VNet but the client's, a
reset injected by an appliance, a healthy control crossing an appliance both ways, a classic firewall's Deny
collection ahead of its Allow, an internal load balancer in a peered VNet whose rule names an empty pool, a
storage account that admits a sibling subnet but not the client's, a scale set across a global peering, a fault
on the return path only, a healthy private endpoint beside decoys, branch clients over a Connected tunnel, a name
left as a TXT record only, a chain of two appliances whose second is stopped) and, ``ho-two-*``, two independent
faults on one path (the subnet's and the NIC's NSG on one leg, a dead next hop and a deny behind it, a firewall
Deny collection and a return route to a retired box, a typo'd record and a deny behind it, a deny at each end):
every fault must be reported. The bar is the issue's:
every world diagnosed (rca_f1 1.0, detection right), healthy controls find nothing, medians of at most 8 turns
and 2 critical-path approvals. Each shard runs half the worlds (two shards side by side under xdist); a
median holds over the whole set when it holds in each half.

A data-plane world also checks the disagreement finding: the control plane passed the flow and the capture
did not, so the RCA states the disagreement with both sides' audit ids and the side it trusts.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from netghost.agent.eval import RunResult, evaluate, expand_worlds

HELDOUT = Path(__file__).resolve().parent.parent / "data" / "heldout_worlds"


def _worlds() -> list[str]:
    return expand_worlds([str(HELDOUT)])


def test_there_are_at_least_ten_heldout_worlds_with_answers() -> None:
    worlds = _worlds()
    assert len(worlds) >= 10
    for w in worlds:
        assert (HELDOUT / "answers" / f"{Path(w).stem}.json").is_file(), w


def _check_disagreement(result: RunResult) -> None:
    session = json.loads((Path(result.audit_dir) / "ghost_session.json").read_text())
    rca = Path(session["rca_report_path"]).read_text()
    (conflict,) = session["evidence_conflicts"]
    assert len(conflict["conflicting_audit_ids"]) >= 2 and conflict["resolution"] == "CONFIRMED"
    assert conflict["higher_fidelity_source"].startswith("the packet capture")
    section = rca[rca.index("## Disagreement Findings"):rca.index("## Hypotheses Log")]
    assert all(i in section for i in conflict["conflicting_audit_ids"])


@pytest.mark.slow
@pytest.mark.parametrize("shard", [0, 1])
def test_heldout_worlds_are_diagnosed(shard: int, tmp_path: Path) -> None:
    results = evaluate(_worlds()[shard::2], root=tmp_path)
    wrong = [(r.world, r.diagnosis, r.truth) for r in results if r.rca_f1 != 1.0 or not r.detection]
    assert not wrong, wrong
    assert statistics.median(r.turns for r in results) <= 8
    assert statistics.median(r.critical_approvals for r in results) <= 2
    assert all(r.tool_errors == 0 and r.exit_code == 0 for r in results)
    for r in results:
        if r.truth and r.truth.get("fault_type") == "none":
            assert r.diagnosis and not r.diagnosis["is_anomaly"]
        elif r.truth and r.truth.get("fault_type") in ("middlebox-rst", "path-packet-loss", "pmtu-blackhole"):
            _check_disagreement(r)
