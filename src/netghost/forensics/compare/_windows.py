"""The two capture windows: when each point captured, how long both did, and what two captures that
share no packet can and cannot say.

WHY: "the captures share no packet" has two different meanings. When the windows never overlapped
(one capture ended before the other started) the comparison says nothing about the path: there was
no moment both points were looking. Reading that as "not the same path" once contradicted the very
report that concluded, from each point on its own, that packets were lost on that path. Only when
the windows overlap does an empty intersection say something about the traffic: it did not cross
both points (another route, a capture filter at one point), or it died before the second point.
Times are each capture's own clock; between VMs that keep NTP time the error is milliseconds,
far below the gaps that matter here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

__all__ = ["NoShared", "describe_span", "no_shared", "overlap_s"]


class NoShared(NamedTuple):
    """Why two captures share no packet, in the report's words."""

    overlap_s: float | None  # seconds both windows were open (negative: the gap between them; None: a point is empty)
    title: str  # the finding's title after "Captures A and B share no packet"
    note: str  # the comparison's note: what it means and what to do
    severity: str  # info when nothing about the network follows from it


def overlap_s(pa: dict[str, Any], pb: dict[str, Any]) -> float | None:
    """Seconds both capture windows were open (negative: the gap between them; None: a point holds nothing)."""
    if pa.get("first_ts") is None or pb.get("first_ts") is None:
        return None
    return float(min(pa["last_ts"], pb["last_ts"]) - max(pa["first_ts"], pb["first_ts"]))


def describe_span(seconds: float) -> str:
    """A duration as a person says it: ``40 s``, ``19 min 37 s``, ``2 h 5 min``."""
    s = round(abs(seconds))
    if s < 60:
        return f"{abs(seconds):.1f} s" if abs(seconds) < 10 else f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _clock(ts: float) -> str:
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%H:%M:%S")
    except (ValueError, OverflowError, OSError):
        return f"{ts:.0f}"


def _window(p: dict[str, Any]) -> str:
    return f"{_clock(p['first_ts'])}–{_clock(p['last_ts'])} UTC"


def no_shared(pa: dict[str, Any], pb: dict[str, Any]) -> NoShared:
    """What it means that no packet of point A matches one of point B, from the two windows.

    Args:
        pa: point A's ``points.a`` entry (``file``, ``packets``, ``first_ts``, ``last_ts``).
        pb: point B's entry.
    """
    ov = overlap_s(pa, pb)
    each = "Nothing can be compared; each point is read on its own below."
    if ov is None:
        empty = " and ".join(f"point {k}" for k, p in (("A", pa), ("B", pb)) if p.get("first_ts") is None)
        return NoShared(None, f": {empty} captured no packet → no two-point comparison",
                        f"The captures share no packet because {empty} captured nothing. {each}", "info")
    if ov < 0:
        first, second = ("A", "B") if pa["first_ts"] <= pb["first_ts"] else ("B", "A")
        gap = describe_span(-ov)
        return NoShared(
            ov, f": their capture windows do not overlap ({second} started {gap} after {first} ended) → no two-point "
                "comparison, each point read on its own",
            f"The captures share no packet because their windows never overlapped: A captured {_window(pa)}, B "
            f"{_window(pb)}, so {second} started {gap} after {first} ended. This says nothing about the path "
            f"(not that the traffic took another one): no moment was seen by both points. {each} To compare two "
            "points, capture them at the same time.", "info")
    both = describe_span(ov)
    return NoShared(
        ov, f" although both captured for the same {both} → the traffic did not cross both points (another path, a "
            "capture filter) or died before the second",
        f"The captures share no packet although their windows overlap for {both} (A {_window(pa)}, B {_window(pb)}): "
        "the traffic each point saw did not pass the other (another route, a capture filter at one point), or "
        "everything sent towards the other point was dropped before reaching it. Check the capture filters and the "
        "route between the points.", "medium")
