"""DNS, ICMP and capture-quality detectors."""

from __future__ import annotations

import numpy as np

from netghost.forensics.findings._context import MAX_FRAMES, Ctx, Finding, finding

__all__ = ["capture_quality", "dns", "icmp"]

_DNS_MEANING = {
    "NXDomain": ("medium", "name not in the zone (typo, missing record, or private DNS zone not linked to the VNet)"),
    "ServFail": ("high", "the resolver failed to get an answer upstream (DNSSEC, unreachable forwarder)"),
    "Refused": ("high", "the server refused to answer (ACL, recursion disabled)"),
}


def dns(x: Ctx) -> list[Finding]:
    """DNS error rcodes per question, and questions never answered."""
    d = x.a.dns
    out = []
    for f in d["failures"]:
        sev, meaning = _DNS_MEANING.get(f["rcode"], ("low", "the server returned an error"))
        times = f" {f['count']}×" if f["count"] > 1 else ""
        out.append(finding(
            "dns_" + f["rcode"].lower(), sev, 0.9,
            f"DNS {f['rcode'].upper()} for {f['qname'] or '(no name)'} ({f['qtype']}){times} → {meaning.split(' (')[0]}",
            f"{f['count']} response(s) with rcode {f['rcode']}: {meaning}.", f["frames"], [], None,
            qname=f["qname"], count=f["count"],
        ))
    for u in d["unanswered_names"][:5]:
        out.append(finding(
            "dns_unanswered", "medium", 0.7,
            f"DNS query for {u['qname'] or '(no name)'} never answered ({u['queries']} query key(s)) → resolver "
            "unreachable or UDP/TCP 53 blocked",
            "No response was captured for these queries; check the VNet DNS servers setting, NSG rules for port "
            "53, and the resolver's health.", u["frames"], [], None, qname=u["qname"],
        ))
    return out


_UNREACH = {
    "3/0": ("medium", "no route to the network"), "3/1": ("medium", "host unreachable (no ARP/ND answer or no route)"),
    "3/3": ("medium", "nothing listening on that UDP port"), "3/2": ("low", "protocol not supported"),
    "3/9": ("high", "blocked by an administrative filter"), "3/10": ("high", "blocked by an administrative filter"),
    "3/13": ("high", "blocked by a firewall/ACL (communication administratively prohibited)"),
    "1/1": ("high", "blocked by a firewall/ACL (administratively prohibited)"), "1/0": ("medium", "no route"),
    "1/3": ("medium", "address unreachable"), "1/4": ("medium", "nothing listening on that port"),
    "11/0": ("low", "TTL expired in transit (traceroute, or a routing loop)"),
    "3/0v6": ("low", "hop limit exceeded (traceroute, or a routing loop)"),
}


def icmp(x: Ctx) -> list[Finding]:
    """ICMP errors other than fragmentation-needed (findings_pmtu handles those), per quoted flow."""
    out = []
    for e in x.a.icmp["errors"]:
        key = e["type_code"] + ("v6" if e["family"] == "icmpv6" and e["type_code"] == "3/0" else "")
        if key in ("3/4",) or (e["family"] == "icmpv6" and key.startswith("2/")):
            continue
        if e["family"] == "icmp" and key.startswith("1/"):
            continue
        sev, meaning = _UNREACH.get(key, ("low", e["name"]))
        times = f" ({e['count']}×)" if e["count"] > 1 else ""
        out.append(finding(
            "icmp_" + e["family"] + "_" + e["type_code"].replace("/", "_"), sev, 0.85,
            f"ICMP {e['name']} from {', '.join(e['reporters'][:2])} for {e['inner_flow'] or 'a quoted packet'}{times} "
            f"→ {meaning}",
            f"{e['count']} {e['family'].upper()} {e['type_code']} message(s) quote {e['inner_flow']}.",
            e["frames"], [], e["first_ts"], count=e["count"], type_code=e["type_code"],
        ))
    return out


def _backwards(ts: np.ndarray) -> np.ndarray:
    """``np.flatnonzero(np.diff(ts) < -1.0)`` in cache-sized chunks (no capture-sized temporaries)."""
    step, last = 1 << 16, ts.shape[0] - 1
    parts = [np.flatnonzero(ts[lo + 1 : min(lo + step, last) + 1] - ts[lo : min(lo + step, last)] < -1.0) + lo
             for lo in range(0, max(last, 0), step)]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _time_jumps(ts: np.ndarray) -> tuple[np.ndarray, float, int]:
    """(the first MAX_FRAMES of :func:`_backwards`, ``np.diff(ts).min()`` (0.0 without jumps), how many jumps).

    Chunked like :func:`_backwards`, and only the cited jumps are kept: a capture whose clock jumps on
    every other packet must not need a capture-sized index array for ten evidence frames. The
    smallest step is folded chunk by chunk with ``min`` (as it always was, NaN quirks included).
    """
    fast = _time_jumps_ahead(ts)
    if fast is not None:
        return fast
    step, last = 1 << 16, ts.shape[0] - 1
    parts: list[np.ndarray] = []
    low, count = np.inf, 0
    for lo in range(0, max(last, 0), step):
        d = ts[lo + 1 : min(lo + step, last) + 1] - ts[lo : min(lo + step, last)]
        low = min(low, float(d.min()))
        back = np.flatnonzero(d < -1.0)
        count += back.shape[0]
        if back.shape[0] and sum(p.shape[0] for p in parts) < MAX_FRAMES:
            parts.append(back + lo)
    first = np.concatenate(parts)[:MAX_FRAMES] if parts else np.zeros(0, np.int64)
    return first, low if count else 0.0, count


