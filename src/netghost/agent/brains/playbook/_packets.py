"""What the packets say, read against the walked path: the verdict of a capture, and the disagreement finding.

The capture's executive summary names the trouble on the wire (SYNs unanswered, a reset nobody sent, large
segments lost, loss); the walked path says where it can come from: the appliance the route crosses, the
tunnel to a site, the box only one direction crosses, the server's port. And because the walk found the
control plane clean (or only suspect) before a capture was taken, any trouble the packets show is a
disagreement between the two: the configuration says the flow passes, the wire says it does not. That is a
finding of its own (:class:`~._moves.Conflict`): both sides' audit ids, and which side is trusted and why
(the capture is what happened on the wire at that point; the configuration is what Azure was told, and it
does not model a guest firewall, an appliance's own software, a tunnel's MTU or a platform fault).
"""

from __future__ import annotations

import json
import re
from typing import Any

from netghost.agent.brains.playbook._facts import Facts, Observation, ips
from netghost.agent.brains.playbook._moves import Conflict, Verdict
from netghost.agent.brains.playbook._path import Suspect, Walk

__all__ = ["as_summary", "from_summary"]

_SEVERITY = re.compile(r"\s*\(severity [^()]*\)\.?$")  # the summary's own rating, not part of the finding
_UNINFORMATIVE = re.compile(r"share no packet|not the same path|not the same time", re.I)
_KNOWN = re.compile(r"answered by rst|nothing listening|refused|pmtu|black hole|injected|middlebox|retransmission|"
                    r"\bloss\b|no answer|silently dropped", re.I)
_SPECIFIC = re.compile(r"answered by rst|nothing listening|refused|pmtu|black hole|injected|middlebox", re.I)
"""Findings that name a cause, not a symptom (loss, packets generated between two points)."""
_POINT = re.compile(r"^- Point [AB] `[^`]*`: (.+)$", re.M)
_ON_ITS_OWN = re.compile(r"^## What each point shows on its own\n(.*?)(?=^## |\Z)", re.M | re.S)
_FLEET = re.compile(r"^## Fleet: every instance compared\n(.*?)(?=^## |\Z)", re.M | re.S)
_MOST_TROUBLE = re.compile(r"^- Most trouble: (?P<capture>\S+) \(score [^)]*\): (?P<title>.+?)\.?$", re.M)
TRUST = ("the packet capture: it is what happened on the wire at the capture point, while the control plane is "
         "configuration, which does not model a guest firewall, an appliance's own software, a tunnel's MTU or a "
         "platform fault")


def as_summary(text: str) -> str:
    """A semantic JSON read instead of the summary, rendered as the summary's headline and findings."""
    if not text.lstrip().startswith("{"):
        return text
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return text
    findings = [x for x in doc.get("findings") or [] if isinstance(x, dict)] if isinstance(doc, dict) else []
    if not findings:
        return "**No network fault detected**"
    lines = [f"**Most likely issue:** {findings[0].get('title', '')}"]
    lines += [f"- [F{i}] **{str(x.get('severity', '')).upper()}** {x.get('title', '')}" for i, x in enumerate(findings, 1)]
    return "\n".join(lines)


def _point_lines(text: str) -> list[str]:
    """The compare summary's per-point verdicts (its section for captures that share no packet)."""
    section = _ON_ITS_OWN.search(text)
    return _POINT.findall(section.group(1)) if section else []


