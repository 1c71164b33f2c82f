"""``az network vnet-gateway|local-gateway|vpn-connection ...``: the site-to-site VPN read commands.

Arguments are those azure-cli 2.x declares for these AAZ commands (``list`` needs ``-g``; ``show``
takes ``-g``/``-n`` or ``--ids``; ``list-learned-routes`` is an LRO with ``--no-wait``; ``shared-key
show`` names the connection with ``--connection-name``). Documents are the REST bodies flattened as
AAZ prints them (nulls dropped, sub-resource references as ``{"id", "resourceGroup"}``).

The pre-shared key is a secret: ``vpn-connection show``/``list`` (and ``az resource show``) never carry
``sharedKey``; only ``vpn-connection shared-key show`` (GET ``.../connections/NAME/sharedkey``) prints it.
That follows what the project records of the live service; the REST spec's GET example (and 2017-era
docs) do show ``sharedKey`` in the connection body, so the lab takes the cautious side: a tool must
treat ``shared-key show`` as the credential read either way.
"""

from __future__ import annotations

from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import etag, guid, ref
from netghost.lab.az._context import AzContext, Command, id_parts, require_rg
from netghost.lab.az._errors import AzError, not_found
from netghost.lab.world import GATEWAY_SUBNET, LocalNetworkGateway, VnetGateway, VpnConnection, World

__all__ = ["COMMANDS", "connection_doc", "local_gateway_doc", "vnet_gateway_doc"]

_GW = "Microsoft.Network/virtualNetworkGateways"
_LNG = "Microsoft.Network/localNetworkGateways"
_CONN = "Microsoft.Network/connections"
_DEFAULT_ASN = 65515  # Azure's own ASN: a VPN gateway reports it even with BGP off
_SKU_CAPACITY = 2  # instances behind one VpnGw SKU (active-standby)
_ROUTE_WEIGHT = 32768  # the weight a gateway gives its own (Network) and learned routes


def vnet_gateway_doc(world: World, gw: VnetGateway) -> dict[str, Any]:
    """``az network vnet-gateway show`` output."""
    gid = world.vnet_gateway_id(gw)
    vnet = world.vnet(gw.vnet)
    assert vnet is not None  # the spec checks the reference
    subnet = next(s for s in vnet.subnets if s.name == GATEWAY_SUBNET)
    ipconf = f"{gid}/ipConfigurations/default"
    peer = (gw.bgp.peering_address if gw.bgp else None) or world.gateway_private_ip(gw)
    return {
        "activeActive": False, "allowRemoteVnetTraffic": False, "allowVirtualWanTraffic": False,
        "bgpSettings": {
            "asn": gw.bgp.asn if gw.bgp else _DEFAULT_ASN, "bgpPeeringAddress": peer, "peerWeight": 0,
            "bgpPeeringAddresses": [{"customBgpIpAddresses": [], "defaultBgpIpAddresses": [peer],
                                     "ipconfigurationId": ipconf, "tunnelIpAddresses": [gw.public_ip]}],
        },
        "disableIPSecReplayProtection": False, "enableBgp": gw.bgp is not None,
        "enableBgpRouteTranslationForNat": False, "enablePrivateIpAddress": False, "etag": etag(gid),
        "gatewayType": gw.gateway_type, "id": gid,
        "ipConfigurations": [{
            "etag": etag(gid), "id": ipconf, "name": "default", "privateIPAllocationMethod": "Dynamic",
            "provisioningState": "Succeeded",
            "publicIPAddress": ref(world.rid(gw.resource_group, "Microsoft.Network/publicIPAddresses", gw.pip_name)),
            "subnet": ref(world.subnet_id(vnet, subnet)),
        }],
        "location": world.location_of(gw), "name": gw.name, "natRules": [],
        "provisioningState": gw.provisioning_state, "resourceGroup": gw.resource_group, "resourceGuid": guid(gid),
        "sku": {"capacity": _SKU_CAPACITY, "name": gw.sku, "tier": gw.sku}, "type": _GW,
        "vpnGatewayGeneration": gw.generation, "vpnType": gw.vpn_type,
    }


