"""The hop types the walk learned for issue 26's new resources: an Azure Firewall (its rules in Azure's order,
the source translation the server's NSG then sees), a load balancer (rule, pool, probe against the backend
port) and a storage account (service endpoint, endpoint policy, network rules). Each check is run through the
real walk on facts shaped like the targeted reads' answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from netghost.agent.brains._protocol import FunctionCall
from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._checks import CHECKS
from netghost.agent.brains.playbook._facts import Facts, Observation
from netghost.agent.brains.playbook._firewall_eval import firewall_verdict
from netghost.agent.brains.playbook._path import Flow, Hop, walk
from netghost.agent.brains.playbook._symptom import parse_symptom

SUB = "/subscriptions/s/resourceGroups/g/providers/Microsoft.Network"


def _net(name: str, proto: list[str], src: list[str], dst: list[str], ports: list[str]) -> dict[str, Any]:
    return {"name": name, "ruleType": "NetworkRule", "ipProtocols": proto, "sourceAddresses": src,
            "destinationAddresses": dst, "destinationPorts": ports}


def _app(name: str, src: list[str], fqdns: list[str], port: int) -> dict[str, Any]:
    return {"name": name, "ruleType": "ApplicationRule", "sourceAddresses": src, "targetFqdns": fqdns,
            "protocols": [{"protocolType": "Https", "port": port}]}


def _group(name: str, priority: int, *collections: tuple[str, int, str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"name": name, "id": f"{SUB}/firewallPolicies/p/ruleCollectionGroups/{name}", "priority": priority,
            "ruleCollections": [{"name": n, "priority": p, "action": {"type": a}, "rules": rules}
                                for n, p, a, rules in collections]}


def test_policy_groups_decide_by_priority_and_network_rules_come_first() -> None:
    """A Deny in a group of a lower priority number wins over an Allow in a later group; an application rule
    is only asked when no network rule matched, and its Allow translates the source."""
    groups = [_group("apps", 300, ("allow-sql", 100, "Allow", [_net("sql", ["TCP"], ["10.1.0.0/16"], ["10.2.0.0/16"],
                                                                        ["1433"])])),
              _group("platform", 200, ("legacy", 100, "Deny", [_net("r", ["TCP"], ["10.1.0.0/16"], ["10.2.0.0/16"],
                                                                     ["1433", "3389"])]))]
    v = firewall_verdict({}, groups, protocol="Tcp", src="10.1.2.3", dst="10.2.2.10", port=1433, fqdn=None)
    assert (v.action, v.kind, v.group, v.rule) == ("Deny", "network", "platform", "r")
    assert v.group_id.endswith("/ruleCollectionGroups/platform")
    web = [_group("web", 300, ("apps", 100, "Allow", [_app("w", ["10.1.0.0/16"], ["*.corp.example"], 443)]))]
    v = firewall_verdict({}, web, protocol="Tcp", src="10.1.2.3", dst="10.2.2.10", port=443, fqdn="api.corp.example")
    assert (v.action, v.kind, v.snat) == ("Allow", "application", True)
    v = firewall_verdict({}, web, protocol="Tcp", src="10.1.2.3", dst="10.2.2.10", port=443, fqdn=None)
    assert (v.action, v.kind) == ("Deny", "default")  # no name, no application rule: the default deny


def test_classic_collections_and_the_snat_of_network_rules() -> None:
    classic = {"network": [{"name": "east-west", "id": "c1", "priority": 200, "action": {"type": "Allow"},
                            "rules": [{"name": "any", "protocols": ["Any"], "sourceAddresses": ["*"],
                                       "destinationAddresses": ["*"], "destinationPorts": ["*"]}]}]}
    private = firewall_verdict(classic, [], protocol="Tcp", src="10.1.0.4", dst="10.2.0.4", port=22, fqdn=None)
    public = firewall_verdict(classic, [], protocol="Tcp", src="10.1.0.4", dst="93.184.216.34", port=22, fqdn=None)
    assert private.action == public.action == "Allow"
    assert (private.snat, public.snat) == (False, True)  # a network rule translates only non-private destinations
    assert firewall_verdict({}, [], protocol="Tcp", src="a", dst="b", port=None, fqdn=None).kind == "default"


def _obs(command: str, output: Any, n: int) -> Observation:
    return Observation(FunctionCall("run_shell_cmd", {"command": command, "reasoning": "x"}),
                       {"status": "completed", "exit_code": 0, "output": json.dumps(output), "audit_id": f"a{n}"},
                       r.step_of(command))


def _facts(text: str, *reads: tuple[str, Any]) -> Facts:
    f = Facts(symptom=parse_symptom(text))
    f.observations.extend(_obs(c, out, i) for i, (c, out) in enumerate(reads))
    return f


LB = {"name": "ilb", "id": f"{SUB}/loadBalancers/ilb", "rg": "g",
      "frontends": [{"name": "fe", "id": f"{SUB}/loadBalancers/ilb/frontendIPConfigurations/fe", "ip": "10.5.2.100"}],
      "rules": [{"name": "r443", "id": f"{SUB}/loadBalancers/ilb/loadBalancingRules/r443",
                 "frontend": f"{SUB}/loadBalancers/ilb/frontendIPConfigurations/fe", "frontendPort": 443,
                 "backendPort": 443, "pool": f"{SUB}/loadBalancers/ilb/backendAddressPools/bp",
                 "probe": f"{SUB}/loadBalancers/ilb/probes/hp"}],
      "pools": [{"name": "bp", "id": f"{SUB}/loadBalancers/ilb/backendAddressPools/bp",
                 "members": [f"{SUB}/networkInterfaces/n1/ipConfigurations/ipconfig1"]}],
      "probes": [{"name": "hp", "id": f"{SUB}/loadBalancers/ilb/probes/hp", "port": 443, "protocol": "Tcp"}]}


def _lb_walk(text: str, lb: dict[str, Any]) -> Any:
    f = _facts(text, (r.load_balancers(), [lb]), (r.private_endpoints(), []))
    flow = Flow(client_ip="10.5.1.4", server_ip="10.5.2.100", port=443)
    return walk(f, flow, [Hop("endpoint", "10.5.2.100", "10.5.2.100")], CHECKS)


@pytest.mark.parametrize(("text", "change", "fault_type", "resource"), [
    ("app-1 times out calling 10.5.2.100:443", {"pools": [{**LB["pools"][0], "members": []}]},
     "lb-backend-pool-empty", "/backendAddressPools/bp"),
    ("app-1 times out calling 10.5.2.100:443", {"probes": [{**LB["probes"][0], "port": 8080}]},
     "lb-health-probe-failing", "/probes/hp"),
    ("app-1: connection refused from 10.5.2.100:443", {"rules": [{**LB["rules"][0], "backendPort": 8443}]},
     "lb-rule-port-mismatch", "/loadBalancingRules/r443"),
    ("app-1 times out calling 10.5.2.100:8080", {}, "lb-rule-port-mismatch", "/loadBalancers/ilb"),
])
def test_a_load_balancer_frontend_is_walked_rule_pool_probe(text: str, change: dict[str, Any], fault_type: str,
                                                             resource: str) -> None:
    w = _lb_walk(text, {**LB, **change})
    if "8080" in text:
        w = walk(w.facts, Flow(client_ip="10.5.1.4", server_ip="10.5.2.100", port=8080),
                 [Hop("endpoint", "10.5.2.100", "10.5.2.100")], CHECKS)
    fault = w.first_fault()
    assert fault is not None, w.hops
    (found,) = fault.verdict.faults
    assert found["fault_type"] == fault_type and found["resource_id"].endswith(resource)


def test_a_healthy_load_balancer_leads_on_to_its_members() -> None:
    w = _lb_walk("app-1 times out calling 10.5.2.100:443", LB)
    assert w.first_fault() is None and [h.kind for h in w.hops][:2] == ["endpoint", "lb"]


SUBNET = f"{SUB}/virtualNetworks/v/subnets/app"
ACCOUNT = "/subscriptions/s/resourceGroups/data/providers/Microsoft.Storage/storageAccounts/acct2"


def _storage_walk(subnet: dict[str, Any], account: dict[str, Any], policies: list[dict[str, Any]] | None = None) -> Any:
    vnet = {"name": "v", "id": f"{SUB}/virtualNetworks/v", "prefixes": ["10.8.0.0/16"],
            "subnets": [{"name": "app", "id": SUBNET, "prefix": "10.8.1.0/24", **subnet}]}
    vm = {"name": "app-1", "id": "vm1", "rg": "g", "ip": "10.8.1.4"}
    nic = {"name": "n1", "id": "nic1", "vm": "vm1", "ips": ["10.8.1.4"], "subnet": SUBNET}
    reads: list[tuple[str, Any]] = [(r.vm_list(), [vm]), (r.nic_list(), [nic]), (r.vnet_list(), [vnet]),
                                    (r.storage_accounts(), [account])]
    if policies is not None:
        reads.append((r.service_endpoint_policies(), policies))
    f = _facts("app-1 gets 403 writing to acct2", *reads)
    flow = Flow(client_ip="10.8.1.4", server_ip="acct2", port=443, client=vm)
    return walk(f, flow, [Hop("storage", "acct2", None, doc={"account": account})], CHECKS)


def _account(**kw: Any) -> dict[str, Any]:
    return {"name": "acct2", "id": ACCOUNT, "default": "Deny", "vnetRules": [SUBNET], **kw}


def test_a_subnet_admitted_by_rule_without_its_service_endpoint_is_refused() -> None:
    fault = _storage_walk({"endpoints": []}, _account()).first_fault()
    assert fault is not None and fault.verdict.faults == [{"resource_id": SUBNET, "fault_type": "paas-network-rules-deny"}]


def test_an_endpoint_policy_that_does_not_list_the_account_is_the_fault() -> None:
    pid = f"{SUB}/serviceEndpointPolicies/sep"
    subnet = {"endpoints": ["Microsoft.Storage"], "policies": [pid]}
    listed = [{"name": "sep", "id": pid, "definitions": [
        {"service": "Microsoft.Storage", "resources": [ACCOUNT.replace("acct2", "acct1")]}]}]
    assert _storage_walk(subnet, _account()).first_fault() is None  # the policies are read first
    assert _storage_walk(subnet, _account()).pending()
    fault = _storage_walk(subnet, _account(), listed).first_fault()
    assert fault is not None and fault.verdict.faults[0]["resource_id"] == pid
    by_group = [{**listed[0], "definitions": [{"service": "Microsoft.Storage",
                                              "resources": ["/subscriptions/s/resourceGroups/data"]}]}]
    assert _storage_walk(subnet, _account(), by_group).first_fault() is None  # a group scope covers the account


def test_an_account_that_admits_neither_the_subnet_nor_all_denies_it() -> None:
    fault = _storage_walk({"endpoints": ["Microsoft.Storage"]}, _account(vnetRules=[])).first_fault()
    assert fault is not None and fault.verdict.faults[0]["resource_id"] == ACCOUNT
    assert _storage_walk({"endpoints": []}, _account(default="Allow", vnetRules=[])).first_fault() is None


def _nsg(name: str, *rules: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "id": f"{SUB}/networkSecurityGroups/{name}", "rg": "g", "rules": list(rules)}


def _rule(name: str, priority: int, access: str, src: str, port: str) -> dict[str, Any]:
    return {"name": name, "priority": priority, "direction": "Inbound", "access": access, "protocol": "Tcp",
            "src": src, "dst": "*", "port": port}


def test_every_nsg_that_denies_a_forwarded_leg_is_a_fault_of_its_own() -> None:
    """An appliance's subnet NSG and its NIC's NSG both deny the packet it forwards: fixing one leaves the other,
    so both are reported (a deny by each NSG, not just the first met)."""
    from netghost.agent.brains.playbook._nsg_verdict import evaluate_nsgs

    subnet = _nsg("nsg-sub", _rule("s-1", 100, "Deny", "10.1.0.0/16", "5432"))
    nic = _nsg("nsg-nic", _rule("n-1", 200, "Allow", "10.1.0.0/16", "443"), _rule("n-2", 300, "Deny", "*", "*"))
    f = _facts("app-1 cannot reach 10.2.0.5 on 5432", (r.nsg_rules(subnet["id"]), subnet), (r.nsg_rules(nic["id"]), nic))
    w = walk(f, Flow(client_ip="10.1.0.4", server_ip="10.2.0.5", port=5432), [], CHECKS)
    out = evaluate_nsgs(w, nic["id"], subnet["id"], legs=(("Inbound", "10.1.0.4", "10.2.0.5"),), where="nva-1's NIC")
    assert out is not None and not isinstance(out, Hop)
    faults = out.verdict.faults  # type: ignore[union-attr]
    assert [x["resource_id"].rsplit("/", 1)[-1] for x in faults] == ["s-1", "n-2"]
    allowed = _nsg("nsg-nic", _rule("n-1", 200, "Allow", "10.1.0.0/16", "5432"))
    f = _facts("app-1 cannot reach 10.2.0.5 on 5432", (r.nsg_rules(subnet["id"]), subnet), (r.nsg_rules(nic["id"]), allowed))
    w = walk(f, Flow(client_ip="10.1.0.4", server_ip="10.2.0.5", port=5432), [], CHECKS)
    out = evaluate_nsgs(w, nic["id"], subnet["id"], legs=(("Inbound", "10.1.0.4", "10.2.0.5"),), where="nva-1's NIC")
    assert [x["resource_id"].rsplit("/", 1)[-1] for x in out.verdict.faults] == ["s-1"]  # type: ignore[union-attr]
