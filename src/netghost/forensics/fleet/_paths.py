"""Flows seen at several capture points: which points share traffic, and their order along the path.

A TCP flow is recognised across captures by its endpoints (client and server address and port) and
the client's initial sequence number (when one point saw the SYN and the other did not, they are
not matched); a NAT between two points hides the match here (the two-point comparison, run on each matched pair,
matches packets by IP ID, sequence numbers and payload and reports the NAT).

Path order, per flow: routers decrement the TTL, so the client's packets carry a higher TTL at a point
nearer the client; the server's packets the reverse. Each shared flow votes which point is upstream
(nearer the client) from the TTL difference both ways; when the TTLs are equal (one subnet, or a
capture on both ends of one hop) the point that saw the flow first votes instead (timing: assumes
clocks synchronised to well under the path's one-way delay). A pair is ordered by the majority of its
flows' votes and compared with A = the upstream point.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from netghost.forensics.fleet._task import FlowSeen

__all__ = ["MAX_PAIRS", "MAX_PATHS", "PointPair", "match_points", "path_orders"]

MAX_PAIRS = 20  # pairs compared per fleet (the ones sharing most flows)
MAX_PATHS = 20  # paths listed (orders of capture points)
MIN_WEAK = 3  # flows matched on endpoints alone (no SYN seen) that tie two points without a SYN-matched one


@dataclass
class PointPair:
    """Two capture points that saw the same flows; ``a`` upstream of ``b`` when ``method`` is not "unknown"."""

    a: str
    b: str
    shared_flows: int
    method: str  # "ttl", "timing" or "unknown"
    votes: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)


def _vote(x: FlowSeen, y: FlowSeen) -> tuple[int, str]:
    """+1 when ``x`` is upstream of ``y`` (nearer the client), -1 when downstream, 0 unknown; and the method."""
    score = 0
    if x.ttl_c2s >= 0 and y.ttl_c2s >= 0:
        score += (x.ttl_c2s > y.ttl_c2s) - (x.ttl_c2s < y.ttl_c2s)
    if x.ttl_s2c >= 0 and y.ttl_s2c >= 0:
        score += (x.ttl_s2c < y.ttl_s2c) - (x.ttl_s2c > y.ttl_s2c)
    if score:
        return (1 if score > 0 else -1), "ttl"
    if x.first_ts != y.first_ts:
        return (1 if x.first_ts < y.first_ts else -1), "timing"
    return 0, "unknown"


def _index(flows: Mapping[str, Sequence[FlowSeen]]) -> dict[str, dict[str, FlowSeen]]:
    """Flow name → {capture id: sighting}, for flows seen at two points or more.

    Two sightings are one flow when their endpoints match and both saw the same client SYN sequence
    number (random per connection), or neither saw a SYN: a port reused by another connection, or
    another VM's connection between the same addresses, is not mistaken for the same flow. Sightings
    without a SYN (endpoints only) count only between two points that share a SYN-matched flow or at
    least :data:`MIN_WEAK` such flows: one endpoint pair in common is a coincidence in a big tier.
    """
    by_key: dict[tuple[str, int], dict[str, FlowSeen]] = defaultdict(dict)
    for cid, fs in flows.items():
        for f in fs:
            by_key[(f.key, f.isn)][cid] = f
    multi = {k: v for k, v in by_key.items() if len(v) > 1}
    # evidence per pair of points: flows matched on their SYN, and flows without one (endpoints only)
    strong: Counter[tuple[str, str]] = Counter()
    weak: Counter[tuple[str, str]] = Counter()
    for (_key, isn), seen in multi.items():
        for pair in combinations(sorted(seen), 2):
            (strong if isn >= 0 else weak)[pair] += 1
    def tied(x: str, y: str) -> bool:
        pair = (x, y) if x < y else (y, x)
        return strong[pair] > 0 or weak[pair] >= MIN_WEAK

    out: dict[str, dict[str, FlowSeen]] = {}
    for (key, isn), seen in multi.items():
        # endpoints alone (no SYN): kept only at points tied to another of its points by the evidence
        kept = seen if isn >= 0 else {c: f for c, f in seen.items() if any(tied(c, o) for o in seen if o != c)}
        if len(kept) > 1:
            out.setdefault(key, kept)
    return out


def match_points(flows: Mapping[str, Sequence[FlowSeen]], limit: int = MAX_PAIRS) -> list[PointPair]:
    """Pairs of capture points sharing TCP flows, most shared first, each oriented upstream → downstream.

    Args:
        flows: capture id → the flows it saw.
        limit: pairs returned at most.
    """
    shared: dict[tuple[str, str], list[str]] = defaultdict(list)
    by_key = _index(flows)
    for key, seen in by_key.items():
        for x, y in combinations(sorted(seen), 2):
            shared[(x, y)].append(key)
    out = []
    for (x, y), keys in sorted(shared.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:limit]:
        votes: Counter[str] = Counter()
        total = 0
        for k in keys:
            v, how = _vote(by_key[k][x], by_key[k][y])
            votes[how] += 1
            total += v
        method = "unknown" if total == 0 else ("ttl" if votes["ttl"] >= votes["timing"] else "timing")
        a, b = (y, x) if total < 0 else (x, y)
        out.append(PointPair(a=a, b=b, shared_flows=len(keys), method=method, votes=dict(votes), examples=sorted(keys)[:5]))
    return out


def path_orders(flows: Mapping[str, Sequence[FlowSeen]], limit: int = MAX_PATHS) -> list[dict[str, object]]:
    """The paths traffic took through the capture points: each flow seen at several points gives its
    points ordered from client to server; flows with the same order are grouped.

    Returns:
        ``[{"points": [ids, client side first], "method", "flows": count, "examples": [flow keys]}]``,
        paths through more points first, then those carrying more flows.
    """
    groups: dict[tuple[tuple[str, ...], str], list[str]] = defaultdict(list)
    for key, seen in _index(flows).items():
        methods = set()
        order: list[str] = []
        for cid in sorted(seen):  # insertion by pairwise votes: a handful of points per flow
            pos = len(order)
            for i, other in enumerate(order):
                v, how = _vote(seen[cid], seen[other])
                methods.add(how)
                if v > 0:
                    pos = i
                    break
            order.insert(pos, cid)
        method = "ttl" if "ttl" in methods else "timing" if "timing" in methods else "unknown"
        groups[(tuple(order), method)].append(key)
    rows = sorted(groups.items(), key=lambda kv: (-len(kv[0][0]), -len(kv[1]), kv[0]))[:limit]
    return [{"points": list(pts), "method": how, "flows": len(keys), "examples": sorted(keys)[:3]}
            for (pts, how), keys in rows]