def local_gateway_doc(world: World, lng: LocalNetworkGateway) -> dict[str, Any]:
    """``az network local-gateway show`` output."""
    lid = world.local_gateway_id(lng)
    doc: dict[str, Any] = {
        "etag": etag(lid), "gatewayIpAddress": lng.gateway_ip_address, "id": lid,
        "localNetworkAddressSpace": {"addressPrefixes": list(lng.address_prefixes)},
        "location": world.location_of(lng), "name": lng.name, "provisioningState": lng.provisioning_state,
        "resourceGroup": lng.resource_group, "resourceGuid": guid(lid), "type": _LNG,
    }
    if lng.bgp is not None:
        doc["bgpSettings"] = {"asn": lng.bgp.asn, "bgpPeeringAddress": lng.bgp.peering_address, "peerWeight": 0}
    return doc


def connection_doc(world: World, conn: VpnConnection) -> dict[str, Any]:
    """``az network vpn-connection show`` output: the GET body, which carries no ``sharedKey``."""
    cid = world.connection_id(conn)
    gw, lng = world.vnet_gateway(conn.vnet_gateway), world.local_gateway(conn.local_gateway)
    assert gw is not None and lng is not None  # the spec checks the references
    return {
        "connectionMode": "Default", "connectionProtocol": conn.connection_protocol,
        "connectionStatus": conn.status, "connectionType": conn.connection_type,
        "dpdTimeoutSeconds": conn.dpd_timeout_seconds, "egressBytesTransferred": conn.egress_bytes,
        "enableBgp": conn.enable_bgp, "enablePrivateLinkFastPath": False, "etag": etag(cid),
        "expressRouteGatewayBypass": False, "id": cid, "ingressBytesTransferred": conn.ingress_bytes,
        "ipsecPolicies": [], "localNetworkGateway2": ref(world.local_gateway_id(lng)),
        "location": world.location_of(conn), "name": conn.name, "provisioningState": "Succeeded",
        "resourceGroup": conn.resource_group, "resourceGuid": guid(cid), "routingWeight": conn.routing_weight,
        "trafficSelectorPolicies": [], "type": _CONN, "useLocalAzureIpAddress": False,
        "usePolicyBasedTrafficSelectors": False, "virtualNetworkGateway1": ref(world.vnet_gateway_id(gw)),
    }


def learned_routes(world: World, gw: VnetGateway) -> list[dict[str, Any]]:
    """What the gateway's route table holds: its VNet's (and transit spokes') space as ``Network``
    routes, and each Connected connection's on-premises ranges (``Network`` for a static site, ``EBgp``
    from the site's BGP peer)."""
    local = (gw.bgp.peering_address if gw.bgp else None) or world.gateway_private_ip(gw)
    own = {"localAddress": local, "origin": "Network", "sourcePeer": local, "weight": _ROUTE_WEIGHT}
    vnet = world.vnet(gw.vnet)
    assert vnet is not None
    spaces = list(vnet.address_prefixes)
    for other in world.spec.vnets:  # spokes using this gateway learn it, and it learns their space
        if other is not vnet and world.serving_gateway(other) is gw:
            spaces.extend(other.address_prefixes)
    routes = [{**own, "network": prefix} for prefix in spaces]
    for prefix, conn in world.onprem_ranges(gw):
        lng = world.local_gateway(conn.local_gateway)
        if conn.enable_bgp and lng is not None and lng.bgp is not None:
            routes.append({"asPath": str(lng.bgp.asn), "localAddress": local, "network": prefix,
                           "nextHop": lng.bgp.peering_address, "origin": "EBgp",
                           "sourcePeer": lng.bgp.peering_address, "weight": _ROUTE_WEIGHT})
        else:
            routes.append({**own, "network": prefix})
    return routes


def _routes_table(result: Any) -> list[dict[str, Any]]:
    return [{"Network": r["network"], "Origin": r["origin"], "SourcePeer": r.get("sourcePeer", ""),
             "AsPath": r.get("asPath", ""), "Weight": r["weight"], "NextHop": r.get("nextHop", "")}
            for r in result["value"]]


