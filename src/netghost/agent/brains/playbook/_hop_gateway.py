"""The hops of a site-to-site path: the site (on-premises clients arriving through a tunnel), the VPN gateway a
route sends traffic to, and the gateway's own subnet.

A packet crosses a tunnel only while the connection to the site that declares its range is Connected, and a
tunnel's IPsec overhead lowers the path MTU (a suspect for large transfers that only the packets confirm).
The gateway sits in the VNet's GatewaySubnet, where Azure does not support an NSG (what it filters is the
traffic the gateway passes, both ways) and where a user route steers what the gateway passes into the VNet
(to None, or to an appliance): both are checked for the packet's own addresses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._facts import RUNNING, in_prefix
from netghost.agent.brains.playbook._hop_route import route_step
from netghost.agent.brains.playbook._moves import Verdict, shell_call
from netghost.agent.brains.playbook._nsg_verdict import evaluate_nsgs
from netghost.agent.brains.playbook._path import Fault, Hop, Next, Outcome, Suspect, Walk
from netghost.agent.brains.playbook._routes import choose, group_of, read_routes, vnet_by_id
from netghost.agent.brains.playbook._sites import connection_to, evidence_of, listed, sites_of, tunnel_down

__all__ = ["gateway_subnet_nsg", "gateway_subnet_route", "site_tunnel", "tunnel_up"]


def _gateway_subnet(w: Walk, conn: Mapping[str, Any]) -> tuple[dict[str, Any] | None, Outcome]:
    """The GatewaySubnet of the gateway a connection belongs to (its subnet id, read from the gateway list)."""
    gid = str(conn.get("gateway") or "")
    g = group_of(gid)
    if not g:
        return None, None
    need = w.need("where the gateway sits", shell_call(r.vnet_gateways(g), f"Which subnet holds the gateway "
                                                                          f"{gid.rsplit('/', 1)[-1]}?"))
    if need is not None:
        return None, need
    gw = next((x for x in listed(w, "gateways", [g]) if str(x.get("id") or "").lower() == gid.lower()), None)
    subnet_id = str((gw or {}).get("subnet") or "")
    net = vnet_by_id(w.facts, subnet_id) if subnet_id else None
    subnet = next((dict(s) for s in (net or {}).get("subnets") or []
                   if str(s.get("name", "")).lower() == subnet_id.rsplit("/", 1)[-1].lower()), None)
    if subnet is None or net is None:
        return None, None
    return {**subnet, "id": subnet_id, "vnet": net.get("name"), "gateway": gw}, None


def _tunnel(w: Walk, hop: Hop, nic: Mapping[str, Any], address: str) -> tuple[Outcome, Mapping[str, Any] | None]:
    """The tunnel to the site declaring ``address``: its verdict when down, else (None, the connection)."""
    sites, pending = sites_of(w, hop, nic)
    if sites is None:
        return pending, None
    site = next((s for s in sites if any(in_prefix(address, p) for p in s.get("prefixes") or [])), None)
    if site is None:
        return None, None
    conn, pending = connection_to(w, site)
    if pending is not None:
        return pending, None
    if conn is not None and conn.get("status") != "Connected":
        return tunnel_down(w, hop, site, conn), None
    return None, conn


def _mtu_suspect(w: Walk, hop: Hop, conn: Mapping[str, Any]) -> Suspect:
    return Suspect(hop, "vpn-mtu-mss", str(conn.get("id") or conn.get("name")),
                   f"the site-to-site tunnel {conn.get('name')} (IPsec overhead lowers the path MTU)",
                   tuple(evidence_of(w, hop, "vpn_connections")))


def tunnel_up(w: Walk, hop: Hop) -> Outcome:
    """A route to the gateway: the tunnel to the site declaring the address must be up, and the gateway's subnet
    must pass the traffic; the tunnel's MTU stays a suspect."""
    out, conn = _tunnel(w, hop, hop.via.get("nic") or {}, str(hop.ip))
    if out is not None or conn is None:
        return out
    w.suspects.append(_mtu_suspect(w, hop, conn))
    subnet, pending = _gateway_subnet(w, conn)
    if pending is not None:
        return pending
    if subnet is None:
        return None
    return Next((Hop("gwsubnet", f"{subnet.get('vnet')}/GatewaySubnet", hop.ip, doc=subnet, via=hop.via,
                     direction=hop.direction),))


def site_tunnel(w: Walk, hop: Hop) -> Outcome:
    """On-premises clients: their site's tunnel must be up; the packets then enter through the gateway's subnet."""
    server_nic = hop.doc.get("server_nic") or {}
    out, conn = _tunnel(w, hop, server_nic, w.flow.client_ip)
    if out is not None:
        return out
    if conn is None:
        return None
    w.suspects.append(_mtu_suspect(w, hop, conn))
    subnet, pending = _gateway_subnet(w, conn)
    if pending is not None:
        return pending
    if subnet is None:
        return None
    return Next((Hop("gwsubnet", f"{subnet.get('vnet')}/GatewaySubnet", w.flow.server_ip, doc=subnet,
                     via={"at": f"the gateway {(subnet.get('gateway') or {}).get('name')}"}),))


