"""``az network nsg|nic|route-table|vnet|private-dns ...`` read commands."""

from __future__ import annotations

from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import (
    effective_route_doc,
    nic_doc,
    nsg_doc,
    peering_doc,
    ref,
    route_doc,
    route_table_doc,
    rule_doc,
    vnet_doc,
)
from netghost.lab.az._context import AzContext, Command, id_parts, require_rg
from netghost.lab.az._errors import AzError, not_found
from netghost.lab.world import DEFAULT_RULES, RuleMatchContext, SecurityRule

__all__ = ["COMMANDS"]

_PAGING = (Arg("--max-items"), Arg("--next-token"))
_IDS = (Arg("--ids", kind="many"), Arg("--name", "-n"), Arg("--resource-group", "-g"))
# The real CLI expands the Internet tag to ~hundreds of prefixes; the first three are enough here.
_INTERNET_EXPANDED = ["1.0.0.0/8", "2.0.0.0/7", "4.0.0.0/6"]


def _rg_name(args: ParsedArgs) -> tuple[str, str]:
    if args["ids"]:
        parts = id_parts(args["ids"][0])
        return parts[4], parts[-1]
    if not args["name"] or not args["resource_group"]:
        raise AzError(2, "ERROR: (--resource-group --name | --ids) are required\n")
    return args["resource_group"], args["name"]


def _get(ctx: AzContext, kind: str, rg: str, name: str) -> Any:
    w = ctx.world
    require_rg(ctx, rg, f"{kind}/read", w.rid(rg, kind, name))
    found: Any = {
        "Microsoft.Network/networkSecurityGroups": w.nsg,
        "Microsoft.Network/virtualNetworks": w.vnet,
        "Microsoft.Network/routeTables": w.route_table,
        "Microsoft.Network/networkInterfaces": w.nic,
    }[kind](name)
    owner = found[0] if isinstance(found, tuple) else found
    if found is None or owner.resource_group.lower() != rg.lower():
        raise not_found(f"{kind}/{name}", rg)
    return found


def _listed(ctx: AzContext, args: ParsedArgs, items: list[Any]) -> list[Any]:
    """The ``list`` commands' scope: all items, or those of ``--resource-group`` (which must exist)."""
    rg = args["resource_group"]
    if rg:
        require_rg(ctx, rg)
    return [i for i in items if rg is None or i.resource_group.lower() == rg.lower()]


def _nsg_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [nsg_doc(ctx.world, n) for n in _listed(ctx, args, ctx.world.spec.nsgs)]