def _headline(text: str) -> str:
    """The summary's most likely issue, unless a high-severity finding names a specific cause (a PMTU black
    hole, injected resets, a refusing server) that a generic headline (packets lost or generated between
    two points) is only the symptom of; when the headline says only that two captures did not line up, the
    first finding, or what one point shows on its own, that names a known kind of trouble, else nothing."""
    m = re.search(r"\*\*Most likely issue:\*\*\s*(.+)", text)
    head = _SEVERITY.sub("", m.group(1).strip()) if m else ""
    if not _SPECIFIC.search(head):
        high = re.findall(r"^- \[F\d+\] \*\*HIGH\*\* (.+)$", text, re.M)
        cause = next((x for x in high if _SPECIFIC.search(x)), None)
        if cause is not None:
            return str(cause)
    if head and not _UNINFORMATIVE.search(head):
        return head
    findings = re.findall(r"^- \[F\d+\] \*\*\w+\*\* (.+)$", text, re.M)
    findings += [re.sub(r"^\*\*\w+\*\* ", "", x) for x in _point_lines(text)]
    known = next((x for x in findings if _KNOWN.search(x) and not _UNINFORMATIVE.search(x)), None)
    if known is not None:
        return str(known)
    return "" if _points_clean(text) else head


def _points_clean(text: str) -> bool:
    """Both capture points, read on their own, show no network fault."""
    points = _point_lines(text)
    return len(points) >= 2 and all("no network fault detected" in p.lower() for p in points)


def _fleet_trouble(f: Facts, text: str) -> tuple[str, dict[str, Any]] | None:
    """A scale set's capture: the fleet section's most troubled instance (its finding, and the instance as a
    server: name and id), when the fleet names one; the lead instance's own summary may be clean."""
    section = _FLEET.search(text)
    vmss = f.server_scale_set()
    hit = _MOST_TROUBLE.search(section.group(1)) if section else None
    number = re.search(r"_(\d+)(?:\.\w+)*$", hit["capture"]) if hit else None  # <task>_<instance>.cap
    if hit is None or number is None or vmss is None:
        return None
    instance = next((i for i in f.instances(vmss) if i["instance"].rsplit("/", 1)[-1] == number.group(1)), None)
    rid = instance["instance"] if instance else f"{vmss.get('id') or vmss.get('name')}/virtualMachines/{number.group(1)}"
    return _SEVERITY.sub("", hit["title"].strip()), {"name": f"{vmss.get('name')} instance {number.group(1)}", "id": rid}


_LOST = re.compile(r"(\d[\d,]*) of (\d[\d,]*) data segments|(\d+(?:\.\d+)?)% (?:of [a-z ]*?are )?retransmissions|"
                   r"\((\d+(?:\.\d+)?)% of [\d,]+ sent [^)]*\) lost")


def _most_lost(low: str) -> bool:
    """Most of the data never gets through (a connection a stateful box has no state for), as opposed to a
    lossy path that drops a fraction: at least half the data segments, or of the packets, retransmitted, or
    (a two-point comparison) of the packets one side sent lost before the other."""
    m = _LOST.search(low.replace("\\", ""))  # the report's markdown escapes its dots and brackets
    if m is None:
        return False
    if m.group(1):
        return int(m.group(1).replace(",", "")) * 2 >= int(m.group(2).replace(",", ""))
    return float(m.group(3) or m.group(4)) >= 50  # retransmitted, or (two points) lost between them


def _suspect(w: Walk, fault_type: str) -> Suspect | None:
    return next((s for s in w.suspects if s.fault_type == fault_type), None)


def _control_ids(w: Walk) -> list[str]:
    """The control plane's word that the flow passes: Network Watcher's verdicts first, then the routes read."""
    f = w.facts
    flows = [o.audit_id for o in f.of("flow") if o.ok and o.audit_id]
    rest = [a for a in w.evidence if a not in flows]
    return list(dict.fromkeys([*flows, *rest]))[:3]


def _conflict(w: Walk, read: Observation, head: str, unmodelled: str) -> Conflict:
    return Conflict(
        control=_control_ids(w), packets=read.audit_id or "",
        text=(f"Disagreement: the control plane lets {w.flow.text()} through (the NSG verdicts allow both legs and the "
              f"walked route reaches the server), but the capture shows {head or 'trouble on the wire'}. The packets "
              f"are trusted for what happened on the wire; the difference points at {unmodelled}."),
        trusted=TRUST)


