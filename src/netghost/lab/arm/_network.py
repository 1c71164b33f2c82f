"""``Microsoft.Network`` routes other than Network Watcher: NICs (and their effective rules and routes),
NSGs and rules, VNets, subnets and peerings, route tables and routes, private DNS zones, links and record
sets, private endpoints, VPN gateways, local network gateways and connections."""

from __future__ import annotations

from typing import Any

from netghost.errors import ArmFailure
from netghost.lab.arm import _shapes as shape
from netghost.lab.arm._rest import Shape, strip_resource_groups, to_rest
from netghost.lab.arm._routes import Call, Lro, Route, compile_template, listing
from netghost.lab.az import public_ip_name

__all__ = ["ROUTES"]

_N = "Microsoft.Network"


def _scope(c: Call) -> list[str]:
    return ["-g", c.seg["rg"]] if "rg" in c.seg else []


def _show(group: list[str], key: str, rest_shape: Shape) -> Any:
    def handler(c: Call) -> Any:
        return to_rest(c.sim.run([*group, "show", "-g", c.rg, "-n", c.seg[key]]), rest_shape)
    return handler


def _list(group: list[str], rest_shape: Shape, scoped: bool = True) -> Any:
    def handler(c: Call) -> Any:
        return listing(to_rest(c.sim.run([*group, "list", *(_scope(c) if scoped else ["-g", c.rg])]), rest_shape))
    return handler


def _effective_nsg(c: Call) -> Any:
    doc = c.sim.run(["network", "nic", "list-effective-nsg", "-g", c.rg, "-n", c.seg["nic"]])
    return Lro(strip_resource_groups(doc))


def _effective_routes(c: Call) -> Any:
    doc = c.sim.run(["network", "nic", "show-effective-route-table", "-g", c.rg, "-n", c.seg["nic"]])
    return Lro(strip_resource_groups(doc))


def _rules(c: Call) -> Any:
    argv = ["network", "nsg", "rule", "list", "-g", c.rg, "--nsg-name", c.seg["nsg"]]
    return listing(to_rest(c.sim.run(argv), shape.RULE))


def _default_rules(c: Call) -> Any:
    docs = c.sim.run(["network", "nsg", "rule", "list", "-g", c.rg, "--nsg-name", c.seg["nsg"], "--include-default"])
    return listing(to_rest([d for d in docs if d["type"].endswith("/defaultSecurityRules")], shape.RULE))


def _rule(c: Call) -> Any:
    argv = ["network", "nsg", "rule", "show", "-g", c.rg, "--nsg-name", c.seg["nsg"], "-n", c.seg["rule"]]
    return to_rest(c.sim.run(argv), shape.RULE)


def _default_rule(c: Call) -> Any:
    docs = c.sim.run(["network", "nsg", "rule", "list", "-g", c.rg, "--nsg-name", c.seg["nsg"], "--include-default"])
    found = [d for d in docs if d["type"].endswith("/defaultSecurityRules") and d["name"].lower() == c.seg["rule"].lower()]
    if not found:
        raise ArmFailure(404, "NotFound", f"Resource {c.resource_id} not found.")
    return to_rest(found[0], shape.RULE)


def _child_list(group: list[str], parent_flag: str, parent: str, rest_shape: Shape) -> Any:
    def handler(c: Call) -> Any:
        return listing(to_rest(c.sim.run([*group, "list", "-g", c.rg, parent_flag, c.seg[parent]]), rest_shape))
    return handler


def _child_show(group: list[str], parent_flag: str, parent: str, key: str, rest_shape: Shape) -> Any:
    def handler(c: Call) -> Any:
        argv = [*group, "show", "-g", c.rg, parent_flag, c.seg[parent], "-n", c.seg[key]]
        return to_rest(c.sim.run(argv), rest_shape)
    return handler


def _zones(c: Call) -> Any:
    return listing(to_rest(c.sim.run(["network", "private-dns", "zone", "list", *_scope(c)]), shape.ZONE))


def _zone(c: Call) -> Any:
    docs = c.sim.run(["network", "private-dns", "zone", "list", "-g", c.rg])
    found = [d for d in docs if d["name"].lower() == c.seg["zone"].lower()]
    if not found:
        raise ArmFailure(404, "ResourceNotFound",
                         f"The Resource 'Microsoft.Network/privateDnsZones/{c.seg['zone']}' under resource group "
                         f"'{c.rg}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix")
    return to_rest(found[0], shape.ZONE)


def _records(kind: str | None) -> Any:
    def handler(c: Call) -> Any:
        group = ["network", "private-dns", "record-set", *([kind.lower()] if kind else [])]
        docs = c.sim.run([*group, "list", "-g", c.rg, "-z", c.seg["zone"]])
        return listing(to_rest(docs, shape.RECORD_SET))
    return handler


def _a_record(c: Call) -> Any:
    argv = ["network", "private-dns", "record-set", "a", "show", "-g", c.rg, "-z", c.seg["zone"], "-n", c.seg["record"]]
    return to_rest(c.sim.run(argv), shape.RECORD_SET)


