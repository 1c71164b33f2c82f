"""What the tools have told the playbook so far, rebuilt from the conversation on every turn.

The brain is a pure function of the history: each model turn's calls are paired with the next user
message's responses (the loop answers every call, in order), every shell answer is filed under the
read it was (:func:`step_of`), and the orchestrator's answers under their task. Nothing else is
remembered, so a resumed session (its history rebuilt from the audit trail) continues exactly.
"""

from __future__ import annotations

import ipaddress
import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from netghost.agent.brains._protocol import FunctionCall, Message
from netghost.agent.brains.playbook._reads import option, step_of
from netghost.agent.brains.playbook._symptom import (
    Symptom,
    is_fqdn,
    is_ip,
    parse_symptom,
    settle,
    stated_address,
)

__all__ = ["RUNNING", "Facts", "Observation", "in_prefix", "ips", "read_history"]

RUNNING = "VM running"
"""The power state az prints for a running VM (``az vm list -d``)."""


@dataclass(frozen=True)
class Observation:
    """One tool call and its answer."""

    call: FunctionCall
    response: Mapping[str, Any]
    step: str | None = None

    @property
    def command(self) -> str:
        return str(self.call.args.get("command", ""))

    @property
    def argv(self) -> list[str]:
        try:
            return shlex.split(self.command)
        except ValueError:
            return []

    @property
    def audit_id(self) -> str | None:
        aid = self.response.get("audit_id")
        return str(aid) if aid else None

    @property
    def ok(self) -> bool:
        """Completed with exit 0."""
        return self.response.get("status") == "completed" and self.response.get("exit_code") == 0

    @property
    def denied(self) -> bool:
        """A human (or the closed gate) said no, or the command was blocked."""
        meta = self.response.get("_meta") or {}
        return self.response.get("status") in ("denied", "blocked") or bool(
            self.response.get("denied_action") or meta.get("denied_action"))

    @property
    def denial_reason(self) -> str:
        meta = self.response.get("_meta") or {}
        return str(self.response.get("denial_reason") or meta.get("denial_reason") or "").strip()

    def json(self) -> Any:
        """The command's JSON output, or None."""
        try:
            return json.loads(str(self.response.get("output") or ""))
        except (json.JSONDecodeError, TypeError):
            return None


