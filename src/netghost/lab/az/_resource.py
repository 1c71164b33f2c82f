"""``az resource show``: any resource the world holds, by ``--ids`` or by group, type and name.

ARM answers a generic GET with the resource's raw document; az prints it in the generic shape
(``properties`` un-flattened, ``kind``/``plan``/``sku``/``identity`` null when absent). The kinds the
lab holds: VMs, scale sets and their instances, AKS clusters, NICs, NSGs, VNets and their subnets, route
tables, private DNS zones, private endpoints, Network Watchers, storage accounts, and the site-to-site VPN's
gateways, local network gateways and connections (a connection's document, like its GET, has no shared key),
load balancers, NAT gateways, public IP addresses, Azure Firewalls, firewall policies and service endpoint
policies.
An id of any other kind, or of a
missing resource, is ARM's ``(ResourceNotFound)`` (exit 3), as for a missing resource of a kind
the lab does hold (AZURE.md §1 T1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from netghost.lab.az._aks import aks_doc
from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import nic_doc, nsg_doc, route_table_doc, vnet_doc, watcher_doc, zone_doc
from netghost.lab.az._compute import vm_doc
from netghost.lab.az._context import AzContext, Command, require_rg
from netghost.lab.az._edge_docs import lb_doc, nat_gateway_doc, public_ip_docs, service_endpoint_policy_doc
from netghost.lab.az._endpoints import endpoint_doc
from netghost.lab.az._errors import AzError, arm_error, not_found
from netghost.lab.az._firewall import firewall_doc, policy_doc
from netghost.lab.az._storage import storage_account_doc
from netghost.lab.az._vmss import instance_doc, vmss_doc
from netghost.lab.az._vpn import connection_doc, local_gateway_doc, vnet_gateway_doc
from netghost.lab.world import World

__all__ = ["COMMANDS", "resource_doc"]

# names: the resource's name path (parent names first); returns its flattened document or None
_Finder = Callable[[World, list[str]], dict[str, Any] | None]


def _vm(w: World, names: list[str]) -> dict[str, Any] | None:
    vm = w.vm(names[0])
    return vm_doc(w, vm) if vm is not None and (vm.scale_set is None or w.is_flexible_instance(vm)) else None


def _vmss(w: World, names: list[str]) -> dict[str, Any] | None:
    vmss = w.scale_set(names[0])
    return vmss_doc(w, vmss) if vmss is not None else None


def _instance(w: World, names: list[str]) -> dict[str, Any] | None:
    vmss = w.scale_set(names[0])
    vm = next((v for v in w.instances(vmss) if v.instance_id == names[1]), None) if vmss else None
    return instance_doc(w, vmss, vm, expand=False) if vmss is not None and vm is not None else None


def _aks(w: World, names: list[str]) -> dict[str, Any] | None:
    cluster = w.aks_cluster(names[0])
    return aks_doc(w, cluster) if cluster is not None else None


def _nic(w: World, names: list[str]) -> dict[str, Any] | None:
    found = w.nic(names[0])
    return nic_doc(w, *found) if found is not None and found[0].scale_set is None else None


def _nsg(w: World, names: list[str]) -> dict[str, Any] | None:
    nsg = w.nsg(names[0])
    return nsg_doc(w, nsg) if nsg is not None else None


def _vnet(w: World, names: list[str]) -> dict[str, Any] | None:
    vnet = w.vnet(names[0])
    return vnet_doc(w, vnet) if vnet is not None else None


def _subnet(w: World, names: list[str]) -> dict[str, Any] | None:
    vnet = w.vnet(names[0])
    subnets = vnet_doc(w, vnet)["subnets"] if vnet is not None else []
    return next((s for s in subnets if s["name"].lower() == names[1].lower()), None)


def _route_table(w: World, names: list[str]) -> dict[str, Any] | None:
    rt = w.route_table(names[0])
    return route_table_doc(w, rt) if rt is not None else None


def _zone(w: World, names: list[str]) -> dict[str, Any] | None:
    zone = next((z for z in w.spec.private_dns_zones if z.name.lower() == names[0].lower()), None)
    return zone_doc(w, zone) if zone is not None else None


def _watcher(w: World, names: list[str]) -> dict[str, Any] | None:
    decl = next((d for d in w.spec.network_watchers if d.watcher_name.lower() == names[0].lower()), None)
    return watcher_doc(w, decl.location, decl.watcher_name, decl.resource_group) if decl else None


def _storage(w: World, names: list[str]) -> dict[str, Any] | None:
    account = next((s for s in w.spec.storage_accounts if s.name == names[0]), None)
    return storage_account_doc(w, account) if account is not None else None


def _endpoint(w: World, names: list[str]) -> dict[str, Any] | None:
    pe = next((e for e in w.spec.private_endpoints if e.name.lower() == names[0].lower()), None)
    return endpoint_doc(w, pe) if pe is not None else None


def _vnet_gateway(w: World, names: list[str]) -> dict[str, Any] | None:
    gw = w.vnet_gateway(names[0])
    return vnet_gateway_doc(w, gw) if gw is not None else None


def _local_gateway(w: World, names: list[str]) -> dict[str, Any] | None:
    lng = w.local_gateway(names[0])
    return local_gateway_doc(w, lng) if lng is not None else None


def _connection(w: World, names: list[str]) -> dict[str, Any] | None:
    conn = w.vpn_connection(names[0])
    return connection_doc(w, conn) if conn is not None else None


def _edge(kind: str) -> _Finder:
    def finder(w: World, names: list[str]) -> dict[str, Any] | None:
        if kind == "pip":
            return next((d for d in public_ip_docs(w) if d["name"].lower() == names[0].lower()), None)
        lookup: Any = {"lb": (w.load_balancer, lb_doc), "nat": (w.nat_gateway, nat_gateway_doc),
                       "fw": (w.firewall, firewall_doc), "policy": (w.firewall_policy, policy_doc),
                       "sep": (w.service_endpoint_policy, service_endpoint_policy_doc)}[kind]
        found = lookup[0](names[0])
        return lookup[1](w, found) if found is not None else None
    return finder


_FINDERS: dict[str, _Finder] = {
    "microsoft.compute/virtualmachines": _vm,
    "microsoft.compute/virtualmachinescalesets": _vmss,
    "microsoft.compute/virtualmachinescalesets/virtualmachines": _instance,
    "microsoft.containerservice/managedclusters": _aks,
    "microsoft.network/networkinterfaces": _nic,
    "microsoft.network/networksecuritygroups": _nsg,
    "microsoft.network/virtualnetworks": _vnet,
    "microsoft.network/virtualnetworks/subnets": _subnet,
    "microsoft.network/routetables": _route_table,
    "microsoft.network/privatednszones": _zone,
    "microsoft.network/privateendpoints": _endpoint,
    "microsoft.network/networkwatchers": _watcher,
    "microsoft.storage/storageaccounts": _storage,
    "microsoft.network/virtualnetworkgateways": _vnet_gateway,
    "microsoft.network/localnetworkgateways": _local_gateway,
    "microsoft.network/connections": _connection,
    "microsoft.network/loadbalancers": _edge("lb"),
    "microsoft.network/natgateways": _edge("nat"),
    "microsoft.network/azurefirewalls": _edge("fw"),
    "microsoft.network/firewallpolicies": _edge("policy"),
    "microsoft.network/serviceendpointpolicies": _edge("sep"),
    "microsoft.network/publicipaddresses": _edge("pip"),
}
_CHILD_KEYS = {"etag", "id", "name", "type", "resourceGroup"}


# ARM's envelope: what a resource's GET carries beside ``properties`` (a VM's extensions are ``resources``)
_TOP = {"id", "name", "type", "location", "resourceGroup", "tags", "etag", "sku", "kind", "zones", "identity", "plan",
        "extendedLocation", "managedBy", "resources"}


def _generic(doc: dict[str, Any], child: bool) -> dict[str, Any]:
    """A flattened doc folded back into ARM's generic shape for ``az resource show``: the envelope stays on
    top (the SDK's GenericResource prints its attributes, null or not, and any other top-level key as is)."""
    props = {k: v for k, v in doc.items() if k not in _TOP and v is not None}
    if child:  # a child resource (subnet, instance) has no location, tags or sku of its own
        return {**{k: doc[k] for k in _CHILD_KEYS if k in doc}, "properties": props}
    out = {
        "extendedLocation": doc.get("extendedLocation"), "id": doc["id"], "identity": doc.get("identity"),
        "kind": doc.get("kind"), "location": doc.get("location", "global"), "managedBy": doc.get("managedBy"),
        "name": doc["name"], "plan": doc.get("plan"), "properties": props, "resourceGroup": doc["resourceGroup"],
        "sku": doc.get("sku"), "tags": doc.get("tags") or {}, "type": doc["type"],
    }
    out.update({k: doc[k] for k in ("etag", "zones", "resources") if doc.get(k) is not None})
    return out


def resource_doc(ctx: AzContext, rg: str, rtype: str, names: list[str]) -> dict[str, Any]:
    """``az resource show`` of ``rtype`` (``Namespace/type[/childType]``) named ``names`` in ``rg``.

    Raises:
        AzError: ResourceGroupNotFound / ResourceNotFound (exit 3), AuthorizationFailed (exit 1).
    """
    w = ctx.world
    path = "/".join(f"{t}/{n}" for t, n in zip(rtype.split("/")[1:], names, strict=False))
    rid = f"/subscriptions/{w.sub_id}/resourceGroups/{rg}/providers/{rtype.split('/', maxsplit=1)[0]}/{path}"
    if not any(d.resource_group.lower() == rg.lower() for d in w.spec.network_watchers):
        require_rg(ctx, rg, f"{rtype}/read", rid)  # NetworkWatcherRG exists as soon as a watcher does
    finder = _FINDERS.get(rtype.lower())
    doc = finder(w, names) if finder is not None and len(names) == rtype.count("/") else None
    if doc is None or str(doc.get("resourceGroup") or rg).lower() != rg.lower():
        raise not_found(f"{rtype.split('/', maxsplit=1)[0]}/{path}", rg)
    return _generic(doc, child=len(names) > 1)


def _from_id(ctx: AzContext, rid: str) -> dict[str, Any]:
    parts = rid.strip("/").split("/")
    if len(parts) < 8 or len(parts) % 2 or parts[0].lower() != "subscriptions" or parts[4].lower() != "providers":
        raise arm_error("InvalidResourceId", f"The resource ID '{rid}' is not valid.", 1)
    types, names = parts[6::2], parts[7::2]
    return resource_doc(ctx, parts[3], "/".join([parts[5], *types]), names)


def _resource_show(ctx: AzContext, args: ParsedArgs) -> Any:
    if args["ids"]:
        docs = [_from_id(ctx, rid) for rid in args["ids"]]
        return docs[0] if len(docs) == 1 else docs
    rtype, rg, name = args["resource_type"], args["resource_group"], args["name"]
    if not (rtype and rg and name):
        raise AzError(2, "ERROR: (--name --resource-group --resource-type | --ids) are required\n")
    if "/" not in rtype:
        if not args["namespace"]:
            raise AzError(1, "ERROR: --namespace is required if --resource-type is not of the form 'namespace/type'\n")
        rtype = f"{args['namespace']}/{rtype}"
    names = [name]
    if args["parent"]:  # --parent "virtualNetworks/vnet-prod": the parent's type and name come first
        parent = args["parent"].strip("/").split("/")
        namespace, child = rtype.rsplit("/", 1) if rtype.count("/") > 1 else (rtype.split("/")[0], rtype.split("/")[1])
        rtype = "/".join([namespace, *parent[0::2], child])
        names = [*parent[1::2], name]
    return resource_doc(ctx, rg, rtype, names)


COMMANDS = [
    Command(CommandSpec(("resource", "show"), (
        Arg("--include-response-body", choices=("false", "true")), Arg("--api-version"), Arg("--ids", kind="many"),
        Arg("--latest-include-preview", "-v", kind="flag"), Arg("--name", "-n"), Arg("--namespace"),
        Arg("--parent"), Arg("--resource-group", "-g"), Arg("--resource-type"),
    )), _resource_show),
]
