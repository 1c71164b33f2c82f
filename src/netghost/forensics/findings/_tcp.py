"""TCP detectors: handshake failures, port scans, resets, retransmission rates (receive windows: _window.py).

Each names the flow (or the server and how many connections), the count and the conclusion, and
cites the frames that show it.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from netghost.forensics.arrays import count_by, distinct, in_sorted, select, spans, take
from netghost.forensics.findings._context import (
    MAX_FRAMES,
    Ctx,
    Finding,
    addr,
    ep,
    finding,
    flow_id,
    group_rows,
    server_groups,
    smallest_texts,
)
from netghost.forensics.tcp import CONN_STATES, FLAG_BITS, mix_hash

__all__ = ["SCAN_MIN_PORTS", "resets", "retransmissions", "syn_failures"]

SCAN_MIN_PORTS = 20
SYN, FIN, RST = 0x02, 0x01, 0x04


def _port_scans(x: Ctx, out: list[Finding]) -> np.ndarray:
    """One client SYN-ing >= SCAN_MIN_PORTS ports of one host is a scan, not an outage.

    Appends one finding per (scanner, target) and returns a per-stream mask of the scan's streams,
    which the SYN-failure detectors then leave alone (a filtered port in a scan is not a "drop").
    """
    st = x.a.streams
    mask = np.zeros(len(st), bool)
    cand = np.flatnonzero(st.syn > 0)
    if cand.size < SCAN_MIN_PORTS:
        return mask
    # only (client, server) host pairs with >= SCAN_MIN_PORTS streams matter: a digest bucket (a whole
    # host pair shares one) counted that often keeps its streams, the exact grouping runs on those.
    # The digest folds the low address halves only: the high halves (the IPv4 mark, or an IPv6 prefix)
    # can only split a bucket's streams further, which the exact grouping does (so do collisions).
    h = mix_hash(mix_hash(np.full(cand.shape[0], np.uint64(11), np.uint64), st.c_lo.take(cand)), st.s_lo.take(cand))
    bucket = (h >> np.uint64(48)).astype(np.int64)
    often = np.bincount(bucket, minlength=1 << 16) >= SCAN_MIN_PORTS
    cand = cand.compress(often.take(bucket))
    o, b = group_rows(st.c_hi[cand], st.c_lo[cand], st.s_hi[cand], st.s_lo[cand])
    for i in np.flatnonzero(np.diff(b) >= SCAN_MIN_PORTS).tolist():
        ss = cand[o[b[i] : b[i + 1]]]
        ports = distinct(st.s_port[ss])
        if ports.shape[0] < SCAN_MIN_PORTS:
            continue
        mask[ss] = True
        answered = ss[st.synack[ss] > 0]
        refused = ss[(st.synack[ss] == 0) & (st.rst_s[ss] > 0)]
        silent = ss.shape[0] - answered.shape[0] - refused.shape[0]
        open_ports = sorted({int(p) for p in st.s_port[answered]})[:10]
        scanner = addr(st.c_hi[ss[0]], st.c_lo[ss[0]])
        target = addr(st.s_hi[ss[0]], st.s_lo[ss[0]])
        out.append(finding(
            "port_scan", "medium", 0.85,
            f"{scanner} probed {ports.shape[0]} ports of {target} (SYN scan): {answered.shape[0]} open"
            + (f" ({', '.join(map(str, open_ports))})" if open_ports else "")
            + f", {refused.shape[0]} closed (RST), {silent} filtered (no answer)",
            "Many ports of one host from one client in a short time is a port scan (or a service-discovery "
            "sweep); its unanswered SYNs show what a filter drops, not an outage.",
            [int(f) for f in x.seg("frame", np.sort(x.rows_of_many(ss[:MAX_FRAMES])[0])[:MAX_FRAMES])],
            [flow_id(int(s)) for s in ss[:MAX_FRAMES]], float(st.first_ts[ss].min()),
            ports=int(ports.shape[0]), open=int(answered.shape[0]), closed=int(refused.shape[0]), filtered=int(silent),
        ))
    return mask


def syn_failures(x: Ctx) -> list[Finding]:
    """Unanswered SYNs (silent drop) and SYNs answered by RST (nothing listening), grouped per server.

    Marks the streams as explained: their SYN retransmissions are this finding, not "path loss".
    """
    a, st = x.a, x.a.streams
    out: list[Finding] = []
    def syn(r: np.ndarray) -> np.ndarray:
        out: np.ndarray = (x.seg("fl", r) & 0x12) == SYN
        return out

    def syn_or_rst(r: np.ndarray) -> np.ndarray:
        fl = x.seg("fl", r)
        out: np.ndarray = ((fl & 0x12) == SYN) | ((fl & RST) != 0)
        return out

    scanned = _port_scans(x, out)
    x.explained |= (st.syn > 0) & (st.synack == 0)
    s0 = np.flatnonzero((st.syn > 0) & (st.synack == 0) & (st.pkts_s2c == 0) & (st.rst_c == 0) & ~scanned)
    groups = server_groups(a, s0)
    frames = x.frames_of_groups(list(groups.values()), syn)
    attempts, first_ts, members, bounds = _per_group(st, groups)
    first_clients = smallest_texts(st.c_hi.take(members), st.c_lo.take(members), bounds)  # (the text cites 3)
    for g, ((server, ss), evidence) in enumerate(zip(groups.items(), frames, strict=True)):
        per = attempts[g] / len(ss)
        clients = first_clients[g]
        retried = f"retried {per:.0f}×" if per >= 2 else "sent once"
        conns = f" on {len(ss)} connections" if len(ss) > 1 else ""
        out.append(finding(
            "syn_no_answer", "high", 0.9 if per >= 2 else 0.6,
            f"SYN to {server} {retried}{conns} with no answer → silently dropped (NSG/firewall or host down)",
            f"{attempts[g]} SYN(s) from {', '.join(clients[:3])} to {server} got neither SYN-ACK nor RST. A drop "
            "without reply is what an NSG deny rule, a firewall or a missing route does; a closed port would "
            "answer with RST.",
            evidence, [flow_id(s) for s in ss[:MAX_FRAMES]], first_ts[g],
            connections=len(ss), syn_attempts=attempts[g], server=server,
        ))
    rej = np.flatnonzero((st.syn > 0) & (st.synack == 0) & (st.rst_s > 0) & ~scanned)
    groups = server_groups(a, rej)
    frames = x.frames_of_groups(list(groups.values()), syn_or_rst)
    _, first_ts, _, _ = _per_group(st, groups)
    for g, ((server, ss), evidence) in enumerate(zip(groups.items(), frames, strict=True)):
        conns = f"{len(ss)} connection attempts" if len(ss) > 1 else "the connection attempt"
        out.append(finding(
            "syn_rejected_rst", "high", 0.9,
            f"SYN to {server} answered by RST from the server port ({conns}) → nothing listening (or a reject rule)",
            f"{len(ss)} connection attempt(s) to {server} were refused with RST instead of SYN-ACK: no process "
            "listens on that port on the target (or a host firewall rejects with reset).",
            evidence, [flow_id(s) for s in ss[:MAX_FRAMES]], first_ts[g],
            connections=len(ss), server=server,
        ))
    return out


def _per_group(st: Any, groups: dict[str, list[int]]) -> tuple[list[int], list[float], np.ndarray, list[int]]:
    """(SYN attempts, earliest first_ts) per group of streams; the groups' streams in one array and its group offsets.

    Why: one reduction over all groups instead of two numpy calls per group (a big capture's SYN
    failures span a hundred or more servers). Sums and minima are exact, so the values are those of
    ``st.syn[group].sum()`` and ``st.first_ts[group].min()``. (A finding keeps MAX_FRAMES flow
    ids, so only those are rendered.)
    """
    sizes = [len(ss) for ss in groups.values()]
    bounds = np.cumsum([0, *sizes])
    if not groups:
        return [], [], np.zeros(0, np.int64), bounds.tolist()
    members = np.fromiter(chain.from_iterable(groups.values()), np.int64, int(bounds[-1]))
    starts = bounds[:-1]
    syn_sum = np.add.reduceat(st.syn.take(members), starts)
    return syn_sum.tolist(), np.minimum.reduceat(st.first_ts.take(members), starts).tolist(), members, bounds.tolist()


def _usual_ttls(x: Ctx, ss: np.ndarray, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per (stream ``ss[i]``, RST segment ``ks[i]``): the most common TTL of the RST's claimed sender
    over its other (non-RST) segments of that stream (smallest on ties), and the first such segment.

    Both are -1 where the sender has no other segment. One pass over the candidate streams' segments
    (no Python loop per stream): TTL histograms by ``bincount`` over (candidate, TTL) in chunks.
    """
    usual = np.full(ss.shape[0], -1, np.int64)
    first = np.full(ss.shape[0], -1, np.int64)
    ks_side = x.client_side(ks)
    c, tcp_rows = x.a.cols, x.a.tcp_rows
    chunk = 256  # candidates per histogram (256 x 256 counts: cache-sized); their segments come in pieces
    for c0 in range(0, ss.shape[0], chunk):
        m = min(chunk, ss.shape[0] - c0)
        hist = np.zeros(m * 256, np.int64)
        for piece, who in x.iter_rows_of_many(ss[c0 : c0 + m]):
            # each segment's packet row and stream are gathered once (its stream is known: ss[c0 + who])
            r = take(tcp_rows, piece)
            same = x.side_of(r, ss.take(who + c0)) == ks_side.take(who + c0)
            same &= (take(c.tcp_flags, r) & RST) == 0
            rows, owner, r = piece.compress(same), who.compress(same), r.compress(same)
            if not rows.size:
                continue
            hist += np.bincount(owner * 256 + (take(c.ttl, r).astype(np.int64) & 0xFF), minlength=m * 256)
            fi = np.flatnonzero(np.diff(owner, prepend=-1))  # owner is non-decreasing: each one's first row
            u = owner.take(fi)
            new = first[c0 + u] < 0
            first[c0 + u[new]] = rows[fi[new]]
        usual[c0 : c0 + m] = hist.reshape(m, 256).argmax(axis=1)
    usual[first < 0] = -1
    return usual, first


