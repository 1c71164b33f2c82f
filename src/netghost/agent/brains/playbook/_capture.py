"""The data-plane phase: a capture when the control plane is clean, its summary read, then cleaned up.

A capture costs human approvals (the create, the download, the ``cat``), so it comes last and only
when the control plane cannot explain the complaint. Intermittent trouble gets a dual-end capture when
both ends are VMs in one resource group (the two points localise loss); everything else one end. The
executive summary's headline decides the verdict, attributed to the appliance on the path when the
next hop is one; "no network fault detected" with a clean control plane means nothing is wrong.
"""

from __future__ import annotations

import json
import re
from typing import Any

from netghost.agent.brains._protocol import FunctionCall
from netghost.agent.brains.playbook._facts import RUNNING, Facts, Observation, ips
from netghost.agent.brains.playbook._moves import Move, Verdict, shell_call

__all__ = ["MAX_POLLS", "capture_move"]

MAX_POLLS = 8
_DONE = ("task_completed", "task_failed", "task_cancelled", "task_timed_out")


def _task_id(o: Observation) -> str | None:
    tid = o.response.get("task_id")
    return str(tid) if tid else None


def _partner(o: Observation) -> str | None:
    """The paired task of a dual-end capture."""
    paired = o.response.get("paired_task")
    return str(paired["task_id"]) if isinstance(paired, dict) and paired.get("task_id") else None


_ENDED = {"CANCELLED": "was not started: not approved or cancelled", "FAILED": "failed",
          "TIMED_OUT": "timed out", "COMPLETED": "is done"}


def _paired_end(o: Observation) -> str | None:
    """How the paired end of a dual-end capture ended, in words (None while it may still run)."""
    paired = o.response.get("paired_task")
    state = paired.get("state") if isinstance(paired, dict) else None
    return _ENDED.get(str(state)) if state else None


def _latest_status(f: Facts, task_id: str) -> Observation | None:
    return next((o for o in reversed(f.observations) if o.call.name in ("capture_traffic", "check_task")
                 and _task_id(o) == task_id), None)


def _capture_call(f: Facts, client: dict[str, Any], server: dict[str, Any] | None, *, target: str | None = None,
                  auth: str | None = None) -> FunctionCall:
    s = f.symptom
    vmss = f.server_scale_set() if target is None else None
    if vmss is not None:  # every instance of the set is captured: the fleet report compares them
        client, target = vmss, str(vmss.get("name"))
    account = f.storage_account(str(client.get("location") or "")) or {}
    # az expands a bare account name with the target's group: an account elsewhere goes by its id
    named = str(account.get("name") or "forensicssa")
    elsewhere = account.get("id") and str(account.get("rg", "")).lower() != str(client.get("rg", "")).lower()
    dual = (target is None and s.kind in ("intermittent", "slow") and server is not None
            and server.get("rg") == client.get("rg") and server.get("power") == RUNNING)
    what = target or (f"{client['name']} to {server['name']}" if dual and server else str(client["name"]))
    args: dict[str, Any] = {
        "target": what, "resource_group": str(client.get("rg")),
        "storage_account": str(account["id"]) if elsewhere else named, "duration_seconds": 60,
        "investigation_context": f"The control plane explains nothing for '{s.text}': capture {what}'s traffic "
                                 f"{'at both ends ' if ' to ' in what else ''}to see what happens to the packets.",
    }
    if auth:
        args["storage_auth_mode"] = auth
    return FunctionCall("capture_traffic", args)


def _retry_for_denial(f: Facts, denied: Observation, client: dict[str, Any],
                      server: dict[str, Any] | None) -> FunctionCall | None:
    """A capture refused with a reason that corrects it (another VM, key auth) is retried that way, once."""
    if len(f.tool("capture_traffic")) > 1:
        return None
    reason = denied.denial_reason.lower()
    target = str(denied.call.args.get("target", ""))
    for vm in f.vms():
        name = str(vm.get("name", ""))
        if name and name.lower() in reason and name != target and vm.get("power") == RUNNING:
            return _capture_call(f, vm, None, target=name)
    if re.search(r"\b(key|shared key|account key)\b", reason) and denied.call.args.get("storage_auth_mode") != "key":
        return _capture_call(f, client, server, target=target, auth="key")
    return None


