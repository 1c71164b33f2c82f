"""Statistics of a matched capture pair: delays, clock offset, lost/blocked/injected and modified packets.

Split from ``compare.py`` (matching) to keep both small. Everything per packet is a numpy reduction;
loops run only over the bounded lists that go into the JSON (top flows, example packets).

Vocabulary, for one flow direction whose *upstream* point U (the first probe the packets pass, known
from the sign of the offset-corrected delay) and downstream point D:

* ``lost``: seen at U, never at D (dropped between the points);
* ``injected``: seen at D, never at U (forged between the points, e.g. a spoofed RST);
* ``blocked``: the flow's trailing packets at one point after its last matched packet (≥ 2 of them, or
  after an injected RST): the path stopped carrying the flow;
* ``unmatched``: orientation unknown (no measurable delay), reported without a verdict;
* ``flow_only``: the whole flow is seen at one point only (``flow_only_judged``: of those, the flows
  whose path crosses both points, while both were capturing: the ones that should have been seen twice).

Only flows whose path crosses both points (their two hosts have traffic matched at both) can be lost,
injected or blocked; an unmatched flow between other hosts is ``unmatched``, not a loss.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from netghost.forensics.compare._match import (
    _PROTO,
    COMPARE_VERSION,
    MAX_BY_FLOW,
    MAX_FLOW_FRAMES,
    MAX_FLOWS,
    MAX_FRAMES,
    _ep,
    _group_quantiles,
    _mix,
    _Pair,
    _round,
    _Side,
)
from netghost.forensics.compare._windows import no_shared

__all__ = ["build_comparison"]

TOL_S = 20e-6  # below this a delay is "not measurable" (µs timestamps, copied packets)
SYMMETRY = ("one-way delay and clock offset assume a symmetric path (NTP-style: fastest packet each way); an "
            "asymmetric path shifts delay into the offset estimate")


def _at(fn: np.ufunc, g: np.ndarray, v: np.ndarray, n: int, init: float) -> np.ndarray:
    """Per-group reduction ``fn`` of ``v`` over group ids ``g`` (``init`` where a group is empty)."""
    out = np.full(n, init)
    fn.at(out, g, v)
    return out


def _flags(f: int) -> str:
    names = [n for bit, n in ((0x02, "SYN"), (0x04, "RST"), (0x01, "FIN"), (0x08, "PSH"), (0x10, "ACK")) if f & bit]
    return "+".join(names) if f >= 0 else "-"


class _Flows:
    """Per-flow labels (initiator → responder, as first seen) and A's tcp stream ids."""

    def __init__(self, p: _Pair) -> None:
        self.p = p
        smap = np.full(len(p.a.c), -1, np.int64)
        smap[p.a.an.tcp_rows] = p.a.an.tcp_stream
        self.stream_a = smap

    def side_row(self, f: int) -> tuple[_Side, int]:
        side = self.p.b if self.p.first_side[f] else self.p.a
        return side, int(side.rows[self.p.first_idx[f]])

    def label(self, f: int) -> dict[str, Any]:
        side, r = self.side_row(f)
        c = side.c
        pr = int(c.proto[r])
        out: dict[str, Any] = {
            "proto": _PROTO.get(pr, f"ip{pr}"), "client": _ep(c.src_hi[r], c.src_lo[r], c.sport[r]),
            "server": _ep(c.dst_hi[r], c.dst_lo[r], c.dport[r]), "seen_first_at": "B" if self.p.first_side[f] else "A",
        }
        st = int(self.stream_a[r]) if not self.p.first_side[f] else -1
        out["id"] = f"tcp/{st}" if st >= 0 else f"{out['proto']} {out['client']} > {out['server']}" + (
            " (B only)" if self.p.first_side[f] else "")
        return out