def _misconfigured(w: Walk, hop: Hop, what: str, fix: str, *steps: str) -> Fault:
    return Fault(Verdict(
        "route", f"{what} on {hop.name}, the gateway's subnet: {w.flow.text()} is dropped where the gateway passes it, "
                 "although the tunnel is up and both ends allow the flow (Azure does not support NSGs on the "
                 "GatewaySubnet, and a user route there steers everything the gateway delivers).", "high",
        faults=[{"resource_id": str(hop.doc.get("id") or hop.name), "fault_type": "gateway-subnet-misconfigured"}],
        actions=[fix], evidence=evidence_of(w, hop, "gateways", *steps)))


def gateway_subnet_nsg(w: Walk, hop: Hop) -> Outcome:
    """An NSG on the GatewaySubnet filters what the gateway passes, requests and replies alike."""
    nsg = str(hop.doc.get("nsg") or "")
    if not nsg:
        return None
    c, s = w.flow.client_ip, w.flow.server_ip
    out = evaluate_nsgs(w, "", nsg, legs=(("Inbound", c, s), ("Outbound", c, s)), where=hop.name)
    if out is None:  # the replies carry the client's ephemeral port: only port-less rules can match them
        out = evaluate_nsgs(w, "", nsg, legs=(("Inbound", s, c), ("Outbound", s, c)), where=hop.name, port=None)
    if not isinstance(out, Fault):
        return out
    rule = out.verdict.faults[0]["resource_id"].rsplit("/", 1)[-1] if out.verdict.faults else "a rule"
    return _misconfigured(w, hop, f"The NSG {nsg.rsplit('/', 1)[-1]} (rule {rule}) sits",
                          f"Remove NSG {nsg.rsplit('/', 1)[-1]} from {hop.name} (`az network vnet subnet update --ids "
                          f"{hop.doc.get('id')} --network-security-group \"\"`): the gateway's subnet takes no NSG.",
                          "nsg_rules")


def gateway_subnet_route(w: Walk, hop: Hop) -> Outcome:
    """What the gateway delivers into the VNet follows the GatewaySubnet's routes: a user route to None there
    drops it, a user route to an appliance sends it through that appliance."""
    if w.facts.vnet_of(str(hop.ip)) is None:  # towards the site: the tunnel carries it
        return None
    pseudo = {"subnet": hop.doc.get("id"), "scale_set": True, "name": hop.name}
    routes, calls, obs = read_routes(w.facts, pseudo, f"Which routes does {hop.name} apply to what the gateway "
                                                      "delivers?")
    if routes is None:
        return w.need(f"the routes of {hop.name}", *calls)
    route = choose(routes, str(hop.ip)) or {}
    if route.get("source") == "User" and route.get("type") == "None":
        table = str(hop.doc.get("routeTable") or "")
        return _misconfigured(w, hop, f"Route {route.get('name')} of {table.rsplit('/', 1)[-1]} sends "
                                      f"{', '.join(route.get('prefixes') or [])} to None",
                              f"Remove route {route.get('name')} from {table.rsplit('/', 1)[-1]}, or the route table "
                              f"from {hop.name}.", "route_table")
    dead = _dead_next_hop(w, route)
    if dead is not None:
        table = str(hop.doc.get("routeTable") or "")
        return _misconfigured(w, hop, f"Route {route.get('name')} of {table.rsplit('/', 1)[-1]} sends "
                                      f"{', '.join(route.get('prefixes') or [])} to {dead}",
                              f"Remove route {route.get('name')} from {table.rsplit('/', 1)[-1]} (or the route table "
                              f"from {hop.name}), or start the appliance it names.", "route_table", "vms")
    w.cite(obs)
    return route_step(w, hop, pseudo, str(hop.ip), hop.direction)


def _dead_next_hop(w: Walk, route: Mapping[str, Any]) -> str | None:
    """A user route on the GatewaySubnet to an appliance that nothing running holds: what it points at."""
    if route.get("source") != "User" or route.get("type") != "VirtualAppliance" or not route.get("ips"):
        return None
    ip = str(route["ips"][0])
    vm = w.facts.vm_by_ip(ip)
    if vm is not None and vm.get("power") in (None, RUNNING):
        return None
    if vm is None and w.facts.nic_by_ip(ip) is not None:
        return None
    if vm is None and any(ip in [str(x) for x in fw.get("ips") or []] for fw in w.facts.listing("firewalls")):
        return None
    return f"{ip}, {vm['name'] + ' (' + str(vm.get('power')) + ')' if vm else 'an address no NIC holds'}"