def _rg_and_name(args: ParsedArgs, dest: str = "name", flag: str = "--name") -> tuple[str, str]:
    """``-g RG`` with the name argument, or ``--ids``; az's usage error (exit 2) when neither is whole."""
    if args["ids"]:
        parts = id_parts(args["ids"][0])
        return parts[4], parts[8]
    if not (args[dest] and args["resource_group"]):
        raise AzError(2, f"ERROR: (--resource-group {flag} | --ids) are required\n")
    return args["resource_group"], args[dest]


def _find(ctx: AzContext, kind: str, rg: str, name: str) -> Any:
    """The gateway, local gateway or connection ``name`` in ``rg`` (ARM's 404 when missing)."""
    w = ctx.world
    require_rg(ctx, rg, f"{kind}/read", w.rid(rg, kind, name))
    found: Any = {_GW: w.vnet_gateway, _LNG: w.local_gateway, _CONN: w.vpn_connection}[kind](name)
    if found is None or found.resource_group.lower() != rg.lower():
        raise not_found(f"{kind}/{name}", rg)
    return found


def _in_group(ctx: AzContext, args: ParsedArgs, items: list[Any]) -> list[Any]:
    rg = args["resource_group"]
    require_rg(ctx, rg)
    return [i for i in items if i.resource_group.lower() == rg.lower()]


def _gw_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [vnet_gateway_doc(ctx.world, g) for g in _in_group(ctx, args, ctx.world.spec.vnet_gateways)]


def _gw_show(ctx: AzContext, args: ParsedArgs) -> Any:
    return vnet_gateway_doc(ctx.world, _find(ctx, _GW, *_rg_and_name(args)))


def _gw_learned_routes(ctx: AzContext, args: ParsedArgs) -> Any:
    return {"value": learned_routes(ctx.world, _find(ctx, _GW, *_rg_and_name(args)))}


def _lng_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [local_gateway_doc(ctx.world, g) for g in _in_group(ctx, args, ctx.world.spec.local_network_gateways)]


def _lng_show(ctx: AzContext, args: ParsedArgs) -> Any:
    return local_gateway_doc(ctx.world, _find(ctx, _LNG, *_rg_and_name(args)))


def _conn_list(ctx: AzContext, args: ParsedArgs) -> Any:
    return [connection_doc(ctx.world, c) for c in _in_group(ctx, args, ctx.world.spec.vpn_connections)]


def _conn_show(ctx: AzContext, args: ParsedArgs) -> Any:
    return connection_doc(ctx.world, _find(ctx, _CONN, *_rg_and_name(args)))


def _shared_key_show(ctx: AzContext, args: ParsedArgs) -> Any:
    conn = _find(ctx, _CONN, *_rg_and_name(args, "connection_name", "--connection-name"))
    return {"id": "", "value": conn.shared_key}  # the REST example's body: an empty id beside the key


_RG_REQ = Arg("--resource-group", "-g", required=True)
_PAGING = (Arg("--max-items"), Arg("--next-token"))
_IDS = (Arg("--ids", kind="many"), Arg("--name", "-n"), Arg("--resource-group", "-g"))


def _list_spec(group: str, example: str) -> CommandSpec:
    return CommandSpec(("network", group, "list"), (_RG_REQ, *_PAGING),
                       ((example, f"az network {group} list -g MyResourceGroup"),))


COMMANDS = [
    Command(_list_spec("vnet-gateway", "List virtual network gateways in a resource group."), _gw_list),
    Command(CommandSpec(("network", "vnet-gateway", "show"), _IDS), _gw_show),
    Command(CommandSpec(("network", "vnet-gateway", "list-learned-routes"),
                        (Arg("--no-wait", kind="optbool"), *_IDS)), _gw_learned_routes, _routes_table),
    Command(_list_spec("local-gateway", "List all local VPN gateways in a resource group."), _lng_list),
    Command(CommandSpec(("network", "local-gateway", "show"), _IDS), _lng_show),
    Command(_list_spec("vpn-connection", "List all VPN connections in a resource group."), _conn_list),
    Command(CommandSpec(("network", "vpn-connection", "show"), _IDS), _conn_show),
    Command(CommandSpec(("network", "vpn-connection", "shared-key", "show"), (
        Arg("--ids", kind="many"), Arg("--connection-name"), Arg("--resource-group", "-g"),
    )), _shared_key_show),
]