def resets(x: Ctx) -> list[Finding]:
    """Injected resets (TTL unlike the claimed sender's), grouped per server; plain mid-stream aborts."""
    st = x.a.streams
    out: list[Finding] = []
    rst_rows = x.rst_rows
    established = (st.synack > 0) | (st.data_pkts > 0)
    ks = rst_rows[np.unique(take(x.sid, rst_rows), return_index=True)[1]]  # each stream's first RST, by stream id
    ss = take(x.sid, ks)
    keep = established[ss] & ~((st.syn[ss] > 0) & (st.synack[ss] == 0))
    ks, ss = ks[keep], ss[keep]
    usual, first = _usual_ttls(x, ss, ks)
    ttl = x.seg("ttl", ks).astype(np.int64)
    odd = (usual >= 0) & (np.abs(ttl - usual) >= 2)  # a TTL unlike the sender's: injected
    plain: list[int] = ks.compress(~odd & (st.data_pkts.take(ss) > 0)).tolist()
    injected: dict[tuple[str, bool, int, int], list[tuple[int, int, int]]] = {}
    fc_odd = x.client_side(ks.compress(odd)).tolist()
    for i, fc in zip(np.flatnonzero(odd).tolist(), fc_odd, strict=True):
        k, s, u = int(ks[i]), int(ss[i]), int(usual[i])
        server = ep(st.s_hi[s], st.s_lo[s], st.s_port[s])
        injected.setdefault((server, bool(fc), int(ttl[i]), u), []).append((s, k, int(first[i])))
    for (server, by_client, ttl, usual_ttl), hits in injected.items():
        who = "client" if by_client else "server"
        s, k, normal = hits[0]
        if len(hits) == 1:
            sender = ep(x.seg("src_hi", k), x.seg("src_lo", k), x.seg("sport", k))
            peer = ep(st.s_hi[s], st.s_lo[s], st.s_port[s]) if by_client else ep(st.c_hi[s], st.c_lo[s], st.c_port[s])
            title = (f"RST mid-stream on {flow_id(s)} ({sender} → {peer}) with TTL {ttl} where the {who} always uses "
                     f"{usual_ttl} → injected by a middlebox")
        else:
            title = (f"RST mid-stream on {len(hits)} connections to {server} with TTL {ttl} where the {who} always "
                     f"uses {usual_ttl} → injected by a middlebox")
        out.append(finding(
            "rst_injected", "high", 0.85 if len(hits) > 1 else 0.8, title,
            f"The reset(s) claim to come from the {who} but their IP TTL ({ttl}) differs from every other packet "
            f"of that sender ({usual_ttl}): a firewall/IPS, NVA or load balancer on the path forged them. "
            f"First RST frames: {', '.join(str(int(x.seg('frame', h[1]))) for h in hits[:5])}.",
            [int(x.seg("frame", h[1])) for h in hits[:MAX_FRAMES - 1]] + [int(x.seg("frame", normal))],
            [flow_id(h[0]) for h in hits], float(x.seg("ts", k)),
            rst_ttl=ttl, usual_ttl=usual_ttl, connections=len(hits), server=server, by=who,
        ))
    if 0 < len(plain) <= 3:
        for k in plain:
            s = int(x.sid[k])
            who = "client" if x.client_side(np.asarray([k]))[0] else "server"
            out.append(finding(
                "rst_midstream", "medium", 0.7,
                f"{who.capitalize()} {ep(x.seg('src_hi', k), x.seg('src_lo', k), x.seg('sport', k))} reset {flow_id(s)} mid-stream after "
                f"{int(st.data_pkts[s])} data segments",
                f"Connection {flow_id(s)} was aborted with RST by the {who} instead of a FIN close "
                f"(Zeek state {CONN_STATES[st.conn_state[s]]}): an application abort, an idle timeout on a "
                "middlebox, or a crash.",
                [int(x.seg("frame", k))], [flow_id(s)], float(x.seg("ts", k)), by=who,
            ))
    elif plain:
        pl = np.asarray(plain, np.int64)
        by_c = int(np.count_nonzero(x.client_side(pl)))
        out.append(finding(
            "rst_midstream", "medium", 0.6,
            f"{len(plain)} established connections aborted with RST mid-stream ({by_c} by the client, "
            f"{len(plain) - by_c} by the server)",
            "Many aborts rather than FIN closes: application resets, idle timeouts on a middlebox (NVA, load "
            "balancer) or connection-pool churn.",
            [int(f) for f in x.seg("frame", pl[:MAX_FRAMES])], [flow_id(int(x.sid[k])) for k in plain[:MAX_FRAMES]],
            float(x.seg("ts", pl[0])), connections=len(plain), by_client=by_c,
        ))
    return out[:20]


