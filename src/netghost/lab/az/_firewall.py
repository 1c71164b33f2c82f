"""``az network firewall ...``: Azure Firewall, its classic rule collections and firewall policies.

In azure-cli 2.91 these commands are not in the core CLI: they come with the ``azure-firewall`` extension
(``az network firewall --help`` on a bare 2.91 answers "'firewall' is misspelled or not recognized"; an
engineer who reads firewalls has run ``az extension add -n azure-firewall``). The lab answers as that
extension (1.x) does, so its output shapes are the extension's: the firewall GET through AAZ (api-version
2022-01-01, ``properties`` flattened, nulls dropped) for ``show``/``list``; the firewall's
``networkRuleCollections``/``applicationRuleCollections``/``natRuleCollections`` sub-lists for
``<kind>-rule collection list`` (``--firewall-name/-f``); the policy and its rule collection groups
(``--policy-name``) for ``policy show|list`` and ``policy rule-collection-group list|show``, and a group's
``ruleCollections`` for ``policy rule-collection-group collection list`` (``--rule-collection-group-name``).
Argument names follow the extension's ``_params.py``.
"""

from __future__ import annotations

from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import etag, ref
from netghost.lab.az._context import AzContext, Command, id_parts, require_rg
from netghost.lab.az._errors import AzError, not_found
from netghost.lab.world import AzureFirewall, FirewallPolicy, FirewallRuleCollection, World

__all__ = ["COMMANDS", "firewall_doc", "policy_doc", "rule_collection_group_docs"]

_FW = "Microsoft.Network/azureFirewalls"
_POLICY = "Microsoft.Network/firewallPolicies"


def _network_rule(rule: Any, policy: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "destinationAddresses": list(rule.destination_addresses), "destinationFqdns": [], "destinationIpGroups": [],
        "destinationPorts": list(rule.destination_ports), "name": rule.name, "sourceAddresses":
        list(rule.source_addresses), "sourceIpGroups": [],
    }
    doc["ipProtocols" if policy else "protocols"] = list(rule.protocols)
    if policy:
        doc["ruleType"] = "NetworkRule"
    if rule.description:
        doc["description"] = rule.description
    return doc


def _app_rule(rule: Any, policy: bool) -> dict[str, Any]:
    protocols = [{"port": int(p.partition(":")[2]), "protocolType": p.partition(":")[0]} for p in rule.protocols]
    doc: dict[str, Any] = {"fqdnTags": list(rule.fqdn_tags), "name": rule.name, "protocols": protocols,
                           "sourceAddresses": list(rule.source_addresses), "sourceIpGroups": [],
                           "targetFqdns": list(rule.target_fqdns)}
    if policy:
        doc.update({"destinationAddresses": [], "httpHeadersToInsert": [], "ruleType": "ApplicationRule",
                    "targetUrls": [], "terminateTLS": False, "webCategories": []})
    if rule.description:
        doc["description"] = rule.description
    return doc


def _classic_collection(world: World, fw: AzureFirewall, kind: str, coll: FirewallRuleCollection) -> dict[str, Any]:
    rid = f"{world.firewall_id(fw)}/{kind}/{coll.name}"
    rules = ([_network_rule(r, False) for r in coll.network_rules]
             + [_app_rule(r, False) for r in coll.application_rules])
    return {"action": {"type": coll.action}, "etag": etag(rid), "id": rid, "name": coll.name,
            "priority": coll.priority, "provisioningState": "Succeeded", "resourceGroup": fw.resource_group,
            "rules": rules}


