"""The playbook's next move, decided from the facts alone (seed 001 §2 escalation ladder, §5 taxonomy).

The ladder: the inventory in one turn (VMs, NICs, VNets, scale sets, storage; the private zones and this
machine's answer when the server is a name); the name's own hop when there is one (:mod:`._dns_step`); a
scale set's instances; then the path walk (:mod:`._path`, the checks of :mod:`._checks`): the flow's path
built hop by hop from the effective routes, each hop asked the questions its type raises, one hop level per
turn, forward and back. A capture runs only when the walk finds every hop healthy, or finds a suspect only
the packets can settle (:mod:`._capture`); its capture points come from the walked path.

Every fault, not the first: the walk goes on past a fault that only filters the flow, and past a name that
does not resolve to the address it should give; a statement that reports several failing flows ("the orders
API name no longer resolves, and cache calls to 10.55.3.6:6380 time out") has each investigated to its own
verdict, their reads batched, and every fault found goes into one verdict with every fix. Honesty: a verdict
reached from a client the complaint did not name is at most medium confidence and says so.

Denials (seed 001 §4): a denied command is never sent again, and a check whose read was refused decides with
what it has; a capture refused with a reason that names another VM or the key auth mode is retried that way
once; otherwise the playbook concludes from the control plane with lower confidence, listing what it could
not verify. Conflicts: a LOCAL probe never overrides CLOUD evidence; it only corroborates it.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import replace
from typing import Any

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._capture import capture_move
from netghost.agent.brains.playbook._checks import CHECKS
from netghost.agent.brains.playbook._dns_step import close, dns_step, name_from_words, unsent
from netghost.agent.brains.playbook._facts import RUNNING, Facts, ips
from netghost.agent.brains.playbook._moves import Family, Move, Verdict, merge
from netghost.agent.brains.playbook._moves import shell_call as _shell
from netghost.agent.brains.playbook._path import Flow, Hop, Walk, walk
from netghost.agent.brains.playbook._symptom import complaints, is_ip, looks_like_host, stated_address

__all__ = ["decide", "families", "flow_walk", "onprem_walk"]


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
    chosen = by_kind.get(s.kind, ["nsg", "route", "service"])
    if s.server_is_name and "dns" not in chosen:
        chosen = ["dns", *chosen[:2]]
    return chosen


def _inventory(f: Facts) -> Move:
    s = f.symptom
    calls = [_shell(r.vm_list(), "Find both ends of the complaint (IPs, groups, power state) in any resource group."),
             _shell(r.nic_list(), "Every NIC: which VM, which subnet, its own NSG and its IP forwarding flag (the "
                                  "appliances on the path need it)."),
             _shell(r.vnet_list(), "Map the VNets: address spaces, DNS servers, subnets with their NSGs and route "
                                   "tables, peerings and their state."),
             _shell(r.storage_accounts(), "Know where a capture could be written, should one be needed."),
             _shell(r.vmss_list(), "Scale sets too: their instances are not in the VM list.")]
    if s.server_is_name and s.server:
        calls += [_shell(r.private_zone_list(), f"Find the private DNS zone that should answer for {s.server}."),
                  _shell(r.dig_short(s.server), f"What this machine's resolver answers for {s.server} "
                                                "(LOCAL: not the VNet's view, but it shows CNAMEs).")]
    return Move(f"Investigating: {s.text}. First the inventory: the endpoints, their NICs and the network they sit "
                "in.", calls)


def decide(f: Facts) -> Move:
    """The next move (see the module docstring). A statement that reports several failing flows has each
    investigated in turn, to its own verdict, and the verdicts joined: one flow's cause never ends another's."""
    if not f.of("vms"):
        return _inventory(f)
    parts = complaints(f.symptom, f.is_known_host)
    if len(parts) < 2:
        return _decide_one(f)
    verdicts: list[Verdict] = []
    reads: list[Move] = []
    for i, part in enumerate(parts, 1):
        move = _decide_one(replace(f, symptom=part))
        if move.verdict is not None:
            verdicts.append(move.verdict)
            continue
        move = Move(f"Complaint {i} of {len(parts)} ('{part.text}'): {move.text}", move.calls)
        if any(c.name != "run_shell_cmd" for c in move.calls):  # the data plane: one complaint at a time
            return move
        reads.append(move)
    if reads:  # the reads of every open complaint in one turn
        calls = list({str(c.args): c for m in reads for c in m.calls}.values())
        return Move(" ".join(m.text for m in reads), calls)
    return Move("", verdict=merge(verdicts))


def _decide_one(f: Facts) -> Move:
    """The next move for one failing flow; a verdict reached from a client the complaint did not name is never
    stated with high confidence (the path walked may not be the one that fails)."""
    move = _decide_flow(f)
    guessed = _guessed_client(f)
    if move.verdict is None or guessed is None or move.verdict.confidence != "high":
        return move
    v = move.verdict
    return Move(move.text, verdict=replace(
        v, confidence="medium",
        summary=f"{v.summary} The complaint names no client: the path was walked from {guessed}, the first running VM "
                "that is not the server, which may not be the client that fails.",
        actions=[*v.actions, "Name the failing client (VM or address) and re-run the investigation from it."]))


def _guessed_client(f: Facts) -> str | None:
    """The VM a walk starts from when the complaint names no client nor clients outside Azure."""
    client = f.client()
    if client is not None and client is not f.server_vm():
        return None
    if f.symptom.client_range is not None or isinstance(_remote_clients(f), str):
        return None
    vm = _fallback_client(f)
    return str(vm.get("name")) if vm is not None else None


def _decide_flow(f: Facts) -> Move:
    """The next move for one failing flow, from its client's side."""
    named = name_from_words(f) if f.symptom.server is None else None
    if isinstance(named, Move):
        return named
    if named is not None:
        f = replace(f, symptom=replace(f.symptom, server=named))
    s = f.symptom
    client = f.client()
    if client is not None and client is f.server_vm():  # two words of the complaint for one host: not a client
        client = None
    remote = _remote_clients(f) if client is None else None
    if isinstance(remote, Move):
        return remote
    client = client if client is not None or remote else _fallback_client(f)
    if client is None and not remote:
        return Move("", verdict=Verdict(None, f"Could not identify the client of '{s.text}' among the VMs the "
                                              "subscription holds.", "low", is_anomaly=False,
                                        actions=["Name the client VM (as Azure knows it) and the server and port."]))
    before = _before_the_walk(f, client)
    if before is not None:
        return _past_the_name(f, client, before)
    server_ip = f.server_ip() or _public_answer(f)
    account = _storage_named(f) if server_ip is None else None
    if account is not None and client is not None:
        return _storage_walk(f, client, account)
    if server_ip is None:
        return Move("", verdict=Verdict(None, f"Could not find the server of '{s.text}' ({s.server or 'not named'}).",
                                        "low", is_anomaly=False,
                                        actions=["Name the server (VM, IP address or DNS name) and the port."]))
    w = flow_walk(f, client, server_ip) if client is not None else onprem_walk(f, str(remote), server_ip)
    return _after_walk(f, w) or capture_move(f, w)