def _data_segments(x: Ctx, retransmitted: int) -> int | None:
    """Segments carrying payload or FIN (not SYN), capture copies and explained streams left out.

    None when ``retransmitted`` is provably below 2% of them (the overall finding cannot fire): the
    stream table bounds the count from below — every segment with payload (``data_pkts``) except
    those that are SYNs (``syn`` + ``synack``) carries data — which spares a pass over all segments.
    """
    # take back the excluded ones: few segments (capture copies, streams explained by another detector)
    # (in pieces: the explained streams' segments, then the copies outside them; disjoint, so the sum
    # is the count over their union)
    def carry(r: np.ndarray) -> int:
        fl = x.seg("fl", r)
        return int(np.count_nonzero(((fl & SYN) == 0) & ((x.seg("pay", r) > 0) | ((fl & FIN) != 0))))

    gone = sum(carry(rows) for rows, _ in x.iter_rows_of_many(np.flatnonzero(x.explained)))
    copies = x.copies
    gone += sum(carry(r[~x.explained[take(x.sid, r)]]) for r in (copies[lo:hi] for lo, hi in spans(copies.shape[0])))
    st = x.a.streams
    lower = int(st.data_pkts.sum()) - int(st.syn.sum()) - int(st.synack.sum()) - gone
    if lower >= 50 and retransmitted * 50 < lower * 0.99:  # ratio < 1.98% for any count >= lower
        return None
    return x.carrying - gone


