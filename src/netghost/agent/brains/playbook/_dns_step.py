"""The name's hop: which private zone answers for it, whether the client's VNet sees that zone, and whether
the zone holds the record.

A name is the first hop of a flow that starts with one: a VNet resolves through Azure DNS and the private
zones linked to it, so an unlinked zone sends the client to the public answer, and a linked zone without
the record answers NXDOMAIN (a near-miss record name is likely a typo).
"""

from __future__ import annotations

import re
from typing import Any

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._facts import Facts, ips
from netghost.agent.brains.playbook._moves import Move, Verdict
from netghost.agent.brains.playbook._moves import shell_call as _shell
from netghost.agent.brains.playbook._symptom import is_ip

__all__ = ["close", "dns_step", "name_from_words", "unsent"]


def unsent(f: Facts, calls: list[Any]) -> list[Any]:
    """Drop commands already sent (a denied one is never repeated; a read is never repeated either)."""
    return [c for c in calls if c.name != "run_shell_cmd" or not f.sent(str(c.args["command"]))]




def dns_step(f: Facts, client: dict[str, Any]) -> Move | None:
    owned = f.owning_zone()
    if owned is None:
        return None
    zone, label = owned
    zname, zrg = str(zone.get("name")), str(zone.get("rg"))
    links, records = f.zone_obs("zone_links", zname), f.zone_obs("zone_records", zname)
    if links is None or records is None:
        calls = unsent(f, [_shell(r.private_zone_links(zrg, zname), f"Is {zname} linked to {client['name']}'s VNet?"),
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
    custom = _custom_resolver(f, net)
    if custom is not None:
        return custom
    held = [x for x in (records.json() or []) if isinstance(x, dict)]
    names = [str(x.get("name", "")) for x in held if _answers_a(x)]
    other = sorted({_rtype(x) for x in held if str(x.get("name", "")).lower() == label and not _answers_a(x)})
    if records.ok and other and label not in [n.lower() for n in names]:
        return Move("", verdict=Verdict(
            "dns", f"The private DNS zone {zname}, linked to {client['name']}'s VNet, holds {label} only as a "
                   f"{'/'.join(other)} record: an address lookup of {f.symptom.server} gets an answer with no address "
                   "(NOERROR, no data), so the client has nothing to connect to.", "high",
            faults=[{"resource_id": str(zone.get("id") or zname), "fault_type": "dns-nxdomain"}],
            actions=[f"Add the A record {label} to private zone {zname} (resource group {zrg}) next to its "
                     f"{'/'.join(other)} record: `az network private-dns record-set a add-record -g {zrg} -z {zname} "
                     f"-n {label} -a <IP>`."],
            evidence=[a for a in (records.audit_id, links.audit_id) if a]))
    if records.ok and label not in [n.lower() for n in names]:
        near = [n for n in names if close(n.lower(), label)]
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


def _rtype(record: dict[str, Any]) -> str:
    """``A`` of ``Microsoft.Network/privateDnsZones/A`` (az prints the full type)."""
    return str(record.get("type") or "A").rsplit("/", 1)[-1].upper()


def _answers_a(record: dict[str, Any]) -> bool:
    """A record set an address lookup is answered from: addresses, or an alias to follow."""
    return bool(record.get("ips") or record.get("cname")) or (_rtype(record) in ("A", "CNAME") and "ips" not in record)


def name_from_words(f: Facts) -> Move | str | None:
    """The name a complaint tells by what it is for ("the orders API name no longer resolves"): the record of a
    private zone whose label is those words (joined as names are: ``orders-api``, ``ordersapi``), else one a
    typo away; the zones and their records are read first. None when no zone holds such a name."""
    words = [w.lower() for w in f.symptom.name_words]
    if not words:
        return None
    if not f.of("zones"):
        calls = unsent(f, [_shell(r.private_zone_list(), f"Which private DNS zones could hold the name of the "
                                                         f"{' '.join(f.symptom.name_words)}?")])
        if calls:
            return Move(f"The complaint names no host for the {' '.join(f.symptom.name_words)}: which private zone "
                        "holds its name?", calls)
    zones = f.zones()[:6]
    calls = unsent(f, [_shell(r.private_zone_records(str(z.get("rg")), str(z.get("name"))),
                              f"Does {z.get('name')} hold a name for the {' '.join(f.symptom.name_words)}?")
                       for z in zones if f.zone_obs("zone_records", str(z.get("name"))) is None])
    if calls:
        return Move("Reading the private zones' records for the name the complaint describes.", calls)
    wanted = {sep.join(words) for sep in ("-", "", "_", ".")}
    labels: list[tuple[str, str]] = []
    for z in zones:
        o = f.zone_obs("zone_records", str(z.get("name")))
        doc = o.json() if o is not None and o.ok else None
        labels += [(str(x.get("name", "")).lower(), str(z.get("name"))) for x in doc or [] if isinstance(x, dict)]
    exact = [f"{label}.{zone}" for label, zone in labels if label in wanted]
    near = [f"{label}.{zone}" for label, zone in labels if any(close(label, w) for w in wanted)]
    found = exact or near
    return found[0] if found else None


AZURE_DNS = "168.63.129.16"
"""Azure's resolver: the only one that answers from the private zones linked to a VNet."""

_PUBLIC_PATH = re.compile(r"\b403\b|authori[sz]ation ?failure|not authori[sz]ed|public (?:ip|address|endpoint)|"
                          r"resolves? (?:to )?(?:the |a |its )?public", re.I)


def _custom_resolver(f: Facts, net: dict[str, Any] | None) -> Move | None:
    """A VNet with its own DNS servers resolves through them, not through Azure DNS: a private zone is answered
    only if they forward to Azure DNS. Their forwarders are inside the guest (Azure does not show them), so the
    server is at fault when the complaint shows the client took the public path to a name a private zone
    answers for (a 403 of a service that admits only its private endpoint, a public address)."""
    servers = [str(x) for x in (net or {}).get("dns") or [] if x]
    if not servers or AZURE_DNS in servers or not _PUBLIC_PATH.search(f.symptom.text):
        return None
    owned = f.owning_zone()
    zname = str(owned[0].get("name")) if owned else "the private zone"
    server = f.vm_by_ip(servers[0])
    rid = str((server or {}).get("id") or servers[0])
    who = f"{server['name']} ({servers[0]})" if server else servers[0]
    vnets = next((o for o in reversed(f.of("vnets")) if o.ok), None)
    zones = next((o for o in reversed(f.of("zones")) if o.ok), None)
    return Move("", verdict=Verdict(
        "dns", f"{(net or {}).get('name')} resolves through its own DNS server {who}, not Azure DNS: {zname}, which "
               f"answers for {f.symptom.server}, is seen only by Azure DNS ({AZURE_DNS}), so unless {who} forwards to "
               f"it the client gets the public answer ({_public_answer_text(f)}) and reaches the service's public "
               f"endpoint, which refuses it.", "medium",
        faults=[{"resource_id": rid, "fault_type": "dns-custom-server-no-forward"}],
        actions=[f"On {who}: forward {zname} (a conditional forwarder), or everything, to {AZURE_DNS}; then check from "
                 f"{net and net.get('name')} that {f.symptom.server} resolves to the private address."],
        evidence=[a for a in (vnets.audit_id if vnets else None, zones.audit_id if zones else None) if a]))


def _public_answer_text(f: Facts) -> str:
    ips = [w for w in f.local_answer() if is_ip(w)]
    return f"public address {ips[-1]}" if ips else "a public address"


def close(a: str, b: str) -> bool:
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
