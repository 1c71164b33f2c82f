"""The checks of an Azure Firewall hop: a route's next hop that no NIC holds, because it is a firewall's.

A firewall has no NIC to read: what it does to the packet is its rules (its own classic collections, or its
policy's rule collection groups), evaluated for the packet's addresses, port and name in Azure's documented
order (:mod:`._firewall_eval`). A deny is the fault, named at the deciding rule collection group (policy),
collection (classic) or, when no rule matched, the policy or firewall whose default deny it is. An allow by
an application rule translates the source: the walk goes on with the firewall's address as the source the
server's NSG sees (a rule that admits only the client's range then drops the flow).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._firewall_eval import firewall_verdict
from netghost.agent.brains.playbook._hop_route import onward_in_vnet
from netghost.agent.brains.playbook._moves import Verdict, shell_call
from netghost.agent.brains.playbook._path import Fault, Hop, Need, Outcome, Walk
from netghost.agent.brains.playbook._routes import group_of

__all__ = ["firewall_at", "firewall_route", "firewall_rules"]


def _firewalls(w: Walk) -> list[dict[str, Any]]:
    return w.facts.listing("firewalls")


def firewall_at(w: Walk, ip: str) -> Need | dict[str, Any] | None:
    """The Azure Firewall holding ``ip`` (reads the firewall list first), or None."""
    need = w.need("what holds the next hop's address", shell_call(
        r.firewall_list(), f"No NIC holds {ip}: is it an Azure Firewall's address, and what do its rules allow?"))
    if need is not None:
        return need
    return next((fw for fw in _firewalls(w) if ip in [str(x) for x in fw.get("ips") or []]), None)


def _groups(w: Walk, fw: Mapping[str, Any]) -> tuple[list[dict[str, Any]], Need | None, str | None]:
    """The policy's rule collection groups (empty for classic rules), a read still needed, and its audit id."""
    policy = str(fw.get("policy") or "")
    if not policy:
        return [], None, None
    rg, name = group_of(policy), policy.rsplit("/", 1)[-1]
    need = w.need(f"the rules of policy {name}", shell_call(
        r.firewall_policy_groups(rg, name), f"The rules of {fw.get('name')}'s policy {name}: does it pass "
                                            f"{w.flow.text()}?"))
    if need is not None:
        return [], need, None
    o = w.facts.latest("fw_groups", policy_name=name)
    doc = o.json() if o is not None and o.ok else None
    groups = [g for g in doc if isinstance(g, dict)] if isinstance(doc, list) else []
    return groups, None, o.audit_id if o is not None else None


def _fqdn(w: Walk) -> str | None:
    s = w.facts.symptom
    return s.server if s.server_is_name and s.server else None


def firewall_rules(w: Walk, hop: Hop) -> Outcome:
    """The firewall's rules applied to the request (replies of an allowed flow pass: the firewall keeps state)."""
    if hop.direction != "forward":
        return None
    fw = hop.doc
    groups, need, groups_id = _groups(w, fw)
    if need is not None:
        return need
    flow = w.flow
    verdict = firewall_verdict(fw, groups, protocol=flow.protocol, src=flow.client_ip, dst=flow.server_ip,
                               port=flow.port, fqdn=_fqdn(w))
    lists = next((o for o in reversed(w.facts.of("firewalls")) if o.ok), None)
    evidence = [a for a in (lists.audit_id if lists else None, groups_id, hop.via.get("audit_id")) if a]
    if verdict.action == "Allow":
        w.evidence.extend(a for a in evidence if a not in w.evidence)
        if verdict.snat:
            w.translated_source = str(hop.ip)
        return None
    name, policy = str(fw.get("name")), str(fw.get("policy") or "")
    if verdict.kind == "default":
        rid = policy or str(fw.get("id") or name)
        where = (f"no rule of {'policy ' + policy.rsplit('/', 1)[-1] if policy else 'its rule collections'} matches, so "
                 "its default deny drops it")
        fix = (f"Add an allow rule for {flow.client_ip} -> {flow.server_ip}:{flow.port or '*'} ({flow.protocol}) to "
               f"{'policy ' + policy.rsplit('/', 1)[-1] if policy else name}'s network rules.")
    else:
        rid = verdict.group_id or verdict.collection_id or str(fw.get("id") or name)
        group = f" in rule collection group {verdict.group}" if verdict.group else ""
        where = (f"the {verdict.kind} rule {verdict.rule} of the Deny collection {verdict.collection}{group} matches "
                 "it first (network rules before application rules; groups, then collections, by priority)")
        fix = (f"Narrow rule {verdict.rule} of collection {verdict.collection}{group}, or allow the flow in a collection "
               "processed before it (a lower priority number).")
    return Fault(Verdict(
        "route", f"Route {(hop.via.get('route') or {}).get('name') or '?'} sends {flow.text()} to {hop.ip}, the Azure "
                 f"Firewall {name}, and {where}.", "high",
        faults=[{"resource_id": rid, "fault_type": "firewall-deny"}], actions=[fix], evidence=evidence))


def firewall_route(w: Walk, hop: Hop) -> Outcome:
    """Past the firewall, its VNet's routes carry the packet on (to the server, or back to the client)."""
    dest = w.flow.server_ip if hop.direction == "forward" else w.flow.client_ip
    via = {**hop.via, "at": f"the firewall {hop.doc.get('name')}"}
    return onward_in_vnet(w, hop, dest, via)
