"""The agent seeds its shell's egress scope from the problem statement (issue 28): a probe toward a host the
engineer named runs unasked, one toward a host nobody named asks a human."""

from __future__ import annotations

import io
import ipaddress
from pathlib import Path

from rich.console import Console

from netghost.agent._run import Options, run_agent
from netghost.agent.demo import prepare_lab, world_scope
from netghost.governance import read_wal
from netghost.lab import load_world
from tests.agent.fakes import ScriptedBrain, call, turn

INTENT = "web-vm-01 gets timeouts from api.contoso.com and reports-db.example on 443"


def test_hosts_named_in_the_problem_statement_are_in_scope(tmp_path: Path) -> None:
    audit = tmp_path / "audit"
    brain = ScriptedBrain([
        turn(call("run_shell_cmd", command="dig +short api.contoso.com", reasoning="resolve the named API")),
        turn(call("run_shell_cmd", command="dig +short reports-db.example", reasoning="the named database")),
        turn(call("run_shell_cmd", command="dig +short attacker.example", reasoning="not named")),
        turn(call("complete_investigation", confidence="low", root_cause_summary="Scope only.")),
    ])  # fmt: skip
    code = run_agent(Options(audit_dir=audit, brain="playbook", intent=INTENT, lab=prepare_lab("nsg-deny", audit)),
                     stdin=io.StringIO(""), console=Console(file=io.StringIO(), width=100), brain=brain)
    assert code == 0
    (log,) = audit.glob("shell_audit_*.jsonl")
    verdicts = {r["command"]: r["classification"] for r in read_wal(log).records}
    assert verdicts["dig +short api.contoso.com"] == "SAFE"
    assert verdicts["dig +short reports-db.example"] == "SAFE"
    assert verdicts["dig +short attacker.example"] == "RISKY"


def test_the_mcp_scope_of_a_lab_world_is_its_network() -> None:
    world = load_world("dns-nxdomain")
    scope = world_scope(world)
    assert scope.name_in_scope("billing-db.corp.contoso.internal")
    prefixes = [ipaddress.ip_network(p) for vnet in world.spec.vnets for p in vnet.address_prefixes]
    assert prefixes and all(scope.address_in_scope(net.network_address) for net in prefixes)
