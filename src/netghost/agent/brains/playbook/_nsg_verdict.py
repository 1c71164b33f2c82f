"""NSG verdicts at a hop, and the verdict that names the rule at fault.

Two ways to know what an NSG does to a packet: Network Watcher's test-ip-flow (the platform's own verdict,
for packets to or from the VM's own address: the two ends), and the rules themselves evaluated with the
packet's addresses (for a hop that forwards packets addressed to others, an appliance, or a NIC Network
Watcher cannot name, a scale-set instance's). Either way the fault is the deciding rule, and its resource id
needs the NSG that holds it: test-ip-flow names the rule only, so the NIC's effective NSGs say which NSG
(its own or its subnet's) carries a rule of that name.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._facts import Observation
from netghost.agent.brains.playbook._moves import Verdict, merge, shell_call
from netghost.agent.brains.playbook._nsg_eval import deciding_rule
from netghost.agent.brains.playbook._path import Fault, Need, Outcome, Walk
from netghost.agent.brains.playbook._routes import group_of, subnet_by_id

__all__ = ["evaluate_nsgs", "flow_verdict"]


def _fix(flow_text: str, *, nsg: str, rg: str, rule: str, prio: object, port: int | None) -> str:
    return (f"Change rule {rule} in NSG {nsg} (resource group {rg}) so it no longer matches {flow_text}: narrow its "
            f"source or ports, or give an allow rule for port {port or '*'} a lower priority number than {prio} "
            f"(`az network nsg rule update -g {rg} --nsg-name {nsg} -n {rule} ...`); then re-run test-ip-flow.")


def _holders(obs: Observation | None) -> list[dict[str, Any]]:
    """The NSGs among a NIC's effective ones that hold a rule of the name asked."""
    doc = obs.json() if obs is not None and obs.ok else None
    return [g for g in doc if isinstance(g, dict) and g.get("rules")] if isinstance(doc, list) else []


def _owner(w: Walk, holders: list[dict[str, Any]], rule: str, direction: str) -> Outcome | dict[str, Any] | None:
    """The NSG whose rule ``rule`` denies the packet. Templates repeat rule names across NSGs, so when the NIC's
    and the subnet's both hold one, their rules are read and evaluated for the packet: the one where that
    rule decides Deny is the owner (Azure's order breaks a tie: in, the subnet's first; out, the NIC's)."""
    if len(holders) < 2:
        return holders[0] if holders else None
    first = "subnet" if direction == "Inbound" else "nic"
    holders = sorted(holders, key=lambda g: 0 if g.get(first) else 1)
    need = w.need(f"which NSG's {rule} decides", *[shell_call(r.nsg_rules(str(g.get("nsg"))), (
        f"Both {str(holders[0].get('nsg')).rsplit('/', 1)[-1]} and {str(holders[1].get('nsg')).rsplit('/', 1)[-1]} "
        f"hold a rule {rule}: which one denies this packet?")) for g in holders])
    if need is not None:
        return need
    src, dst = (w.seen_source if direction == "Inbound" else w.flow.client_ip), w.flow.server_ip
    for g in holders:
        o = w.facts.latest("nsg_rules", ids=str(g.get("nsg")))
        doc = o.json() if o is not None and o.ok else None
        rules = [x for x in (doc or {}).get("rules") or [] if isinstance(x, dict)] if isinstance(doc, dict) else []
        decided = deciding_rule(rules, direction, protocol="Tcp", src=src, dst=dst, port=w.flow.port)
        if decided is not None and str(decided.get("name")) == rule and decided.get("access") == "Deny":
            return g
    return holders[0]


