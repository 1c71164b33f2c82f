"""Where the engineer's machine sits, and what it can reach: the model behind every probe shim.

By default the machine is a laptop outside every VNet (``local_machine`` in the world, seed 001's
"LOCAL PROBE CONTEXT WARNING"): it resolves through a public resolver (private zones answer
NXDOMAIN), it has no route to private addresses (they die at the ISP: timeouts, never a refusal)
and it reaches a VM only through that VM's public IP, if an NSG rule lets the Internet in. A world
may instead declare ``local_machine.inside_vnet`` (a VPN into a VNet): then the machine resolves as
that VNet does and reaches VMs in it or in connected peerings, subject to their NSGs, power
state, listening services and the world's fault.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from netghost.errors import LabError
from netghost.lab.state import LabState, default_state_dir
from netghost.lab.world import DnsAnswer, Nic, Vm, World, is_ip

__all__ = ["Probe", "Vantage", "console_main", "is_ip", "load_vantage", "probe"]

NAT_PUBLIC_IP = "198.51.100.23"  # the laptop's address as the Internet sees it (TEST-NET-2)
HOME_GATEWAY = "192.168.1.1"
ISP_HOP = "100.64.0.1"
Verdict = Literal["ok", "refused", "drop"]


@dataclass
class Vantage:
    """The engineer's machine in one world, at one lab time."""

    world: World
    inside: str | None
    ip: str
    resolver: str
    now: datetime
    cwd: str = ""
    """The caller's working directory (a resident lab serves callers elsewhere); "" is this process's."""

    def rng(self, *parts: object) -> random.Random:
        digest = hashlib.sha256("|".join(str(p) for p in (self.world.name, *parts)).encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def resolve(self, name: str) -> DnsAnswer:
        """What this machine's resolver answers for ``name``."""
        answer = self.world.resolve(name, self.inside)
        if self.inside is None:
            return answer
        return DnsAnswer(answer.name, answer.rcode, answer.addresses, answer.cname_chain, self.resolver,
                         answer.source)

    def resolver_reachable(self, server: str) -> bool:
        """Azure DNS (168.63.129.16) and VNet resolvers answer only from inside a VNet."""
        if server == self.resolver:
            return True
        address = ipaddress.IPv4Address(server)
        if self.inside is None:
            return address.is_global and not server.startswith("168.63.129.")
        return True


@dataclass(frozen=True)
class Probe:
    """The fate of a probe to one address: ``ok`` (answered), ``refused`` (RST / port
    unreachable) or ``drop`` (nothing comes back); ``rtt_ms`` base latency; ``hops`` the
    addresses that answer a traceroute on the way (None = a silent hop)."""

    verdict: Verdict
    rtt_ms: float
    ttl: int
    hops: tuple[str | None, ...]
    loss: float = 0.0


def load_vantage(env: dict[str, str] | None = None, cwd: str = "") -> Vantage:
    """The vantage of the lab named by ``$NETGHOST_LAB_STATE`` (default ``./audit/lab``), for a caller
    in ``cwd`` (default this process's working directory).

    Raises:
        LabError: there is no lab state there.
    """
    env = dict(os.environ if env is None else env)
    state = LabState(default_state_dir(env)).require()
    world = state.world()
    local = world.spec.local_machine
    inside = local.inside_vnet
    resolver = local.resolver
    if inside is not None and local.resolver == "1.1.1.1":
        vnet = world.vnet(inside)
        resolver = vnet.dns_servers[0] if vnet is not None and vnet.dns_servers else "168.63.129.16"
    return Vantage(world, inside, local.ip, resolver, state.clock(env).now_dt(), cwd)


def _public_vm(world: World, ip: str) -> tuple[Vm, Nic] | None:
    return next(((vm, nic) for vm, nic in world.nics() if nic.public_ip == ip), None)


def probe(v: Vantage, dst: str, proto: Literal["Icmp", "Tcp", "Udp"], port: int | None = None) -> Probe:
    """Decide what a probe from the engineer's machine to ``dst`` experiences."""
    w = v.world
    local_lan = ipaddress.ip_network(f"{v.ip}/24", strict=False)
    if ipaddress.IPv4Address(dst) in local_lan:
        return Probe("ok" if dst == HOME_GATEWAY else "drop", 0.5, 64, (dst,))
    outside_hops: tuple[str | None, ...] = (HOME_GATEWAY, ISP_HOP)
    public = _public_vm(w, dst)
    if public is not None:
        vm, nic = public
        return _at_vm(v, vm, nic, proto, port, NAT_PUBLIC_IP, 24.0, (*outside_hops, None), dst)
    found = w.vm_by_ip(dst)
    if v.inside is None or found is None:
        # From the laptop a private address has no route; an unknown public one we cannot model.
        return Probe("drop", 0.0, 0, (*outside_hops, None) if v.inside is None else (None,))
    vm, nic = found
    local_vnet = w.vnet(v.inside)
    dst_vnet = w.vnet_of_ip(dst)
    if local_vnet is None or dst_vnet is None:
        return Probe("drop", 0.0, 0, (None,))
    reachable = dst_vnet.name == local_vnet.name or any(
        ipaddress.IPv4Address(dst) in ipaddress.ip_network(p) for p in w.peered_prefixes(local_vnet))
    if not reachable:
        return Probe("drop", 0.0, 0, (None,))
    return _at_vm(v, vm, nic, proto, port, v.ip, 21.0, (), dst)


def _at_vm(v: Vantage, vm: Vm, nic: Nic, proto: str, port: int | None,  # noqa: PLR0917  one decision
           src_ip: str, rtt: float, hops: tuple[str | None, ...], dst: str) -> Probe:
    w = v.world
    if vm.power_state != "running":
        return Probe("drop", 0.0, 0, (*hops, None))
    decision = w.evaluate_nsg(vm, "Inbound", protocol=proto, local_ip=nic.private_ip, local_port=port,
                              remote_ip=src_ip, remote_port=50000, nic=nic)
    if decision.access == "Deny":
        return Probe("drop", 0.0, 0, (*hops, None))
    ttl = 128 if vm.os == "Windows" else 64
    ttl -= len([h for h in hops if h]) + (6 if hops else 0)
    loss = 0.0
    fault = w.fault
    if fault is not None and fault.type == "path-packet-loss":
        lossy = [t for t in w.spec.traffic if t.name in fault.flows]
        if any(w.endpoint_ip(t.server) == nic.private_ip for t in lossy):
            loss = float(str(fault.params.get("loss_rate", 0.05)))
    if proto == "Tcp" and port is not None and w.service_at(nic.private_ip, port, "Tcp") is None:
        return Probe("refused", rtt, ttl, (*hops, dst))
    if proto == "Udp":
        return Probe("refused", rtt, ttl, (*hops, dst))  # traceroute's high ports: port unreachable
    return Probe("ok", rtt, ttl, (*hops, dst), loss)


def need_lab() -> Vantage:
    """:func:`load_vantage`, turning a missing lab into the message every shim prints."""
    try:
        return load_vantage()
    except LabError as exc:
        raise SystemExit(f"netghost lab probe: {exc}") from exc


def console_main(run: Callable[[Sequence[str], Vantage], tuple[int, str, str]], argv: Sequence[str] | None) -> int:
    """The body of every shim's ``main``: one place decides how a probe reaches the terminal.

    Args:
        run: The probe's ``run(argv, vantage) -> (exit code, stdout, stderr)``.
        argv: Arguments after the program name; ``None`` means ``sys.argv[1:]``.
    """
    code, out, err = run(list(sys.argv[1:] if argv is None else argv), need_lab())
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code
