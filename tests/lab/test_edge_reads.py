"""The az reads of the translating and filtering resources: Azure Firewall (classic collections and policies),
load balancers, NAT gateways, public IPs, service endpoints and their policies, storage network rules.

Each read is checked against the world it comes from (the same fact, computed twice, must agree) and for the
shape azure-cli 2.91 prints (AAZ-flattened, ``resourceGroup`` beside every id, sub-resources with ids under
their parent). Usage and not-found errors follow the rest of the simulator.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from netghost.lab import load_world

from .conftest import Lab

SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"


def _json(lab: Lab, command: str) -> object:
    result = lab.az(command)
    assert result.code == 0, f"az {command}\n{result.err}"
    return json.loads(result.out)


def test_firewall_show_and_policy_reads(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("fw-policy-deny")
    fw = _json(lab, "network firewall show -g core-rg -n afw-core")
    assert isinstance(fw, dict)
    assert fw["ipConfigurations"][0]["privateIPAddress"] == "10.40.0.4"
    assert fw["firewallPolicy"]["id"] == f"{SUB}/resourceGroups/core-rg/providers/Microsoft.Network/firewallPolicies/fwp-core"
    assert fw["sku"] == {"name": "AZFW_VNet", "tier": "Standard"} and fw["networkRuleCollections"] == []
    assert [f["name"] for f in _json(lab, "network firewall list")] == ["afw-core"]  # type: ignore[union-attr]
    policy = _json(lab, "network firewall policy show -g core-rg -n fwp-core")
    assert isinstance(policy, dict) and policy["firewalls"][0]["id"] == fw["id"]
    groups = _json(lab, "network firewall policy rule-collection-group list -g core-rg --policy-name fwp-core")
    assert isinstance(groups, list)
    assert [(g["name"], g["priority"]) for g in groups] == [("rcg-platform", 200), ("rcg-apps", 300)]
    legacy = groups[0]["ruleCollections"][1]
    assert legacy["action"] == {"type": "Deny"} and legacy["ruleCollectionType"] == "FirewallPolicyFilterRuleCollection"
    rule = legacy["rules"][1]
    assert rule["ruleType"] == "NetworkRule" and rule["ipProtocols"] == ["TCP"] and rule["destinationPorts"] == ["1433"]
    one = _json(lab, "network firewall policy rule-collection-group collection list -g core-rg --policy-name fwp-core "
                     "--rule-collection-group-name rcg-apps")
    assert [c["name"] for c in one] == ["net-pay-ledger"]  # type: ignore[union-attr]
    assert groups[1]["id"].endswith("/firewallPolicies/fwp-core/ruleCollectionGroups/rcg-apps")


def test_firewall_errors_are_azs(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("fw-policy-deny")
    missing = lab.az("network firewall show -g core-rg -n nope")
    assert missing.code == 3 and "(ResourceNotFound)" in missing.err and "azureFirewalls/nope" in missing.err
    usage = lab.az("network firewall network-rule collection list -g core-rg")
    assert usage.code == 2 and "--firewall-name/-f" in usage.err
    assert lab.az("network firewall policy rule-collection-group show -g core-rg --policy-name fwp-core -n x").code == 3


def test_load_balancer_reads_agree_with_the_world(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("lb-probe-unhealthy")
    world = load_world("lb-probe-unhealthy")
    lb = _json(lab, "network lb show -g shop-rg -n ilb-catalog")
    assert isinstance(lb, dict)
    lid = f"{SUB}/resourceGroups/shop-rg/providers/Microsoft.Network/loadBalancers/ilb-catalog"
    assert lb["id"] == lid and lb["sku"]["name"] == "Standard"
    assert lb["frontendIPConfigurations"][0]["privateIPAddress"] == "10.60.2.100"
    probes = _json(lab, "network lb probe list -g shop-rg --lb-name ilb-catalog")
    assert probes == lb["probes"]
    assert isinstance(probes, list) and (probes[0]["port"], probes[0]["protocol"], probes[0]["requestPath"]) == (
        8080, "Http", "/healthz")
    assert probes[0]["loadBalancingRules"] == [{"id": f"{lid}/loadBalancingRules/lbr-https", "resourceGroup": "shop-rg"}]
    rules = _json(lab, "network lb rule list -g shop-rg --lb-name ilb-catalog")
    assert isinstance(rules, list) and rules[0]["probe"]["id"] == f"{lid}/probes/hp-catalog"
    assert (rules[0]["frontendPort"], rules[0]["backendPort"]) == (443, 443)
    pools = _json(lab, "network lb address-pool list -g shop-rg --lb-name ilb-catalog")
    assert isinstance(pools, list)
    members = [c["id"].split("/networkInterfaces/")[1].split("/")[0] for c in pools[0]["backendIPConfigurations"]]
    assert members == [f"{vm}VMNic" for vm in world.spec.load_balancers[0].backend_pools[0].members]
    nic = _json(lab, "network nic show -g shop-rg -n catalog-01VMNic")
    assert isinstance(nic, dict)
    assert nic["ipConfigurations"][0]["loadBalancerBackendAddressPools"][0]["id"] == f"{lid}/backendAddressPools/bp-catalog"
    frontends = _json(lab, "network lb frontend-ip list -g shop-rg --lb-name ilb-catalog")
    assert frontends == lb["frontendIPConfigurations"]
    probe = _json(lab, "network lb probe show -g shop-rg --lb-name ilb-catalog -n hp-catalog")
    assert probe == probes[0]
    assert lab.az("network lb probe show -g shop-rg --lb-name ilb-catalog -n nope").code == 3
    assert lab.az("network lb probe list -g shop-rg").code == 2


def test_resource_show_knows_the_new_kinds(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("fw-policy-deny")
    doc = _json(lab, f"resource show --ids {SUB}/resourceGroups/core-rg/providers/Microsoft.Network/azureFirewalls/afw-core")
    assert isinstance(doc, dict) and doc["properties"]["threatIntelMode"] == "Alert"
    pip = _json(lab, "network public-ip show -g core-rg -n afw-core-pip")
    assert isinstance(pip, dict) and pip["ipAddress"] == "20.64.18.7"
