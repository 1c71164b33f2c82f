"""Where a route leads: the step from a NIC to the next hops, and the checks of a peering hop.

The step reads the NIC's effective routes, picks the packet's route (:func:`~._routes.choose`) and turns its
next-hop type into hops: VnetLocal and VNet peering lead to the destination (through the peering, whose two
sides must both be Connected), VirtualAppliance to an appliance, VirtualNetworkGateway to a gateway (and the
site behind it), None (or the Internet for a private address) to a hop that explains why there is no route.
The reply's way back is walked the same way from the server's NIC towards the client.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from netghost.agent.brains.playbook._facts import in_prefix
from netghost.agent.brains.playbook._moves import Verdict
from netghost.agent.brains.playbook._path import Direction, Fault, Hop, Next, Outcome, Walk
from netghost.agent.brains.playbook._routes import choose, read_routes, vnet_by_id

__all__ = ["dest_hops", "onward_in_vnet", "peering_connected", "route_step"]

_PEERING = ("VNetPeering", "VNetGlobalPeering")


def _private(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_private
    except ValueError:
        return False


def dest_hops(w: Walk, ip: str, via: Mapping[str, Any], direction: Direction) -> tuple[Hop, ...]:
    """What sits at ``ip`` at the end of a route: the server (a VM, a scale-set instance), a private endpoint
    or another private address nobody's NIC holds, an address outside Azure; the client on the way back."""
    f, flow = w.facts, w.flow
    if direction == "return":
        return (Hop("arrival", flow.client_name, ip, via=via, direction="return"),)
    if ip == flow.server_ip and flow.scale_set is not None:
        held = f.nic_by_ip(ip) or {"ips": [ip], "scale_set": True}
        instance = next((i for i in f.instances(flow.scale_set) if i["ip"] == ip), {})
        return (Hop("scale-set", str(flow.scale_set.get("name")), ip, doc=flow.scale_set, via=via),
                Hop("server", f"{flow.scale_set.get('name')} instance {instance.get('instance', '?').rsplit('/', 1)[-1]}",
                    ip, doc={"vm": None, "nic": held, "instance": instance}, via=via))
    nic = f.nic_by_ip(ip)
    if nic is not None:
        vm = f.vm_by_ip(ip) or flow.server
        return (Hop("server", str((vm or {}).get("name") or nic.get("name")), ip, doc={"vm": vm, "nic": nic}, via=via),)
    if _private(ip):
        return (Hop("endpoint", ip, ip, via=via),)
    return (Hop("external", ip, ip, via=via),)


def _local_peering(net: Mapping[str, Any] | None, ip: str) -> Mapping[str, Any] | None:
    for p in (net or {}).get("peerings") or []:
        if isinstance(p, dict) and any(in_prefix(ip, x) for x in p.get("remotePrefixes") or []):
            return p
    return None


def onward_in_vnet(w: Walk, hop: Hop, dest: str, via: Mapping[str, Any]) -> Next:
    """The next hops from a box with no NIC of its own to read (an Azure Firewall): its VNet's system routes,
    local or through the peering that reaches ``dest``."""
    net = w.facts.vnet_of(str(hop.ip))
    if net is not None and any(in_prefix(dest, p) for p in net.get("prefixes") or []):
        return Next(dest_hops(w, dest, via, hop.direction))
    peering = _local_peering(net, dest)
    first = (Hop("peering", str((peering or {}).get("name") or "peering"), dest, doc={"peering": peering or {},
                 "vnet": net or {}}, via=via, direction=hop.direction),) if peering else ()
    return Next((*first, *dest_hops(w, dest, via, hop.direction)))


def route_step(w: Walk, hop: Hop, nic: Mapping[str, Any] | None, dest: str, direction: Direction) -> Outcome:
    """The next hops of a packet for ``dest`` leaving ``nic`` (see the module docstring)."""
    if nic is None:
        return None
    f = w.facts
    why = f"Which route does {hop.name} use towards {dest}?"
    routes, calls, obs = read_routes(f, nic, why)
    if routes is None:
        return w.need(f"the routes of {hop.name}", *calls)
    w.cite(obs)
    route = choose(routes, dest)
    kind = str((route or {}).get("type") or "None")
    via = {"route": dict(route or {}), "nic": dict(nic), "at": hop.name, "audit_id": obs.audit_id if obs else None}
    if kind == "VirtualAppliance" and (route or {}).get("ips"):
        ip = str((route or {})["ips"][0])
        return Next((Hop("appliance", ip, ip, via=via, direction=direction),))
    if kind == "VirtualNetworkGateway":
        return Next((Hop("gateway", f"gateway towards {dest}", dest, via=via, direction=direction),
                     *dest_hops(w, dest, via, direction)))
    if kind in _PEERING:
        net = vnet_by_id(f, str(nic.get("subnet") or ""))
        peering = _local_peering(net, dest)
        first = (Hop("peering", str((peering or {}).get("name") or "peering"), dest, doc={"peering": peering or {},
                     "vnet": net or {}}, via=via, direction=direction),) if peering else ()
        return Next((*first, *dest_hops(w, dest, via, direction)))
    if kind == "VnetLocal" or (kind == "Internet" and not _private(dest)):
        return Next(dest_hops(w, dest, via, direction))
    return Next((Hop("noroute", f"no route from {hop.name} to {dest}", dest, via=via, direction=direction),))


def peering_connected(w: Walk, hop: Hop) -> Outcome:
    """A peering carries traffic only when both its sides are Connected (a side whose remote was deleted shows
    Disconnected; one never answered, Initiated)."""
    f = w.facts
    local, net = hop.doc.get("peering") or {}, hop.doc.get("vnet") or {}
    remote = vnet_by_id(f, str(local.get("remote") or ""))
    back = next((p for p in (remote or {}).get("peerings") or [] if isinstance(p, dict)
                 and str(p.get("remote") or "").lower() == str(net.get("id") or "").lower()), None)
    broken = next((p for p in (local, back) if p is not None and p.get("state") != "Connected"), None)
    if broken is None and (back is not None or remote is None):
        return None
    bad = broken or local
    state = bad.get("state") if broken else "missing its other side"
    vnets = next((o for o in reversed(f.of("vnets")) if o.ok), None)
    return Fault(Verdict(
        "route", f"The peering {bad.get('name')} between {net.get('name')} and {(remote or {}).get('name', 'its remote')} "
                 f"is {state}: {w.flow.text()} crosses it, and a peering carries traffic only when both sides are "
                 "Connected.", "high",
        faults=[{"resource_id": str(bad.get("id") or bad.get("name")), "fault_type": "peering-disconnected"}],
        actions=[f"Re-create the peering between {net.get('name')} and {(remote or {}).get('name', 'the remote VNet')} "
                 "on both sides (a Disconnected peering does not recover by itself): delete "
                 f"{bad.get('name')} and `az network vnet peering create ... --allow-vnet-access` from each side."],
        evidence=[a for a in (vnets.audit_id if vnets else None, hop.via.get("audit_id")) if a]))
