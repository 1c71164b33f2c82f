"""The playbook's next move, decided from the facts alone (seed 001 §2 escalation ladder, §5 taxonomy).

The ladder: find both ends and the network they sit in (one read each, any resource group); the name's
private DNS zone when the server is a name; then the control plane along the flow (NSG verdicts both
ways, the next hop, a LOCAL connect probe); then the suspects a read revealed (the rule's NSG, the
appliance a route points at and its power state, the client VNet's peerings). A capture runs only when
all that is clean (dual-end for intermittent trouble, where the two ends localise loss); its executive
summary is read through ``cat`` (RISKY), the capture cleaned up, and the investigation concluded.

Denials (seed 001 §4): a denied command is never sent again; a capture refused with a reason that names
another VM or the key auth mode is retried that way once; otherwise the playbook pivots to what the
control plane showed and concludes with lower confidence, listing what it could not verify.
Conflicts: a LOCAL probe never overrides CLOUD evidence; it only corroborates it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from typing import Any

from netghost.agent.brains._protocol import FunctionCall
from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._capture import capture_move
from netghost.agent.brains.playbook._facts import RUNNING, Facts, Observation, in_prefix, ips
from netghost.agent.brains.playbook._moves import Family, Move, Verdict
from netghost.agent.brains.playbook._moves import shell_call as _shell
from netghost.agent.brains.playbook._nsg_eval import deciding_rule
from netghost.agent.brains.playbook._symptom import is_ip

__all__ = ["decide", "families"]



def families(f: Facts) -> list[Family]:
    """The two to three hypotheses the complaint suggests first (seed 001 §2: at most three active)."""
    s = f.symptom
    by_kind: dict[str, list[Family]] = {
        "dns": ["dns", "route"],
        "refused": ["service", "nsg", "path"],
        "reset": ["path", "service", "nsg"],
        "intermittent": ["path", "route", "service"],
        "large": ["path", "route"],
        "slow": ["path", "route", "service"],
    }
    families = by_kind.get(s.kind, ["nsg", "route", "service"])
    if s.server_is_name and "dns" not in families:
        families = ["dns", *families[:2]]
    return families


def _unsent(f: Facts, calls: Sequence[FunctionCall]) -> list[FunctionCall]:
    """Drop commands already sent (a denied one is never repeated; a read is never repeated either)."""
    return [c for c in calls if c.name != "run_shell_cmd" or not f.sent(str(c.args["command"]))]


def decide(f: Facts) -> Move:
    """The next move (see the module docstring)."""
    s = f.symptom
    if not f.of("vms"):
        calls = [_shell(r.vm_list(), "Find both ends of the complaint (IPs, groups, power state) in any resource group."),
                 _shell(r.vnet_list(), "Map the VNets: address spaces, subnets with their NSGs and route tables, "
                                       "peerings and their state."),
                 _shell(r.storage_accounts(), "Know where a capture could be written, should one be needed."),
                 _shell(r.vmss_list(), "Scale sets too: their instances are not in the VM list.")]
        if s.server_is_name and s.server:
            calls += [_shell(r.private_zone_list(), f"Find the private DNS zone that should answer for {s.server}."),
                      _shell(r.dig_short(s.server), f"What this machine's resolver answers for {s.server} "
                                                    "(LOCAL: not the VNet's view, but it shows CNAMEs).")]
        return Move(f"Investigating: {s.text}. First the endpoints and the network they sit in.", calls)
    client = f.client() or _fallback_client(f)
    if client is None:
        return Move("", verdict=Verdict(None, f"Could not identify the client of '{s.text}' among the VMs the "
                                              "subscription holds.", "low", is_anomaly=False,
                                        actions=["Name the client VM (as Azure knows it) and the server and port."]))
    if s.server_is_name and s.server and not f.of("zones"):  # the name was placed only once the VMs were known
        calls = _unsent(f, [_shell(r.private_zone_list(), f"Find the private DNS zone that should answer for {s.server}."),
                            _shell(r.dig_short(s.server), f"What this machine's resolver answers for {s.server}.")])
        if calls:
            return Move(f"The server is the name {s.server}: which zone answers for it?", calls)
    if s.server_is_name:
        dns = _dns_step(f, client)
        if dns is not None:
            return dns
    vmss = f.server_scale_set()
    if vmss is not None and not f.instances(vmss):
        calls = _unsent(f, [_shell(r.vmss_nics(str(vmss.get("rg")), str(vmss.get("name"))),
                                   f"{vmss.get('name')} is a scale set: which addresses do its instances have?")])
        if calls:
            return Move(f"The server {vmss.get('name')} is a scale set, not a VM: finding its instances.", calls)
    server_ip = f.server_ip() or _public_answer(f)
    if server_ip is None:
        return Move("", verdict=Verdict(None, f"Could not find the server of '{s.text}' ({s.server or 'not named'}).",
                                        "low", is_anomaly=False,
                                        actions=["Name the server (VM, IP address or DNS name) and the port."]))
    server = f.server_vm()
    if server is not None and server.get("power") not in (None, RUNNING):
        return Move("", verdict=_vm_down(f, server))
    control = _control_plane(f, client, server, server_ip)
    if control is not None:
        return control
    return capture_move(f, client, server, server_ip)


def _fallback_client(f: Facts) -> dict[str, Any] | None:
    """No client named ("name Z does not resolve"): the first running VM that is not the server."""
    if f.symptom.client is not None:
        return None
    server = f.server_vm()
    return next((v for v in f.vms() if v is not server and v.get("power") == RUNNING), None)


def _public_answer(f: Facts) -> str | None:
    """A name no private zone owns is answered by public DNS, the same for the VNet and this machine."""
    if not f.symptom.server_is_name or f.owning_zone() is not None:
        return None
    ips = [w for w in f.local_answer() if is_ip(w)]
    return ips[-1] if ips else None


# ---- DNS ---------------------------------------------------------------------------------------------


def _dns_step(f: Facts, client: dict[str, Any]) -> Move | None:
    owned = f.owning_zone()
    if owned is None:
        return None
    zone, label = owned
    zname, zrg = str(zone.get("name")), str(zone.get("rg"))
    links, records = f.zone_obs("zone_links", zname), f.zone_obs("zone_records", zname)
    if links is None or records is None:
        calls = _unsent(f, [_shell(r.private_zone_links(zrg, zname), f"Is {zname} linked to {client['name']}'s VNet?"),
                            _shell(r.private_zone_records(zrg, zname), f"Does {zname} hold a record for {label}?")])
        if calls:
            return Move(f"{f.symptom.server} is answered by the private zone {zname} (record {label}); checking "
                        "its VNet links and records.", calls)
        return None  # denied: go on without the zone's view
    net = f.vnet_of((ips(client) or [""])[0])
    linked = [x for x in (links.json() or []) if isinstance(x, dict)]
    if links.ok and net is not None and not any(str(x.get("vnet", "")).lower().endswith(
            "/virtualnetworks/" + str(net.get("name", "")).lower()) for x in linked):
        return Move("", verdict=Verdict(
            "dns", f"The private DNS zone {zname} is not linked to {net['name']}, so {client['name']} resolves "
                   f"{f.symptom.server} through public DNS ({_public_answer_text(f)}) instead of the private "
                   f"record.", "high",
            faults=[{"resource_id": str(zone.get("id") or zname), "fault_type": "dns-private-zone-not-linked"}],
            actions=[f"Link private DNS zone {zname} (resource group {zrg}) to VNet {net['name']}: `az network "
                     f"private-dns link vnet create -g {zrg} -z {zname} -n link-{net['name']} -v {net.get('id') or net['name']} "
                     "-e false`, then confirm the name resolves to the private address from the VM."],
            evidence=[a for a in (links.audit_id, records.audit_id) if a]))
    names = [str(x.get("name", "")) for x in (records.json() or []) if isinstance(x, dict)]
    if records.ok and label not in [n.lower() for n in names]:
        near = [n for n in names if _close(n.lower(), label)]
        hint = f" A record named '{near[0]}' exists: likely a typo of '{label}'." if near else ""
        return Move("", verdict=Verdict(
            "dns", f"The private DNS zone {zname}, linked to {client['name']}'s VNet, has no A record for {label}: "
                   f"{f.symptom.server} does not resolve (NXDOMAIN).{hint}", "high",
            faults=[{"resource_id": str(zone.get("id") or zname), "fault_type": "dns-nxdomain"}],
            actions=[f"Add the A record {label} to private zone {zname} (resource group {zrg})"
                     + (f" or rename '{near[0]}' to '{label}'" if near else "")
                     + f": `az network private-dns record-set a add-record -g {zrg} -z {zname} -n {label} -a <IP>`."],
            evidence=[a for a in (records.audit_id, links.audit_id) if a]))
    return None


def _public_answer_text(f: Facts) -> str:
    ips = [w for w in f.local_answer() if is_ip(w)]
    return f"public address {ips[-1]}" if ips else "a public address"


def _close(a: str, b: str) -> bool:
    """Edit distance at most 2 (a typo)."""
    if abs(len(a) - len(b)) > 2:
        return False
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1] <= 2


# ---- the control plane -------------------------------------------------------------------------------


def _flow_obs(f: Facts, direction: str) -> Observation | None:
    return next((o for o in reversed(f.of("flow")) if r.option(o.argv, "--direction") == direction), None)


def _control_plane(f: Facts, client: dict[str, Any], server: dict[str, Any] | None, server_ip: str) -> Move | None:
    s = f.symptom
    cip = ips(client)[0]
    port = str(s.port) if s.port else "*"
    reads = [_shell(r.test_ip_flow(str(client["rg"]), str(client["name"]), "Outbound", f"{cip}:*",
                                   f"{server_ip}:{port}"),
                    f"Do the NSGs on {client['name']} let the outbound leg to {server_ip}:{port} out?"),
             _shell(r.show_next_hop(str(client["rg"]), str(client["name"]), cip, server_ip),
                    f"Which route does {client['name']} use towards {server_ip}?")]
    if server is not None:
        sip = ips(server)[0] if ips(server) else server_ip
        reads.insert(1, _shell(r.test_ip_flow(str(server["rg"]), str(server["name"]), "Inbound", f"{sip}:{port}",
                                              f"{cip}:*"),
                               f"Do the NSGs on {server['name']} let the inbound leg from {cip} in?"))
    if s.port:
        reads.append(_shell(r.curl_probe(server_ip, s.port),
                            f"A LOCAL connect to {server_ip}:{s.port} from this machine (only meaningful if it "
                            "sits in the VNet; CLOUD evidence governs)."))
    if _flow_obs(f, "Outbound") is None and not any(f.sent(str(c.args["command"])) for c in reads[:1]):
        return Move(f"Both ends known ({client['name']} {cip} -> {server_ip}:{port}). Reading the control plane "
                    "along the flow: NSG verdicts both ways and the next hop.", _unsent(f, reads))
    for direction in ("Outbound", "Inbound"):
        obs = _flow_obs(f, direction)
        doc = obs.json() if obs is not None and obs.ok else None
        if obs is not None and isinstance(doc, dict) and doc.get("access") == "Deny":
            return _nsg_deny(f, obs, str(doc.get("ruleName") or ""), client, server=server, server_ip=server_ip)
    hop_obs = next((o for o in reversed(f.of("next_hop")) if o.ok), None)
    hop = hop_obs.json() if hop_obs else None
    if hop_obs is not None and isinstance(hop, dict) and hop.get("nextHopType") == "VirtualAppliance" \
            and hop.get("nextHopIpAddress"):
        move = _appliance(f, hop_obs, hop, client)
        if move is not None:
            return move
    if isinstance(hop, dict) and hop.get("nextHopType") == "None":
        vpn = _vpn_step(f, hop_obs, client, server_ip)
        return vpn if vpn is not None else Move("", verdict=_no_route(f, hop_obs, client, server_ip))
    probe = next((o for o in reversed(f.of("probe"))), None)
    if probe is not None and "refused" in (str(probe.response.get("stderr", "")) + str(probe.response.get("output", ""))).lower():
        return Move("", verdict=_refused(f, probe, server, server_ip))
    if server is None and f.server_scale_set() is None and _private(server_ip):  # an instance's IP is no endpoint
        return _endpoint_step(f, client, server_ip)
    return None


def _private(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_private
    except ValueError:
        return False


def _endpoint_step(f: Facts, client: dict[str, Any], server_ip: str) -> Move | None:
    """A private server address that no VM holds: a private endpoint's, whose connection must be Approved
    for any packet to reach the service behind it (a manual one waits for the resource owner)."""
    obs = next((o for o in reversed(f.of("endpoints"))), None)
    if obs is None:
        calls = _unsent(f, [_shell(r.private_endpoints(), f"No VM holds {server_ip}: is it a private endpoint, and is "
                                                          "its connection approved?")])
        return Move(f"{server_ip} belongs to no VM: checking the private endpoints.", calls) if calls else None
    doc = obs.json() if obs.ok else None
    pe = next((e for e in doc or [] if isinstance(e, dict) and server_ip in (e.get("ips") or [])), None) \
        if isinstance(doc, list) else None
    if pe is None or pe.get("status") in (None, "Approved"):
        return None
    target = str(pe.get("target") or "")
    return Move("", verdict=Verdict(
        "route", f"{f.symptom.server or server_ip} is private endpoint {pe.get('name')} ({server_ip}), and its "
                 f"connection to {target.rsplit('/', 1)[-1] or 'the service'} is {pe.get('status')}: until the "
                 "resource's owner approves it, no packet to the address reaches the service (NSGs and routes "
                 f"from {client['name']} are clean).", "high",
        faults=[{"resource_id": str(pe.get("id") or pe.get("name")), "fault_type": "private-endpoint-not-approved"}],
        actions=[f"Ask the owner of {target or 'the target resource'} to approve the connection of private endpoint "
                 f"{pe.get('name')} (`az network private-endpoint-connection approve --id <connection id> "
                 "--description ...` in their subscription), or re-create the endpoint with auto-approval if you "
                 "own the resource; then retry the connection."],
        evidence=[a for a in (obs.audit_id, *[o.audit_id for o in f.of("flow") if o.ok]) if a]))


def _nsg_deny(f: Facts, obs: Observation, rule: str, client: dict[str, Any], *, server: dict[str, Any] | None,
              server_ip: str) -> Move:
    kind, _, name = rule.partition("/")
    vm = r.option(obs.argv, "--vm") or ""
    direction = r.option(obs.argv, "--direction") or ""
    flow = f"{client['name']} ({ips(client)[0]}) -> {server_ip}:{f.symptom.port or '*'}"
    if kind == "securityRules" and name:
        owner = next((o for o in reversed(f.of("rule_owner")) if f"name=='{name}'" in o.command), None)
        if owner is None:
            calls = _unsent(f, [_shell(r.nsg_owning_rule(name), f"Which NSG holds rule {name}, and at what priority?")])
            if calls:
                return Move(f"Network Watcher says rule {name} denies the {direction.lower()} leg on {vm}. Finding "
                            "its NSG.", calls)
        doc = owner.json() if owner is not None and owner.ok else None
        nsg = doc[0] if isinstance(doc, list) and doc and isinstance(doc[0], dict) else {}
        rid = f"{nsg['id']}/securityRules/{name}" if nsg.get("id") else name
        prio = next((str(x.get("priority")) for x in nsg.get("rules") or [] if isinstance(x, dict)), "?")
        nsg_name, nsg_rg = nsg.get("name", "its NSG"), nsg.get("rg", "<group>")
        return Move("", verdict=Verdict(
            "nsg", f"NSG {nsg_name} rule {name} (priority {prio}) denies {flow}: Network Watcher's "
                   f"{direction.lower()} verdict on {vm} names it.", "high",
            faults=[{"resource_id": rid, "fault_type": "nsg-deny"}],
            actions=[f"Change rule {name} in NSG {nsg_name} (resource group {nsg_rg}) so it no longer matches "
                     f"{flow}: narrow its source or ports, or give the allow rule for port {f.symptom.port or '*'} "
                     f"a lower priority number than {prio} (`az network nsg rule update -g {nsg_rg} --nsg-name "
                     f"{nsg_name} -n {name} ...`); then re-run test-ip-flow."],
            evidence=[a for a in (obs.audit_id, owner.audit_id if owner else None) if a]))
    # a default rule: no allow rule matches; the NSG is the one on the VM's subnet
    ip = ips(client)[0] if direction == "Outbound" else (ips(server)[0] if server and ips(server) else server_ip)
    subnet = f.subnet_of(ip) or {}
    nsg_id = str(subnet.get("nsg") or "")
    return Move("", verdict=Verdict(
        "nsg", f"No NSG rule allows {flow}: the default rule {name or rule} denies the {direction.lower()} leg on "
               f"{vm}.", "high",
        faults=[{"resource_id": f"{nsg_id}/defaultSecurityRules/{name}" if nsg_id else (name or rule),
                 "fault_type": "nsg-deny"}],
        actions=[f"Add an allow rule for {flow} to the NSG on {vm}'s subnet "
                 f"({nsg_id.rsplit('/', 1)[-1] or 'its NSG'}) with a priority below 65000."],
        evidence=[obs.audit_id] if obs.audit_id else []))


def _route_table(route_table_id: str) -> tuple[str, str] | None:
    m = re.search(r"/resourceGroups/([^/]+)/providers/Microsoft\.Network/routeTables/([^/]+)", route_table_id, re.I)
    return (m.group(1), m.group(2)) if m else None


def _appliance(f: Facts, hop_obs: Observation, hop: dict[str, Any], client: dict[str, Any]) -> Move | None:
    """The next hop is an appliance: is it up, and which route sends the traffic there?"""
    ip = str(hop["nextHopIpAddress"])
    table = _route_table(str(hop.get("routeTableId") or ""))
    appliance = next((o for o in reversed(f.of("appliance")) if f"'{ip}'" in o.command), None)
    routes = next((o for o in reversed(f.of("routes")) if f"'{ip}'" in o.command), None)
    wanted = [_shell(r.appliance_by_ip(ip), f"Which VM is the next hop {ip}, and is it running?")]
    if table is not None:
        wanted.append(_shell(r.routes_to(table[0], table[1], ip), f"Which route in {table[1]} sends the traffic to {ip}?"))
    hub_nsg = str((f.subnet_of(ip) or {}).get("nsg") or "")
    if hub_nsg:
        wanted.append(_shell(r.nsg_rules(hub_nsg), f"The NSG on the appliance's subnet filters what it forwards: "
                                                   f"does it let {client['name']}'s traffic through?"))
    if appliance is None or (table is not None and routes is None):
        calls = _unsent(f, wanted)
        if calls:
            return Move(f"{client['name']}'s traffic goes through the virtual appliance {ip} "
                        f"(route table {table[1] if table else '?'}). Checking the appliance.", calls)
    vms = appliance.json() if appliance is not None and appliance.ok else None
    vm = vms[0] if isinstance(vms, list) and vms and isinstance(vms[0], dict) else None
    rdoc = routes.json() if routes is not None and routes.ok else None
    route = rdoc[0] if isinstance(rdoc, list) and rdoc and isinstance(rdoc[0], dict) else {}
    if vm is not None and vm.get("power") != RUNNING:
        rid = str(route.get("id") or (f"{hop.get('routeTableId')}/routes/?" if table else ip))
        rname = route.get("name", "?")
        return Move("", verdict=Verdict(
            "route", f"Route {rname} in {table[1] if table else 'the route table'} sends {client['name']}'s traffic "
                     f"for {route.get('prefix', 'the server')} to {ip}, which is {vm['name']}: {vm.get('power')}. The "
                     "packets are black-holed at the next hop.", "high",
            faults=[{"resource_id": rid, "fault_type": "udr-dead-appliance"}],
            actions=[f"Start the appliance {vm['name']} (`az vm start -g {vm.get('rg')} -n {vm['name']}`), or point "
                     f"route {rname} in {table[1] if table else 'the route table'} at a healthy appliance (or remove "
                     "it) until it is back."],
            evidence=[a for a in (hop_obs.audit_id, appliance.audit_id if appliance else None,
                                  routes.audit_id if routes else None) if a]))
    if vm is not None and hub_nsg:
        return _appliance_nsg(f, hop_obs, hub_nsg, vm, client)
    return None


def _appliance_nsg(f: Facts, hop_obs: Observation, nsg_id: str, vm: dict[str, Any],
                   client: dict[str, Any]) -> Move | None:
    """A running appliance forwards only what its subnet's NSG lets in (and out) with the packet's own
    addresses: a rule there can drop one port of a path whose two ends allow it."""
    obs = next((o for o in reversed(f.of("nsg_rules")) if nsg_id in o.command), None)
    doc = obs.json() if obs is not None and obs.ok else None
    server_ip = f.server_ip()
    if not isinstance(doc, dict) or server_ip is None or obs is None:
        return None
    rules = [x for x in doc.get("rules") or [] if isinstance(x, dict)]
    cip, port = ips(client)[0], f.symptom.port
    for direction in ("Inbound", "Outbound"):  # in from the client, out towards the server: same addresses
        rule = deciding_rule(rules, direction, protocol="Tcp", src=cip, dst=server_ip, port=port)
        if rule is None or str(rule.get("access")) != "Deny":
            continue
        name, nsg_name, rg = rule.get("name"), doc.get("name"), doc.get("rg")
        flow = f"{client['name']} ({cip}) -> {server_ip}:{port or '*'}"
        return Move("", verdict=Verdict(
            "nsg", f"NSG {nsg_name} on the subnet of the appliance {vm['name']} ({', '.join(ips(vm))}), which the route "
                   f"sends the flow through, denies {flow} with rule {name} (priority {rule.get('priority')}, "
                   f"{direction.lower()}): the packets die at the appliance hop although both ends' NSGs allow "
                   "them.", "high",
            faults=[{"resource_id": f"{doc.get('id')}/securityRules/{name}" if doc.get("id") else str(name),
                     "fault_type": "nsg-deny"}],
            actions=[f"Allow {flow} through NSG {nsg_name} (resource group {rg}): add an allow rule for port "
                     f"{port or '*'} from {cip} with a priority number below {rule.get('priority')} (`az network nsg "
                     f"rule create -g {rg} --nsg-name {nsg_name} -n Allow{port or ''}FromSpoke --priority "
                     f"{max(100, int(rule.get('priority') or 200) - 10)} --access Allow --direction {direction} "
                     f"--protocol Tcp --source-address-prefixes {cip} --destination-port-ranges {port or '*'}`), "
                     "or narrow the deny rule."],
            evidence=[a for a in (obs.audit_id, hop_obs.audit_id) if a]))
    return None


def _vpn_step(f: Facts, hop_obs: Observation | None, client: dict[str, Any], server_ip: str) -> Move | None:
    """No route to a private address outside every VNet: is it on-premises, behind a site-to-site connection
    that is down (the gateway's routes to the site's ranges go with it)? The gateway sits in the client's
    VNet or in a hub it peers with, so their groups are where the connections are."""
    net = f.vnet_of(ips(client)[0]) or {}
    if not _private(server_ip) or any(p.get("state") != "Connected" for p in net.get("peerings") or []
                                      if isinstance(p, dict)) or f.vnet_of(server_ip) is not None:
        return None
    groups = [str(net.get("rg") or "")] + [_group_of(str(p.get("remote") or "")) for p in net.get("peerings") or []
                                           if isinstance(p, dict)]
    groups = [g for i, g in enumerate(groups) if g and g.lower() not in (x.lower() for x in groups[:i])]
    calls = _unsent(f, [c for g in groups for c in (
        _shell(r.vpn_connections(g), f"Is {server_ip} on-premises, behind a site-to-site connection of group {g}?"),
        _shell(r.local_gateways(g), f"Which on-premises ranges do group {g}'s local network gateways stand for?"))])
    if calls and not f.of("vpn_connections"):
        return Move(f"No route from {client['name']} to {server_ip}, an address in no VNet: checking the site-to-site "
                    "VPN connections that would carry it.", calls)
    sites = [x for o in f.of("local_gateways") if o.ok for x in (o.json() or []) if isinstance(x, dict)]
    site = next((x for x in sites if any(in_prefix(server_ip, p) for p in x.get("prefixes") or [])), None)
    conns = [x for o in f.of("vpn_connections") if o.ok for x in (o.json() or []) if isinstance(x, dict)]
    conn = next((c for c in conns if site and str(c.get("local", "")).lower() == str(site.get("id", "")).lower()), None)
    if site is None or conn is None or conn.get("status") == "Connected":
        return None
    evidence = [a for a in (hop_obs.audit_id if hop_obs else None,
                            *[o.audit_id for o in (*f.of("vpn_connections"), *f.of("local_gateways")) if o.ok]) if a]
    return Move("", verdict=Verdict(
        "route", f"{server_ip} is on-premises: it is in {site.get('name')}'s ranges ({', '.join(site.get('prefixes') or [])}), "
                 f"reached through the site-to-site connection {conn.get('name')}, which is {conn.get('status')}. With "
                 f"the tunnel down the gateway's routes to the site are gone, so {client['name']} has no route to "
                 f"{server_ip} (next hop None).", "high",
        faults=[{"resource_id": str(conn.get("id") or conn.get("name")), "fault_type": "vpn-connection-down"}],
        actions=[f"Bring connection {conn.get('name')} back: check the on-premises VPN device (reachable at the local "
                 f"gateway's address, same IKE version and pre-shared key), then `az network vpn-connection show -g "
                 f"{_group_of(str(conn.get('id') or ''))} -n {conn.get('name')} --query connectionStatus` until it is "
                 "Connected; `az network vnet-gateway list-learned-routes` should then list the site's ranges."],
        evidence=evidence))


def _group_of(resource_id: str) -> str:
    m = re.search(r"/resourceGroups/([^/]+)/", resource_id, re.I)
    return m.group(1) if m else ""


def _no_route(f: Facts, hop_obs: Observation | None, client: dict[str, Any], server_ip: str) -> Verdict:
    net = f.vnet_of(ips(client)[0]) or {}
    broken = [p for p in net.get("peerings") or [] if isinstance(p, dict) and p.get("state") != "Connected"]
    vnets = next((o for o in reversed(f.of("vnets")) if o.ok), None)
    evidence = [a for a in (hop_obs.audit_id if hop_obs else None, vnets.audit_id if vnets else None) if a]
    if broken:
        p = broken[0]
        return Verdict(
            "route", f"There is no route from {client['name']} to {server_ip} (next hop None): the peering "
                     f"{p.get('name')} of {net.get('name')} is {p.get('state')}, so the remote address space is gone "
                     "from the effective routes.", "high",
            faults=[{"resource_id": str(p.get("id") or p.get("name")), "fault_type": "peering-disconnected"}],
            actions=[f"Re-create the peering from the remote VNet back to {net.get('name')}, then delete and "
                     f"re-create {p.get('name')} (a Disconnected peering does not recover by itself): "
                     f"`az network vnet peering create -g <rg> --vnet-name <remote> -n <name> --remote-vnet "
                     f"{net.get('id') or net.get('name')} --allow-vnet-access`."],
            evidence=evidence)
    return Verdict(
        "route", f"There is no route from {client['name']} to {server_ip} (next hop None) and every peering of "
                 f"{net.get('name', 'its VNet')} is Connected: the address is outside every reachable address space.",
        "medium", actions=[f"Check that {server_ip} is the right address and that its VNet is peered with "
                           f"{net.get('name', 'the client VNet')}."], evidence=evidence)


def _refused(f: Facts, probe: Observation, server: dict[str, Any] | None, server_ip: str) -> Verdict:
    name = server["name"] if server else server_ip
    hop = next((o for o in reversed(f.of("next_hop")) if o.ok), None)
    flows = [o.audit_id for o in f.of("flow") if o.ok and o.audit_id]
    return Verdict(
        "service", f"{server_ip}:{f.symptom.port} refuses connections (RST): the NSGs allow the flow both ways "
                   f"and the route is intact (CLOUD), and a connect from this machine, which reaches the VNet, is "
                   f"refused by the host (LOCAL, consistent with the cloud evidence). Nothing listens on port "
                   f"{f.symptom.port} on {name}.", "medium",
        faults=[{"resource_id": str((server or {}).get("id") or name), "fault_type": "service-down"}],
        actions=[f"Start the service that should listen on {name}:{f.symptom.port} and check why it stopped "
                 f"(`az vm run-command invoke -g {(server or {}).get('rg', '<rg>')} -n {name} --command-id "
                 "RunShellScript --scripts 'ss -tlnp'` with the owner's approval)."],
        evidence=[a for a in (probe.audit_id, *flows, hop.audit_id if hop else None) if a])


def _vm_down(f: Facts, server: dict[str, Any]) -> Verdict:
    vms = next((o for o in reversed(f.of("vms")) if o.ok), None)
    return Verdict(
        "service", f"The server VM {server['name']} is not running ({server.get('power')}): nothing can answer on "
                   f"port {f.symptom.port or '?'}.", "high",
        faults=[{"resource_id": str(server.get("id") or server["name"]), "fault_type": "service-down"}],
        actions=[f"Start {server['name']} (`az vm start -g {server.get('rg')} -n {server['name']}`) and find out "
                 "who stopped it (activity log)."],
        evidence=[vms.audit_id] if vms and vms.audit_id else [])


