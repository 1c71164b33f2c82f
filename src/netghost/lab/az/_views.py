"""``az network watcher show-topology`` and ``show-security-group-view``: whole-picture views.

Both are Network Watcher actions (they need the regional watcher, exit 1 without one) and are
computed from the same world as every other answer: the topology lists what a resource group
contains and how it is associated; the security-group view is, per NIC, the subnet and NIC rules,
the default rules and the effective rules.
"""

from __future__ import annotations

from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import guid, rule_doc
from netghost.lab.az._context import AzContext, Command, find_vm, id_parts, require_rg
from netghost.lab.az._errors import plain_error
from netghost.lab.az._network import effective_rule_doc
from netghost.lab.az._watcher import require_watcher
from netghost.lab.world import DEFAULT_RULES, World

__all__ = ["COMMANDS"]


def _assoc(kind: str, name: str, rid: str) -> dict[str, str]:
    return {"associationType": kind, "name": name, "resourceId": rid}


# one topology entry before the region filter: (name, resource id, location, associations)
_Entry = tuple[str, str, str, list[dict[str, str]]]


def _topology(ctx: AzContext, args: ParsedArgs) -> Any:
    w = ctx.world
    rg = args["resource_group"]
    vnet_filter = args["vnet"].split("/")[-1] if args["vnet"] else None
    if rg is None and args["vnet"] and args["vnet"].startswith("/subscriptions/"):
        rg = id_parts(args["vnet"])[4]
    if rg is None:
        raise plain_error("usage error: --resource-group NAME | --vnet ID | --subnet ID")
    require_rg(ctx, rg)
    location = (args["location"] or w.rg_location(rg)).replace(" ", "").lower()
    require_watcher(ctx, location)
    entries = [*_vnet_entries(w, rg, vnet_filter), *_nic_entries(w, rg, vnet_filter)]
    if not vnet_filter:
        entries += [(nsg.name, w.nsg_id(nsg), nsg.location or w.rg_location(rg), [])
                    for nsg in w.spec.nsgs if nsg.resource_group.lower() == rg.lower()]
    resources = [{"associations": associations, "id": rid, "location": where, "name": name}
                 for name, rid, where, associations in entries if where.lower() == location]
    when = ctx.now_text()
    return {"createdDateTime": when, "id": guid("topology", rg, location), "lastModified": when,
            "resources": resources}


def _vnet_entries(w: World, rg: str, vnet_filter: str | None) -> list[_Entry]:
    """The group's VNets and their subnets (with the NSG and route table each subnet uses)."""
    entries: list[_Entry] = []
    for vnet in w.spec.vnets:
        if vnet.resource_group.lower() != rg.lower() or (vnet_filter and vnet.name != vnet_filter):
            continue
        where = vnet.location or w.rg_location(vnet.resource_group)
        entries.append((vnet.name, w.vnet_id(vnet), where,
                        [_assoc("Contains", s.name, w.subnet_id(vnet, s)) for s in vnet.subnets]))
        for sn in vnet.subnets:
            links = []
            if sn.nsg and (nsg := w.nsg(sn.nsg)):
                links.append(_assoc("Associated", nsg.name, w.nsg_id(nsg)))
            if sn.route_table:
                links.append(_assoc("Associated", sn.route_table, w.route_table_id(sn.route_table)))
            entries.append((sn.name, w.subnet_id(vnet, sn), where, links))
    return entries


def _nic_entries(w: World, rg: str, vnet_filter: str | None) -> list[_Entry]:
    """The group's NICs (with VM, subnet and NSG), each VM listed after its first NIC."""
    entries: list[_Entry] = []
    for vm, nic in w.nics():
        if vm.resource_group.lower() != rg.lower():
            continue
        vnet, subnet = w.subnet_of(nic)
        if vnet_filter and vnet.name != vnet_filter:
            continue
        links = [_assoc("Associated", vm.name, w.vm_id(vm)), _assoc("Associated", subnet.name, w.subnet_id(vnet, subnet))]
        if nic.nsg and (nsg := w.nsg(nic.nsg)):
            links.append(_assoc("Associated", nsg.name, w.nsg_id(nsg)))
        entries.append((nic.name or "", w.nic_id(vm, nic), w.vm_location(vm), links))
        if nic is vm.nics[0]:
            entries.append((vm.name, w.vm_id(vm), w.vm_location(vm),
                            [_assoc("Contains", n.name or "", w.nic_id(vm, n)) for n in vm.nics]))
    return entries


def _security_group_view(ctx: AzContext, args: ParsedArgs) -> Any:
    w = ctx.world
    vm = find_vm(ctx, args["resource_group"], args["vm"])
    require_watcher(ctx, w.vm_location(vm))
    interfaces = []
    for nic in vm.nics:
        vnet, subnet = w.subnet_of(nic)
        layers = dict(w.nsgs_for(nic))
        match = w.match_context(nic)
        effective = [
            effective_rule_doc(rule, qualified, prio, match)
            for _level, nsg in w.nsgs_for(nic)
            for direction in ("Inbound", "Outbound")
            for qualified, prio, rule in w.ordered_rules(nsg, direction)
        ]
        any_nsg = next(iter(layers.values()), None)
        assoc: dict[str, Any] = {
            "defaultSecurityRules": [rule_doc(w, any_nsg, r, default=True) for r in DEFAULT_RULES] if any_nsg else [],
            "effectiveSecurityRules": effective,
            "networkInterfaceAssociation": {
                "id": w.nic_id(vm, nic),
                "securityRules": [rule_doc(w, layers["nic"], r) for r in layers["nic"].rules] if "nic" in layers else [],
            },
            "subnetAssociation": {
                "id": w.subnet_id(vnet, subnet),
                "securityRules": [rule_doc(w, layers["subnet"], r) for r in layers["subnet"].rules]
                if "subnet" in layers else [],
            },
        }
        interfaces.append({"id": w.nic_id(vm, nic), "securityRuleAssociations": assoc})
    return {"networkInterfaces": interfaces}


COMMANDS = [
    Command(CommandSpec(("network", "watcher", "show-topology"), (
        Arg("--location", "-l"), Arg("--resource-group", "-g"), Arg("--subnet"), Arg("--vnet"),
    ), policy=True), _topology),
    Command(CommandSpec(("network", "watcher", "show-security-group-view"), (
        Arg("--vm", required=True), Arg("--no-wait", kind="optbool"), Arg("--resource-group", "-g"),
    ), (("Get detailed security information on a VM for the currently configured network security group.",
         "az network watcher show-security-group-view -g MyResourceGroup --vm MyVm"),), policy=True),
        _security_group_view),
]
