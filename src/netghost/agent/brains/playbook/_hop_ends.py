"""The checks of the path's ends: the client's NIC, the server (a VM, a scale set and its instances, a private
endpoint), and the reply's arrival back at the client.

At the client: the NSG verdict on the way out, then the route. At the server: it must run (every instance of
a scale set: one stopped instance fails one call in N), the NSG verdict on the way in, then the reply's own
route back. A private endpoint passes traffic only once its connection is Approved. When the reply is back,
the path's two directions are compared (a stateful box crossed one way only drops the rest of the
connection), and a LOCAL connect probe that was refused by the host says nothing listens.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._facts import RUNNING, ips
from netghost.agent.brains.playbook._hop_route import route_step
from netghost.agent.brains.playbook._moves import Verdict, shell_call
from netghost.agent.brains.playbook._nsg_verdict import evaluate_nsgs, flow_verdict
from netghost.agent.brains.playbook._path import Fault, Hop, Need, Next, Outcome, Suspect, Walk
from netghost.agent.brains.playbook._routes import route_id, subnet_by_id

__all__ = ["client_nsg_out", "client_route", "endpoint_approved", "instances_running", "paths_symmetric",
           "server_listens", "server_nsg_in", "server_probe", "server_return_route", "server_running"]


def _private(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_private
    except ValueError:
        return False


def _port(w: Walk) -> str:
    return str(w.flow.port) if w.flow.port else "*"


def client_nsg_out(w: Walk, hop: Hop) -> Outcome:
    """Network Watcher's outbound verdict at the client. A *default* rule's deny of a private address is what
    an address outside the VNet's reach gets (AllowVnetOutBound matches only the spaces the VNet reaches):
    when the route says there is no way there either, the missing route is the cause and the walk goes on to
    explain it."""
    vm = hop.doc.get("vm")
    if not vm:
        return None
    out = flow_verdict(w, vm, hop.doc.get("nic"), direction="Outbound", local=f"{w.flow.client_ip}:*",
                       remote=f"{w.flow.server_ip}:{_port(w)}")
    if not isinstance(out, Fault) or "/defaultSecurityRules/" not in "".join(
            str(x.get("resource_id")) for x in out.verdict.faults) or not _private(w.flow.server_ip):
        return out
    step = client_route(w, hop)
    if isinstance(step, Next) and any(h.kind == "noroute" for h in step.hops):
        return None
    return step if isinstance(step, Need) else out


def client_route(w: Walk, hop: Hop) -> Outcome:
    return route_step(w, hop, hop.doc.get("nic"), w.flow.server_ip, "forward")


def server_running(w: Walk, hop: Hop) -> Outcome:
    vm: Mapping[str, Any] | None = hop.doc.get("vm")
    if not vm or vm.get("power") in (None, RUNNING):
        return None
    vms = next((o for o in reversed(w.facts.of("vms")) if o.ok), None)
    return Fault(Verdict(
        "service", f"The server VM {vm['name']} is not running ({vm.get('power')}): nothing can answer on port "
                   f"{w.flow.port or '?'}.", "high",
        faults=[{"resource_id": str(vm.get("id") or vm["name"]), "fault_type": "service-down"}],
        actions=[f"Start {vm['name']} (`az vm start -g {vm.get('rg')} -n {vm['name']}`) and find out who stopped it "
                 "(activity log)."],
        evidence=[vms.audit_id] if vms and vms.audit_id else []))


def instances_running(w: Walk, hop: Hop) -> Outcome:
    """Every instance of the server's scale set must run: the client's calls are spread over all of them."""
    vmss = hop.doc
    rg, name = str(vmss.get("rg") or ""), str(vmss.get("name") or "")
    need = w.need(f"the power state of {name}'s instances",
                  shell_call(r.vmss_instances(rg, name), f"Do all of {name}'s instances run?"))
    if need is not None:
        return need
    instances = w.facts.instances(vmss)
    down = [i for i in instances if i.get("power") and "running" not in str(i["power"]).lower()]
    if not down:
        return None
    bad = down[0]
    number = bad["instance"].rsplit("/", 1)[-1]
    obs = next((o for o in reversed(w.facts.of("vmss_instances")) if o.ok), None)
    return Fault(Verdict(
        "service", f"Instance {number} of the scale set {name} ({bad['ip']}) is {bad['power']} while the others run: "
                   f"the calls that land on it get no answer on port {w.flow.port or '?'}.", "high",
        faults=[{"resource_id": bad["instance"], "fault_type": "service-down"}],
        actions=[f"Start instance {number} (`az vmss start -g {rg} -n {name} --instance-ids {number}`), and check the "
                 "set's health probe and automatic repairs so a stopped instance leaves the rotation."],
        evidence=[a for a in (obs.audit_id if obs else None,) if a]), goes_on=len(down) < len(instances))


def server_nsg_in(w: Walk, hop: Hop) -> Outcome:
    vm, nic = hop.doc.get("vm"), hop.doc.get("nic") or {}
    if vm:
        ip = w.flow.server_ip if w.flow.server_ip in ips(vm) or not ips(vm) else ips(vm)[0]
        return flow_verdict(w, vm, nic, direction="Inbound", local=f"{ip}:{_port(w)}", remote=f"{w.seen_source}:*")
    if nic.get("scale_set") or hop.doc.get("instance"):  # Network Watcher cannot name an instance: read the rules
        subnet = subnet_by_id(w.facts, str(nic.get("subnet") or "")) or {}
        return evaluate_nsgs(w, str(nic.get("nsg") or ""), str(subnet.get("nsg") or ""),
                             legs=(("Inbound", w.seen_source, w.flow.server_ip),), where=f"{hop.name}'s NIC")
    return None


def server_probe(w: Walk, hop: Hop) -> Outcome:
    """A LOCAL connect, read with the first level (only meaningful if this machine sits in the VNet)."""
    if not w.flow.port or not hop.doc.get("vm"):
        return None
    return w.need("a LOCAL connect probe", shell_call(
        r.curl_probe(w.flow.server_ip, w.flow.port),
        f"A LOCAL connect to {w.flow.server_ip}:{w.flow.port} from this machine (only meaningful if it sits in the "
        "VNet; CLOUD evidence governs)."))


def server_return_route(w: Walk, hop: Hop) -> Outcome:
    return route_step(w, hop, hop.doc.get("nic"), w.seen_source, "return")


def endpoint_approved(w: Walk, hop: Hop) -> Outcome:
    """A private address no NIC holds: a private endpoint's passes traffic only once its connection is Approved."""
    f = w.facts
    need = w.need(f"what holds {hop.ip}", shell_call(
        r.private_endpoints(), f"No VM holds {hop.ip}: is it a private endpoint, and is its connection approved?"))
    if need is not None:
        return need
    obs = next((o for o in reversed(f.of("endpoints")) if o.ok), None)
    doc = obs.json() if obs else None
    pe = next((e for e in doc or [] if isinstance(e, dict) and hop.ip in (e.get("ips") or [])), None) \
        if isinstance(doc, list) else None
    if pe is None or pe.get("status") in (None, "Approved"):
        w.cite(obs)
        return None
    target = str(pe.get("target") or "")
    return Fault(Verdict(
        "route", f"{hop.ip} is private endpoint {pe.get('name')}, and its connection to "
                 f"{target.rsplit('/', 1)[-1] or 'the service'} is {pe.get('status')}: until the resource's owner "
                 f"approves it, no packet to the address reaches the service (NSGs and routes from "
                 f"{w.flow.client_name} are clean).", "high",
        faults=[{"resource_id": str(pe.get("id") or pe.get("name")), "fault_type": "private-endpoint-not-approved"}],
        actions=[f"Ask the owner of {target or 'the target resource'} to approve the connection of private endpoint "
                 f"{pe.get('name')} (`az network private-endpoint-connection approve --id <connection id> "
                 "--description ...` in their subscription), or re-create the endpoint with auto-approval if you "
                 "own the resource; then retry the connection."],
        evidence=[a for a in (obs.audit_id if obs else None, *w.evidence) if a]))


