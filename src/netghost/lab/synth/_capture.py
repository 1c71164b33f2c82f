"""Synthesized packet captures of a lab world: the seam the capture lifecycle calls.

``synthesize_capture(world, vm_name, start, end)`` returns the libpcap bytes a Network Watcher
capture on ``vm_name`` would hold for the lab-time window ``[start, end]``: the application
traffic of every flow with the VM at one end (shaped by :meth:`World.flow_outcome`, so the
world's one fault shows exactly as its type implies) plus background noise (ARP, NTP, guest
agent, health probes).

Design choices, and why:

* Traffic lives on an absolute time grid seeded by (world, flow, request number), never by the
  capturing VM, so two captures of the same path (client and server side) contain the same
  packets with the same IP IDs and sequence numbers: a dual-end comparison sees only what the
  path did (losses, forged resets).
* A capture keeps an exchange (one DNS lookup + TCP connection) only if every packet of it that
  this VM sees falls inside the window, so connections are never cut in half at the edges.
* Output is deterministic: the same world, VM and window always give the same bytes.
* At most :data:`MAX_SYNTH_S` seconds of traffic (from the window's start) are synthesized: a
  capture left at az's default 5 h time limit would otherwise take minutes of pure-Python work.

Modules: :mod:`._pcap` (writer, encoders), :mod:`._packets` (views), :mod:`._tcp` (TCP
behaviour), :mod:`._flows` (flows × faults), :mod:`._noise` (background traffic).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from netghost.errors import LabError
from netghost.lab.synth._flows import Exchange, flow_exchanges
from netghost.lab.synth._noise import noise_exchanges
from netghost.lab.synth._packets import Pkt, render_view, seen_at
from netghost.lab.synth._pcap import vm_mac
from netghost.lab.world import World

__all__ = ["MAX_SYNTH_S", "capture_packets", "synthesize_capture"]

MAX_SYNTH_S = 900.0


def capture_packets(world: World, vm_name: str, start: float, end: float) -> list[Pkt]:
    """The wire-neutral packets a capture on ``vm_name`` over ``[start, end]`` records.

    Raises:
        LabError: ``vm_name`` is not a VM of the world, or the window is empty.
    """
    vm = world.vm(vm_name)
    if vm is None:
        raise LabError(f"world {world.name}: no VM named {vm_name!r}", world=world.name, path="vms")
    if end < start:
        raise LabError(f"capture window ends ({end}) before it starts ({start})", world=world.name)
    if vm.power_state != "running":
        return []
    end = min(end, start + MAX_SYNTH_S)
    ips = {nic.private_ip for nic in vm.nics}
    exchanges: list[Exchange] = []
    for flow in world.spec.traffic:
        outcome = world.flow_outcome(flow)
        ends = {world.endpoint_ip(flow.client), world.endpoint_ip(flow.server),
                *(str(outcome.params[k]) for k in ("backend_ip", "seen_source") if k in outcome.params)}
        if not ends & ips and outcome.server_ip not in ips and not ips & set(outcome.path[1:]):
            continue
        exchanges.extend(flow_exchanges(world, flow, start, end))
    exchanges.extend(noise_exchanges(world, vm, start, end))
    ip = vm.nics[0].private_ip
    kept: list[Pkt] = []
    for ex in exchanges:
        times = [item[0] for item in seen_at(ex.pkts, ip)]
        if times and min(times) >= start and max(times) <= end:
            kept.extend(ex.pkts)
    return kept


def synthesize_capture(world: World, vm_name: str, start: float, end: float, *,
                       filters: Sequence[Mapping[str, object]] | None = None, bytes_per_packet: int = 0,
                       total_bytes: int = 0) -> bytes:
    """The libpcap bytes of a capture on ``vm_name`` during lab time ``[start, end]``.

    Args:
        world: the lab world (its fault shapes the traffic).
        vm_name: the captured VM (case-insensitive, as Azure names are).
        start: window start, lab POSIX seconds.
        end: window end, lab POSIX seconds.
        filters: ``--filters`` objects (protocol, local/remote IP address and port; values may be
            ``a;b`` lists or ``lo-hi`` ranges); a packet is kept if any filter matches.
        bytes_per_packet: ``--bytes-to-capture-per-packet`` (0 = whole packets).
        total_bytes: ``--total-bytes-per-session`` (0 = unlimited): the file stops growing there.

    Raises:
        LabError: unknown VM or an inverted window.
    """
    pkts = capture_packets(world, vm_name, start, end)
    vm = world.vm(vm_name)
    assert vm is not None
    nic = vm.nics[0]
    return render_view(pkts, nic.private_ip, vm_mac(nic.name or vm.name), start, end, filters=filters or (),
                       snaplen=bytes_per_packet, max_bytes=total_bytes)