def capture_move(f: Facts, client: dict[str, Any], server: dict[str, Any] | None, server_ip: str) -> Move:
    """The next data-plane move (see the module docstring)."""
    captures = f.tool("capture_traffic")
    if not captures:
        call = _capture_call(f, client, server)
        return Move("The control plane is clean along the flow: NSGs allow both legs and the route is intact. "
                    f"Only the packets can tell more: capturing {call.args['target']}.", [call])
    last = captures[-1]
    task_id = _task_id(last)
    if last.denied or task_id is None or last.response.get("status") == "error":
        retry = _retry_for_denial(f, last, client, server) if last.denied else None
        if retry is not None:
            return Move(f"The capture was refused ({last.denial_reason}); following that: capturing "
                        f"{retry.args['target']}.", [retry])
        return Move("", verdict=_no_packets(f, last, server_ip, "the capture was not approved" if last.denied
                                            else f"the capture could not start ({last.response.get('message', '')})"))
    status = _latest_status(f, task_id)
    partner = _partner(last)
    if status is None or status.response.get("status") not in _DONE:
        polls = [o for o in f.tool("check_task") if o.call.args.get("task_id") == task_id]
        if len(polls) >= MAX_POLLS:
            return Move("", verdict=_no_packets(f, status or last, server_ip, "the capture did not finish in time"))
        calls = [FunctionCall("check_task", {"task_id": task_id})]
        partner_status = _latest_status(f, partner) if partner else None
        ended = _paired_end(status or last)
        if partner and ended is None and (partner_status is None or partner_status.response.get("status") not in _DONE):
            calls.insert(0, FunctionCall("check_task", {"task_id": partner}))  # its download lets the pair compare
        names = " and ".join(str(c.args["task_id"]) for c in calls)
        other = f" (the other end, {partner}, {ended})" if partner and ended else ""
        return Move(f"Capture {names} running{other}; checking on it.", calls)
    if status.response.get("status") != "task_completed":
        return Move("", verdict=_no_packets(f, status, server_ip,
                                            f"the capture ended {status.response.get('status')}: "
                                            f"{status.response.get('message', '')}"))
    return _read_move(f, status, task_id, partner, server=server, server_ip=server_ip)


def _read_move(f: Facts, status: Observation, task_id: str, partner: str | None, *,
               server: dict[str, Any] | None, server_ip: str) -> Move:
    """The capture is analysed: read its findings (through cat, RISKY), clean up, then conclude."""
    result = status.response.get("result") or {}
    report = str(result.get("report_path") or "")
    reads = f.of("read_report")
    if not reads and report:
        summary = report.replace("_forensic_report.md", "_executive_summary.md")
        calls = [shell_call(f"cat {summary}", "Read the capture's executive summary: what the packets show."),
                 FunctionCall("cleanup_task", {"task_id": task_id})]
        if partner:
            calls.append(FunctionCall("cleanup_task", {"task_id": partner}))
        return Move(f"Capture {task_id} is analysed. Reading its executive summary, then cleaning the capture up.",
                    calls)
    text = next((_as_summary(str(o.response.get("output") or "")) for o in reversed(reads) if o.ok), None)
    if text is None:
        # denial recovery: the same evidence in another form, each asked once (summary, report, semantic JSON)
        semantic = str(result.get("semantic_json_path") or "")
        for path, what in ((report, "forensic report"), (semantic, "semantic JSON")):
            if path and not f.sent(f"cat {path}"):
                return Move(f"The capture's findings were not read; trying its {what} instead.",
                            [shell_call(f"cat {path}", f"Read the capture's {what}: the same findings in another form.")])
    if text is None:
        return Move("", verdict=_no_packets(f, reads[-1] if reads else status, server_ip,
                                            "the capture's report could not be read"))
    return Move("", verdict=_from_summary(f, text, reads[-1], status, server=server, server_ip=server_ip))