def _after_walk(f: Facts, w: Walk) -> Move | None:
    """The walk's reads still to ask, else every fault it found in one verdict (None: no fault, the packets
    decide)."""
    calls = unsent(f, w.pending())
    if calls:
        return Move(_walk_text(w), calls)
    faults = w.all_faults()
    if not faults:
        return None
    v = merge([x.verdict for x in faults])
    # a box one direction only crosses breaks the flow whatever the complaint: said, not claimed (the tunnel's MTU
    # or a NAT gateway's ports are suspects of every such path, not findings of this one)
    doubtful = [x for x in w.suspects if x.fault_type == "asymmetric-routing"]
    if doubtful:
        doubts = "; ".join(dict.fromkeys(x.text for x in doubtful))
        v = replace(v, summary=f"{v.summary} Not confirmed (only packets can tell, once the above is fixed): {doubts}.",
                    actions=[*v.actions, "Once fixed, capture the flow at both ends to settle what the configuration "
                                         f"cannot: {doubts}."])
    return Move("", verdict=v)


_NAME_FAULTS = frozenset({"dns-nxdomain", "dns-private-zone-not-linked"})


def _past_the_name(f: Facts, client: dict[str, Any] | None, move: Move) -> Move:
    """A name that does not lead where it should is one fault; the path to the address it should lead to may
    hold another (fixing the record alone would not make the flow work). When that address is known (the
    private record an unlinked zone holds, the record a typo away, the address the complaint states, the VM
    the name's label names), the flow's path to it is walked too and its faults join the name's."""
    v = move.verdict
    if v is None or client is None or not f.symptom.port or not v.faults or \
            any(x.get("fault_type") not in _NAME_FAULTS for x in v.faults):
        return move
    target = _meant_address(f)
    if target is None or target in ips(client):
        return move
    w = flow_walk(f, client, target)
    calls = unsent(f, w.pending())
    if calls:
        return Move(f"{v.summary} Walking on to the address the name should give ({target}): does the path hold "
                    f"another fault? {_walk_text(w)}", calls)
    return Move("", verdict=merge([v, *[x.verdict for x in w.all_faults()]]))


