"""The site-to-site path as the walk reads it: the sites (local network gateways) that serve a VNet, the
connection to a site, and the verdict of a tunnel that is down.

The gateways serving a VNet live in its own resource group or in the groups of the VNets it peers with (a hub),
so their local network gateways (SAFE reads) are listed there; the connection list is RISKY (its documents carry
the shared key), so it is read only for the one site that matters.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._moves import Verdict, shell_call
from netghost.agent.brains.playbook._path import Fault, Hop, Outcome, Walk
from netghost.agent.brains.playbook._routes import group_of, vnet_by_id

__all__ = ["closest_site", "connection_to", "evidence_of", "listed", "site_groups", "sites_of", "tunnel_down"]


def evidence_of(w: Walk, hop: Hop, *steps: str) -> list[str]:
    ids = [hop.via.get("audit_id")] + [o.audit_id for s in steps for o in w.facts.of(s) if o.ok]
    return [str(a) for a in dict.fromkeys(ids) if a]


def site_groups(w: Walk, nic: Mapping[str, Any]) -> list[str]:
    """Where gateways serving the NIC's VNet live: its own group and the groups of the VNets it peers with."""
    net = vnet_by_id(w.facts, str(nic.get("subnet") or "")) or {}
    groups = [str(net.get("rg") or "")] + [group_of(str(p.get("remote") or "")) for p in net.get("peerings") or []
                                           if isinstance(p, dict)]
    return [g for i, g in enumerate(groups) if g and g.lower() not in (x.lower() for x in groups[:i])]


def listed(w: Walk, step: str, groups: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for g in groups:
        o = w.facts.latest(step, g=g)
        doc = o.json() if o is not None and o.ok else None
        out += [x for x in doc or [] if isinstance(x, dict)] if isinstance(doc, list) else []
    return out


def sites_of(w: Walk, hop: Hop, nic: Mapping[str, Any]) -> tuple[list[dict[str, Any]] | None, Outcome]:
    """The local network gateways of the groups serving ``nic``'s VNet (None while the reads are pending)."""
    groups = site_groups(w, nic)
    need = w.need(f"the on-premises sites reachable from {hop.via.get('at')}", *[
        shell_call(r.local_gateways(g), f"Which on-premises ranges do group {g}'s local network gateways declare?")
        for g in groups])
    if need is not None:
        return None, need
    return listed(w, "local_gateways", groups), None


def connection_to(w: Walk, site: Mapping[str, Any]) -> tuple[dict[str, Any] | None, Outcome]:
    """The site-to-site connection to ``site`` (RISKY read of its group's connections)."""
    g = group_of(str(site.get("id") or ""))
    need = w.need(f"the state of the tunnel to {site.get('name')}", shell_call(
        r.vpn_connections(g), f"Is the site-to-site connection to {site.get('name')} up? (its documents carry the "
                              "shared key, so this read asks for approval; the key is redacted)"))
    if need is not None:
        return None, need
    conns = listed(w, "vpn_connections", [g])
    sid = str(site.get("id") or "").lower()
    return next((c for c in conns if str(c.get("local") or "").lower() == sid), None), None


def tunnel_down(w: Walk, hop: Hop, site: Mapping[str, Any], conn: Mapping[str, Any]) -> Fault:
    dest = str(hop.ip)
    return Fault(Verdict(
        "route", f"{dest} is on-premises: it is in {site.get('name')}'s ranges ({', '.join(site.get('prefixes') or [])}), "
                 f"reached through the site-to-site connection {conn.get('name')}, which is {conn.get('status')}. With "
                 f"the tunnel down the gateway's routes to the site are gone, so {hop.via.get('at')} has no way to {dest}.",
        "high", faults=[{"resource_id": str(conn.get("id") or conn.get("name")), "fault_type": "vpn-connection-down"}],
        actions=[f"Bring connection {conn.get('name')} back: check the on-premises VPN device (reachable at the local "
                 "gateway's address, same IKE version and pre-shared key), then `az network vpn-connection show -g "
                 f"{group_of(str(conn.get('id') or ''))} -n {conn.get('name')} --query connectionStatus` until it is "
                 "Connected; `az network vnet-gateway list-learned-routes` should then list the site's ranges."],
        evidence=evidence_of(w, hop, "vpn_connections", "local_gateways")))


def closest_site(sites: list[dict[str, Any]], dest: str) -> dict[str, Any] | None:
    """The site whose declared ranges share the longest prefix with ``dest`` (the one missing a range)."""
    def score(site: Mapping[str, Any]) -> int:
        best = 0
        for p in site.get("prefixes") or []:
            try:
                net = ipaddress.ip_network(str(p), strict=False)
                a, b = int(ipaddress.ip_address(dest)), int(net.network_address)
            except ValueError:
                continue
            best = max(best, 32 - (a ^ b).bit_length())
        return best
    return max(sites, key=score, default=None)
