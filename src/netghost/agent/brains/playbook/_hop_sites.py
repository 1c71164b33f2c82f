"""The missing route explained: the checks of a hop where the packet's route is None (or, for a private
address, the Internet).

It is explained by what should have given it one: a peering to the VNet holding the address that is not
Connected on both sides; for an address outside every VNet, the site-to-site path (a local network gateway
that declares the range, its connection Connected, the route table of the subnet letting the gateway's routes
in). The cheap reads come first: the connection list is RISKY (its documents carry the shared key), so it is
asked only when no free read explains the missing route.
"""

from __future__ import annotations

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._facts import in_prefix
from netghost.agent.brains.playbook._moves import Verdict, shell_call
from netghost.agent.brains.playbook._path import Fault, Hop, Outcome, Walk
from netghost.agent.brains.playbook._routes import group_of, subnet_by_id, vnet_by_id
from netghost.agent.brains.playbook._sites import (
    closest_site,
    connection_to,
    evidence_of,
    sites_of,
    tunnel_down,
)

__all__ = ["no_route_peering", "no_route_site", "no_route_unexplained"]


def no_route_peering(w: Walk, hop: Hop) -> Outcome:
    """The address is in another VNet: the peering between the two must exist and be Connected on both sides."""
    f, dest = w.facts, str(hop.ip)
    nic = hop.via.get("nic") or {}
    here, there = vnet_by_id(f, str(nic.get("subnet") or "")), f.vnet_of(dest)
    if here is None or there is None or here.get("id") == there.get("id"):
        return None
    out = next((p for p in here.get("peerings") or [] if isinstance(p, dict)
                and str(p.get("remote") or "").lower() == str(there.get("id") or "").lower()), None)
    back = next((p for p in there.get("peerings") or [] if isinstance(p, dict)
                 and str(p.get("remote") or "").lower() == str(here.get("id") or "").lower()), None)
    broken = next((p for p in (out, back) if p is not None and p.get("state") != "Connected"), None)
    ev = evidence_of(w, hop, "vnets")
    if broken is not None:
        return Fault(Verdict(
            "route", f"There is no route from {hop.via.get('at')} to {dest} (next hop None): the peering "
                     f"{broken.get('name')} between {here.get('name')} and {there.get('name')} is {broken.get('state')}, "
                     "so the remote address space is gone from the effective routes.", "high",
            faults=[{"resource_id": str(broken.get("id") or broken.get("name")), "fault_type": "peering-disconnected"}],
            actions=[f"Re-create the peering between {here.get('name')} and {there.get('name')} on both sides, then "
                     f"delete and re-create {broken.get('name')} (a Disconnected peering does not recover by itself): "
                     f"`az network vnet peering create -g <rg> --vnet-name <vnet> -n <name> --remote-vnet <other> "
                     "--allow-vnet-access`."],
            evidence=ev))
    if out is None and back is None:
        return Fault(Verdict(
            "route", f"There is no route from {hop.via.get('at')} to {dest}: it is in {there.get('name')}, which is not "
                     f"peered with {here.get('name')} (peerings are not transitive: a hub peered with both does not "
                     "carry traffic between them without a route through an appliance).", "medium",
            actions=[f"Peer {here.get('name')} with {there.get('name')}, or route the traffic through the hub's "
                     "appliance with a user route on both sides."], evidence=ev))
    return None


def no_route_site(w: Walk, hop: Hop) -> Outcome:
    """The address is in no VNet: which part of the site-to-site path would carry it, and what is wrong there."""
    f, dest = w.facts, str(hop.ip)
    nic = hop.via.get("nic") or {}
    if f.vnet_of(dest) is not None or not nic:
        return None
    sites, pending = sites_of(w, hop, nic)
    if sites is None:
        return pending
    covering = next((s for s in sites if any(in_prefix(dest, p) for p in s.get("prefixes") or [])), None)
    if covering is None:
        site = closest_site(sites, dest)
        if site is None:
            return None
        conn, pending = connection_to(w, site)
        if pending is not None:
            return pending
        if conn is not None and conn.get("status") != "Connected":
            return tunnel_down(w, hop, site, conn)
        return Fault(Verdict(
            "route", f"{dest} is in none of the ranges the local network gateway {site.get('name')} declares "
                     f"({', '.join(site.get('prefixes') or [])}), although its connection "
                     f"{(conn or {}).get('name', '')} is {(conn or {}).get('status', 'up')}: the gateway has no route "
                     f"to the site for {dest}, so {hop.via.get('at')} has none either (next hop None).", "high",
            faults=[{"resource_id": str(site.get("id") or site.get("name")), "fault_type": "vpn-connection-down"}],
            actions=[f"Add the on-premises range holding {dest} to {site.get('name')} (`az network local-gateway update "
                     f"-g {group_of(str(site.get('id') or ''))} -n {site.get('name')} --local-address-prefixes "
                     f"{' '.join(site.get('prefixes') or [])} <range of {dest}>`), or advertise it over BGP."],
            evidence=evidence_of(w, hop, "local_gateways", "vpn_connections")))
    subnet = subnet_by_id(f, str(nic.get("subnet") or "")) or {}
    table = str(subnet.get("routeTable") or "")
    if table:
        need = w.need("the route table's gateway-route setting", shell_call(
            r.route_table(table), f"Does {table.rsplit('/', 1)[-1]} let the gateway's routes in (BGP propagation)?"))
        if need is not None:
            return need
        o = f.latest("route_table", ids=table)
        doc = o.json() if o is not None and o.ok else None
        if isinstance(doc, dict) and doc.get("disableBgp") is True:
            return Fault(Verdict(
                "route", f"Route table {doc.get('name')} on {hop.via.get('at')}'s subnet has gateway route propagation "
                         f"disabled: the routes the gateway learned for {covering.get('name')} "
                         f"({', '.join(covering.get('prefixes') or [])}) never reach the subnet, so {dest} has no route "
                         "(next hop None) although the tunnel may be up.", "high",
                faults=[{"resource_id": str(doc.get("id") or table), "fault_type": "bgp-propagation-disabled"}],
                actions=[f"Enable gateway route propagation on {doc.get('name')} (`az network route-table update --ids "
                         f"{table} --disable-bgp-route-propagation false`), or add a user route for "
                         f"{', '.join(covering.get('prefixes') or [])} to the VirtualNetworkGateway."],
                evidence=evidence_of(w, hop, "route_table", "local_gateways")))
    conn, pending = connection_to(w, covering)
    if pending is not None:
        return pending
    if conn is not None and conn.get("status") != "Connected":
        return tunnel_down(w, hop, covering, conn)
    return None


def no_route_unexplained(w: Walk, hop: Hop) -> Outcome:
    """Nothing explains the missing route: say so, with the address checked against every address space."""
    dest = str(hop.ip)
    at = hop.via.get("at")
    route = hop.via.get("route") or {}
    named = f" (route {route.get('name')}, {route.get('source')})" if route.get("name") else ""
    return Fault(Verdict(
        "route", f"There is no usable route from {at} to {dest} (next hop {route.get('type') or 'None'}{named}), and "
                 "no peering or site-to-site connection explains it: the address is outside every reachable address "
                 "space.", "medium",
        actions=[f"Check that {dest} is the right address, and that a peering or a gateway route should carry it from "
                 f"{at}'s VNet."], evidence=evidence_of(w, hop, "vnets")))
