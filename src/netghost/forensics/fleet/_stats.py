"""Across captures: the figures each capture is judged on, robust outliers (median/MAD), and the ranking.

Why the ranking counts rates, not only findings: a finding's severity says what kind of trouble it
is, not how much of it there is, so a capture losing 8% of its segments (one "medium" finding) once
ranked below a capture with a single NXDOMAIN. The score now adds the single report's trouble
measures as rates (:data:`TROUBLE`: retransmissions, unanswered SYNs, resets, zero windows, full
windows, DNS failures), each up to its weight, to its top findings and its outlying metrics
(:func:`trouble_parts`, whose parts the fleet report shows).

Why median and MAD: in a tier of 50 VMs one broken VM must stand out, and a mean and standard
deviation are dragged by that very VM (one value can move them arbitrarily far); the median and the
median absolute deviation ignore up to half the values. A capture is an outlier on a figure when its
modified z-score ``0.6745 (x - median) / MAD`` exceeds :data:`Z_THRESHOLD` (Iglewicz and Hoaglin's
3.5) on the bad side. When more than half the captures share one value the MAD is 0; the mean
absolute deviation (scaled by 1.2533, its ratio to the standard deviation under normality) stands
in, as Iglewicz and Hoaglin suggest, and when that is 0 too every capture is alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from statistics import median
from typing import Any

__all__ = ["METRICS", "MIN_CAPTURES", "MIN_SAMPLE", "TROUBLE", "Z_THRESHOLD", "Measure", "capture_metrics", "rank_captures",
           "robust_outliers", "trouble_parts"]

Z_THRESHOLD = 3.5
MIN_CAPTURES = 3  # fewer captures say nothing about what is usual
SEVERITY_WEIGHT = {"critical": 8.0, "high": 4.0, "medium": 2.0, "low": 1.0, "info": 0.0}
OUTLIER_WEIGHT = 5.0
TOP_FINDINGS = 3  # the findings a reader sees first count toward the score; the rest repeat them
MIN_SAMPLE = 20  # a rate over fewer segments (queries, connections) counts in proportion to its sample


@dataclass(frozen=True)
class Measure:
    """One trouble measure of the score: a rate, the level at which it earns its whole weight, the weight.

    ``level`` is where the single report already calls it trouble (a retransmission rate of 10% is its
    "high"; a zero window in one segment of a hundred stalls a flow), so the two reports agree on what
    is bad.
    """

    what: str
    numerator: Callable[[Mapping[str, Any]], float]
    denominator: Callable[[Mapping[str, Any]], float]
    level: float
    weight: float


def _dns_failed(s: Mapping[str, Any]) -> float:
    return float(sum(n for name, n in s["dns_rcodes"].items() if name.lower() != "noerror") + s["dns"]["unanswered"])


# the trouble measures of the score, worst kinds of trouble weighing most (the fleet report's legend)
TROUBLE: dict[str, Measure] = {
    "retransmissions": Measure("retransmitted TCP segments / TCP segments; full weight at 10%",
                               lambda s: s["tcp_analysis"]["retransmission"], lambda s: s["tcp_segments"], 0.10, 10.0),
    "unanswered_syns": Measure("connections whose SYN got no SYN-ACK / TCP connections; full weight at 20%",
                               lambda s: s["syn_without_synack"], lambda s: s["tcp_conversations"], 0.20, 10.0),
    "resets": Measure("TCP segments with RST / TCP connections; full weight at 25%",
                      lambda s: s["rst_packets"], lambda s: s["tcp_conversations"], 0.25, 6.0),
    "zero_windows": Measure("zero-window segments / TCP segments; full weight at 1%",
                            lambda s: s["tcp_analysis"]["zero_window"], lambda s: s["tcp_segments"], 0.01, 4.0),
    "window_full": Measure("window-full segments / TCP segments; full weight at 10%",
                           lambda s: s["tcp_analysis"]["window_full"], lambda s: s["tcp_segments"], 0.10, 4.0),
    "dns_failures": Measure("DNS errors and unanswered queries / DNS queries; full weight at 20%",
                            _dns_failed, lambda s: s["dns"]["queries"], 0.20, 6.0),
}
# the figures compared across captures: name → what it means (the report's legend)
METRICS: dict[str, str] = {
    "retrans_rate": "retransmitted TCP segments / TCP segments",
    "rtt_p95_ms": "95th percentile of tshark's ACK RTT (ms)",
    "syn_failures": "connection attempts without a SYN-ACK",
    "rst_packets": "TCP segments with RST",
    "zero_windows": "zero-window segments",
    "window_full": "segments that filled the receiver's window (tshark's window_full)",
    "dns_failures": "DNS error responses and unanswered queries",
}


def capture_metrics(sem: Mapping[str, Any]) -> dict[str, float | None]:
    """The :data:`METRICS` of one capture, from its semantic document (None: no sample, e.g. no RTT)."""
    s = sem["summary"]
    seg = s["tcp_segments"]
    return {
        "retrans_rate": round(s["tcp_analysis"]["retransmission"] / seg, 6) if seg else None,
        "rtt_p95_ms": s["ack_rtt"].get("p95_ms"),
        "syn_failures": float(s["syn_without_synack"]),
        "rst_packets": float(s["rst_packets"]),
        "zero_windows": float(s["tcp_analysis"]["zero_window"]),
        "window_full": float(s["tcp_analysis"]["window_full"]),
        "dns_failures": _dns_failed(s),
    }


def _spread(values: list[float], med: float) -> tuple[float, float, str]:
    """(MAD, the scale the z-score divides by, its name)."""
    mad = median(abs(v - med) for v in values)
    if mad > 0:
        return mad, mad / 0.6745, "MAD"
    mean_ad = sum(abs(v - med) for v in values) / len(values)
    return 0.0, mean_ad * 1.2533, "mean absolute deviation"


def robust_outliers(table: Mapping[str, Mapping[str, float | None]]) -> dict[str, dict[str, Any]]:
    """Per metric: median, MAD, and the captures whose value is far worse than the others'.

    Args:
        table: capture id → its :func:`capture_metrics`.

    Returns:
        metric → ``{"median", "mad", "scale", "captures", "outliers": [{"id", "value", "z"}]}``,
        outliers worst first; a metric with fewer than :data:`MIN_CAPTURES` samples has none.
    """
    out: dict[str, dict[str, Any]] = {}
    for name in METRICS:
        vals = {cid: float(m[name]) for cid, m in table.items() if m.get(name) is not None}  # type: ignore[arg-type]
        entry: dict[str, Any] = {"captures": len(vals), "median": None, "mad": None, "scale": None, "outliers": []}
        out[name] = entry
        if len(vals) < MIN_CAPTURES:
            continue
        med = median(vals.values())
        mad, scale, how = _spread(list(vals.values()), med)
        entry.update(median=round(med, 6), mad=round(mad, 6), scale=how)
        if scale <= 0:
            continue
        found = []
        for cid, v in vals.items():
            z = (v - med) / scale
            if z > Z_THRESHOLD:
                found.append({"id": cid, "value": round(v, 6), "z": round(z, 2) if math.isfinite(z) else None})
        entry["outliers"] = sorted(found, key=lambda o: (-(o["z"] or 0.0), o["id"]))
    return out


def trouble_parts(sem: Mapping[str, Any], outlying: int = 0) -> dict[str, float]:
    """The documented trouble score of one capture, part by part (see :data:`TROUBLE`).

    Each trouble measure gives up to its weight, in proportion to how far its rate is toward the level
    the single report already calls trouble, and in proportion to its sample while that is under
    :data:`MIN_SAMPLE` (one retransmission in six segments is not a 17% loss rate); the capture's top
    :data:`TOP_FINDINGS` findings add their severity weight times their confidence (what no rate says:
    a PMTU black hole, an injected RST); each metric on which the capture is an outlier adds
    :data:`OUTLIER_WEIGHT`.

    Args:
        sem: the capture's semantic document.
        outlying: how many metrics it is an outlier on (:func:`robust_outliers`).
    """
    s = sem["summary"]
    parts: dict[str, float] = {}
    for name, m in TROUBLE.items():
        num, den = m.numerator(s), m.denominator(s)
        if den <= 0 or num <= 0:
            parts[name] = 0.0
            continue
        rate = num / den
        parts[name] = round(m.weight * min(1.0, rate / m.level) * min(1.0, den / MIN_SAMPLE), 2)
    parts["findings"] = round(sum(SEVERITY_WEIGHT.get(f["severity"], 0.0) * float(f.get("confidence", 1.0))
                                  for f in sem.get("findings", [])[:TOP_FINDINGS]), 2)
    parts["outliers"] = OUTLIER_WEIGHT * outlying
    return parts


def rank_captures(sems: Mapping[str, Mapping[str, Any]], outliers: Mapping[str, dict[str, Any]]
                  ) -> list[tuple[str, float, list[str], dict[str, float]]]:
    """Captures by trouble, worst first: (id, score, the metrics it is an outlier on, the score's parts).

    The score is the sum of :func:`trouble_parts`: the single report's trouble measures as rates, its
    top findings, and its outlying metrics, so a capture that loses 8% of its segments ranks above one
    whose only finding is a mild one, and a capture that differs from its peers rises even when each
    of its figures is mild.

    Args:
        sems: capture id → its semantic document.
        outliers: :func:`robust_outliers` of the captures' metrics.
    """
    flagged: dict[str, list[str]] = {cid: [] for cid in sems}
    for name, entry in outliers.items():
        for o in entry["outliers"]:
            flagged.setdefault(o["id"], []).append(name)
    rows = []
    for cid, sem in sems.items():
        parts = trouble_parts(sem, len(flagged[cid]))
        rows.append((cid, round(sum(parts.values()), 2), flagged[cid], parts))
    rows.sort(key=lambda r: (-r[1], r[0]))
    return rows