@dataclass
class Facts:
    """Everything learned, by step; the helpers answer the questions the plan asks."""

    symptom: Symptom
    observations: list[Observation] = field(default_factory=list)
    model_turns: int = 0
    user_notes: list[str] = field(default_factory=list)

    # ---- raw access ------------------------------------------------------------------------------

    def of(self, step: str) -> list[Observation]:
        """Shell observations of ``step``, oldest first."""
        return [o for o in self.observations if o.step == step]

    def tool(self, name: str) -> list[Observation]:
        """Orchestrator observations of tool ``name``."""
        return [o for o in self.observations if o.call.name == name]

    def sent(self, command: str) -> bool:
        """Was this exact command asked for before (whatever came of it)?"""
        return any(o.command == command for o in self.observations)

    def denied_commands(self) -> list[Observation]:
        return [o for o in self.observations if o.denied]

    def latest(self, step: str, *, command_has: str | None = None, **options: str) -> Observation | None:
        """The newest observation of ``step`` whose command holds ``command_has`` and whose options have the
        given values (``n="nic1"`` for ``-n nic1``; a long option by its name without dashes)."""
        for o in reversed(self.of(step)):
            if command_has is not None and command_has not in o.command:
                continue
            argv = o.argv
            if all(option(argv, f"-{k}" if len(k) == 1 else f"--{k.replace('_', '-')}") == v
                   for k, v in options.items()):
                return o
        return None

    def listing(self, step: str) -> list[dict[str, Any]]:
        """The newest successful list of ``step`` (the inventory reads): its dict items."""
        o = next((x for x in reversed(self.of(step)) if x.ok), None)
        doc = o.json() if o else None
        return [v for v in doc if isinstance(v, dict)] if isinstance(doc, list) else []

    # ---- NICs ------------------------------------------------------------------------------------

    def nics(self) -> list[dict[str, Any]]:
        """Every NIC as ``az network nic list`` read it (VM, addresses, subnet, NSG, IP forwarding)."""
        return self.listing("nics")

    def nic_by_ip(self, ip: str | None) -> dict[str, Any] | None:
        """The NIC holding ``ip`` (a VM's, or a scale-set instance's as ``vmss nic list`` read it)."""
        if not ip:
            return None
        found = next((n for n in self.nics() if ip in [str(x) for x in n.get("ips") or []]), None)
        if found is not None:
            return found
        for o in reversed(self.of("vmss_nics")):
            doc = o.json() if o.ok else None
            for n in doc if isinstance(doc, list) else []:
                if isinstance(n, dict) and str(n.get("ip")) == ip:
                    return {"id": n.get("id"), "name": str(n.get("id") or "").rsplit("/", 1)[-1], "ips": [ip],
                            "nsg": n.get("nsg"), "subnet": n.get("subnet"), "vm": n.get("instance"),
                            "scale_set": True}
        return None

    def nic_of(self, vm: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """A VM's primary NIC: the one its id names, else the one holding its first address."""
        if not vm:
            return None
        vid = str(vm.get("id") or "").lower()
        found = next((n for n in self.nics() if vid and str(n.get("vm") or "").lower() == vid), None)
        return found or self.nic_by_ip((ips(vm) or [""])[0])

    # ---- the endpoints ---------------------------------------------------------------------------

    def vms(self) -> list[dict[str, Any]]:
        return self.listing("vms")

    def vnets(self) -> list[dict[str, Any]]:
        return self.listing("vnets")

    def vm_named(self, word: str | None) -> dict[str, Any] | None:
        """The VM a word of the problem statement means: exact name, then the name's first DNS label or a
        contained word, then the first VM in a subnet of that name, then the VM owning an IP."""
        if not word:
            return None
        vms = self.vms()
        low = word.lower()
        label = low.split(".", 1)[0] if is_fqdn(low) else low
        for test in (lambda n: n == low, lambda n: n == label, lambda n: label in n or n in label):
            found = [v for v in vms if test(str(v.get("name", "")).lower())]
            if found:
                return found[0]
        if is_ip(word):
            return self.vm_by_ip(word)
        for net in self.vnets():
            for subnet in net.get("subnets") or []:
                if str(subnet.get("name", "")).lower() in (low, low.removesuffix("-subnet")):
                    inside = [v for v in vms if any(in_prefix(ip, subnet.get("prefix")) for ip in ips(v))]
                    if inside:
                        return inside[0]
        return None

    def is_known_host(self, word: str) -> bool:
        """A VM or scale set of the subscription by its exact name, or a VM's private address."""
        low = word.lower()
        return any(str(v.get("name", "")).lower() == low or word in ips(v) for v in self.vms()) or \
            self.scale_set_named(word) is not None

    # ---- scale sets ------------------------------------------------------------------------------

    def scale_sets(self) -> list[dict[str, Any]]:
        return self.listing("vmss")

    def scale_set_named(self, word: str | None) -> dict[str, Any] | None:
        """The scale set a word of the complaint names exactly (its instances are no VMs to ``vm list``)."""
        low = (word or "").lower()
        return next((v for v in self.scale_sets() if low and str(v.get("name", "")).lower() == low), None)

    def server_scale_set(self) -> dict[str, Any] | None:
        """The scale set the complaint's server is, when it is one and no VM has that name."""
        server = self.symptom.server
        if server is None or is_ip(server) or any(str(v.get("name", "")).lower() == server.lower() for v in self.vms()):
            return None
        return self.scale_set_named(server)

    def instances(self, vmss: Mapping[str, Any]) -> list[dict[str, str]]:
        """The set's instances as read by ``vmss nic list``: ``ip`` and ``instance`` (the instance's id), and
        ``power`` once ``vmss list-instances`` was read."""
        o = next((x for x in reversed(self.of("vmss_nics")) if x.ok and option(x.argv, "--vmss-name") == vmss.get("name")),
                 None)
        doc = o.json() if o else None
        p = next((x for x in reversed(self.of("vmss_instances")) if x.ok and option(x.argv, "-n") == vmss.get("name")),
                 None)
        states = {str(i.get("id") or "").lower(): str(i.get("power") or "") for i in (p.json() if p else None) or []
                  if isinstance(i, dict)}
        return [{"ip": str(n.get("ip")), "instance": str(n.get("instance")),
                 "power": states.get(str(n.get("instance") or "").lower(), "")} for n in doc or []
                if isinstance(n, dict) and is_ip(str(n.get("ip")))] if isinstance(doc, list) else []

    def vm_by_ip(self, ip: str) -> dict[str, Any] | None:
        return next((v for v in self.vms() if ip in ips(v)), None)

    def client(self) -> dict[str, Any] | None:
        return self.vm_named(self.symptom.client)

    def server_vm(self) -> dict[str, Any] | None:
        server = self.symptom.server
        if server is None:
            return None
        if is_ip(server):
            return self.vm_by_ip(server)
        if self.server_scale_set() is not None:
            return None
        ip = self.server_ip()
        by_ip = self.vm_by_ip(ip) if ip else None
        return by_ip or (None if self.symptom.server_is_name else self.vm_named(server))

    def server_ip(self) -> str | None:
        """The address the client should reach: the IP given, the private record of a name, or the VM's."""
        server = self.symptom.server
        if server is None:
            return None
        if is_ip(server):
            return server
        if self.symptom.server_is_name:
            return self.private_answer() or stated_address(self.symptom.text, server)
        vmss = self.server_scale_set()
        if vmss is not None:  # a scale set: its first instance stands for the path (one subnet, one NSG)
            found = self.instances(vmss)
            return found[0]["ip"] if found else None
        vm = self.vm_named(server)
        return ips(vm)[0] if vm and ips(vm) else None

    def vnet_of(self, ip: str | None) -> dict[str, Any] | None:
        return next((n for n in self.vnets() if ip and any(in_prefix(ip, p) for p in n.get("prefixes") or [])), None)

    def subnet_of(self, ip: str | None) -> dict[str, Any] | None:
        for net in self.vnets():
            for subnet in net.get("subnets") or []:
                if ip and in_prefix(ip, subnet.get("prefix")):
                    return dict(subnet)
        return None

    def storage_account(self, location: str | None = None) -> dict[str, Any] | None:
        """Where a capture goes: an account in the target's region (Network Watcher writes only there),
        one named for captures first."""
        o = next((x for x in reversed(self.of("storage")) if x.ok), None)
        doc = o.json() if o else None
        accounts = [a for a in doc if isinstance(a, dict)] if isinstance(doc, list) else []
        local = [a for a in accounts if location and str(a.get("location", "")).lower() == location.lower()]
        accounts = local or accounts
        preferred = [a for a in accounts if any(w in str(a.get("name", "")) for w in ("forensic", "capture", "diag"))]
        chosen = preferred or accounts
        return chosen[0] if chosen else None

    # ---- DNS ---------------------------------------------------------------------------------------

    def local_answer(self) -> list[str]:
        """This machine's resolver's answer for the server's name (CNAMEs with a trailing dot, then IPs)."""
        o = next((x for x in reversed(self.of("dig")) if x.ok), None)
        return str(o.response.get("output") or "").split() if o else []

    def zones(self) -> list[dict[str, Any]]:
        o = next((x for x in reversed(self.of("zones")) if x.ok), None)
        doc = o.json() if o else None
        return [z for z in doc if isinstance(z, dict)] if isinstance(doc, list) else []

    def owning_zone(self) -> tuple[dict[str, Any], str] | None:
        """The private zone that answers for the server's name (or a CNAME of it) and the record's label."""
        name = (self.symptom.server or "").lower().rstrip(".")
        names = [name] + [w.lower().rstrip(".") for w in self.local_answer() if not is_ip(w.rstrip("."))]
        best: tuple[dict[str, Any], str] | None = None
        for candidate in names:
            for zone in self.zones():
                zname = str(zone.get("name", "")).lower()
                if candidate.endswith("." + zname):
                    label = candidate[: -len(zname) - 1]
                    if best is None or len(zname) > len(str(best[0].get("name", ""))):
                        best = (zone, label)
        return best

    def zone_obs(self, step: str, zone: str) -> Observation | None:
        return next((o for o in reversed(self.of(step)) if option(o.argv, "-z", "--zone-name") == zone), None)

    def private_answer(self) -> str | None:
        """The IP the owning zone's record gives, when the zone is linked to the client's VNet."""
        owned = self.owning_zone()
        if owned is None:
            return None
        zone, label = owned
        records = self.zone_obs("zone_records", str(zone.get("name")))
        doc = records.json() if records and records.ok else None
        for rec in doc if isinstance(doc, list) else []:
            if isinstance(rec, dict) and str(rec.get("name", "")).lower() == label and rec.get("ips"):
                return str(rec["ips"][0])
        return None


def ips(vm: Mapping[str, Any] | None) -> list[str]:
    """A VM's private IPs (az prints one string, comma-separated, or a list)."""
    if not vm:
        return []
    raw = vm.get("ip")
    words = raw if isinstance(raw, list) else str(raw or "").replace(",", " ").split()
    return [str(w) for w in words if is_ip(str(w))]


def in_prefix(ip: str, prefix: object) -> bool:
    """Whether ``ip`` lies in ``prefix`` (False for anything that is not an address and a prefix)."""
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(str(prefix), strict=False)
    except ValueError:
        return False


def read_history(history: Sequence[Message]) -> Facts:
    """Pair each model call with its response and file it; the first user text is the problem statement."""
    statement = next((p.text for m in history if m.role == "user" for p in m.parts if p.text), "") or ""
    facts = Facts(symptom=parse_symptom(statement))
    pending: list[FunctionCall] = []
    for message in history:
        if message.role == "model":
            facts.model_turns += 1
            pending = [p.call for p in message.parts if p.call is not None]
            continue
        responses = [p.response for p in message.parts if p.response is not None]
        for call, response in zip(pending, responses, strict=False):
            step = step_of(str(call.args.get("command", ""))) if call.name == "run_shell_cmd" else None
            facts.observations.append(Observation(call, dict(response.response), step))
        texts = [p.text for p in message.parts if p.text]
        if responses:
            pending = []
        elif texts and facts.model_turns:
            facts.user_notes.extend(t for t in texts if t)
    facts.symptom = settle(facts.symptom, facts.is_known_host)  # before the inventory: addresses and names only
    return facts
