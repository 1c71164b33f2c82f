"""Packet-capture sessions on the lab clock, and the blob each one leaves behind.

A session is a record in ``captures.json``; its status is *computed* from the record and the
lab time, never stored, so any process reading the state at any scale agrees:

    NotStarted  until created + STARTUP_S
    Running     until the time limit, a manual stop, or an injected capture error
    Stopped     stopReason TimeExceeded (time limit), Manual (``stop``) or an early stop's reason
                (capture-early-stop fault; ``BytesExceeded`` by default)
    Error       packetCaptureError [<kind>] (capture-error fault, storage container missing, or
                AgentStopped: the VM is not running, its agent extension failed, WireServer is blocked)

``provisioningState`` stays ``Succeeded`` throughout, as the real service reports (AZURE.md T4).

When a session has stopped, :func:`settle` writes its blob at the announced storage path. The
bytes come from the synthesis seam::

    netghost.lab.synth.synthesize_capture(world, vm_name, start, end) -> bytes

(``start``/``end`` are lab POSIX seconds of the capture window). Where that window sits is
:func:`place_window`'s choice: two sessions created a few real seconds apart (the two ends of a
dual-end capture) capture the same traffic during their common window, as Azure's do, however fast
the lab clock runs; see its docstring. The session's
``--filters``, ``--capture-size`` and ``--capture-limit`` are then applied by
:func:`~netghost.lab.az._capture_filter.apply_session_limits`, as the real agent applies them.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from netghost.lab.az._capture_filter import apply_session_limits
from netghost.lab.az._cloud_faults import find_fault
from netghost.lab.state import LabState
from netghost.lab.synth import synthesize_capture
from netghost.lab.world import CloudFaultSpec, World

__all__ = ["EMPTY_PCAP", "STARTUP_S", "capture_status", "place_window", "settle", "synthesize"]

STARTUP_S = 1.0
# magic, v2.4, thiszone 0, sigfigs 0, snaplen 262144, LINKTYPE_ETHERNET
EMPTY_PCAP = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)


def capture_status(rec: dict[str, Any], now: float) -> dict[str, Any]:
    """Status fields of one session at lab time ``now``.

    Returns ``{"status", "stop_reason", "errors", "end"}``; ``end`` is the lab time the capture
    stopped (or errored), None while it runs.
    """
    start = float(rec["created"]) + STARTUP_S
    limit_end = start + float(rec["time_limit"])
    ends: list[tuple[float, str, str | None]] = [(limit_end, "Stopped", "TimeExceeded")]
    if rec.get("stopped_at") is not None:
        ends.append((max(float(rec["stopped_at"]), start), "Stopped", "Manual"))
    if rec.get("early_stop_at") is not None:
        ends.append((float(rec["early_stop_at"]), "Stopped", str(rec.get("early_stop_reason") or "BytesExceeded")))
    if rec.get("error_at") is not None:
        ends.append((float(rec["error_at"]), "Error", None))
    # an error at the same instant as the stop wins: the upload failed as the capture ended
    end, status, reason = min(ends, key=lambda item: (item[0], item[1] != "Error"))
    if now < start and status != "Error":
        return {"status": "NotStarted", "stop_reason": None, "errors": [], "end": None}
    if now < end:
        return {"status": "Running", "stop_reason": None, "errors": [], "end": None}
    errors = [rec.get("error_kind") or "CaptureFailed"] if status == "Error" else []
    return {"status": status, "stop_reason": reason, "errors": errors, "end": end}


def place_window(captures: Mapping[str, Mapping[str, Any]], rec: Mapping[str, Any]) -> float:
    """The lab time at which a new session's capture window starts (its ``data_start``).

    Normally its own start, ``created + STARTUP_S``. But the lab clock fast-forwards (a scale of 60
    makes a 60 s capture take one second), and it fast-forwards the agent's own steps too: two
    captures the agent creates twenty real seconds apart would start twenty lab *minutes* apart and
    never overlap, which no Azure dual-end capture does. So when a session is created while the one
    created before it would still be capturing at wall speed (their distance measured with
    :meth:`~netghost.lab.clock.LabClock.at_wall_speed`: real seconds plus any explicit jumps, not the
    scale's acceleration), its window starts that distance after the earlier window's start, on the
    same traffic timeline: the two captures share the packets of their common window. Sessions
    further apart keep their own start. The window is never placed after the session's own start.

    Args:
        captures: the sessions already recorded (``rec`` may be among them).
        rec: the new session (``created``, and ``created_steady`` from the clock at wall speed).
    """
    own = float(rec["created"]) + STARTUP_S
    steady = rec.get("created_steady")
    earlier = [r for r in captures.values() if r is not rec and r.get("created_steady") is not None
               and r.get("data_start") is not None and float(r["created"]) <= float(rec["created"])]
    if steady is None or not earlier:
        return own
    prev = max(earlier, key=lambda r: float(r["created"]))
    gap = float(steady) - float(prev["created_steady"])
    if not 0.0 <= gap < float(prev["time_limit"]):
        return own
    return min(own, float(prev["data_start"]) + gap)


def synthesize(world: World, vm_name: str, start: float, end: float) -> bytes:
    """The synthesis seam: the bytes a capture on ``vm_name`` over ``[start, end]`` holds."""
    return synthesize_capture(world, vm_name, start, end)


def _late_delay(faults: list[CloudFaultSpec], account: str) -> float:
    fault = find_fault(faults, "blob-late", account=account)
    return fault.delay_s if fault else 0.0


def _blobs_of(rec: dict[str, Any]) -> list[tuple[str, str]]:
    """(VM, blob) pairs a stopped session writes: its VM's at the announced path, or for a scale
    set one blob per captured instance, ``<path stem>_<instance id>.cap`` beside the announced path
    (the lab's layout: no public source shows the service's; list by prefix to find them)."""
    if rec.get("target_type") != "AzureVMSS":
        return [(rec["vm"], rec["blob"])]
    stem = rec["blob"][:-4] if rec["blob"].endswith(".cap") else rec["blob"]
    return [(vm, f"{stem}_{vm.rsplit('_', 1)[-1]}.cap") for vm in rec.get("instances", [])]


def _capture_bytes(world: World, rec: dict[str, Any], vm_name: str, end: float,
                   faults: list[CloudFaultSpec]) -> bytes:
    """The session's bytes on one VM: the synthesized window under its filters and limits.

    A ``capture-no-traffic`` fault on the VM (or on the session's target) empties the window: the
    file is the pcap header and no packet, what a capture of an idle VM leaves.
    """
    if any(find_fault(faults, "capture-no-traffic", vm=name) for name in {vm_name, str(rec.get("vm") or "")}):
        return EMPTY_PCAP
    start = float(rec["created"]) + STARTUP_S
    data_start = float(rec.get("data_start", start))  # (see place_window)
    body = synthesize(world, vm_name, data_start, data_start + (end - start))
    vm = world.vm(vm_name)
    return apply_session_limits(body, filters=rec.get("filters") or [], capture_size=int(rec["capture_size"]),
                                capture_limit=int(rec["capture_limit"]),
                                vm_ips={n.private_ip for n in vm.nics} if vm else set())


def settle(state: LabState, now: float) -> None:
    """Write the blob of every session that has stopped and has not written one yet.

    Caller holds the state lock. A session that ended in Error writes nothing; so does one whose
    container no longer exists (it is marked Error/StorageFailed instead).
    """
    captures = state.captures()
    changed = False
    faults = state.cloud_faults()
    for rec in captures.values():
        if rec.get("blob_written") or rec.get("account") is None:
            continue
        st = capture_status(rec, now)
        if st["status"] == "Error":
            rec["blob_written"] = True
            changed = True
            continue
        if st["status"] != "Stopped":
            continue
        storage = state.storage()
        if rec["container"] not in storage.get(rec["account"], {}):
            rec["error_at"] = st["end"]
            rec["error_kind"] = "StorageFailed"
            rec["blob_written"] = True
            changed = True
            continue
        for vm_name, blob in _blobs_of(rec):
            body = _capture_bytes(state.world(), rec, vm_name, float(st["end"]), faults)
            state.put_blob(rec["account"], rec["container"], blob, body, created=float(st["end"]),
                           available_at=float(st["end"]) + _late_delay(faults, rec["account"]))
        rec["blob_written"] = True
        changed = True
    if changed:
        state.save_captures(captures)
