"""``az network lb|nat gateway|public-ip|service-endpoint policy ...`` read commands.

Arguments as azure-cli 2.91 declares them (their ``--help`` texts are in ``tests/data/azure/help``): the
load balancer's children take ``--lb-name`` and ``-g`` (``address-pool list`` pages, ``probe``/``rule``/
``frontend-ip list`` do not); ``list`` commands take an optional ``-g``; ``show`` takes ``-g``/``-n`` or
``--ids``. Documents come from :mod:`netghost.lab.az._edge_docs`.
"""

from __future__ import annotations

from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._context import AzContext, Command, id_parts, require_rg
from netghost.lab.az._edge_docs import (
    frontend_docs,
    lb_doc,
    nat_gateway_doc,
    pool_docs,
    probe_docs,
    public_ip_docs,
    rule_docs,
    service_endpoint_policy_doc,
)
from netghost.lab.az._errors import AzError, not_found

__all__ = ["COMMANDS"]

_LB = "Microsoft.Network/loadBalancers"
_NAT = "Microsoft.Network/natGateways"
_SEP = "Microsoft.Network/serviceEndpointPolicies"
_PIP = "Microsoft.Network/publicIPAddresses"


def _rg_name(args: ParsedArgs) -> tuple[str, str]:
    if args["ids"]:
        parts = id_parts(args["ids"][0])
        return parts[4], parts[8]
    if not (args["name"] and args["resource_group"]):
        raise AzError(2, "ERROR: (--resource-group --name | --ids) are required\n")
    return args["resource_group"], args["name"]


def _find(ctx: AzContext, kind: str, rg: str, name: str) -> Any:
    w = ctx.world
    require_rg(ctx, rg, f"{kind}/read", w.rid(rg, kind, name))
    found: Any = {_LB: w.load_balancer, _NAT: w.nat_gateway, _SEP: w.service_endpoint_policy}[kind](name)
    if found is None or found.resource_group.lower() != rg.lower():
        raise not_found(f"{kind}/{name}", rg)
    return found


def _listed(ctx: AzContext, args: ParsedArgs, items: list[Any]) -> list[Any]:
    rg = args["resource_group"]
    if rg:
        require_rg(ctx, rg)
    return [i for i in items if rg is None or i.resource_group.lower() == rg.lower()]


def _lb_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [lb_doc(ctx.world, lb) for lb in _listed(ctx, args, ctx.world.spec.load_balancers)]


def _lb_show(ctx: AzContext, args: ParsedArgs) -> Any:
    return lb_doc(ctx.world, _find(ctx, _LB, *_rg_name(args)))


def _children(build: Any) -> Any:
    def handler(ctx: AzContext, args: ParsedArgs) -> Any:
        return build(ctx.world, _find(ctx, _LB, args["resource_group"], args["lb_name"]))
    return handler


def _child_show(build: Any, kind: str) -> Any:
    def handler(ctx: AzContext, args: ParsedArgs) -> Any:
        if args["ids"]:
            parts = id_parts(args["ids"][0], 11)
            rg, lb_name, name = parts[4], parts[8], parts[10]
        else:
            rg, lb_name, name = args["resource_group"], args["lb_name"], args["name"]
            if not (rg and lb_name and name):
                raise AzError(2, "ERROR: (--resource-group --lb-name --name | --ids) are required\n")
        lb = _find(ctx, _LB, rg, lb_name)
        found = next((d for d in build(ctx.world, lb) if d["name"].lower() == str(name).lower()), None)
        if found is None:
            raise not_found(f"{_LB}/{lb_name}/{kind}/{name}", rg)
        return found
    return handler


def _nat_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [nat_gateway_doc(ctx.world, n) for n in _listed(ctx, args, ctx.world.spec.nat_gateways)]


def _nat_show(ctx: AzContext, args: ParsedArgs) -> Any:
    return nat_gateway_doc(ctx.world, _find(ctx, _NAT, *_rg_name(args)))


def _pip_list(ctx: AzContext, args: ParsedArgs) -> Any:
    rg = args["resource_group"]
    if rg:
        require_rg(ctx, rg)
    return [d for d in public_ip_docs(ctx.world) if rg is None or d["resourceGroup"].lower() == rg.lower()]


def _pip_show(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, name = _rg_name(args)
    require_rg(ctx, rg, f"{_PIP}/read", ctx.world.rid(rg, _PIP, name))
    found = next((d for d in public_ip_docs(ctx.world) if d["name"].lower() == name.lower()
                  and d["resourceGroup"].lower() == rg.lower()), None)
    if found is None:
        raise not_found(f"{_PIP}/{name}", rg)
    return found


def _sep_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [service_endpoint_policy_doc(ctx.world, p)
            for p in _listed(ctx, args, ctx.world.spec.service_endpoint_policies)]


def _sep_show(ctx: AzContext, args: ParsedArgs) -> Any:
    return service_endpoint_policy_doc(ctx.world, _find(ctx, _SEP, *_rg_name(args)))


_PAGING = (Arg("--max-items"), Arg("--next-token"))
_IDS = (Arg("--ids", kind="many"), Arg("--name", "-n"), Arg("--resource-group", "-g"))
_LB_CHILD = (Arg("--lb-name", required=True), Arg("--resource-group", "-g", required=True))
_LB_CHILD_SHOW = (Arg("--lb-name", required=True), Arg("--name", "-n", required=True),
                  Arg("--resource-group", "-g", required=True))


def _list(words: tuple[str, ...], paging: bool = True) -> CommandSpec:
    return CommandSpec(words, (Arg("--resource-group", "-g"), *(_PAGING if paging else ())))


COMMANDS = [
    Command(_list(("network", "lb", "list")), _lb_list),
    Command(CommandSpec(("network", "lb", "show"), (*_IDS, Arg("--expand"), Arg("--detail-level"))), _lb_show),
    Command(CommandSpec(("network", "lb", "probe", "list"), _LB_CHILD), _children(probe_docs)),
    Command(CommandSpec(("network", "lb", "probe", "show"), _LB_CHILD_SHOW), _child_show(probe_docs, "probes")),
    Command(CommandSpec(("network", "lb", "rule", "list"), _LB_CHILD), _children(rule_docs)),
    Command(CommandSpec(("network", "lb", "rule", "show"), _LB_CHILD_SHOW),
            _child_show(rule_docs, "loadBalancingRules")),
    Command(CommandSpec(("network", "lb", "address-pool", "list"), (*_LB_CHILD, *_PAGING)), _children(pool_docs)),
    Command(CommandSpec(("network", "lb", "address-pool", "show"), (
        Arg("--ids", kind="many"), Arg("--lb-name"), Arg("--name", "-n"), Arg("--resource-group", "-g"))),
        _child_show(pool_docs, "backendAddressPools")),
    Command(CommandSpec(("network", "lb", "frontend-ip", "list"), _LB_CHILD), _children(frontend_docs)),
    Command(_list(("network", "nat", "gateway", "list")), _nat_list),
    Command(CommandSpec(("network", "nat", "gateway", "show"), _IDS), _nat_show),
    Command(_list(("network", "public-ip", "list")), _pip_list),
    Command(CommandSpec(("network", "public-ip", "show"), (*_IDS, Arg("--expand"))), _pip_show),
    Command(_list(("network", "service-endpoint", "policy", "list"), paging=False), _sep_list),
    Command(CommandSpec(("network", "service-endpoint", "policy", "show"), _IDS), _sep_show),
]
