"""Routing as the walk needs it: a NIC's effective routes, the one a packet takes, and where it leads.

Azure picks a packet's route by longest prefix, and between routes of the same prefix a user route beats a
gateway (BGP) route, which beats a system route; the effective route table of a NIC lists them all (the
query keeps the active ones), so the walk makes the choice itself at every hop that forwards: the client's
NIC, an appliance's NIC, the server's NIC for the reply. Where Azure cannot list a NIC's effective routes (a
scale-set instance's NIC is no ``az network nic``), the routes are rebuilt from what the inventory shows: the
VNet's space, its Connected peerings, and the user routes of the subnet's route table.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from typing import Any

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._facts import Facts, Observation
from netghost.agent.brains.playbook._moves import shell_call

__all__ = ["choose", "group_of", "read_routes", "route_id", "subnet_by_id", "vnet_by_id"]

_SOURCE_RANK = {"User": 3, "VirtualNetworkGateway": 2, "Default": 1}


def _as_list(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    return [str(value)] if value else []


def choose(routes: Sequence[Mapping[str, Any]], ip: str) -> Mapping[str, Any] | None:
    """The route a packet for ``ip`` takes: longest prefix, then User over gateway over Default."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return None
    best: tuple[int, int] | None = None
    chosen: Mapping[str, Any] | None = None
    for route in routes:
        for prefix in _as_list(route.get("prefixes")):
            try:
                net = ipaddress.ip_network(prefix, strict=False)
            except ValueError:
                continue
            if address.version == net.version and address in net:
                rank = (net.prefixlen, _SOURCE_RANK.get(str(route.get("source")), 0))
                if best is None or rank > best:
                    best, chosen = rank, route
    return chosen


def group_of(resource_id: str) -> str:
    """The resource group an ARM id names ('' for anything else)."""
    m = re.search(r"/resourceGroups/([^/]+)/", resource_id, re.I)
    return m.group(1) if m else ""


def vnet_by_id(f: Facts, resource_id: str) -> dict[str, Any] | None:
    """The VNet (as ``vnet list`` read it) an id names: the VNet's own id or one of its subnets'."""
    low = resource_id.lower()
    return next((n for n in f.vnets() if n.get("id") and (low == str(n["id"]).lower()
                                                         or low.startswith(str(n["id"]).lower() + "/"))), None)


def subnet_by_id(f: Facts, subnet_id: str) -> dict[str, Any] | None:
    """The subnet (name, prefix, NSG, route table) a subnet id names."""
    net = vnet_by_id(f, subnet_id)
    name = subnet_id.rstrip("/").rsplit("/", 1)[-1].lower()
    return next((dict(s) for s in (net or {}).get("subnets") or [] if str(s.get("name", "")).lower() == name), None)


def route_id(f: Facts, nic: Mapping[str, Any], route: Mapping[str, Any]) -> str:
    """A user route's ARM id: the route table of the NIC's subnet and the route's name."""
    table = str((subnet_by_id(f, str(nic.get("subnet") or "")) or {}).get("routeTable") or "")
    name = str(route.get("name") or "")
    if table and name:
        return f"{table}/routes/{name}"
    return table or name or "System Route"


def _rebuilt(f: Facts, nic: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """Effective routes rebuilt from the inventory (see the module docstring), or None when the subnet's
    route table was not read yet."""
    subnet_id = str(nic.get("subnet") or "")
    net, subnet = vnet_by_id(f, subnet_id), subnet_by_id(f, subnet_id)
    if net is None or subnet is None:
        return []
    routes: list[dict[str, Any]] = [{"prefixes": net.get("prefixes") or [], "type": "VnetLocal", "source": "Default"}]
    for p in net.get("peerings") or []:
        if isinstance(p, dict) and p.get("state") == "Connected":
            routes.append({"prefixes": p.get("remotePrefixes") or [], "type": "VNetPeering", "source": "Default"})
    routes += [{"prefixes": ["0.0.0.0/0"], "type": "Internet", "source": "Default"}]
    routes += [{"prefixes": [p], "type": "None", "source": "Default"}
               for p in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")]
    table = str(subnet.get("routeTable") or "")
    if table:
        o = f.latest("route_table", ids=table)
        doc = o.json() if o is not None and o.ok else None
        if o is None:
            return None
        for x in (doc or {}).get("routes") or [] if isinstance(doc, dict) else []:
            if isinstance(x, dict):
                routes.append({"prefixes": [x.get("prefix")], "type": x.get("type"), "ips": _as_list(x.get("ip")),
                               "source": "User", "name": x.get("name")})
    return routes


def read_routes(f: Facts, nic: Mapping[str, Any], why: str) -> tuple[list[dict[str, Any]] | None,
                                                                      list[Any], Observation | None]:
    """A NIC's effective routes: (routes, calls still needed, the observation they came from).

    ``routes`` is None while a read is pending; a NIC Azure cannot answer for (a scale-set instance's, or a
    read that failed) gets routes rebuilt from the inventory, with the route table read if needed.
    """
    scale_set = bool(nic.get("scale_set"))
    if not scale_set:
        call = shell_call(r.effective_routes(str(nic.get("rg") or ""), str(nic.get("name") or "")), why)
        o = f.latest("eff_routes", n=str(nic.get("name") or ""))
        if o is None:
            return None, [call], None
        doc = o.json() if o.ok else None
        if isinstance(doc, list):
            return [x for x in doc if isinstance(x, dict)], [], o
    table = str((subnet_by_id(f, str(nic.get("subnet") or "")) or {}).get("routeTable") or "")
    rebuilt = _rebuilt(f, nic)
    if rebuilt is None:
        return None, [shell_call(r.route_table(table), why)], None
    return rebuilt, [], f.latest("route_table", ids=table) if table else None
