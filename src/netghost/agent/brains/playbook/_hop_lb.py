"""The checks of a load balancer hop: a private address no NIC holds that is a load balancer's frontend.

A frontend passes a flow only through a rule for its port, to a pool with members, of which the probe finds
some healthy; the traffic then goes to the rule's backend port. Azure's configuration does not show the
probe's results (nor what listens on a member), so the probe check reads the configuration and the
complaint together: a probe on another port than the one the rule sends traffic to is the suspect; members
that reset the connection answer, so the probe passes them and the rule's backend port is wrong, while
silence means the balancer found no healthy member and drops everything (the probe fails).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._moves import Verdict, shell_call
from netghost.agent.brains.playbook._path import Fault, Hop, Next, Outcome, Walk

__all__ = ["lb_frontend", "lb_members", "lb_pool", "lb_probe", "lb_rule"]


def _name(rid: object) -> str:
    return str(rid or "").rsplit("/", 1)[-1]


def lb_frontend(w: Walk, hop: Hop) -> Outcome:
    """Is the address a load balancer's frontend? Then the balancer is the next hop."""
    need = w.need("what holds the address", shell_call(
        r.load_balancers(), f"No VM holds {hop.ip}: is it a load balancer's frontend (rules, pool, probe)?"))
    if need is not None:
        return need
    for lb in w.facts.listing("lbs"):
        fe = next((f for f in lb.get("frontends") or [] if isinstance(f, dict) and f.get("ip") == hop.ip), None)
        if fe is not None:
            return Next((Hop("lb", str(lb.get("name")), hop.ip, doc={"lb": lb, "frontend": fe}, via=hop.via,
                             direction=hop.direction),))
    return None


def _rule(w: Walk, hop: Hop) -> Mapping[str, Any] | None:
    fe_id = str((hop.doc.get("frontend") or {}).get("id") or "").lower()
    port = w.flow.port
    return next((x for x in (hop.doc.get("lb") or {}).get("rules") or [] if isinstance(x, dict)
                 and str(x.get("frontend") or "").lower() == fe_id
                 and (port is None or x.get("frontendPort") in (port, 0))), None)


def _evidence(w: Walk, hop: Hop) -> list[str]:
    o = next((x for x in reversed(w.facts.of("lbs")) if x.ok), None)
    return [a for a in (o.audit_id if o else None, hop.via.get("audit_id")) if a]


def lb_rule(w: Walk, hop: Hop) -> Outcome:
    """A frontend forwards only the ports a rule names."""
    if hop.direction != "forward" or _rule(w, hop) is not None:
        return None
    lb = hop.doc.get("lb") or {}
    return Fault(Verdict(
        "route", f"{hop.ip} is the frontend of load balancer {lb.get('name')}, which has no rule for port "
                 f"{w.flow.port}: it drops {w.flow.text()}.", "high",
        faults=[{"resource_id": str(lb.get("id") or lb.get("name")), "fault_type": "lb-rule-port-mismatch"}],
        actions=[f"Add a load-balancing rule for port {w.flow.port} to {lb.get('name')} (`az network lb rule create`)."],
        evidence=_evidence(w, hop)))


def _pool(hop: Hop, rule: Mapping[str, Any]) -> Mapping[str, Any]:
    pid = str(rule.get("pool") or "").lower()
    return next((p for p in (hop.doc.get("lb") or {}).get("pools") or [] if isinstance(p, dict)
                 and str(p.get("id") or "").lower() == pid), {})