def _links(c: Call) -> Any:
    docs = c.sim.run(["network", "private-dns", "link", "vnet", "list", "-g", c.rg, "-z", c.seg["zone"]])
    return listing(to_rest(docs, shape.VNET_LINK))


def _learned_routes(c: Call) -> Any:
    doc = c.sim.run(["network", "vnet-gateway", "list-learned-routes", "-g", c.rg, "-n", c.seg["gateway"]])
    return Lro(strip_resource_groups(doc))


def _shared_key(c: Call) -> Any:
    argv = ["network", "vpn-connection", "shared-key", "show", "-g", c.rg, "--connection-name", c.seg["connection"]]
    return strip_resource_groups(c.sim.run(argv))


def _public_ip(c: Call) -> Any:
    """A NIC's public IP resource (no simulator command reads one: the world's NIC holds its address)."""
    world = c.sim.world()
    for vm, nic in world.nics():
        name = public_ip_name(vm, nic)
        if nic.public_ip and name.lower() == c.seg["pip"].lower() and vm.resource_group.lower() == c.rg.lower():
            ipconf = c.sim.run(["network", "nic", "show", "--ids", world.nic_id(vm, nic)])["ipConfigurations"][0]["id"]
            return {"id": world.rid(vm.resource_group, f"{_N}/publicIPAddresses", name), "name": name,
                    "type": f"{_N}/publicIPAddresses", "location": world.vm_location(vm),
                    "sku": {"name": "Standard", "tier": "Regional"},
                    "properties": {"ipAddress": nic.public_ip, "publicIPAddressVersion": "IPv4",
                                   "publicIPAllocationMethod": "Static", "idleTimeoutInMinutes": 4,
                                   "provisioningState": "Succeeded", "ipConfiguration": {"id": ipconf}}}
    raise ArmFailure(404, "ResourceNotFound",
                     f"The Resource '{_N}/publicIPAddresses/{c.seg['pip']}' under resource group '{c.rg}' was not "
                     "found. For more details please go to https://aka.ms/ARMResourceNotFoundFix")


def _r(method: str, template: str, action: str, handler: Any) -> Route:
    return Route(method, compile_template(template), action, handler)


_NIC, _NSG, _VNET, _RT = (f"{_N}/networkInterfaces", f"{_N}/networkSecurityGroups", f"{_N}/virtualNetworks",
                          f"{_N}/routeTables")
_DNS, _PE = f"{_N}/privateDnsZones", f"{_N}/privateEndpoints"
_GW, _LNG, _CONN = f"{_N}/virtualNetworkGateways", f"{_N}/localNetworkGateways", f"{_N}/connections"