def firewall_doc(world: World, fw: AzureFirewall) -> dict[str, Any]:
    """``az network firewall show`` output (the extension's AAZ GET)."""
    fid = world.firewall_id(fw)
    vnet = world.vnet(fw.vnet)
    assert vnet is not None  # the spec checks the reference
    subnet = next(s for s in vnet.subnets if s.name == "AzureFirewallSubnet")
    ipconf = f"{fid}/azureFirewallIpConfigurations/{fw.name}-ipconfig"
    doc: dict[str, Any] = {
        "additionalProperties": {},
        "applicationRuleCollections": [_classic_collection(world, fw, "applicationRuleCollections", c)
                                       for c in fw.application_rule_collections],
        "etag": etag(fid), "id": fid,
        "ipConfigurations": [{
            "etag": etag(ipconf), "id": ipconf, "name": f"{fw.name}-ipconfig", "privateIPAddress": fw.private_ip,
            "provisioningState": "Succeeded",
            "publicIPAddress": ref(world.rid(fw.resource_group, "Microsoft.Network/publicIPAddresses", fw.pip_name)),
            "resourceGroup": fw.resource_group, "subnet": ref(world.subnet_id(vnet, subnet)),
            "type": f"{_FW}/azureFirewallIpConfigurations",
        }],
        "location": world.located(fw), "name": fw.name, "natRuleCollections": [],
        "networkRuleCollections": [_classic_collection(world, fw, "networkRuleCollections", c)
                                   for c in fw.network_rule_collections],
        "provisioningState": fw.provisioning_state, "resourceGroup": fw.resource_group,
        "sku": {"name": "AZFW_VNet", "tier": fw.sku_tier}, "threatIntelMode": fw.threat_intel_mode, "type": _FW,
    }
    policy = world.policy_of(fw)
    if policy is not None:
        doc["firewallPolicy"] = ref(world.firewall_policy_id(policy))
    return doc


def rule_collection_group_docs(world: World, policy: FirewallPolicy) -> list[dict[str, Any]]:
    """``az network firewall policy rule-collection-group list`` output."""
    pid = world.firewall_policy_id(policy)
    out = []
    for group in policy.rule_collection_groups:
        gid = f"{pid}/ruleCollectionGroups/{group.name}"
        collections = [{
            "action": {"type": c.action}, "name": c.name, "priority": c.priority,
            "ruleCollectionType": "FirewallPolicyFilterRuleCollection",
            "rules": [_network_rule(r, True) for r in c.network_rules] + [_app_rule(r, True)
                                                                         for r in c.application_rules],
        } for c in group.collections]
        out.append({"etag": etag(gid), "id": gid, "name": group.name, "priority": group.priority,
                    "provisioningState": "Succeeded", "resourceGroup": policy.resource_group,
                    "ruleCollections": collections, "type": f"{_POLICY}/ruleCollectionGroups"})
    return out


def policy_doc(world: World, policy: FirewallPolicy) -> dict[str, Any]:
    """``az network firewall policy show`` output."""
    pid = world.firewall_policy_id(policy)
    firewalls = [world.firewall_id(f) for f in world.spec.firewalls if (f.policy or "").lower() == policy.name.lower()]
    return {
        "childPolicies": [], "etag": etag(pid), "firewalls": [ref(f) for f in firewalls], "id": pid,
        "location": world.located(policy), "name": policy.name, "provisioningState": "Succeeded",
        "resourceGroup": policy.resource_group,
        "ruleCollectionGroups": [ref(f"{pid}/ruleCollectionGroups/{g.name}") for g in policy.rule_collection_groups],
        "sku": {"tier": policy.sku_tier}, "threatIntelMode": policy.threat_intel_mode, "type": _POLICY,
    }


def _rg_name(args: ParsedArgs, dest: str = "name") -> tuple[str, str]:
    if args["ids"]:
        parts = id_parts(args["ids"][0])
        return parts[4], parts[8]
    if not (args[dest] and args["resource_group"]):
        raise AzError(2, "ERROR: (--resource-group --name | --ids) are required\n")
    return args["resource_group"], args[dest]


def _find(ctx: AzContext, kind: str, rg: str, name: str) -> Any:
    w = ctx.world
    require_rg(ctx, rg, f"{kind}/read", w.rid(rg, kind, name))
    found: Any = (w.firewall if kind == _FW else w.firewall_policy)(name)
    if found is None or found.resource_group.lower() != rg.lower():
        raise not_found(f"{kind}/{name}", rg)
    return found


def _listed(ctx: AzContext, args: ParsedArgs, items: list[Any]) -> list[Any]:
    rg = args["resource_group"]
    if rg:
        require_rg(ctx, rg)
    return [i for i in items if rg is None or i.resource_group.lower() == rg.lower()]