def flow_verdict(w: Walk, vm: Mapping[str, Any], nic: Mapping[str, Any] | None, *, direction: str, local: str,
                 remote: str) -> Outcome:
    """Network Watcher's verdict on one leg at ``vm``; a Deny becomes the fault at the deciding rule."""
    f = w.facts
    rg, name = str(vm.get("rg") or ""), str(vm.get("name") or "")
    call = shell_call(r.test_ip_flow(rg, name, direction, local, remote),
                      f"Do the NSGs on {name} let the {direction.lower()} leg of {w.flow.text()} through?")
    obs = f.latest("flow", vm=name, direction=direction, remote=remote)
    if obs is None:
        return w.need(f"NSG verdicts at {name}", call)
    doc = obs.json() if obs.ok else None
    if not isinstance(doc, dict) or doc.get("access") != "Deny":
        w.cite(obs)
        return None
    kind, _, rule = str(doc.get("ruleName") or "").partition("/")
    flow_text = w.flow.text()
    if kind == "securityRules" and rule and nic is not None:
        owner_call = shell_call(r.effective_nsg_rule(str(nic.get("rg") or rg), str(nic.get("name") or ""),
                                                     f"securityRules/{rule}"),
                                f"Which NSG on {name} (its NIC's or its subnet's) holds rule {rule}?")
        owner_obs = f.latest("nsg_owner", n=str(nic.get("name") or ""))
        if owner_obs is None:
            need = w.need(f"the NSG holding {rule}", owner_call)
            if need is not None:
                return need
        owner = _owner(w, _holders(owner_obs), rule, direction)
        if isinstance(owner, Need):
            return owner
        holder = owner if isinstance(owner, dict) else {}
        nsg_id = str(holder.get("nsg") or "")
        prio = next((x.get("priority") for x in holder.get("rules") or [] if isinstance(x, dict)), "?")
        nsg_name, nsg_rg = nsg_id.rsplit("/", 1)[-1] or "its NSG", group_of(nsg_id) or "<group>"
        found = Verdict(
            "nsg", f"NSG {nsg_name} rule {rule} (priority {prio}) denies {flow_text}: Network Watcher's "
                   f"{direction.lower()} verdict on {name} names it.", "high",
            faults=[{"resource_id": f"{nsg_id}/securityRules/{rule}" if nsg_id else rule, "fault_type": "nsg-deny"}],
            actions=[_fix(flow_text, nsg=nsg_name, rg=nsg_rg, rule=rule, prio=prio, port=w.flow.port)],
            evidence=[a for a in (obs.audit_id, owner_obs.audit_id if owner_obs else None) if a])
        behind = _behind(w, nic, nsg_id, direction, src=(remote if direction == "Inbound" else local).split(":")[0],
                         dst=(local if direction == "Inbound" else remote).split(":")[0], where=name)
        if isinstance(behind, Need):
            return behind
        return Fault(merge([found, *([behind] if behind is not None else [])]))
    # a default rule: no allow rule matches; the NSG is the NIC's subnet's (else the NIC's own)
    subnet = subnet_by_id(f, str((nic or {}).get("subnet") or "")) or {}
    nsg_id = str(subnet.get("nsg") or (nic or {}).get("nsg") or "")
    name_of_rule = rule or kind
    return Fault(Verdict(
        "nsg", f"No NSG rule allows {flow_text}: the default rule {name_of_rule} denies the {direction.lower()} leg "
               f"on {name}.", "high",
        faults=[{"resource_id": f"{nsg_id}/defaultSecurityRules/{name_of_rule}" if nsg_id else name_of_rule,
                 "fault_type": "nsg-deny"}],
        actions=[f"Add an allow rule for {flow_text} to the NSG on {name}'s subnet "
                 f"({nsg_id.rsplit('/', 1)[-1] or 'its NSG'}) with a priority below 65000."],
        evidence=[obs.audit_id] if obs.audit_id else []))


def _behind(w: Walk, nic: Mapping[str, Any], decided_by: str, direction: str, *, src: str, dst: str,
            where: str) -> Need | Verdict | None:
    """The other NSG on the same leg (the NIC's and the subnet's both filter it): Network Watcher names only the
    first rule that denies, so the second NSG is read and evaluated for the packet; a rule of its own that
    denies too is a second fault, still there once the first is fixed."""
    subnet = subnet_by_id(w.facts, str(nic.get("subnet") or "")) or {}
    other = next((str(x) for x in (nic.get("nsg"), subnet.get("nsg"))
                  if x and str(x).lower() != decided_by.lower()), None)
    if other is None or not decided_by:
        return None
    o = w.facts.latest("nsg_rules", ids=other)
    if o is None:
        return w.need(f"the second NSG on {where}'s {direction.lower()} leg", shell_call(
            r.nsg_rules(other), f"{other.rsplit('/', 1)[-1]} filters the same {direction.lower()} leg on {where}: "
                                "does it deny it too, once the first deny is fixed?"))
    doc = o.json() if o.ok else None
    rules = [x for x in (doc or {}).get("rules") or [] if isinstance(x, dict)] if isinstance(doc, dict) else []
    rule = deciding_rule(rules, direction, protocol="Tcp", src=src, dst=dst, port=w.flow.port)
    if rule is None or rule.get("access") != "Deny":
        w.cite(o)
        return None
    nsg_name, rg, rname = str((doc or {}).get("name") or other.rsplit("/", 1)[-1]), group_of(other) or "<group>", \
        str(rule.get("name"))
    return Verdict(
        "nsg", f"Behind it, NSG {nsg_name} rule {rname} (priority {rule.get('priority')}) denies {w.flow.text()} on "
               f"the same {direction.lower()} leg on {where}: fixing the first rule alone leaves the flow blocked.",
        "high", faults=[{"resource_id": f"{(doc or {}).get('id') or other}/securityRules/{rname}",
                         "fault_type": "nsg-deny"}],
        actions=[_fix(w.flow.text(), nsg=nsg_name, rg=rg, rule=rname, prio=rule.get("priority"), port=w.flow.port)],
        evidence=[a for a in (o.audit_id,) if a])