def _as_summary(text: str) -> str:
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


def _path_appliance(f: Facts) -> dict[str, Any] | None:
    """The running appliance the client's route goes through, if any."""
    for o in reversed(f.of("appliance")):
        doc = o.json() if o.ok else None
        if isinstance(doc, list) and doc and isinstance(doc[0], dict):
            return doc[0]
    return None


def _evidence(*obs: Observation | None) -> list[str]:
    return [o.audit_id for o in obs if o is not None and o.audit_id]


_SEVERITY = re.compile(r"\s*\(severity [^()]*\)\.?$")  # the summary's own rating, not part of the finding
_UNINFORMATIVE = re.compile(r"share no packet|not the same path|not the same time", re.I)
_KNOWN = re.compile(r"answered by rst|nothing listening|refused|pmtu|black hole|injected|middlebox|retransmission|"
                    r"\bloss\b", re.I)


_POINT = re.compile(r"^- Point [AB] `[^`]*`: (.+)$", re.M)
_ON_ITS_OWN = re.compile(r"^## What each point shows on its own\n(.*?)(?=^## |\Z)", re.M | re.S)


def _point_lines(text: str) -> list[str]:
    """The compare summary's per-point verdicts (its section for captures that share no packet)."""
    section = _ON_ITS_OWN.search(text)
    return _POINT.findall(section.group(1)) if section else []


def _headline(text: str) -> str:
    """The summary's most likely issue; when that says only that two captures did not line up (their
    windows missed each other), the first finding, or what one point shows on its own, that names a known
    kind of trouble, else nothing (each point's own verdict then decides)."""
    m = re.search(r"\*\*Most likely issue:\*\*\s*(.+)", text)
    head = _SEVERITY.sub("", m.group(1).strip()) if m else ""
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


_FLEET = re.compile(r"^## Fleet: every instance compared\n(.*?)(?=^## |\Z)", re.M | re.S)
_MOST_TROUBLE = re.compile(r"^- Most trouble: (?P<capture>\S+) \(score [^)]*\): (?P<title>.+?)\.?$", re.M)


def _fleet_trouble(f: Facts, text: str) -> tuple[str, dict[str, Any]] | None:
    """A scale set's capture: the fleet section's most troubled instance (its finding, and the instance as
    a server: name and id), when the fleet names one; the lead instance's own summary may be clean."""
    section = _FLEET.search(text)
    vmss = f.server_scale_set()
    hit = _MOST_TROUBLE.search(section.group(1)) if section else None
    number = re.search(r"_(\d+)(?:\.\w+)*$", hit["capture"]) if hit else None  # <task>_<instance>.cap
    if hit is None or number is None or vmss is None:
        return None
    instance = next((i for i in f.instances(vmss) if i["instance"].rsplit("/", 1)[-1] == number.group(1)), None)
    rid = instance["instance"] if instance else f"{vmss.get('id') or vmss.get('name')}/virtualMachines/{number.group(1)}"
    return _SEVERITY.sub("", hit["title"].strip()), {"name": f"{vmss.get('name')} instance {number.group(1)}", "id": rid}