def from_summary(w: Walk, text: str, read: Observation, status: Observation) -> Verdict:
    """The verdict a capture's summary gives, attributed along the walked path (see the module docstring)."""
    f, flow = w.facts, w.flow
    server: dict[str, Any] | None = dict(flow.server) if flow.server else None
    fleet = _fleet_trouble(f, text)
    if fleet is not None:
        text, server = f"**Most likely issue:** {fleet[0]}", fleet[1]
    head = _headline(text)
    low = (head or text).lower()
    appliance = next((h for h in w.forward() if h.kind == "appliance"), None)
    box = f.vm_by_ip(str(appliance.ip)) if appliance else None
    where = (f"the appliance {box['name']} ({', '.join(ips(box))}) that the route sends the flow through"
             if box else "the path between the two ends")
    target = str(box.get("id") or box.get("name")) if box else flow.server_ip
    ev = [a for a in (read.audit_id, status.audit_id, *_control_ids(w)) if a]
    port = flow.port
    fix_device = f"{box['name']} (resource group {box.get('rg')})" if box else "the device on the path"
    if not head and ("no network fault detected" in text.lower() or _points_clean(text)):
        hard = f.symptom.kind in ("unreachable", "refused", "reset", "dns")  # the complaint says it fails outright
        return Verdict(None, f"No fault found: the NSGs allow the flow both ways, the route is intact and a capture "
                             f"of the traffic shows no loss, resets or failed handshakes. {f.symptom.flow()} works "
                             "as far as the network is concerned."
                             + (" The complaint says it fails outright, which nothing on the path shows: if it still "
                                "fails, it failed outside the capture's minute or outside the network (the client's "
                                "configuration, the application)." if hard else ""),
                       "medium" if hard else "high", is_anomaly=False,
                       actions=["Look at the application (its logs and errors) rather than the network; re-run the "
                                "investigation while the problem is happening if it is intermittent."], evidence=ev)
    if "answered by rst" in low or "nothing listening" in low or "refused" in low:
        name = server["name"] if server else flow.server_ip
        return Verdict("service", f"The server {name} answers SYNs to port {port} with RST ({head}): the network "
                                  "delivers the packets and nothing listens on the port.", "high",
                       faults=[{"resource_id": str((server or {}).get("id") or name), "fault_type": "service-down"}],
                       actions=[f"Start the service that should listen on {name}:{port} and find out why it "
                                "stopped (its logs, the VM's boot diagnostics)."], evidence=ev,
                       conflict=_conflict(w, read, head, f"the server itself: no process listens on port {port} "
                                                         "(something the control plane does not model)"))
    if "pmtu" in low or "black hole" in low:
        tunnel = _suspect(w, "vpn-mtu-mss")
        if tunnel is not None and box is None:
            return Verdict("path", f"Large segments never cross {tunnel.text} while small ones do ({head}): the "
                                   "tunnel's MTU is smaller than the segments and TCP MSS is not clamped to it.",
                           "high", faults=[{"resource_id": tunnel.resource_id, "fault_type": "vpn-mtu-mss"}],
                           actions=["Clamp TCP MSS on the VPN gateway's and the on-premises device's tunnel interfaces "
                                    "(1350 for IPsec over a 1500-byte path), or lower the on-premises MTU; let ICMP "
                                    "'fragmentation needed' through."], evidence=[*ev, *tunnel.evidence],
                           conflict=_conflict(w, read, head, "the tunnel's MTU, which no route or rule shows"))
        return Verdict("path", f"Large segments never cross {where} while small ones do ({head}): a PMTU black hole "
                               "(a smaller MTU on the way and ICMP 'fragmentation needed' filtered).", "high",
                       faults=[{"resource_id": target, "fault_type": "pmtu-blackhole"}],
                       actions=[f"On {fix_device}: let ICMP type 3 code 4 (fragmentation needed) through, or clamp "
                                "TCP MSS to the path's MTU (e.g. 1360) on the interfaces that forward this flow."],
                       evidence=ev, conflict=_conflict(w, read, head, f"the MTU of {where}, which no route or rule shows"))
    if "injected" in low or ("rst" in low and "ttl" in low) or "middlebox" in low:
        return Verdict("path", f"Connections are reset by a device neither end is ({head}): {where} injects the "
                               "RSTs.", "high",
                       faults=[{"resource_id": target, "fault_type": "middlebox-rst"}],
                       actions=[f"Check the idle/session timeout of {fix_device} and raise it above the "
                                "application's idle time, or enable TCP keepalives shorter than it."], evidence=ev,
                       conflict=_conflict(w, read, head, f"the software of {where}, which Azure does not see"))
    snat = _suspect(w, "snat-port-exhaustion")
    if snat is not None and "syn" in low and ("no answer" in low or "silently dropped" in low):
        return Verdict("path", f"New connections fail at the handshake ({head}) although every hop's configuration "
                               f"passes them: {snat.text}. A connection that gets no SNAT port never leaves, so a "
                               "share of new connections time out while established ones are clean.", "medium",
                       faults=[{"resource_id": snat.resource_id, "fault_type": "snat-port-exhaustion"}],
                       actions=[f"Give {snat.resource_id.rsplit('/', 1)[-1]} more public addresses (or a prefix), "
                                "shorten its idle timeout, and make the clients reuse connections (pooling, "
                                "keep-alive); watch its SNAT connection count metric."],
                       evidence=[*ev, *snat.evidence],
                       conflict=_conflict(w, read, head, "the NAT gateway's SNAT port use, which no rule or route "
                                                         "shows"))
    asym = _suspect(w, "asymmetric-routing")
    if asym is not None and ("no answer" in low or "silently dropped" in low or _most_lost(low)):
        return Verdict("route", f"The packets die although every hop's configuration passes them ({head}): "
                                f"{asym.text}. A stateful appliance that sees one direction of a connection only "
                                "drops the rest of it, so the handshake never completes for the client.", "high",
                       faults=[{"resource_id": asym.resource_id, "fault_type": "asymmetric-routing"}],
                       actions=["Make both directions cross the same appliance: add the matching user route on the "
                                "other side (or remove the one-sided one), so the replies take the path the requests "
                                "took."], evidence=[*ev, *asym.evidence],
                       conflict=_conflict(w, read, head, "a stateful appliance that sees one direction only: each hop "
                                                         "passes the packets on its own, the pair does not"))
    if "retransmission" in low or "loss" in low:
        return Verdict("path", f"Packets are lost on {where} ({head}).", "high",
                       faults=[{"resource_id": target, "fault_type": "path-packet-loss"}],
                       actions=[f"Check {fix_device}: its CPU, NIC drops and accelerated networking; take it out of "
                                "the path (or fail over) while the loss is investigated."], evidence=ev,
                       conflict=_conflict(w, read, head, f"{where} losing packets, which configuration cannot show"))
    shown = head or "see the summary"
    walked = " -> ".join(f"{h.kind} {h.name}" for h in w.forward()) or flow.client_name
    return Verdict("path", f"The capture shows trouble the control plane does not explain: {shown}. No single cause "
                           f"stands out: every hop walked ({walked}) passes the flow on its own, and the packets do "
                           "not name a known kind of fault.",
                   "low", actions=["Read the forensic report of the capture for the affected flows; check the "
                                   "guest firewall of both ends and the software of any appliance on the path.",
                                   "Capture at both ends at once while it fails: where the packets stop localises it."],
                   evidence=ev, conflict=_conflict(w, read, head, "something the control plane does not model (a "
                                                                  "guest firewall, an appliance's software, or a "
                                                                  "platform fault)"))