def _fw_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [firewall_doc(ctx.world, f) for f in _listed(ctx, args, ctx.world.spec.firewalls)]


def _fw_show(ctx: AzContext, args: ParsedArgs) -> Any:
    return firewall_doc(ctx.world, _find(ctx, _FW, *_rg_name(args)))


def _collections(key: str) -> Any:
    def handler(ctx: AzContext, args: ParsedArgs) -> Any:
        fw = _find(ctx, _FW, args["resource_group"], args["firewall_name"])
        return firewall_doc(ctx.world, fw)[key]
    return handler


def _collection_show(key: str) -> Any:
    def handler(ctx: AzContext, args: ParsedArgs) -> Any:
        fw = _find(ctx, _FW, args["resource_group"], args["firewall_name"])
        found = next((c for c in firewall_doc(ctx.world, fw)[key] if c["name"].lower() ==
                      str(args["collection_name"]).lower()), None)
        if found is None:
            raise AzError(1, f"ERROR: Item '{args['collection_name']}' does not exist.\n")
        return found
    return handler


def _policy_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [policy_doc(ctx.world, p) for p in _listed(ctx, args, ctx.world.spec.firewall_policies)]


def _policy_show(ctx: AzContext, args: ParsedArgs) -> Any:
    return policy_doc(ctx.world, _find(ctx, _POLICY, *_rg_name(args)))


def _rcg_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return rule_collection_group_docs(ctx.world, _find(ctx, _POLICY, args["resource_group"], args["policy_name"]))


def _rcg(ctx: AzContext, args: ParsedArgs, name: str) -> dict[str, Any]:
    policy = _find(ctx, _POLICY, args["resource_group"], args["policy_name"])
    found = next((g for g in rule_collection_group_docs(ctx.world, policy) if g["name"].lower() == name.lower()), None)
    if found is None:
        raise not_found(f"{_POLICY}/{policy.name}/ruleCollectionGroups/{name}", args["resource_group"])
    return found


def _rcg_show(ctx: AzContext, args: ParsedArgs) -> Any:
    return _rcg(ctx, args, args["name"])


def _rcg_collections(ctx: AzContext, args: ParsedArgs) -> Any:
    return _rcg(ctx, args, args["rule_collection_group_name"])["ruleCollections"]


_RG_REQ = Arg("--resource-group", "-g", required=True)
_FW_NAME = Arg("--firewall-name", "-f", required=True)
_IDS = (Arg("--ids", kind="many"), Arg("--name", "-n"), Arg("--resource-group", "-g"))
_KINDS = (("network-rule", "networkRuleCollections"), ("application-rule", "applicationRuleCollections"),
          ("nat-rule", "natRuleCollections"))

COMMANDS = [
    Command(CommandSpec(("network", "firewall", "list"), (Arg("--resource-group", "-g"),)), _fw_list),
    Command(CommandSpec(("network", "firewall", "show"), _IDS), _fw_show),
    *[Command(CommandSpec(("network", "firewall", kind, "collection", "list"), (_RG_REQ, _FW_NAME)),
              _collections(key)) for kind, key in _KINDS],
    *[Command(CommandSpec(("network", "firewall", kind, "collection", "show"), (
        _RG_REQ, _FW_NAME, Arg("--collection-name", "-c", required=True))), _collection_show(key))
      for kind, key in _KINDS],
    Command(CommandSpec(("network", "firewall", "policy", "list"), (Arg("--resource-group", "-g"),)), _policy_list),
    Command(CommandSpec(("network", "firewall", "policy", "show"), _IDS), _policy_show),
    Command(CommandSpec(("network", "firewall", "policy", "rule-collection-group", "list"), (
        _RG_REQ, Arg("--policy-name", required=True))), _rcg_list),
    Command(CommandSpec(("network", "firewall", "policy", "rule-collection-group", "show"), (
        _RG_REQ, Arg("--policy-name", required=True), Arg("--name", "-n", required=True))), _rcg_show),
    Command(CommandSpec(("network", "firewall", "policy", "rule-collection-group", "collection", "list"), (
        _RG_REQ, Arg("--policy-name", required=True), Arg("--rule-collection-group-name", required=True))),
        _rcg_collections),
]