def _from_summary(f: Facts, text: str, read: Observation, status: Observation, *, server: dict[str, Any] | None,
                  server_ip: str) -> Verdict:
    fleet = _fleet_trouble(f, text)
    if fleet is not None:
        text, server = f"**Most likely issue:** {fleet[0]}", fleet[1]
    head = _headline(text)
    low = (head or text).lower()
    appliance = _path_appliance(f)
    where = (f"the appliance {appliance['name']} ({', '.join(ips(appliance))}) that the route sends the flow through"
             if appliance else "the path between the two ends")
    target = str(appliance.get("id") or appliance.get("name")) if appliance else server_ip
    ev = _evidence(read, status, *[o for o in f.observations if o.step in ("flow", "next_hop") and o.ok])
    port = f.symptom.port
    fix_device = f"{appliance['name']} (resource group {appliance.get('rg')})" if appliance else "the device on the path"
    if not head and ("no network fault detected" in text.lower() or _points_clean(text)):
        return Verdict(None, f"No fault found: the NSGs allow the flow both ways, the route is intact and a capture "
                             f"of the traffic shows no loss, resets or failed handshakes. {f.symptom.flow()} works "
                             "as far as the network is concerned.", "high", is_anomaly=False,
                       actions=["Look at the application (its logs and errors) rather than the network; re-run the "
                                "investigation while the problem is happening if it is intermittent."], evidence=ev)
    if "answered by rst" in low or "nothing listening" in low or "refused" in low:
        name = server["name"] if server else server_ip
        return Verdict("service", f"The server {name} answers SYNs to port {port} with RST ({head}): the network "
                                  "delivers the packets and nothing listens on the port.", "high",
                       faults=[{"resource_id": str((server or {}).get("id") or name), "fault_type": "service-down"}],
                       actions=[f"Start the service that should listen on {name}:{port} and find out why it "
                                "stopped (its logs, the VM's boot diagnostics)."], evidence=ev)
    if "pmtu" in low or "black hole" in low:
        return Verdict("path", f"Large segments never cross {where} while small ones do ({head}): a PMTU black hole "
                               "(a smaller MTU on the way and ICMP 'fragmentation needed' filtered).", "high",
                       faults=[{"resource_id": target, "fault_type": "pmtu-blackhole"}],
                       actions=[f"On {fix_device}: let ICMP type 3 code 4 (fragmentation needed) through, or clamp "
                                "TCP MSS to the tunnel's MTU (e.g. 1360) on the interfaces that forward this flow."],
                       evidence=ev)
    if "injected" in low or ("rst" in low and "ttl" in low) or "middlebox" in low:
        return Verdict("path", f"Connections are reset by a device neither end is ({head}): {where} injects the "
                               "RSTs.", "high",
                       faults=[{"resource_id": target, "fault_type": "middlebox-rst"}],
                       actions=[f"Check the idle/session timeout of {fix_device} and raise it above the "
                                "application's idle time, or enable TCP keepalives shorter than it."], evidence=ev)
    if "retransmission" in low or "loss" in low:
        return Verdict("path", f"Packets are lost on {where} ({head}).", "high",
                       faults=[{"resource_id": target, "fault_type": "path-packet-loss"}],
                       actions=[f"Check {fix_device}: its CPU, NIC drops and accelerated networking; take it out of "
                                "the path (or fail over) while the loss is investigated."], evidence=ev)
    shown = head or "see the summary"
    return Verdict("path", f"The capture shows trouble the control plane does not explain: {shown}.",
                   "medium", actions=["Read the forensic report of the capture for the affected flows."], evidence=ev)


def _no_packets(f: Facts, obs: Observation, server_ip: str, why: str) -> Verdict:
    """No capture evidence: conclude from the control plane alone, with lower confidence."""
    clean = [o.audit_id for o in f.observations if o.step in ("flow", "next_hop") and o.ok and o.audit_id]
    return Verdict(
        None, f"The control plane shows nothing wrong along {f.symptom.flow()} (NSGs allow it both ways, the route "
              f"is intact), and {why}, so what happens to the packets is unverified. The cause is most likely in "
              f"the data plane (the server's service, or a device on the path), which only a capture can show.",
        "low", is_anomaly=True,
        actions=[f"Approve a packet capture on {f.symptom.client or 'the client'} (or both ends) to see what happens "
                 f"to the traffic for {server_ip}.", "Check that the service listens on the server."],
        evidence=[a for a in (*clean, obs.audit_id) if a])