ROUTES = [
    _r("GET", f"RG/{_NIC}", f"{_NIC}/read", _list(["network", "nic"], shape.NIC)),
    _r("GET", f"SUB/{_NIC}", f"{_NIC}/read", _list(["network", "nic"], shape.NIC)),
    _r("GET", f"RG/{_NIC}/{{nic}}", f"{_NIC}/read", _show(["network", "nic"], "nic", shape.NIC)),
    _r("POST", f"RG/{_NIC}/{{nic}}/effectiveNetworkSecurityGroups", f"{_NIC}/effectiveNetworkSecurityGroups/action",
       _effective_nsg),
    _r("POST", f"RG/{_NIC}/{{nic}}/effectiveRouteTable", f"{_NIC}/effectiveRouteTable/action", _effective_routes),
    _r("GET", f"RG/{_N}/publicIPAddresses/{{pip}}", f"{_N}/publicIPAddresses/read", _public_ip),
    _r("GET", f"RG/{_NSG}", f"{_NSG}/read", _list(["network", "nsg"], shape.NSG)),
    _r("GET", f"SUB/{_NSG}", f"{_NSG}/read", _list(["network", "nsg"], shape.NSG)),
    _r("GET", f"RG/{_NSG}/{{nsg}}", f"{_NSG}/read", _show(["network", "nsg"], "nsg", shape.NSG)),
    _r("GET", f"RG/{_NSG}/{{nsg}}/securityRules", f"{_NSG}/securityRules/read", _rules),
    _r("GET", f"RG/{_NSG}/{{nsg}}/securityRules/{{rule}}", f"{_NSG}/securityRules/read", _rule),
    _r("GET", f"RG/{_NSG}/{{nsg}}/defaultSecurityRules", f"{_NSG}/defaultSecurityRules/read", _default_rules),
    _r("GET", f"RG/{_NSG}/{{nsg}}/defaultSecurityRules/{{rule}}", f"{_NSG}/defaultSecurityRules/read", _default_rule),
    _r("GET", f"RG/{_VNET}", f"{_VNET}/read", _list(["network", "vnet"], shape.VNET)),
    _r("GET", f"SUB/{_VNET}", f"{_VNET}/read", _list(["network", "vnet"], shape.VNET)),
    _r("GET", f"RG/{_VNET}/{{vnet}}", f"{_VNET}/read", _show(["network", "vnet"], "vnet", shape.VNET)),
    _r("GET", f"RG/{_VNET}/{{vnet}}/subnets", f"{_VNET}/subnets/read",
       _child_list(["network", "vnet", "subnet"], "--vnet-name", "vnet", shape.SUBNET)),
    _r("GET", f"RG/{_VNET}/{{vnet}}/subnets/{{subnet}}", f"{_VNET}/subnets/read",
       _child_show(["network", "vnet", "subnet"], "--vnet-name", "vnet", "subnet", shape.SUBNET)),
    _r("GET", f"RG/{_VNET}/{{vnet}}/virtualNetworkPeerings", f"{_VNET}/virtualNetworkPeerings/read",
       _child_list(["network", "vnet", "peering"], "--vnet-name", "vnet", shape.PEERING)),
    _r("GET", f"RG/{_VNET}/{{vnet}}/virtualNetworkPeerings/{{peering}}", f"{_VNET}/virtualNetworkPeerings/read",
       _child_show(["network", "vnet", "peering"], "--vnet-name", "vnet", "peering", shape.PEERING)),
    _r("GET", f"RG/{_RT}", f"{_RT}/read", _list(["network", "route-table"], shape.ROUTE_TABLE)),
    _r("GET", f"SUB/{_RT}", f"{_RT}/read", _list(["network", "route-table"], shape.ROUTE_TABLE)),
    _r("GET", f"RG/{_RT}/{{table}}", f"{_RT}/read", _show(["network", "route-table"], "table", shape.ROUTE_TABLE)),
    _r("GET", f"RG/{_RT}/{{table}}/routes", f"{_RT}/routes/read",
       _child_list(["network", "route-table", "route"], "--route-table-name", "table", shape.ROUTE)),
    _r("GET", f"RG/{_RT}/{{table}}/routes/{{route}}", f"{_RT}/routes/read",
       _child_show(["network", "route-table", "route"], "--route-table-name", "table", "route", shape.ROUTE)),
    _r("GET", f"RG/{_DNS}", f"{_DNS}/read", _zones),
    _r("GET", f"SUB/{_DNS}", f"{_DNS}/read", _zones),
    _r("GET", f"RG/{_DNS}/{{zone}}", f"{_DNS}/read", _zone),
    _r("GET", f"RG/{_DNS}/{{zone}}/virtualNetworkLinks", f"{_DNS}/virtualNetworkLinks/read", _links),
    _r("GET", f"RG/{_DNS}/{{zone}}/ALL", f"{_DNS}/ALL/read", _records(None)),
    _r("GET", f"RG/{_DNS}/{{zone}}/A", f"{_DNS}/A/read", _records("A")),
    _r("GET", f"RG/{_DNS}/{{zone}}/A/{{record}}", f"{_DNS}/A/read", _a_record),
    _r("GET", f"RG/{_DNS}/{{zone}}/CNAME", f"{_DNS}/CNAME/read", _records("CNAME")),
    _r("GET", f"RG/{_DNS}/{{zone}}/TXT", f"{_DNS}/TXT/read", _records("TXT")),
    _r("GET", f"RG/{_PE}", f"{_PE}/read", _list(["network", "private-endpoint"], shape.PRIVATE_ENDPOINT)),
    _r("GET", f"SUB/{_PE}", f"{_PE}/read", _list(["network", "private-endpoint"], shape.PRIVATE_ENDPOINT)),
    _r("GET", f"RG/{_PE}/{{endpoint}}", f"{_PE}/read",
       _show(["network", "private-endpoint"], "endpoint", shape.PRIVATE_ENDPOINT)),
    _r("GET", f"RG/{_GW}", f"{_GW}/read", _list(["network", "vnet-gateway"], shape.GATEWAY, scoped=False)),
    _r("GET", f"RG/{_GW}/{{gateway}}", f"{_GW}/read", _show(["network", "vnet-gateway"], "gateway", shape.GATEWAY)),
    _r("POST", f"RG/{_GW}/{{gateway}}/getLearnedRoutes", f"{_GW}/getLearnedRoutes/action", _learned_routes),
    _r("GET", f"RG/{_LNG}", f"{_LNG}/read", _list(["network", "local-gateway"], shape.LOCAL_GATEWAY, scoped=False)),
    _r("GET", f"RG/{_LNG}/{{gateway}}", f"{_LNG}/read",
       _show(["network", "local-gateway"], "gateway", shape.LOCAL_GATEWAY)),
    _r("GET", f"RG/{_CONN}", f"{_CONN}/read", _list(["network", "vpn-connection"], shape.VPN_CONNECTION, scoped=False)),
    _r("GET", f"RG/{_CONN}/{{connection}}", f"{_CONN}/read",
       _show(["network", "vpn-connection"], "connection", shape.VPN_CONNECTION)),
    _r("GET", f"RG/{_CONN}/{{connection}}/sharedkey", f"{_CONN}/sharedKey/read", _shared_key),
]