def _category(side: _Side, idx: np.ndarray, fd: np.ndarray, fl: _Flows, labels: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Bounded evidence of one category: exact count, first frames, top flows with their frames."""
    frames = side.c.frame[side.rows[idx]]
    out: dict[str, Any] = {"count": int(idx.shape[0]), "frames": [int(x) for x in np.sort(frames)[:MAX_FRAMES]],
                           "frames_truncated": bool(idx.shape[0] > MAX_FRAMES), "by_flow": []}
    if not idx.size:
        return out
    g = fd[idx]
    u, cnt = np.unique(g, return_counts=True)
    for k in np.argsort(-cnt, kind="stable")[:MAX_BY_FLOW].tolist():
        f, d = divmod(int(u[k]), 2)
        lab = labels.setdefault(f, fl.label(f))
        fr = np.sort(frames[g == u[k]])
        out["by_flow"].append({"flow": lab["id"], "direction": "c2s" if d == 0 else "s2c",
                               "from": lab["client"] if d == 0 else lab["server"],
                               "to": lab["server"] if d == 0 else lab["client"],
                               "count": int(cnt[k]), "frames": [int(x) for x in fr[:MAX_FLOW_FRAMES]]})
    return out


def _dist(v: np.ndarray) -> dict[str, Any]:
    if not v.size:
        return {"samples": 0, "min": None, "median": None, "p95": None, "max": None}
    ms = v * 1000.0
    return {"samples": int(v.size), "min": _round(ms.min()), "median": _round(float(np.median(ms))),
            "p95": _round(float(np.quantile(ms, 0.95))), "max": _round(ms.max())}


def _classify(x: _Side, fid: np.ndarray, fd: np.ndarray, only: np.ndarray, *, up_x: np.ndarray,
              last_match: np.ndarray, inj_rst_other: np.ndarray, window: tuple[float, float],
              crosses: np.ndarray) -> dict[str, np.ndarray]:
    """Split one point's unmatched packets (indices ``only``) into categories.

    ``up_x`` is +1 where this point is upstream for the packet's direction, -1 downstream, 0 unknown.
    A flow with no match at all gets a verdict only inside the other point's capture window
    (``window``, in this point's clock), outside it the other probe was simply not recording, and
    only when its path crosses both points (``crosses``, per flow): a third host's traffic seen at
    one point only never passed the other probe, so it was not lost or injected between them.
    """
    f = fid[only]
    has = last_match[f] >= 0
    rst = (x.c.tcp_flags[x.rows[only]] >= 0) & ((x.c.tcp_flags[x.rows[only]] & 0x04) != 0)
    u = up_x[fd[only]]
    ts = x.c.ts[x.rows[only]]
    judged = (ts >= window[0]) & (ts <= window[1]) & crosses[f]
    cand = has & (only > last_match[f]) & ~(rst & (u == -1))
    tc = np.bincount(f[cand], minlength=last_match.shape[0])
    blocked = cand & ((tc[f] >= 2) | inj_rst_other[f])
    rest = (has & ~blocked) | (~has & judged)
    return {"flow_only": only[~has], "flow_only_judged": only[~has & judged], "blocked": only[blocked],
            "lost": only[rest & (u == 1)],
            "injected": only[rest & (u == -1)], "unmatched": only[(rest & (u == 0)) | (~has & ~judged)]}


def _host_pairs(x: _Side) -> np.ndarray:
    """Per row of ``x``: a key of its two addresses, whichever the direction."""
    c, r = x.c, x.rows
    zero = np.zeros(r.shape[0], np.uint64)
    s = _mix(_mix(zero, c.src_hi[r]), c.src_lo[r])
    d = _mix(_mix(zero, c.dst_hi[r]), c.dst_lo[r])
    return _mix(_mix(zero, np.minimum(s, d)), np.maximum(s, d))


def _crossing_flows(p: _Pair) -> np.ndarray:
    """Per flow: True when its two hosts exchanged packets that both points saw (some flow between them
    matched), i.e. the path between those hosts crosses both capture points. Each point's own addresses
    are used (a NAT between the points rewrites them)."""
    ha, hb = _host_pairs(p.a), _host_pairs(p.b)
    seen_both = np.union1d(ha[p.ia], hb[p.ib])
    key = np.zeros(p.nflows, np.uint64)
    at_a = p.first_side == 0
    key[at_a] = ha[p.first_idx[at_a]]
    key[~at_a] = hb[p.first_idx[~at_a]]
    out: np.ndarray = np.isin(key, seen_both)
    return out


def build_comparison(p: _Pair, series: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """The ``comparison`` object (schema: compare.schema.json) for a matched pair."""
    a, b, ia, ib, nf = p.a, p.b, p.ia, p.ib, p.nflows
    fl = _Flows(p)
    labels: dict[int, dict[str, Any]] = {}
    fd_a = p.fid_a * 2 + p.dir_a
    fd_b = p.fid_b * 2 + p.dir_b
    dt = b.c.ts[b.rows[ib]] - a.c.ts[a.rows[ia]]
    fdm = fd_a[ia]
    cnt_m, theta_f, theta, up = _orient(fdm, dt, nf)
    th_g = theta if theta is not None else 0.0
    corr, owd = _one_way_delays(fdm, dt, up, th_g)
    if series is not None:  # chart arrays (never in the JSON)
        keep = up[fdm] != 0
        series.update(t=a.c.ts[a.rows[ia]][keep], delay_ms=corr[keep] * 1000.0, a_to_b=(up[fdm] == 1)[keep])
    ca, cb = _classify_unmatched(p, fd_a, fd_b, up, th_g)

    comp: dict[str, Any] = {
        "version": COMPARE_VERSION,
        "points": {k: _point(x) for k, x in (("a", a), ("b", b))},
        "shared": bool(ia.size),
        "matched_packets": int(ia.size),
        "match_rate": {"a": _round(ia.size / max(a.rows.size, 1), 4), "b": _round(ib.size / max(b.rows.size, 1), 4)},
        "flows": {"total": nf, "compared": int(np.count_nonzero(cnt_m.reshape(-1, 2).sum(1))),
                  "only_a": 0, "only_b": 0},
        "clock_offset_ms": None if theta is None else _round(theta * 1000, 3),
        "clock_offset_method": ("median over flows of (min A→B + max B→A)/2 of t_B - t_A; " + SYMMETRY)
        if theta is not None else "unknown: no flow matched in both directions (assumed 0)",
        "delay_ms": {"a_to_b": _dist(corr[up[fdm] == 1]), "b_to_a": _dist(corr[up[fdm] == -1])},
        "sent_upstream": {"a_to_b": int(np.count_nonzero(up[fd_a] == 1)), "b_to_a": int(np.count_nonzero(up[fd_b] == -1))},
        "lost": {"a_to_b": _category(a, ca["lost"], fd_a, fl, labels), "b_to_a": _category(b, cb["lost"], fd_b, fl, labels)},
        "injected": {"at_b": _category(b, cb["injected"], fd_b, fl, labels),
                     "at_a": _category(a, ca["injected"], fd_a, fl, labels)},
        "blocked": {"at_b": _category(a, ca["blocked"], fd_a, fl, labels),
                    "at_a": _category(b, cb["blocked"], fd_b, fl, labels)},
        "unmatched": {"a": _category(a, ca["unmatched"], fd_a, fl, labels),
                      "b": _category(b, cb["unmatched"], fd_b, fl, labels)},
        "injected_packets": (_injected_detail(b, cb["injected"], fd_b, fl, labels=labels, matched=ib, point="B")
                             + _injected_detail(a, ca["injected"], fd_a, fl, labels=labels, matched=ia, point="A")
                             )[:MAX_FLOW_FRAMES],
        "modified": _modified(p, up, fdm, fl, labels),
        "note": None,
    }
    fo_a = np.unique(p.fid_a[ca["flow_only"]])
    fo_b = np.unique(p.fid_b[cb["flow_only"]])
    # the flows that should have crossed both points (their hosts' path does, and both were capturing)
    fj_a = np.unique(p.fid_a[ca["flow_only_judged"]])
    fj_b = np.unique(p.fid_b[cb["flow_only_judged"]])
    comp["flows"]["only_a"], comp["flows"]["only_b"] = int(fo_a.size), int(fo_b.size)
    comp["flows"]["only_a_crossing"], comp["flows"]["only_b_crossing"] = int(fj_a.size), int(fj_b.size)
    ex_a = np.r_[fj_a, np.setdiff1d(fo_a, fj_a)]  # examples: the crossing ones first
    ex_b = np.r_[fj_b, np.setdiff1d(fo_b, fj_b)]
    comp["flows_only"] = {"a": [fl.label(int(f))["id"] for f in ex_a[:MAX_FRAMES // 10]],
                          "b": [fl.label(int(f))["id"] for f in ex_b[:MAX_FRAMES // 10]]}
    comp["per_flow"] = _per_flow(p, fl, labels, cnt_m, up, owd, theta_f, corr, fdm, ca, cb, fd_a, fd_b)
    if not ia.size:  # why nothing matched, in terms of the two capture windows (never "not the same path" alone)
        comp["note"] = no_shared(comp["points"]["a"], comp["points"]["b"]).note
    return comp


class _Orientation(NamedTuple):
    """Which point each flow direction passes first, and the clock offset that decides it."""

    cnt_m: np.ndarray  # matched packets per (flow, direction) group ``2 * flow + direction``
    theta_f: np.ndarray  # per-flow clock offset (s), NaN unless the flow matched both ways
    theta: float | None  # the capture pair's clock offset (median over flows), None when unknown
    up: np.ndarray  # per group: +1 when A is upstream, -1 when B is, 0 unknown


def _orient(fdm: np.ndarray, dt: np.ndarray, nf: int) -> _Orientation:
    """Orient every flow direction from the delays ``dt`` (t_B - t_A) of its matched packets (groups ``fdm``)."""
    ng = 2 * nf
    # sort-free group reductions (ufunc.at): only the fastest/slowest packet per direction matter
    cnt_m = np.bincount(fdm, minlength=ng)
    dmin = _at(np.minimum, fdm, dt, ng, np.inf)
    dmax = _at(np.maximum, fdm, dt, ng, -np.inf)
    c0, c1 = cnt_m[0::2], cnt_m[1::2]
    both = (c0 > 0) & (c1 > 0)
    # the direction whose fastest packet has the larger t_B - t_A goes A → B
    hi0 = (dmin[0::2] > dmin[1::2]) | ((dmin[0::2] == dmin[1::2]) & (dmax[0::2] >= dmax[1::2]))
    lo_max = np.where(hi0, dmax[1::2], dmax[0::2])
    hi_min = np.where(hi0, dmin[0::2], dmin[1::2])
    theta_f = np.full(nf, np.nan)
    theta_f[both] = (hi_min[both] + lo_max[both]) / 2
    half = np.zeros(nf)
    half[both] = (hi_min[both] - lo_max[both]) / 2
    theta = float(np.median(theta_f[both])) if both.any() else None
    th_g = theta if theta is not None else 0.0
    up2 = np.zeros((nf, 2), np.int64)
    sep = both & (half > TOL_S)  # the two directions are separated by a measurable delay
    up2[sep] = np.where(hi0[sep, None], [1, -1], [-1, 1])
    seen = cnt_m.reshape(-1, 2) > 0
    u1 = np.where(dmin.reshape(-1, 2) - th_g > TOL_S, 1, np.where(dmax.reshape(-1, 2) - th_g < -TOL_S, -1, 0))
    u1 = np.where(seen, u1, 0)
    u1 = np.where(seen, u1, -u1[:, ::-1])  # a direction without matches: the reverse of the other one
    up2[~both] = u1[~both]
    # flows never matched: orient them like the compared flows when those agree (≥ 80 % of votes), so a
    # connection whose every SYN died between the probes is reported as lost, not just "unmatched"
    seen_any = seen.any(1)
    votes = up2[seen_any, 0]
    votes = votes[votes != 0]
    if votes.size and abs(int(votes.sum())) >= 0.8 * votes.size:
        maj = 1 if votes.sum() > 0 else -1
        up2[~seen_any] = (maj, -maj)
    return _Orientation(cnt_m, theta_f, theta, up2.ravel())


def _one_way_delays(fdm: np.ndarray, dt: np.ndarray, up: np.ndarray, th_g: float) -> tuple[np.ndarray, np.ndarray]:
    """(per matched packet: one-way delay against the offset ``th_g``, per flow: its base delay).

    The offset is the capture's (robust: a median over flows); a flow's delay is its fastest packet
    either way (the base delay, jitter excluded), NaN for a flow with no oriented match.
    """
    corr = (dt - th_g) * up[fdm]
    cmin = np.where(up != 0, _at(np.minimum, fdm, corr, up.shape[0], np.inf), np.nan).reshape(-1, 2)
    cmin[~np.isfinite(cmin)] = np.nan
    owd = np.where(np.isnan(cmin).all(1), np.nan, np.fmax(np.fmin(cmin[:, 0], cmin[:, 1]), 0.0))
    return corr, owd


def _classify_unmatched(p: _Pair, fd_a: np.ndarray, fd_b: np.ndarray, up: np.ndarray,
                        th_g: float) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Each point's unmatched packets by category (see :func:`_classify`): (at A, at B)."""
    a, b, ia, ib, nf = p.a, p.b, p.ia, p.ib, p.nflows
    only_a = np.ones(a.rows.shape[0], bool)
    only_a[ia] = False
    only_b = np.ones(b.rows.shape[0], bool)
    only_b[ib] = False
    oa, ob = np.flatnonzero(only_a), np.flatnonzero(only_b)
    last_a = np.full(nf, -1, np.int64)
    np.maximum.at(last_a, p.fid_a[ia], ia)
    last_b = np.full(nf, -1, np.int64)
    np.maximum.at(last_b, p.fid_b[ib], ib)
    ir_b = _injected_rst_flows(b, p.fid_b, fd_b, ob, -up, nf)
    ir_a = _injected_rst_flows(a, p.fid_a, fd_a, oa, up, nf)
    win_b = (float(b.c.ts.min()) - th_g, float(b.c.ts.max()) - th_g) if len(b.c) else (np.inf, -np.inf)
    win_a = (float(a.c.ts.min()) + th_g, float(a.c.ts.max()) + th_g) if len(a.c) else (np.inf, -np.inf)
    crosses = _crossing_flows(p)
    ca = _classify(a, p.fid_a, fd_a, oa, up_x=up, last_match=last_a, inj_rst_other=ir_b, window=win_b, crosses=crosses)
    cb = _classify(b, p.fid_b, fd_b, ob, up_x=-up, last_match=last_b, inj_rst_other=ir_a, window=win_a, crosses=crosses)
    return ca, cb


def _injected_rst_flows(x: _Side, fid: np.ndarray, fd: np.ndarray, only: np.ndarray, up_x: np.ndarray,  # noqa: PLR0917  internal
                        nf: int) -> np.ndarray:
    """Per flow: True when an unmatched RST at this point came from downstream (injected)."""
    fl_ = x.c.tcp_flags[x.rows[only]]
    m = (fl_ >= 0) & ((fl_ & 0x04) != 0) & (up_x[fd[only]] == -1)
    out = np.zeros(nf, bool)
    out[fid[only[m]]] = True
    return out


def _point(x: _Side) -> dict[str, Any]:
    from pathlib import Path  # noqa: PLC0415  tiny helper

    ts = x.c.ts
    return {"file": Path(x.an.info.path).name, "packets": len(x.c), "ip_packets": int(x.rows.size),
            "first_ts": float(ts.min()) if ts.size else None, "last_ts": float(ts.max()) if ts.size else None}


def _injected_detail(x: _Side, inj: np.ndarray, fd: np.ndarray, fl: _Flows, *, labels: dict[int, dict[str, Any]],
                     matched: np.ndarray, point: str) -> list[dict[str, Any]]:
    """The first injected packets at ``point`` with the TTL their claimed sender normally has there."""
    out = []
    c = x.c
    mfd = fd[matched]
    for k in inj[:MAX_FLOW_FRAMES].tolist():
        r = int(x.rows[k])
        f, d = divmod(int(fd[k]), 2)
        lab = labels.setdefault(f, fl.label(f))
        ttls = c.ttl[x.rows[matched[mfd == fd[k]]]]
        usual = None
        if ttls.size:
            v, n = np.unique(ttls, return_counts=True)
            usual = int(v[np.argmax(n)])
        out.append({"point": point, "frame": int(c.frame[r]), "ts": float(c.ts[r]), "flow": lab["id"],
                    "direction": "c2s" if d == 0 else "s2c",
                    "src": _ep(c.src_hi[r], c.src_lo[r], c.sport[r]), "dst": _ep(c.dst_hi[r], c.dst_lo[r], c.dport[r]),
                    "tcp_flags": _flags(int(c.tcp_flags[r])), "ttl": int(c.ttl[r]), "usual_ttl": usual})
    return out


def _modified(p: _Pair, up: np.ndarray, fdm: np.ndarray, fl: _Flows, labels: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Fields changed in flight on matched packets: TTL (hops), DSCP, MSS (clamping), 5-tuple (NAT)."""
    ca, cb = p.a.c, p.b.c
    ra, rb = p.a.rows[p.ia], p.b.rows[p.ib]
    u = up[fdm]
    hops = np.where(u >= 0, ca.ttl[ra].astype(np.int64) - cb.ttl[rb], cb.ttl[rb].astype(np.int64) - ca.ttl[ra])
    hv, hn = np.unique(hops, return_counts=True)
    raised = np.flatnonzero(hops < 0)
    spread = 0
    if hops.size:
        hf = hops.astype(np.float64)
        hmin, hmax = _at(np.minimum, fdm, hf, 2 * p.nflows, np.inf), _at(np.maximum, fdm, hf, 2 * p.nflows, -np.inf)
        spread = int(np.count_nonzero(np.isfinite(hmin) & (hmax - hmin > 1)))
    ttl = {"hops": {str(int(k)): int(n) for k, n in zip(hv[:20], hn[:20], strict=True)},
           "raised_packets": int(raised.size), "raised_frames_a": [int(x) for x in ca.frame[ra[raised]][:MAX_FLOW_FRAMES]],
           "directions_with_varying_hops": spread}
    dm = (ca.dscp[ra] != cb.dscp[rb]) & (ca.dscp[ra] >= 0)
    trans: dict[str, int] = {}
    if dm.any():
        pr, n = np.unique(np.stack([ca.dscp[ra[dm]], cb.dscp[rb[dm]]], axis=1), axis=0, return_counts=True)
        trans = {f"{int(x)}->{int(y)}": int(k) for (x, y), k in zip(pr.tolist(), n.tolist(), strict=True)}
    dscp = {"changed_packets": int(dm.sum()), "transitions": trans,
            "frames_a": [int(x) for x in ca.frame[ra[dm]][:MAX_FLOW_FRAMES]]}
    mm = (ca.mss[ra] >= 0) & (cb.mss[rb] >= 0) & (ca.mss[ra] != cb.mss[rb])
    mss = []
    for k in np.flatnonzero(mm)[:MAX_FLOW_FRAMES].tolist():
        f = int(p.fid_a[p.ia[k]])
        lab = labels.setdefault(f, fl.label(f))
        mss.append({"flow": lab["id"], "frame_a": int(ca.frame[ra[k]]), "frame_b": int(cb.frame[rb[k]]),
                    "mss_a": int(ca.mss[ra[k]]), "mss_b": int(cb.mss[rb[k]])})
    nat = ((ca.src_lo[ra] != cb.src_lo[rb]) | (ca.src_hi[ra] != cb.src_hi[rb]) | (ca.dst_lo[ra] != cb.dst_lo[rb])
           | (ca.dst_hi[ra] != cb.dst_hi[rb]) | (ca.sport[ra] != cb.sport[rb]) | (ca.dport[ra] != cb.dport[rb]))
    maps = []
    if nat.any():
        kk = np.flatnonzero(nat)
        _, first = np.unique(p.fid_a[p.ia[kk]], return_index=True)
        for k in kk[np.sort(first)][:MAX_FLOW_FRAMES].tolist():
            x, y = int(ra[k]), int(rb[k])
            maps.append({"a": f"{_ep(ca.src_hi[x], ca.src_lo[x], ca.sport[x])} > {_ep(ca.dst_hi[x], ca.dst_lo[x], ca.dport[x])}",
                         "b": f"{_ep(cb.src_hi[y], cb.src_lo[y], cb.sport[y])} > {_ep(cb.dst_hi[y], cb.dst_lo[y], cb.dport[y])}",
                         "frame_a": int(ca.frame[x]), "frame_b": int(cb.frame[y])})
    idm = (ca.ip_id[ra] != cb.ip_id[rb]) & (ca.l3[ra] == 4)
    return {"ttl": ttl, "dscp": dscp, "mss_clamped": {"count": int(mm.sum()), "examples": mss},
            "ip_id": {"rewritten_packets": int(idm.sum()), "frames_a": [int(x) for x in ca.frame[ra[idm]][:MAX_FLOW_FRAMES]]},
            "nat": {"rewritten_packets": int(nat.sum()), "mappings": maps}}


def _per_flow(p: _Pair, fl: _Flows, labels: dict[int, dict[str, Any]], cnt_m: np.ndarray, up: np.ndarray,  # noqa: PLR0917  internal
              owd: np.ndarray, theta_f: np.ndarray, corr: np.ndarray, fdm: np.ndarray,
              ca: dict[str, np.ndarray], cb: dict[str, np.ndarray], fd_a: np.ndarray, fd_b: np.ndarray) -> list[dict[str, Any]]:
    """The flows worth reading: most problems first, then most matched packets."""
    nf = p.nflows
    na = np.bincount(fd_a, minlength=2 * nf)
    nb = np.bincount(fd_b, minlength=2 * nf)

    def per(idx: np.ndarray, fd: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.bincount(fd[idx], minlength=2 * nf)
        return out

    lost = per(ca["lost"], fd_a) + per(cb["lost"], fd_b)
    inj = per(ca["injected"], fd_a) + per(cb["injected"], fd_b)
    blk = per(ca["blocked"], fd_a) + per(cb["blocked"], fd_b)
    bad = (lost + inj + blk).reshape(-1, 2).sum(1)
    matched = cnt_m.reshape(-1, 2).sum(1)
    order = np.lexsort((-matched, -bad))[:MAX_FLOWS]
    # quantiles only for the flows reported (one small sort, whatever the capture size)
    sel = np.zeros(2 * nf, np.int64) - 1
    for j, f in enumerate(order.tolist()):
        sel[2 * f:2 * f + 2] = (2 * j, 2 * j + 1)
    m = sel[fdm] >= 0
    _, qs = _group_quantiles(sel[fdm[m]], corr[m], 2 * len(order), (0.0, 0.5, 0.95, 1.0))
    q0, q5, q95, q1 = (np.full(2 * nf, np.nan) for _ in range(4))
    for dst, src in zip((q0, q5, q95, q1), qs, strict=True):
        dst[sel >= 0] = src[sel[sel >= 0]]
    out = []
    for f in order.tolist():
        lab = labels.setdefault(f, fl.label(f))
        row: dict[str, Any] = {**lab, "one_way_delay_ms": _round(owd[f] * 1000),
                               "clock_offset_ms": _round(theta_f[f] * 1000), "directions": {}}
        for d, name in ((0, "c2s"), (1, "s2c")):
            k = 2 * f + d
            upstream = {1: "A", -1: "B"}.get(int(up[k]))
            row["directions"][name] = {
                "packets_a": int(na[k]), "packets_b": int(nb[k]), "matched": int(cnt_m[k]), "upstream": upstream,
                "lost": int(lost[k]), "injected": int(inj[k]), "blocked": int(blk[k]),
                "delay_ms": None if not cnt_m[k] or upstream is None else {
                    "min": _round(q0[k] * 1000), "median": _round(q5[k] * 1000), "p95": _round(q95[k] * 1000),
                    "max": _round(q1[k] * 1000)},
            }
        out.append(row)
    return out