def _boxes(hops: list[Hop]) -> list[Hop]:
    return [h for h in hops if h.kind == "appliance"]


def paths_symmetric(w: Walk, hop: Hop) -> Outcome:
    """The reply must cross the stateful boxes the request crossed: an appliance on one direction only sees half
    of each connection, and a stateful one drops the rest. Which appliances keep state is not in Azure's
    configuration, so a one-way appliance is a suspect the packets settle (SYN-ACKs that never arrive)."""
    forward, back = _boxes(w.forward()), _boxes(w.returning())
    fwd_ips, back_ips = {h.ip for h in forward}, {h.ip for h in back}
    if w.translated_source:  # replies go to the address that translated the source: that box sees them
        back_ips.add(w.translated_source)
    if fwd_ips == back_ips:
        return None
    f = w.facts
    server = next((h for h in w.forward() if h.kind == "server"), None)
    server_nic = (server.doc.get("nic") if server else None) or {}
    only_back = [h for h in back if h.ip not in fwd_ips]
    if only_back:
        box = only_back[0]
        rid = route_id(f, box.via.get("nic") or server_nic, box.via.get("route") or {})
        text = (f"the replies from {w.flow.server_name} to {w.flow.client_ip} go through {box.ip} "
                f"({(box.via.get('route') or {}).get('name') or 'a user route'}), which the requests never cross")
    else:
        box = next(h for h in forward if h.ip not in back_ips)
        subnet = subnet_by_id(f, str(server_nic.get("subnet") or "")) or {}
        rid = str(subnet.get("routeTable") or server_nic.get("subnet") or box.ip)
        text = (f"the requests cross {box.ip} but {w.flow.server_name}'s replies to {w.flow.client_ip} bypass it "
                f"(its subnet has no route back through {box.ip})")
    ids = tuple(str(a) for a in (box.via.get("audit_id"), hop.via.get("audit_id")) if a)
    return Suspect(box, "asymmetric-routing", rid, text, ids)


def server_listens(w: Walk, hop: Hop) -> Outcome:
    """A LOCAL probe refused by the host (RST) corroborates a clean control plane: nothing listens on the port."""
    probe = next(iter(reversed(w.facts.of("probe"))), None)
    if probe is None:
        return None
    said = (str(probe.response.get("stderr", "")) + str(probe.response.get("output", ""))).lower()
    if "refused" not in said:
        return None
    server = w.flow.server or {}
    name = str(server.get("name") or w.flow.server_ip)
    return Fault(Verdict(
        "service", f"{w.flow.server_ip}:{w.flow.port} refuses connections (RST): the NSGs allow the flow both ways "
                   f"and the route is intact (CLOUD), and a connect from this machine, which reaches the VNet, is "
                   f"refused by the host (LOCAL, consistent with the cloud evidence). Nothing listens on port "
                   f"{w.flow.port} on {name}.", "medium",
        faults=[{"resource_id": str(server.get("id") or name), "fault_type": "service-down"}],
        actions=[f"Start the service that should listen on {name}:{w.flow.port} and check why it stopped "
                 f"(`az vm run-command invoke -g {server.get('rg', '<rg>')} -n {name} --command-id RunShellScript "
                 "--scripts 'ss -tlnp'` with the owner's approval)."],
        evidence=[a for a in (probe.audit_id, *w.evidence) if a]))