def _nsg_show(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, name = _rg_name(args)
    return nsg_doc(ctx.world, _get(ctx, "Microsoft.Network/networkSecurityGroups", rg, name))


def _rule_list(ctx: AzContext, args: ParsedArgs) -> Any:
    nsg = _get(ctx, "Microsoft.Network/networkSecurityGroups", args["resource_group"], args["nsg_name"])
    rules = [rule_doc(ctx.world, nsg, r) for r in nsg.rules]
    if args["include_default"]:
        rules += [rule_doc(ctx.world, nsg, r, default=True) for r in DEFAULT_RULES]
    return rules


def _rule_show(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, nsg_name, name = args["resource_group"], args["nsg_name"], args["name"]
    for doc in _rule_list(ctx, args) + [rule_doc(ctx.world, _get(ctx, "Microsoft.Network/networkSecurityGroups", rg,
                                                                  nsg_name), r, default=True) for r in DEFAULT_RULES]:
        if doc["name"].lower() == name.lower() and doc["type"].endswith("/securityRules"):
            return doc
    raise not_found(f"Microsoft.Network/networkSecurityGroups/{nsg_name}/securityRules/{name}", rg)


def _nic_list(ctx: AzContext, args: ParsedArgs) -> Any:
    rg = args["resource_group"]
    if rg:
        require_rg(ctx, rg)
    return [nic_doc(ctx.world, vm, nic) for vm, nic in ctx.world.nics()
            if rg is None or vm.resource_group.lower() == rg.lower()]


def _route_show(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, table, name = args["resource_group"], args["route_table_name"], args["name"]
    rt = _get(ctx, "Microsoft.Network/routeTables", rg, table)
    route = next((r for r in rt.routes if r.name.lower() == name.lower()), None)
    if route is None:
        raise not_found(f"Microsoft.Network/routeTables/{table}/routes/{name}", rg)
    return route_doc(ctx.world, rt, route)


def _peering_show(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, vnet_name, name = args["resource_group"], args["vnet_name"], args["name"]
    vnet = _get(ctx, "Microsoft.Network/virtualNetworks", rg, vnet_name)
    peer = next((p for p in vnet.peerings if p.name.lower() == name.lower()), None)
    if peer is None:
        raise not_found(f"Microsoft.Network/virtualNetworks/{vnet_name}/virtualNetworkPeerings/{name}", rg)
    return peering_doc(ctx.world, vnet, peer)


def _eff_prefix(value: str | list[str], kind: str) -> dict[str, Any]:
    values = [value] if isinstance(value, str) else list(value)
    values = ["0.0.0.0/0" if v in ("*", "Any") else v for v in values]
    return {f"{kind}AddressPrefix": values[0], f"{kind}AddressPrefixes": values}


def _eff_ports(value: str | list[str], kind: str) -> dict[str, Any]:
    values = [value] if isinstance(value, str) else list(value)
    ranges = ["0-65535" if v == "*" else (v if "-" in v else f"{v}-{v}") for v in values]
    return {f"{kind}PortRange": ranges[0], f"{kind}PortRanges": ranges}


def effective_rule_doc(rule: SecurityRule, qualified: str, priority: int, ctx: RuleMatchContext) -> dict[str, Any]:
    """One element of ``effectiveSecurityRules`` (protocol ``All`` for ``*``, ``a-b`` port ranges)."""
    doc: dict[str, Any] = {
        "access": rule.access,
        "direction": rule.direction,
        "name": qualified,
        "priority": priority,
        "protocol": "All" if rule.protocol == "*" else rule.protocol,
    }
    doc.update(_eff_prefix(rule.source_address_prefix, "source"))
    doc.update(_eff_prefix(rule.destination_address_prefix, "destination"))
    doc.update(_eff_ports(rule.source_port_range, "source"))
    doc.update(_eff_ports(rule.destination_port_range, "destination"))
    for kind in ("source", "destination"):
        if doc[f"{kind}AddressPrefix"] == "Internet":
            doc[f"expanded{kind.capitalize()}AddressPrefix"] = list(_INTERNET_EXPANDED)
    del ctx  # tags other than Internet are not expanded in the lab (see the transcript)
    return doc


def _list_effective_nsg(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, name = _rg_name(args)
    vm, nic = _get(ctx, "Microsoft.Network/networkInterfaces", rg, name)
    w = ctx.world
    match = w.match_context(nic)
    vnet, subnet = w.subnet_of(nic)
    value = []
    for level, nsg in w.nsgs_for(nic):
        rules = []
        for direction in ("Inbound", "Outbound"):
            for qualified, prio, rule in w.ordered_rules(nsg, direction):
                rules.append(effective_rule_doc(rule, qualified, prio, match))
        assoc = ({"subnet": ref(w.subnet_id(vnet, subnet))} if level == "subnet"
                 else {"networkInterface": ref(w.nic_id(vm, nic))})
        value.append({"association": assoc, "effectiveSecurityRules": rules,
                      "networkSecurityGroup": ref(w.nsg_id(nsg)), "tagMap": {}})
    return {"value": value}


def _effective_routes(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, name = _rg_name(args)
    _vm, nic = _get(ctx, "Microsoft.Network/networkInterfaces", rg, name)
    return {"value": [effective_route_doc(r) for r in ctx.world.effective_routes(nic)]}


def _route_table_transform(result: Any) -> list[dict[str, Any]]:
    return [
        {"Source": i["source"], "State": i["state"], "Address Prefix": " ".join(i["addressPrefix"] or []),
         "Next Hop Type": i["nextHopType"], "Next Hop IP": " ".join(i["nextHopIpAddress"] or [])}
        for i in result["value"]
    ]


def _nic_show(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, name = _rg_name(args)
    return nic_doc(ctx.world, *_get(ctx, "Microsoft.Network/networkInterfaces", rg, name))


def _rt_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [route_table_doc(ctx.world, r) for r in _listed(ctx, args, ctx.world.spec.route_tables)]


def _rt_show(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, name = _rg_name(args)
    return route_table_doc(ctx.world, _get(ctx, "Microsoft.Network/routeTables", rg, name))


def _route_list(ctx: AzContext, args: ParsedArgs) -> Any:
    rt = _get(ctx, "Microsoft.Network/routeTables", args["resource_group"], args["route_table_name"])
    return [route_doc(ctx.world, rt, r) for r in rt.routes]


def _vnet_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [vnet_doc(ctx.world, v) for v in _listed(ctx, args, ctx.world.spec.vnets)]


def _vnet_show(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, name = _rg_name(args)
    return vnet_doc(ctx.world, _get(ctx, "Microsoft.Network/virtualNetworks", rg, name))


def _subnet_list(ctx: AzContext, args: ParsedArgs) -> Any:
    vnet = _get(ctx, "Microsoft.Network/virtualNetworks", args["resource_group"], args["vnet_name"])
    return vnet_doc(ctx.world, vnet)["subnets"]


def _subnet_show(ctx: AzContext, args: ParsedArgs) -> Any:
    if args["ids"]:
        parts = id_parts(args["ids"][0], 11)
        rg, vnet_name, name = parts[4], parts[8], parts[-1]
    else:
        rg, vnet_name, name = args["resource_group"], args["vnet_name"], args["name"]
        if not (rg and vnet_name and name):
            raise AzError(2, "ERROR: (--resource-group --vnet-name --name | --ids) are required\n")
    vnet = _get(ctx, "Microsoft.Network/virtualNetworks", rg, vnet_name)
    found = next((s for s in vnet_doc(ctx.world, vnet)["subnets"] if s["name"].lower() == name.lower()), None)
    if found is None:
        raise not_found(f"Microsoft.Network/virtualNetworks/{vnet_name}/subnets/{name}", rg)
    return found


def _peering_list(ctx: AzContext, args: ParsedArgs) -> Any:
    vnet = _get(ctx, "Microsoft.Network/virtualNetworks", args["resource_group"], args["vnet_name"])
    return [peering_doc(ctx.world, vnet, p) for p in vnet.peerings]


_RG_REQ = Arg("--resource-group", "-g", required=True)

COMMANDS = [
    Command(CommandSpec(("network", "nsg", "list"), (Arg("--resource-group", "-g"), *_PAGING)), _nsg_list),
    Command(CommandSpec(("network", "nsg", "show"), (*_IDS, Arg("--expand"))), _nsg_show),
    Command(CommandSpec(("network", "nsg", "rule", "list"), (
        Arg("--nsg-name", required=True), _RG_REQ, Arg("--include-default", kind="flag"),
    ), (("List all rules in a network security group.", "az network nsg rule list -g MyResourceGroup --nsg-name MyNsg"),)),
        _rule_list),
    Command(CommandSpec(("network", "nsg", "rule", "show"), (
        Arg("--nsg-name", required=True), Arg("--name", "-n", required=True), _RG_REQ,
        Arg("--include-default", kind="flag"),
    )), _rule_show),
    Command(CommandSpec(("network", "nic", "list"), (Arg("--resource-group", "-g"), *_PAGING)), _nic_list),
    Command(CommandSpec(("network", "nic", "show"), (*_IDS, Arg("--expand"))), _nic_show),
    Command(CommandSpec(("network", "nic", "list-effective-nsg"), (Arg("--no-wait", kind="optbool"), *_IDS),
                        policy=True), _list_effective_nsg),
    Command(CommandSpec(("network", "nic", "show-effective-route-table"), (Arg("--no-wait", kind="optbool"), *_IDS),
                        policy=True), _effective_routes, _route_table_transform),
    Command(CommandSpec(("network", "route-table", "list"), (Arg("--resource-group", "-g"), *_PAGING)), _rt_list),
    Command(CommandSpec(("network", "route-table", "show"), (*_IDS, Arg("--expand"))), _rt_show),
    Command(CommandSpec(("network", "route-table", "route", "list"), (
        _RG_REQ, Arg("--route-table-name", required=True), *_PAGING,
    ), (("List routes in a route table.", "az network route-table route list -g MyResourceGroup --route-table-name MyRouteTable"),)),
        _route_list),
    Command(CommandSpec(("network", "route-table", "route", "show"), (
        _RG_REQ, Arg("--route-table-name", required=True), Arg("--name", "-n", required=True),
    )), _route_show),
    Command(CommandSpec(("network", "vnet", "peering", "show"), (
        _RG_REQ, Arg("--vnet-name", required=True), Arg("--name", "-n", required=True),
    )), _peering_show),
    Command(CommandSpec(("network", "vnet", "list"), (Arg("--resource-group", "-g"), *_PAGING)), _vnet_list),
    Command(CommandSpec(("network", "vnet", "show"), (*_IDS, Arg("--expand"))), _vnet_show),
    Command(CommandSpec(("network", "vnet", "subnet", "list"), (
        _RG_REQ, Arg("--vnet-name", required=True), *_PAGING,
    ), (("List the subnets in a virtual network.", "az network vnet subnet list -g MyResourceGroup --vnet-name MyVNet"),)),
        _subnet_list),
    Command(CommandSpec(("network", "vnet", "subnet", "show"), (
        Arg("--ids", kind="many"), Arg("--name", "-n"), Arg("--resource-group", "-g"), Arg("--vnet-name"),
        Arg("--expand"),
    )), _subnet_show),
    Command(CommandSpec(("network", "vnet", "peering", "list"), (
        _RG_REQ, Arg("--vnet-name", required=True), *_PAGING,
    ), (("List all peerings of a specified virtual network.", "az network vnet peering list -g MyResourceGroup --vnet-name MyVnet1"),)),
        _peering_list),
]
