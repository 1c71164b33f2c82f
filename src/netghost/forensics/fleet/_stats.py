"""Across captures: the figures each capture is judged on, robust outliers (median/MAD), and the ranking.

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
from collections.abc import Mapping
from statistics import median
from typing import Any

__all__ = ["METRICS", "MIN_CAPTURES", "Z_THRESHOLD", "capture_metrics", "rank_captures", "robust_outliers"]

Z_THRESHOLD = 3.5
MIN_CAPTURES = 3  # fewer captures say nothing about what is usual
SEVERITY_WEIGHT = {"critical": 8.0, "high": 4.0, "medium": 2.0, "low": 1.0, "info": 0.0}
OUTLIER_WEIGHT = 5.0
# the figures compared across captures: name → what it means (the report's legend)
METRICS: dict[str, str] = {
    "retrans_rate": "retransmitted TCP segments / TCP segments",
    "rtt_p95_ms": "95th percentile of tshark's ACK RTT (ms)",
    "syn_failures": "connection attempts without a SYN-ACK",
    "rst_packets": "TCP segments with RST",
    "zero_windows": "zero-window segments",
    "dns_failures": "DNS error responses and unanswered queries",
}


def capture_metrics(sem: Mapping[str, Any]) -> dict[str, float | None]:
    """The :data:`METRICS` of one capture, from its semantic document (None: no sample, e.g. no RTT)."""
    s = sem["summary"]
    seg = s["tcp_segments"]
    bad_rcodes = sum(n for name, n in s["dns_rcodes"].items() if name.lower() != "noerror")
    return {
        "retrans_rate": round(s["tcp_analysis"]["retransmission"] / seg, 6) if seg else None,
        "rtt_p95_ms": s["ack_rtt"].get("p95_ms"),
        "syn_failures": float(s["syn_without_synack"]),
        "rst_packets": float(s["rst_packets"]),
        "zero_windows": float(s["tcp_analysis"]["zero_window"]),
        "dns_failures": float(bad_rcodes + s["dns"]["unanswered"]),
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


def rank_captures(findings: Mapping[str, list[dict[str, Any]]], outliers: Mapping[str, dict[str, Any]]) -> list[tuple[str, float, list[str]]]:
    """Captures by trouble, worst first: (id, score, the metrics it is an outlier on).

    The score adds the severity weights of the capture's findings and :data:`OUTLIER_WEIGHT` per
    outlying metric, so a capture that differs from its peers rises even when each finding is mild.
    """
    flagged: dict[str, list[str]] = {cid: [] for cid in findings}
    for name, entry in outliers.items():
        for o in entry["outliers"]:
            flagged.setdefault(o["id"], []).append(name)
    rows = []
    for cid, fs in findings.items():
        score = sum(SEVERITY_WEIGHT.get(f["severity"], 0.0) * float(f.get("confidence", 1.0)) for f in fs)
        score += OUTLIER_WEIGHT * len(flagged[cid])
        rows.append((cid, round(score, 2), flagged[cid]))
    rows.sort(key=lambda r: (-r[1], r[0]))
    return rows
