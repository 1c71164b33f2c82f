"""``az network private-dns zone|record-set|link ...`` read commands (listing only: no DNS query)."""

from __future__ import annotations

from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import guid, ref, zone_doc
from netghost.lab.az._context import AzContext, Command, require_rg
from netghost.lab.az._errors import not_found

__all__ = ["COMMANDS"]

_PAGING = (Arg("--max-items"), Arg("--next-token"))
_RG_REQ = Arg("--resource-group", "-g", required=True)


def _in_rg(items: list[Any], rg: str | None) -> list[Any]:
    return [i for i in items if rg is None or i.resource_group.lower() == rg.lower()]


def _zone(ctx: AzContext, rg: str, name: str) -> Any:
    w = ctx.world
    require_rg(ctx, rg)
    zone = next((z for z in w.spec.private_dns_zones
                 if z.name.lower() == name.lower() and z.resource_group.lower() == rg.lower()), None)
    if zone is None:
        raise not_found(f"Microsoft.Network/privateDnsZones/{name}", rg)
    return zone


def _zone_list(ctx: AzContext, args: ParsedArgs) -> Any:
    rg = args["resource_group"]
    if rg:
        require_rg(ctx, rg)
    return [zone_doc(ctx.world, z) for z in _in_rg(ctx.world.spec.private_dns_zones, rg)]


def _record_docs(ctx: AzContext, rg: str, zone_name: str, rtype: str | None) -> list[dict[str, Any]]:
    """Record sets of a zone as ``record-set ... list`` prints them (``rtype`` None: all types)."""
    zone = _zone(ctx, rg, zone_name)
    base = ctx.world.rid(zone.resource_group, "Microsoft.Network/privateDnsZones", zone.name)
    out = []
    for r in zone.records:
        if rtype is not None and r.type != rtype:
            continue
        doc: dict[str, Any] = {
            "etag": _etag(base, r.name), "fqdn": f"{r.name}.{zone.name}.", "id": f"{base}/{r.type}/{r.name}",
            "isAutoRegistered": False, "name": r.name, "resourceGroup": zone.resource_group, "ttl": r.ttl,
            "type": f"Microsoft.Network/privateDnsZones/{r.type}",
        }
        if r.type == "A":
            doc["aRecords"] = [{"ipv4Address": ip} for ip in r.values]
        elif r.type == "TXT":
            doc["txtRecords"] = [{"value": [v]} for v in r.values]
        else:
            doc["cnameRecord"] = {"cname": r.values[0]}
        out.append(doc)
    return out


def _a_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return _record_docs(ctx, args["resource_group"], args["zone_name"], "A")


def _cname_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return _record_docs(ctx, args["resource_group"], args["zone_name"], "CNAME")


def _txt_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return _record_docs(ctx, args["resource_group"], args["zone_name"], "TXT")


def _record_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return _record_docs(ctx, args["resource_group"], args["zone_name"], None)


def _a_show(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, zone_name, name = args["resource_group"], args["zone_name"], args["name"]
    found = next((d for d in _record_docs(ctx, rg, zone_name, "A") if d["name"].lower() == name.lower()), None)
    if found is None:
        raise not_found(f"Microsoft.Network/privateDnsZones/{zone_name}/A/{name}", rg)
    return found


def _etag(*parts: str) -> str:
    return guid("etag", *parts)


def _link_list(ctx: AzContext, args: ParsedArgs) -> Any:
    zone = _zone(ctx, args["resource_group"], args["zone_name"])
    w = ctx.world
    base = w.rid(zone.resource_group, "Microsoft.Network/privateDnsZones", zone.name)
    out = []
    for link in zone.links:
        vnet = w.vnet(link.vnet)
        assert vnet is not None
        out.append({
            "etag": f'"{_etag(base, link.name)}"', "id": f"{base}/virtualNetworkLinks/{link.name}",
            "location": "global", "name": link.name, "provisioningState": "Succeeded",
            "registrationEnabled": link.registration_enabled, "resolutionPolicy": "Default",
            "resourceGroup": zone.resource_group, "type": "Microsoft.Network/privateDnsZones/virtualNetworkLinks",
            "virtualNetwork": ref(w.vnet_id(vnet)), "virtualNetworkLinkState": "Completed",
        })
    return out




COMMANDS = [
    Command(CommandSpec(("network", "private-dns", "zone", "list"), (Arg("--resource-group", "-g"), *_PAGING)),
            _zone_list),
    Command(CommandSpec(("network", "private-dns", "record-set", "a", "list"), (
        _RG_REQ, Arg("--zone-name", "-z", required=True), *_PAGING,
    ), (("List all A record sets in a zone.", "az network private-dns record-set a list -g MyResourceGroup -z www.mysite.com"),)),
        _a_list),
    Command(CommandSpec(("network", "private-dns", "record-set", "a", "show"), (
        _RG_REQ, Arg("--zone-name", "-z", required=True), Arg("--name", "-n", required=True),
    ), (("Retrieve an A record set.", "az network private-dns record-set a show -g MyResourceGroup -z www.mysite.com -n MyRecordSet"),)),
        _a_show),
    Command(CommandSpec(("network", "private-dns", "record-set", "cname", "list"), (
        _RG_REQ, Arg("--zone-name", "-z", required=True), *_PAGING,
    )), _cname_list),
    Command(CommandSpec(("network", "private-dns", "record-set", "txt", "list"), (
        _RG_REQ, Arg("--zone-name", "-z", required=True), *_PAGING,
    ), (("List all TXT record sets in a zone.", "az network private-dns record-set txt list -g MyResourceGroup -z www.mysite.com"),)),
        _txt_list),
    Command(CommandSpec(("network", "private-dns", "record-set", "list"), (
        _RG_REQ, Arg("--zone-name", "-z", required=True), *_PAGING,
    )), _record_list),
    Command(CommandSpec(("network", "private-dns", "link", "vnet", "list"), (
        _RG_REQ, Arg("--zone-name", "-z", required=True), Arg("--top"), *_PAGING,
    ), (("List virtual network links to the specified private DNS zone.", "az network private-dns link vnet list -g MyResourceGroup -z www.mysite.com"),)),
        _link_list),
]
