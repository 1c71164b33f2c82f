"""``az network private-endpoint list | show``: private endpoints and the state of their connection.

The document is the SDK shape az prints (null and empty fields kept). An endpoint's connection sits in
``privateLinkServiceConnections`` when it was auto-approved, in ``manualPrivateLinkServiceConnections``
when the resource's owner must approve it (another subscription or tenant); its
``privateLinkServiceConnectionState.status`` says whether traffic flows (``Approved``) or not
(``Pending``, ``Rejected``, ``Disconnected``). ``customDnsConfigs`` names the service's FQDN and the
endpoint's address, which is what a private DNS record must point at.
"""

from __future__ import annotations

from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import etag, guid, ref
from netghost.lab.az._context import AzContext, Command, id_parts, require_rg
from netghost.lab.az._errors import AzError, not_found
from netghost.lab.world import PrivateEndpoint, World

__all__ = ["COMMANDS", "endpoint_doc"]

_RTYPE = "Microsoft.Network/privateEndpoints"
_STATE_TEXT = {"Approved": "Auto-Approved", "Pending": "Awaiting approval", "Rejected": "Rejected by the owner",
               "Disconnected": "The resource was deleted or the connection removed"}


def endpoint_doc(world: World, pe: PrivateEndpoint) -> dict[str, Any]:
    """``az network private-endpoint show`` output."""
    pid = world.private_endpoint_id(pe)
    vnet_name, _, subnet_name = pe.subnet.partition("/")
    vnet = world.vnet(vnet_name)
    subnet = next((s for s in vnet.subnets if s.name == subnet_name), None) if vnet else None
    connection = {
        "etag": etag(pid, "connection"), "groupIds": [pe.group_id], "id": f"{pid}/privateLinkServiceConnections/{pe.name}",
        "name": pe.name,
        "privateLinkServiceConnectionState": {
            "actionsRequired": "None", "description": "Awaiting approval" if pe.manual and pe.status == "Pending"
            else _STATE_TEXT[pe.status], "status": pe.status},
        "privateLinkServiceId": pe.target, "provisioningState": "Succeeded",
        "requestMessage": "Please approve my connection." if pe.manual else None, "resourceGroup": pe.resource_group,
        "type": f"{_RTYPE}/{'manualPrivateLinkServiceConnections' if pe.manual else 'privateLinkServiceConnections'}",
    }
    nic = f"{pe.name}.nic.{guid(pid)}"
    return {
        "applicationSecurityGroups": [],
        "customDnsConfigs": [{"fqdn": pe.fqdn, "ipAddresses": [pe.private_ip]}] if pe.fqdn else [],
        "customNetworkInterfaceName": "", "etag": etag(pid), "extendedLocation": None, "id": pid, "ipConfigurations": [],
        "location": pe.location or world.rg_location(pe.resource_group),
        "manualPrivateLinkServiceConnections": [connection] if pe.manual else [],
        "name": pe.name,
        "networkInterfaces": [{"id": world.rid(pe.resource_group, "Microsoft.Network/networkInterfaces", nic),
                               "resourceGroup": pe.resource_group}],
        "privateLinkServiceConnections": [] if pe.manual else [connection],
        "provisioningState": "Succeeded", "resourceGroup": pe.resource_group,
        "subnet": ref(world.subnet_id(vnet, subnet)) if vnet and subnet else None,
        "tags": {}, "type": _RTYPE,
    }


def find_endpoint(ctx: AzContext, rg: str | None, name_or_id: str) -> PrivateEndpoint:
    """``-g RG -n NAME`` or ``--ids ID`` as az resolves them (404 when missing).

    Raises:
        AzError: usage error (exit 2), ResourceGroupNotFound / ResourceNotFound (exit 3).
    """
    if name_or_id.startswith("/subscriptions/"):
        parts = id_parts(name_or_id)
        rg, name_or_id = parts[4], parts[8]
    if rg is None:
        raise AzError(2, "ERROR: (--resource-group --name | --ids) are required\n")
    require_rg(ctx, rg, f"{_RTYPE}/read", ctx.world.rid(rg, _RTYPE, name_or_id))
    pe = next((e for e in ctx.world.spec.private_endpoints
               if e.name.lower() == name_or_id.lower() and e.resource_group.lower() == rg.lower()), None)
    if pe is None:
        raise not_found(f"{_RTYPE}/{name_or_id}", rg)
    return pe


def _list(ctx: AzContext, args: ParsedArgs) -> Any:
    rg = args["resource_group"]
    if rg:
        require_rg(ctx, rg, f"{_RTYPE}/read")
    return [endpoint_doc(ctx.world, e) for e in ctx.world.spec.private_endpoints
            if rg is None or e.resource_group.lower() == rg.lower()]


def _show(ctx: AzContext, args: ParsedArgs) -> Any:
    if args["ids"]:
        return endpoint_doc(ctx.world, find_endpoint(ctx, None, args["ids"][0]))
    if not args["name"]:
        raise AzError(2, "ERROR: (--resource-group --name | --ids) are required\n")
    return endpoint_doc(ctx.world, find_endpoint(ctx, args["resource_group"], args["name"]))


COMMANDS = [
    Command(CommandSpec(("network", "private-endpoint", "list"), (Arg("--resource-group", "-g"),),
                        (("List private endpoints in a resource group.", "az network private-endpoint list -g MyResourceGroup"),)),
            _list),
    Command(CommandSpec(("network", "private-endpoint", "show"), (
        Arg("--ids", kind="many"), Arg("--name", "-n"), Arg("--resource-group", "-g"), Arg("--expand"),
    ), (("Get the details of a private endpoint.", "az network private-endpoint show --name MyPE --resource-group MyResourceGroup"),)),
        _show),
]