def lb_pool(w: Walk, hop: Hop) -> Outcome:
    """A rule's pool must hold members: an empty pool leaves the balancer nowhere to send the flow."""
    rule = _rule(w, hop)
    if hop.direction != "forward" or rule is None:
        return None
    pool = _pool(hop, rule)
    if pool.get("members") or pool.get("addresses") or not pool:
        return None
    lb = hop.doc.get("lb") or {}
    return Fault(Verdict(
        "route", f"Rule {rule.get('name')} of load balancer {lb.get('name')} sends {w.flow.text()} to the backend pool "
                 f"{pool.get('name')}, which has no members: the balancer drops every connection, however healthy the "
                 "servers are.", "high",
        faults=[{"resource_id": str(pool.get("id") or pool.get("name")), "fault_type": "lb-backend-pool-empty"}],
        actions=[f"Add the servers' NICs to {pool.get('name')} (`az network nic ip-config address-pool add "
                 f"--lb-name {lb.get('name')} --address-pool {pool.get('name')} ...`)."],
        evidence=_evidence(w, hop)))


def lb_probe(w: Walk, hop: Hop) -> Outcome:
    """The probe must test the port the rule sends traffic to (see the module docstring)."""
    rule = _rule(w, hop)
    if hop.direction != "forward" or rule is None:
        return None
    lb = hop.doc.get("lb") or {}
    probe = next((p for p in lb.get("probes") or [] if isinstance(p, dict)
                  and str(p.get("id") or "").lower() == str(rule.get("probe") or "").lower()), None)
    backend, front = rule.get("backendPort"), rule.get("frontendPort")
    if probe is None or probe.get("port") in (backend, None):
        return None
    answered = w.facts.symptom.kind in ("refused", "reset")
    if answered or probe.get("port") == front:
        return Fault(Verdict(
            "route", f"Rule {rule.get('name')} of load balancer {lb.get('name')} forwards frontend port {front} to "
                     f"backend port {backend}, while its probe {probe.get('name')} checks port {probe.get('port')}: the "
                     f"members pass the probe on {probe.get('port')} and get the connections on {backend}, where "
                     "the service does not listen" + (" (the complaint's reset is theirs)." if answered else "."),
            "medium",
            faults=[{"resource_id": str(rule.get("id") or rule.get("name")), "fault_type": "lb-rule-port-mismatch"}],
            actions=[f"Set rule {rule.get('name')}'s backend port to the port the service listens on "
                     f"(`az network lb rule update -g {lb.get('rg')} --lb-name {lb.get('name')} -n {rule.get('name')} "
                     f"--backend-port {probe.get('port')}`), or move the service."],
            evidence=_evidence(w, hop)))
    return Fault(Verdict(
        "route", f"Probe {probe.get('name')} of load balancer {lb.get('name')} checks port {probe.get('port')}"
                 f"{' ' + str(probe.get('path')) if probe.get('path') else ''}, not port {backend} where rule "
                 f"{rule.get('name')} sends the traffic: the members fail it, the balancer finds no healthy member "
                 f"and silently drops {w.flow.text()}.", "medium",
        faults=[{"resource_id": str(probe.get("id") or probe.get("name")), "fault_type": "lb-health-probe-failing"}],
        actions=[f"Point probe {probe.get('name')} at the port the service answers on (`az network lb probe update "
                 f"-g {lb.get('rg')} --lb-name {lb.get('name')} -n {probe.get('name')} --port {backend}`)."],
        evidence=_evidence(w, hop)))


def lb_members(w: Walk, hop: Hop) -> Outcome:
    """Past the balancer, the flow goes to a pool member: the walk goes on at the first one a NIC holds."""
    rule = _rule(w, hop)
    if hop.direction != "forward" or rule is None:
        return None
    members = [str(m).lower().split("/ipconfigurations/")[0] for m in _pool(hop, rule).get("members") or []]
    nic = next((n for n in w.facts.nics() if str(n.get("id") or "").lower() in members), None)
    if nic is None:
        return None
    ip = str((nic.get("ips") or [""])[0])
    vm = w.facts.vm_by_ip(ip)
    return Next((Hop("server", str((vm or {}).get("name") or nic.get("name")), ip, doc={"vm": vm, "nic": nic},
                     via=hop.via),))