def _is_private(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_private
    except ValueError:
        return False


_FLOW_PORT = -1


def evaluate_nsgs(w: Walk, nic_nsg: str, subnet_nsg: str, *, legs: Sequence[tuple[str, str, str]], where: str,
                  evidence: Sequence[str] = (), port: int | None = _FLOW_PORT) -> Outcome:
    """Evaluate the rules of a NIC's NSG and its subnet's (read with ``nsg show``) for each leg ``(direction,
    src, dst)`` of the packet, in Azure's order (in: the subnet's, then the NIC's; out: the NIC's first); the
    first Deny is the fault. Packets no custom rule matches fall to the defaults, which allow private traffic
    both ways and deny what comes from the Internet. ``port`` is the packets' destination port (the flow's
    unless given: a reply's is the client's ephemeral port, which only port-less rules match, ``None``)."""
    f = w.facts
    ids = [i for i in dict.fromkeys((subnet_nsg, nic_nsg)) if i]
    calls = [shell_call(r.nsg_rules(i), f"The NSG {i.rsplit('/', 1)[-1]} filters what {where} passes: does it let "
                                       f"{w.flow.text()} through?") for i in ids]
    docs: list[tuple[Observation, dict[str, Any]]] = []
    missing = []
    for nsg_id, call in zip(ids, calls, strict=True):
        o = f.latest("nsg_rules", ids=nsg_id)
        if o is None:
            missing.append(call)
        elif o.ok and isinstance(o.json(), dict):
            docs.append((o, o.json()))
    if missing:
        return w.need(f"the NSGs of {where}", *missing)
    port = w.flow.port if port == _FLOW_PORT else port
    found: list[Verdict] = []  # every NSG that denies a leg: fixing one leaves the others (each is a fault)
    for direction, src, dst in legs:
        ordered = docs if direction == "Inbound" else docs[::-1]
        for obs, doc in ordered:
            rules = [x for x in doc.get("rules") or [] if isinstance(x, dict)]
            rule = deciding_rule(rules, direction, protocol="Tcp", src=src, dst=dst, port=port)
            denied_by_default = rule is None and direction == "Inbound" and not _is_private(src)
            if (rule is None or str(rule.get("access")) != "Deny") and not denied_by_default:
                continue
            nsg_name, rg = str(doc.get("name") or "its NSG"), str(doc.get("rg") or "<group>")
            rname = str(rule.get("name")) if rule else "DenyAllInBound"
            prio = rule.get("priority") if rule else 65500
            kind = "securityRules" if rule else "defaultSecurityRules"
            flow_text = w.flow.text()
            found.append(Verdict(
                "nsg", f"NSG {nsg_name} on {where} denies {flow_text} with rule {rname} (priority {prio}, "
                       f"{direction.lower()}): the packets die at that hop although the NSGs at both ends allow "
                       "them.", "high",
                faults=[{"resource_id": f"{doc.get('id')}/{kind}/{rname}" if doc.get("id") else rname,
                         "fault_type": "nsg-deny"}],
                actions=[f"Allow {flow_text} through NSG {nsg_name} (resource group {rg}): add an allow rule for port "
                         f"{port or '*'} from {src} with a priority number below {prio} (`az network nsg rule create "
                         f"-g {rg} --nsg-name {nsg_name} -n Allow{port or ''}Flow --priority "
                         f"{max(100, int(prio or 200) - 10)} --access Allow --direction {direction} --protocol Tcp "
                         f"--source-address-prefixes {src} --destination-port-ranges {port or '*'}`), or narrow the "
                         "deny rule."],
                evidence=[a for a in (obs.audit_id, *evidence) if a]))
            if rule is None:
                break  # no rule admits it: one default deny per leg says so
    if found:
        return Fault(merge(found))
    for obs, _ in docs:
        w.cite(obs)
    return None