def retransmissions(x: Ctx) -> list[Finding]:
    """Retransmission rates over segments that carry payload or FIN, per flow and overall.

    Why: SYN retries are the handshake's story (``syn_no_answer``), and counting them as "data"
    once turned 53 silently dropped connections into "72.6% of all TCP data segments are
    retransmissions". Streams another detector explained (``Ctx.explained``) and capture-made
    copies are left out of both the numerator and the denominator.
    """
    st = x.a.streams
    out: list[Finding] = []
    n = len(st)

    def carries(r: np.ndarray) -> np.ndarray:
        fl = x.seg("fl", r)
        out: np.ndarray = ((fl & SYN) == 0) & ((x.seg("pay", r) > 0) | ((fl & FIN) != 0)) & x.not_copy(r) & ~x.explained[take(x.sid, r)]
        return out

    retr = select(x.with_flag(FLAG_BITS["retransmission"]), carries)  # ascending
    dretr = count_by(lambda r: take(x.sid, r), retr, n)
    # data segments per stream, counted only where the rate can qualify (>= 3 retransmitted ones)
    data = np.zeros(n, np.int64)
    few = np.flatnonzero(dretr >= 3)
    for rows, owner in x.iter_rows_of_many(few):
        data[few] += np.bincount(owner[carries(rows)], minlength=few.shape[0])
    rate = np.where(data > 0, dretr / np.maximum(data, 1), 0.0)
    cand = np.flatnonzero((data >= 20) & (rate >= 0.02) & (dretr >= 3))
    for s in cand[np.argsort(-rate[cand], kind="stable")][:10].tolist():
        pct = 100 * rate[s]
        sev = "high" if pct >= 10 else "medium" if pct >= 3 else "low"
        out.append(finding(
            "retransmissions", sev, 0.8,
            f"{pct:.1f}% retransmissions on {flow_id(s)} ({ep(st.c_hi[s], st.c_lo[s], st.c_port[s])} ↔ "
            f"{ep(st.s_hi[s], st.s_lo[s], st.s_port[s])}), {int(dretr[s])} of {int(data[s])} data segments → "
            "loss on the path",
            f"{int(dretr[s])} of {int(data[s])} segments carrying data (or FIN) were retransmissions; sustained "
            "loss means congestion, a faulty link or a policer between the endpoints.",
            x.frames_of(np.asarray([s]), lambda r: in_sorted(retr, r)), [flow_id(s)], float(st.first_ts[s]),
            retransmissions=int(dretr[s]), data_segments=int(data[s]), rate=round(float(rate[s]), 4),
        ))
    tot_retr = int(retr.shape[0])
    tot_data = _data_segments(x, tot_retr)
    if tot_data is not None and tot_data >= 50 and tot_retr / tot_data >= 0.02 and len(out) != 1:
        pct = 100 * tot_retr / tot_data
        flows = np.flatnonzero(dretr > 0)
        out.append(finding(
            "retransmissions_overall", "medium" if pct >= 3 else "low", 0.6,
            f"{pct:.1f}% of all TCP data segments are retransmissions ({tot_retr} of {tot_data}, on "
            f"{flows.shape[0]} flow(s)) → loss on the shared path",
            "Counted over segments carrying payload or FIN (SYN retries are reported with the handshake). "
            "Retransmissions spread over many flows point at the shared path (link, gateway, NVA) rather "
            "than one server.",
            [int(f) for f in x.seg("frame", retr[:MAX_FRAMES])], [flow_id(int(s)) for s in flows[:MAX_FRAMES]], None,
            retransmissions=tot_retr, data_segments=tot_data, flow_count=int(flows.shape[0]),
        ))
    return out