def _meant_address(f: Facts) -> str | None:
    """The address a broken name should have given (see :func:`_past_the_name`), or None."""
    found = f.private_answer() or stated_address(f.symptom.text, f.symptom.server)
    if found:
        return found
    owned = f.owning_zone()
    if owned is not None:
        zone, label = owned
        records = f.zone_obs("zone_records", str(zone.get("name")))
        doc = records.json() if records is not None and records.ok else None
        near = [x for x in doc or [] if isinstance(x, dict) and x.get("ips") and close(str(x.get("name", "")).lower(), label)]
        if near:
            return str(near[0]["ips"][0])
        vm = f.vm_named(label)
        return ips(vm)[0] if vm is not None and ips(vm) else None
    return None


def _storage_named(f: Facts) -> dict[str, Any] | None:
    """The storage account the complaint names first (a word of it that is an account's name)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9-]{2,}", f.symptom.text)]
    accounts = {str(a.get("name") or "").lower(): a for a in f.listing("storage")}
    return next((accounts[w] for w in words if w in accounts), None)


def _storage_walk(f: Facts, client: dict[str, Any], account: dict[str, Any]) -> Move:
    """The path to a storage account's public endpoint: the account hop's checks."""
    flow = Flow(client_ip=(ips(client) or [""])[0], server_ip=str(account.get("name")), port=f.symptom.port or 443,
                client=client)
    w = walk(f, flow, [Hop("storage", str(account.get("name")), None, doc={"account": account})], CHECKS)
    after = _after_walk(f, w)
    if after is not None:
        return after
    return Move("", verdict=Verdict(None, f"The network path from {client.get('name')} to storage account "
                                          f"{account.get('name')} is open: its network rules admit the client's subnet "
                                          "through a service endpoint no policy narrows.", "medium", is_anomaly=False,
                                    actions=["Check the caller's identity and the account's RBAC (a 403 that is not "
                                             "the network's)."], evidence=list(w.evidence)))


def _before_the_walk(f: Facts, client: dict[str, Any] | None) -> Move | None:
    """The hops before the path: the name's (its zone, links, record) and a scale set's instances."""
    s = f.symptom
    if s.server_is_name and s.server and not f.of("zones"):  # the name was placed only once the VMs were known
        calls = unsent(f, [_shell(r.private_zone_list(), f"Find the private DNS zone that should answer for {s.server}."),
                           _shell(r.dig_short(s.server), f"What this machine's resolver answers for {s.server}.")])
        if calls:
            return Move(f"The server is the name {s.server}: which zone answers for it?", calls)
    if s.server_is_name and client is not None:
        dns = dns_step(f, client)
        if dns is not None:
            return dns
    vmss = f.server_scale_set()
    if vmss is not None and not f.instances(vmss):
        calls = unsent(f, [_shell(r.vmss_nics(str(vmss.get("rg")), str(vmss.get("name"))),
                                  f"{vmss.get('name')} is a scale set, not a VM: which addresses do its instances have?")])
        if calls:
            return Move(f"The server {vmss.get('name')} is a scale set, not a VM: finding its instances.", calls)
    return None


def flow_walk(f: Facts, client: dict[str, Any], server_ip: str) -> Walk:
    """The path walk of the complaint's flow, from the client's NIC (the server's reads asked at once)."""
    server = f.server_vm()
    flow = Flow(client_ip=ips(client)[0], server_ip=server_ip, port=f.symptom.port, client=client, server=server,
                scale_set=f.server_scale_set())
    start = Hop("client", str(client["name"]), flow.client_ip, doc={"vm": client, "nic": f.nic_of(client)})
    prefetch: list[Hop] = []
    if flow.scale_set is not None:
        prefetch.append(Hop("scale-set", str(flow.scale_set.get("name")), server_ip, doc=flow.scale_set))
    if server is not None and server.get("power") in (None, RUNNING):
        prefetch.append(Hop("server", str(server["name"]), server_ip, doc={"vm": server, "nic": f.nic_by_ip(server_ip)}))
    return walk(f, flow, [start], CHECKS, prefetch=prefetch)


def onprem_walk(f: Facts, network: str, server_ip: str) -> Walk:
    """The path walk of clients outside Azure (a site's network): in through their site's tunnel and the
    gateway's subnet, to the server, and back."""
    server = f.server_vm()
    flow = Flow(client_ip=_host_in(network), server_ip=server_ip, port=f.symptom.port, server=server,
                scale_set=f.server_scale_set(), client_range=network)
    server_nic = f.nic_by_ip(server_ip) or {}
    start = Hop("site", flow.client_name, flow.client_ip, doc={"range": network, "server_nic": server_nic})
    prefetch = [Hop("server", str(server["name"]), server_ip, doc={"vm": server, "nic": server_nic})] \
        if server is not None and server.get("power") in (None, RUNNING) else []
    return walk(f, flow, [start], CHECKS, prefetch=prefetch)


def _host_in(network: str) -> str:
    """An address that stands for a network's clients (its first host)."""
    try:
        net = ipaddress.ip_network(network, strict=False)
    except ValueError:
        return network.split("/", 1)[0]
    return str(net.network_address + 1) if net.num_addresses > 2 else str(net.network_address)


_COMMON = frozenset({"users", "user", "clients", "client", "office", "site", "plant", "branch", "cannot", "connect",
                     "connects", "reach", "from", "with", "every", "since", "their", "there", "this", "that", "the"})


def _remote_clients(f: Facts) -> str | Move | None:
    """Clients outside Azure: a network the complaint names ("the office (10.12.8.0/22)"), or a site it names
    by a word of a local network gateway's name ("Rotterdam scanners": lng-rotterdam), whose ranges are then
    the clients'. None when the complaint names neither."""
    s = f.symptom
    if s.client_range:
        return s.client_range
    if s.client is None:
        return None
    groups = list(dict.fromkeys(str(n.get("rg")) for n in f.vnets() if n.get("rg")))
    calls = unsent(f, [_shell(r.local_gateways(g), f"Is '{s.client}' an on-premises site? Group {g}'s local network "
                                                     "gateways and their ranges.") for g in groups])
    if calls and not f.of("local_gateways"):
        return Move(f"'{s.client}' is no VM of the subscription: are the clients on premises, behind a site?", calls)
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]{3,}", s.text)} - _COMMON
    for o in f.of("local_gateways"):
        for site in (o.json() if o.ok else None) or []:
            if not isinstance(site, dict):
                continue
            tokens = set(re.split(r"[^a-z0-9]+", str(site.get("name") or "").lower()))
            if words & tokens and site.get("prefixes"):
                return str(site["prefixes"][0])
    return None


def _walk_text(w: Walk) -> str:
    path = " -> ".join(f"{h.kind} {h.name}" for h in w.forward()) or w.flow.client_name
    return (f"Walking the path of {w.flow.text()} ({path}). Reading what the next hops need: "
            f"{'; '.join(w.reasons()[:4])}.")


def _fallback_client(f: Facts) -> dict[str, Any] | None:
    """No client named ("name Z does not resolve", "connections to Y time out"): the first running VM that is not
    the server. A client named like a host the inventory does not hold is not guessed at."""
    if f.client() is not None or (f.symptom.client is not None and looks_like_host(f.symptom.client)):
        return None
    server = f.server_vm()
    return next((v for v in f.vms() if v is not server and v.get("power") == RUNNING), None)


def _public_answer(f: Facts) -> str | None:
    """A name no private zone owns is answered by public DNS, the same for the VNet and this machine."""
    if not f.symptom.server_is_name or f.owning_zone() is not None:
        return None
    found = [w for w in f.local_answer() if is_ip(w)]
    return found[-1] if found else None
