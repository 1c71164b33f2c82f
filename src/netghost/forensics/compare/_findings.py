"""Investigator findings from a two-point comparison (same shape as single-capture findings).

WHY: the seeds' agent reads findings, not tables. Each finding says what happened *between the two
capture points*, with the frames (of the point named in ``metrics.point``) that prove it, e.g.
"12 packets left A for 10.0.2.4:6379 and never reached B → dropped between the capture points".
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from netghost.forensics.compare._windows import no_shared

__all__ = ["compare_findings"]

Finding = dict[str, Any]
MAX_FRAMES = 10
OTHER = {"A": "B", "B": "A"}


def _f(kind: str, severity: str, confidence: float, title: str, detail: str, frames: list[int],  # noqa: PLR0917  compact call sites
       flows: list[str], point: str | None, **metrics: Any) -> Finding:
    return {"kind": kind, "severity": severity, "confidence": round(confidence, 2), "title": title, "detail": detail,
            "flows": flows[:MAX_FRAMES], "evidence": {"frames": sorted(frames)[:MAX_FRAMES], "first_ts": None},
            "metrics": {"point": point, **metrics}}


def _lost(comp: dict[str, Any], key: str, src: str) -> list[Finding]:
    cat = comp["lost"][key]
    if not cat["count"]:
        return []
    dst = OTHER[src]
    by_dst: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in cat["by_flow"]:
        by_dst[e["to"]].append(e)
    sent = comp["sent_upstream"][key]
    rate = cat["count"] / sent if sent else 0.0
    sev = "high" if rate >= 0.05 or cat["count"] >= 50 else "medium" if rate >= 0.01 or cat["count"] >= 5 else "low"
    out = []
    for to, es in sorted(by_dst.items(), key=lambda kv: -sum(e["count"] for e in kv[1]))[:5]:
        n = sum(e["count"] for e in es)
        frames = [fr for e in es for fr in e["frames"]]
        out.append(_f(
            f"lost_{key}", sev, 0.9,
            f"{n} packet(s) left {src} for {to} and never reached {dst} → dropped between the capture points",
            f"{n} packet(s) of {len(es)} flow(s) towards {to} were captured at {src} (upstream) but have no match at "
            f"{dst}: they were dropped on the path between the two probes (NSG/firewall/NVA drop, policer, congested "
            f"link). Frames are {src}'s.",
            frames, [e["flow"] for e in es], src, lost=n, to=to,
        ))
    if len(by_dst) > 1:  # first: loss spread over many destinations is the path's story, not one flow's
        out.insert(0, _f(
            f"lost_{key}_overall", sev, 0.9,  # the same packets as the per-destination ones: as sure
            f"{cat['count']} packet(s) ({100 * rate:.1f}% of {sent} sent {src}→{dst}) lost between {src} and {dst} "
            "→ packet loss on the path between the capture points",
            f"Loss spread over {len(by_dst)} destinations points at the shared path segment between the probes.",
            cat["frames"], [], src, lost=cat["count"], rate=round(rate, 4),
        ))
    return out


def _injected(comp: dict[str, Any]) -> list[Finding]:
    out = []
    for key, at, up in (("at_b", "B", "A"), ("at_a", "A", "B")):
        cat = comp["injected"][key]
        if not cat["count"]:
            continue
        details = [d for d in comp["injected_packets"] if d["point"] == at]
        rsts = [d for d in details if "RST" in d["tcp_flags"]]
        if rsts:
            for d in rsts[:5]:
                ttl = (f" and has TTL {d['ttl']} where that sender's packets arrive with {d['usual_ttl']}"
                       if d["usual_ttl"] is not None and d["usual_ttl"] != d["ttl"] else "")
                out.append(_f(
                    "injected_rst", "critical", 0.95,
                    f"{d['tcp_flags']} at {at} (frame {d['frame']}) from {d['src']} to {d['dst']} never passed {up}"
                    f"{ttl} → injected by a middlebox between {up} and {at}",
                    f"{up} is upstream for {d['src']} → {d['dst']} and saw every other packet of {d['flow']}, but not this "
                    "reset: a device between the probes (firewall/IPS, load balancer idle timeout, NVA) forged it to "
                    "tear the connection down.",
                    [d["frame"]], [d["flow"]], at, ttl=d["ttl"], usual_ttl=d["usual_ttl"],
                ))
        other = cat["count"] - len(rsts)
        if other > 0:
            out.append(_f(
                f"injected_{key}", "high", 0.8,
                f"{cat['count']} packet(s) seen at {at} that never passed {up} → generated or rewritten between the points",
                f"These packets travel {up} → {at} but have no match at {up}: forged by a middlebox, or modified beyond "
                "recognition (payload rewrite). Frames are " + at + "'s.",
                cat["frames"], [e["flow"] for e in cat["by_flow"]], at, count=cat["count"],
            ))
    return out


def _blocked(comp: dict[str, Any]) -> list[Finding]:
    out = []
    for key, miss, seen in (("at_b", "B", "A"), ("at_a", "A", "B")):
        cat = comp["blocked"][key]
        flows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in cat["by_flow"]:
            flows[e["flow"]].append(e)
        inj = {d["flow"]: d for d in comp["injected_packets"] if d["point"] == miss}
        for flow, es in list(flows.items())[:5]:
            n = sum(e["count"] for e in es)
            frames = sorted(fr for e in es for fr in e["frames"])
            after = f" after the injected RST ({miss} frame {inj[flow]['frame']})" if flow in inj else ""
            out.append(_f(
                "flow_blocked", "high", 0.85,
                f"The last {n} packet(s) of {flow} seen at {seen}{after} never reached {miss} → flow blocked between the points",
                f"{flow} ({es[0]['from']} ↔ {es[0]['to']}) matched normally before; from {seen} frame {frames[0]} on, "
                f"nothing of it is seen at {miss}. A middlebox between the probes cut the connection (stateful "
                "firewall/NVA after a reset, idle timeout, or a deny rule).",
                frames, [flow], seen, packets=n,
            ))
    return out


def _modified(comp: dict[str, Any]) -> list[Finding]:
    m = comp["modified"]
    out = []
    if m["ttl"]["raised_packets"]:
        out.append(_f("ttl_rewritten", "medium", 0.8,
                      f"TTL higher downstream than upstream on {m['ttl']['raised_packets']} packet(s) → TTL rewritten by a middlebox",
                      "Routers only decrement TTL; a higher TTL further along the path means a proxy/NVA re-originates "
                      "or normalises packets between the probes.", m["ttl"]["raised_frames_a"], [], "A",
                      packets=m["ttl"]["raised_packets"]))
    if m["dscp"]["changed_packets"]:
        tr = ", ".join(f"{k} ×{v}" for k, v in list(m["dscp"]["transitions"].items())[:4])
        out.append(_f("dscp_rewritten", "medium", 0.85,
                      f"DSCP changed in flight on {m['dscp']['changed_packets']} packet(s) ({tr}) → QoS marking rewritten/bleached",
                      "A device between the probes re-marks the DiffServ field; traffic relying on its class (voice, "
                      "priority queues) loses it from there.", m["dscp"]["frames_a"], [], "A",
                      transitions=m["dscp"]["transitions"]))
    if m["mss_clamped"]["count"]:
        ex = m["mss_clamped"]["examples"][0]
        out.append(_f("mss_clamped", "low", 0.9,
                      f"TCP MSS {ex['mss_a']} at A became {ex['mss_b']} at B on {m['mss_clamped']['count']} SYN(s) → MSS clamping between the points",
                      "A middlebox (VPN gateway, tunnel endpoint, NVA) lowers the MSS option so segments fit a smaller "
                      "MTU; expected for tunnels, and a hint about the path MTU.",
                      [e["frame_a"] for e in m["mss_clamped"]["examples"]], [e["flow"] for e in m["mss_clamped"]["examples"]],
                      "A", count=m["mss_clamped"]["count"]))
    if m["nat"]["rewritten_packets"]:
        ex = m["nat"]["mappings"][0]
        out.append(_f("nat_rewrite", "info", 0.9,
                      f"5-tuple rewritten between the points on {m['nat']['rewritten_packets']} packet(s) ({ex['a']} became {ex['b']}) → NAT/SNAT",
                      "Matched packets carry different addresses/ports at A and B: a NAT gateway, load balancer or "
                      "firewall SNAT sits between the probes. Matching used IP ID, TCP seq/ack and payload, not addresses.",
                      [e["frame_a"] for e in m["nat"]["mappings"]], [], "A", mappings=m["nat"]["mappings"][:3]))
    return out


def compare_findings(comp: dict[str, Any]) -> list[Finding]:
    """Findings of a ``comparison`` object, most severe first (ids are assigned by the caller).

    Args:
        comp: the dict returned by :func:`netghost.forensics.compare.compare_captures`.
    """
    if not comp["shared"]:
        pa, pb = comp["points"]["a"], comp["points"]["b"]
        why = no_shared(pa, pb)
        return [_f("no_shared_traffic", why.severity, 0.9, f"Captures {pa['file']} and {pb['file']} share no packet{why.title}",
                   comp["note"] or why.note, [], [], None, time_overlap=why.overlap_s is not None and why.overlap_s >= 0,
                   overlap_s=None if why.overlap_s is None else round(why.overlap_s, 3))]
    found = [*_injected(comp), *_blocked(comp), *_lost(comp, "a_to_b", "A"), *_lost(comp, "b_to_a", "B"), *_modified(comp)]
    d = comp["delay_ms"]
    ab, ba = d["a_to_b"], d["b_to_a"]
    if ab["samples"] or ba["samples"]:
        parts = [f"{n} median {x['median']} ms (min {x['min']}, p95 {x['p95']})" for n, x in (("A→B", ab), ("B→A", ba))
                 if x["samples"]]
        off = comp["clock_offset_ms"]
        found.append(_f("one_way_delay", "info", 0.7,
                        "One-way delay between the points: " + "; ".join(parts)
                        + (f"; B's clock is {off:+.3f} ms from A's" if off is not None else ""),
                        comp["clock_offset_method"], [], [], None, a_to_b=ab, b_to_a=ba, clock_offset_ms=off))
    only_a, only_b = comp["flows"]["only_a"], comp["flows"]["only_b"]
    cross_a, cross_b = comp["flows"].get("only_a_crossing", only_a), comp["flows"].get("only_b_crossing", only_b)
    examples = "Examples: " + ", ".join((comp["flows_only"]["a"] + comp["flows_only"]["b"])[:6])
    flows = (comp["flows_only"]["a"] + comp["flows_only"]["b"])[:10]
    if cross_a or cross_b:  # flows that should have passed both probes, while both were capturing
        found.append(_f("flows_one_point", "low", 0.6,
                        f"{cross_a} flow(s) seen only at A and {cross_b} only at B while both points were capturing, "
                        "between hosts whose traffic crosses both → routed around the other probe, or filtered",
                        examples, [], flows, None, only_a=only_a, only_b=only_b, crossing_a=cross_a, crossing_b=cross_b))
    elif only_a or only_b:  # other hosts' traffic, or outside the other's window: expected, noted
        found.append(_f("flows_one_point", "info", 0.6,
                        f"{only_a} flow(s) seen only at A and {only_b} only at B: traffic with other hosts, or outside "
                        "the other point's capture window (expected)", examples, [], flows, None, only_a=only_a,
                        only_b=only_b, crossing_a=0, crossing_b=0))
    sev = ("info", "low", "medium", "high", "critical")
    found.sort(key=lambda f: (-sev.index(f["severity"]), -f["confidence"]))
    return found