def _time_jumps_ahead(ts: np.ndarray) -> tuple[np.ndarray, float, int] | None:
    """:func:`_time_jumps` for timestamps without NaN steps (None when one is met: the caller folds all).

    Why: a chunk whose time never goes back (the usual case) is settled by one comparison into a
    reused buffer (``a >= b`` implies ``a - b >= 0`` in IEEE arithmetic, so it holds no jump), and only
    chunks with jumps need their smallest step: without NaN the overall smallest step, when there is
    a jump, is below -1 s and so lies in such a chunk.
    """
    step, last = 1 << 16, ts.shape[0] - 1
    parts: list[np.ndarray] = []
    low, count = np.inf, 0
    ahead = np.empty(min(step, max(last, 0)), bool)
    for lo in range(0, max(last, 0), step):
        hi = min(lo + step, last)
        m = ahead[: hi - lo]
        np.greater_equal(ts[lo + 1 : hi + 1], ts[lo:hi], out=m)
        if m.all():
            continue
        d = ts[lo + 1 : hi + 1] - ts[lo:hi]
        d_min = float(d.min())
        if np.isnan(d_min):
            return None
        back = np.flatnonzero(d < -1.0)
        if not back.shape[0]:
            continue
        low = min(low, d_min)
        count += back.shape[0]
        if sum(p.shape[0] for p in parts) < MAX_FRAMES:
            parts.append(back + lo)
    first = np.concatenate(parts)[:MAX_FRAMES] if parts else np.zeros(0, np.int64)
    return first, low if count else 0.0, count


def _duplicates(x: Ctx) -> list[Finding]:
    """Why: a duplicated capture makes tshark (and us, faithfully) flag every copy as a
    retransmission; the reader must be told the loss picture is an artefact."""
    a, c = x.a, x.a.cols
    n_dup, n_seg = x.copies.shape[0], a.tcp_rows.shape[0]
    back, low, n_back = _time_jumps(c.ts)
    out: list[Finding] = []
    if n_dup >= 20 and n_dup >= 0.05 * n_seg:
        first = x.copies[:MAX_FRAMES]  # the first copies (evidence)
        rows = a.tcp_rows[np.asarray(first)]
        out.append(finding(
            "capture_duplicates", "medium", 0.85,
            f"{n_dup} TCP segments ({100 * n_dup / n_seg:.0f}%) are exact copies made by the capture (same "
            "IP ID, seq, ack and payload) → duplicated or merged capture; tshark counts them as retransmissions",
            "Real retransmissions are sent later (and usually with a new IP ID); identical copies within a "
            "millisecond, or earlier in time, come from the capture itself (SPAN of both directions, two capture "
            "points merged, a file concatenated with itself). Retransmission findings below exclude them.",
            [int(f) for f in c.frame[rows[:MAX_FRAMES]]], [], float(c.ts[rows[0]]), duplicates=n_dup,
            time_jumps_back=n_back,
        ))
    elif n_back:
        out.append(finding(
            "capture_time_backwards", "low", 0.8,
            f"Capture time goes backwards {n_back}× (largest jump {-low:.1f} s) → merged "
            "or clock-stepped capture",
            "Out-of-order timestamps distort RTT, out-of-order and retransmission timing.",
            [int(c.frame[k + 1]) for k in back[:MAX_FRAMES]], [], None, jumps=n_back,
        ))
    return out


def capture_quality(x: Ctx) -> list[Finding]:
    """Truncation, capture-made duplicates, clock jumps and undecodable packets."""
    a = x.a
    out = []
    if a.info.truncated:
        out.append(finding("capture_truncated", "low", 1.0, "Capture file is truncated or corrupt; analysed up to the cut",
                           "; ".join(a.info.warnings)[:400], [], [], None))
    out += _duplicates(x)
    if a.decode_issues:
        total = sum(a.decode_issues.values())
        frames = [f for v in a.decode_issue_frames.values() for f in v]
        out.append(finding("decode_issues", "info", 1.0, f"{total} packet(s) could not be fully decoded",
                           ", ".join(f"{k}: {v}" for k, v in a.decode_issues.items()), frames, [], None))
    return out
