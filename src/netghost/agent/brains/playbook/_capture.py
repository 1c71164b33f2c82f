"""The data-plane phase: a capture when the control plane is clean, its summary read, then cleaned up.

A capture costs human approvals (the create, the download, the ``cat``), so it comes last and only
when the path walk finds every hop healthy, or a suspect only the packets can settle. The capture points
come from the walked path: intermittent trouble, and a box only one direction crosses, get a dual-end
capture when both ends are VMs in one resource group (the two points localise loss and show replies that
leave and never arrive); a scale set every instance; everything else the client. The executive summary is
read against the path (:mod:`._packets`); "no network fault detected" with a clean control plane means
nothing is wrong.
"""

from __future__ import annotations

import re
from typing import Any

from netghost.agent.brains._protocol import FunctionCall
from netghost.agent.brains.playbook._facts import RUNNING, Facts, Observation
from netghost.agent.brains.playbook._moves import Move, Verdict, shell_call
from netghost.agent.brains.playbook._packets import as_summary, from_summary
from netghost.agent.brains.playbook._path import Walk

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
                  auth: str | None = None, both_ends: bool = False) -> FunctionCall:
    s = f.symptom
    vmss = f.server_scale_set() if target is None else None
    if vmss is not None:  # every instance of the set is captured: the fleet report compares them
        client, target = vmss, str(vmss.get("name"))
    account = f.storage_account(str(client.get("location") or "")) or {}
    # az expands a bare account name with the target's group: an account elsewhere goes by its id
    named = str(account.get("name") or "forensicssa")
    elsewhere = account.get("id") and str(account.get("rg", "")).lower() != str(client.get("rg", "")).lower()
    dual = (target is None and (both_ends or s.kind in ("intermittent", "slow")) and server is not None
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


def capture_move(f: Facts, w: Walk) -> Move:
    """The next data-plane move (see the module docstring)."""
    client, server, server_ip = dict(w.flow.client or {}), (dict(w.flow.server) if w.flow.server else None), \
        w.flow.server_ip
    if not client and server is not None:  # clients outside Azure (on premises): the server's end is the one to see
        client, server = server, None
    if not client and f.server_scale_set() is None:
        return Move("", verdict=_no_packets(f, None, server_ip, "no VM on the path can be captured"))
    captures = f.tool("capture_traffic")
    if not captures:
        # a box one direction only crosses shows at the two ends: SYN-ACKs that leave the server and never arrive
        call = _capture_call(f, client, server, both_ends=any(x.fault_type == "asymmetric-routing" for x in w.suspects))
        suspects = "; ".join(x.text for x in w.suspects)
        lead = (f"Every hop passes the flow on its own, but {suspects}: only the packets can settle that."
                if suspects else "The control plane is clean along the flow: NSGs allow both legs and the route is "
                                 "intact. Only the packets can tell more.")
        return Move(f"{lead} Capturing {call.args['target']}.", [call])
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
    return _read_move(f, w, status, task_id, partner)


def _read_move(f: Facts, w: Walk, status: Observation, task_id: str, partner: str | None) -> Move:
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
    text = next((as_summary(str(o.response.get("output") or "")) for o in reversed(reads) if o.ok), None)
    if text is None:
        # denial recovery: the same evidence in another form, each asked once (summary, report, semantic JSON)
        semantic = str(result.get("semantic_json_path") or "")
        for path, what in ((report, "forensic report"), (semantic, "semantic JSON")):
            if path and not f.sent(f"cat {path}"):
                return Move(f"The capture's findings were not read; trying its {what} instead.",
                            [shell_call(f"cat {path}", f"Read the capture's {what}: the same findings in another form.")])
    if text is None:
        return Move("", verdict=_no_packets(f, reads[-1] if reads else status, w.flow.server_ip,
                                            "the capture's report could not be read"))
    return Move("", verdict=from_summary(w, text, reads[-1], status))


def _no_packets(f: Facts, obs: Observation | None, server_ip: str, why: str) -> Verdict:
    """No capture evidence: conclude from the control plane alone, with lower confidence."""
    clean = [o.audit_id for o in f.observations if o.step in ("flow", "eff_routes") and o.ok and o.audit_id]
    return Verdict(
        None, f"The control plane shows nothing wrong along {f.symptom.flow()} (NSGs allow it both ways, the route "
              f"is intact), and {why}, so what happens to the packets is unverified. The cause is most likely in "
              f"the data plane (the server's service, or a device on the path), which only a capture can show.",
        "low", is_anomaly=True,
        actions=[f"Approve a packet capture on {f.symptom.client or 'the client'} (or both ends) to see what happens "
                 f"to the traffic for {server_ip}.", "Check that the service listens on the server."],
        evidence=[a for a in (*clean, obs.audit_id if obs else None) if a])
