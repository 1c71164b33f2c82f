"""The checks of an appliance hop (a VM a route names as its next hop), in the order a packet meets them.

A route to an appliance delivers only if something holds the address and runs; Azure hands the appliance's
NIC packets addressed to others only when the NIC's IP forwarding is on (otherwise they are dropped before
the guest sees them); the NSGs of the appliance's NIC and subnet filter those packets with their own
addresses (test-ip-flow cannot answer for them: the rules are evaluated here); and the appliance then routes
them on with its own NIC's effective routes, so the walk goes on from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netghost.agent.brains.playbook._facts import RUNNING, ips
from netghost.agent.brains.playbook._hop_firewall import firewall_at
from netghost.agent.brains.playbook._hop_route import route_step
from netghost.agent.brains.playbook._moves import Verdict
from netghost.agent.brains.playbook._nsg_verdict import evaluate_nsgs
from netghost.agent.brains.playbook._path import Fault, Hop, Need, Next, Outcome, Walk
from netghost.agent.brains.playbook._routes import group_of, route_id, subnet_by_id

__all__ = ["appliance_alive", "appliance_forwarding", "appliance_nsgs", "appliance_route"]


def _parts(w: Walk, hop: Hop) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    return w.facts.nic_by_ip(hop.ip), w.facts.vm_by_ip(str(hop.ip))


def _route_text(w: Walk, hop: Hop) -> tuple[str, str]:
    route: Mapping[str, Any] = hop.via.get("route") or {}
    nic: Mapping[str, Any] = hop.via.get("nic") or {}
    rid = route_id(w.facts, nic, route)
    table = rid.split("/routes/")[0].rsplit("/", 1)[-1] if "/routes/" in rid else "the route table"
    return rid, f"route {route.get('name') or '?'} in {table}"


def appliance_alive(w: Walk, hop: Hop) -> Outcome:
    """Something must hold the next hop's address and run: else the route black-holes the traffic."""
    nic, vm = _parts(w, hop)
    if nic is not None and (vm is None or vm.get("power") in (None, RUNNING)):
        return None
    if vm is not None and vm.get("power") in (None, RUNNING):
        return None
    if nic is None and vm is None:  # no NIC: an Azure Firewall's address?
        fw = firewall_at(w, str(hop.ip))
        if isinstance(fw, Need):
            return fw
        if fw is not None:
            return Next((Hop("firewall", str(fw.get("name")), hop.ip, doc=fw, via=hop.via, direction=hop.direction),))
    rid, route = _route_text(w, hop)
    prefix = ", ".join(str(p) for p in (hop.via.get("route") or {}).get("prefixes") or [])
    what = f"{vm['name']}: {vm.get('power')}" if vm else "an address no NIC holds"
    ev = [a for a in (hop.via.get("audit_id"), *[o.audit_id for s in ("vms", "nics") for o in w.facts.of(s) if o.ok])
          if a]
    start = (f"Start the appliance {vm['name']} (`az vm start -g {vm.get('rg')} -n {vm['name']}`), or point "
             if vm else "Point ")
    return Fault(Verdict(
        "route", f"{route} sends {hop.via.get('at')}'s traffic for {prefix or 'the server'} to {hop.ip}, which is "
                 f"{what}. The packets are black-holed at the next hop.", "high",
        faults=[{"resource_id": rid, "fault_type": "udr-dead-appliance"}],
        actions=[start + f"{route} at a healthy appliance (or remove it) until it is back."],
        evidence=list(dict.fromkeys(ev))))


def appliance_forwarding(w: Walk, hop: Hop) -> Outcome:
    """Azure drops packets addressed to others at a NIC whose IP forwarding is off, whatever the guest does."""
    nic, vm = _parts(w, hop)
    if nic is None or nic.get("forwarding") is not False:
        return None
    name = (vm or {}).get("name") or nic.get("name")
    _, route = _route_text(w, hop)
    ev = [a for a in (hop.via.get("audit_id"), *[o.audit_id for o in w.facts.of("nics") if o.ok]) if a]
    return Fault(Verdict(
        "route", f"{route} sends the traffic to {hop.ip}, the appliance {name}, which runs, but its NIC "
                 f"{nic.get('name')} has IP forwarding disabled: Azure drops every packet addressed to another host "
                 "before the appliance sees it.", "high",
        faults=[{"resource_id": str(nic.get("id") or nic.get("name")), "fault_type": "nva-ip-forwarding-off"}],
        actions=[f"Enable IP forwarding on {nic.get('name')} (`az network nic update -g {nic.get('rg') or group_of(str(nic.get('id') or ''))} "
                 f"-n {nic.get('name')} --ip-forwarding true`), and forwarding in the appliance's OS."],
        evidence=list(dict.fromkeys(ev))))


def appliance_nsgs(w: Walk, hop: Hop) -> Outcome:
    """The NSGs of the appliance's NIC and subnet, applied to the packet's own addresses, in and out."""
    nic, vm = _parts(w, hop)
    if nic is None:
        return None
    flow = w.flow
    src, dst = (flow.client_ip, flow.server_ip) if hop.direction == "forward" else (flow.server_ip, flow.client_ip)
    subnet = subnet_by_id(w.facts, str(nic.get("subnet") or "")) or {}
    name = (vm or {}).get("name") or nic.get("name")
    where = f"the appliance {name} ({', '.join(ips(vm) if vm else [str(hop.ip)])})"
    legs = (("Inbound", src, dst), ("Outbound", src, dst))
    return evaluate_nsgs(w, str(nic.get("nsg") or ""), str(subnet.get("nsg") or ""), legs=legs, where=where,
                         evidence=[str(a) for a in (hop.via.get("audit_id"),) if a])


def appliance_route(w: Walk, hop: Hop) -> Outcome:
    """The appliance routes what it forwards with its own NIC's routes: the walk goes on from there."""
    nic, vm = _parts(w, hop)
    if nic is None:
        return None
    dest = w.flow.server_ip if hop.direction == "forward" else w.flow.client_ip
    at = Hop("appliance", str((vm or {}).get("name") or nic.get("name")), hop.ip, direction=hop.direction)
    return route_step(w, at, nic, dest, hop.direction)
