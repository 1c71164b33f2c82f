"""Path-MTU findings: ICMP fragmentation-needed tied to its flow, and black holes without any ICMP.

A PMTU black hole (a hop with a smaller MTU drops full-size DF packets and the ICMP that would tell
the sender is filtered) looks different at each end, so two rules are applied per TCP stream:

* sender's view: the same full-size segment (payload >= ~1400 bytes, or >= 90% of the receiver's
  MSS) is retransmitted >= 3 times with growing gaps (RTO backoff) and never acknowledged, while a
  smaller segment of the same flow is acknowledged;
* receiver's view: the sender's sequence number jumps by at least one full-size segment
  (tshark's ``lost_segment``), no full-size segment ever arrives, the hole is never acknowledged,
  while small segments pass.

Why not a retransmission-rate threshold: a Linux sender sends ~10 full-size segments then
retransmits only the first, so the flow's retransmission rate stays near 35% and a rate rule
never fires, while the pattern above is unambiguous.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from netghost.forensics.arrays import (
    count_by,
    distinct,
    in_sorted,
    member,
    nonzero_blocks,
    paced,
    select,
    spans,
    take,
)
from netghost.forensics.findings._context import (
    MAX_FRAMES,
    Ctx,
    Finding,
    addr,
    ep,
    finding,
    flow_id,
    server_groups,
)
from netghost.forensics.tcp import FLAG_BITS

__all__ = ["BIG_PAYLOAD", "pmtu"]

BIG_PAYLOAD = 1400
MIN_RETRIES = 3
MAX_STREAMS = 400  # candidate streams examined per rule (bounded work on huge captures)
M32, HALF = 0xFFFFFFFF, 1 << 31
SYN, FIN, ACK = 0x02, 0x01, 0x10
_FIX = ("Clamp the TCP MSS on the NVA/VPN (or lower the interface MTU), or let ICMP type 3 code 4 "
        "(ICMPv6 type 2) reach the sender so path-MTU discovery works.")


Thr = Callable[[np.ndarray], np.ndarray]


def _thresholds(x: Ctx, idx: np.ndarray) -> np.ndarray:
    """Per segment ``idx``: the payload size that counts as full-size for its direction."""
    st = x.a.streams
    sid = take(x.sid, idx)
    mss_rx = np.where(x.client_side(idx), st.mss_s[sid], st.mss_c[sid])
    out: np.ndarray = np.where(mss_rx > 0, np.minimum(BIG_PAYLOAD, (mss_rx * 9) // 10), BIG_PAYLOAD)
    return out


def _small_acked(x: Ctx, r: np.ndarray, thr: Thr) -> int | None:
    """A segment of stream rows ``r`` with a small payload that the other side acknowledged (its row)."""
    for fc in (True, False):
        snd = r[x.client_side(r) == fc]
        peer = r[(x.client_side(r) != fc) & ((x.seg("fl", r) & ACK) != 0)]
        if not snd.size or not peer.size:
            continue
        base = x.seg("seq", snd[0])
        rel_ack = (x.seg("ack", peer) - base) & M32
        rel_ack = rel_ack[rel_ack < HALF]
        if not rel_ack.size:
            continue
        small = snd[(x.seg("pay", snd) > 0) & (x.seg("pay", snd) < thr(snd))]
        ends = (x.seg("seq", small) - base + x.seg("pay", small)) & M32
        ok = small[ends <= rel_ack.max()]
        if ok.size:
            return int(ok[0])
    return None


def _sender_side(x: Ctx, s: int, big_retr: np.ndarray, thr: Thr) -> dict[str, Any] | None:
    r = x.rows_of(s)
    counts: dict[tuple[bool, int, int], int] = {}
    ks = r[in_sorted(big_retr, r)]
    for key in zip(x.client_side(ks).tolist(), x.seg("seq", ks).tolist(), x.seg("pay", ks).tolist(), strict=True):
        counts[key] = counts.get(key, 0) + 1
    if not counts:
        return None
    (fc, seq, pay), n = max(counts.items(), key=lambda kv: kv[1])
    if n < MIN_RETRIES:
        return None
    copies = r[(x.client_side(r) == fc) & (x.seg("seq", r) == seq) & (x.seg("pay", r) == pay)]
    gaps = np.diff(x.seg("ts", copies))
    if gaps.size < 2 or np.any(gaps[1:] < 0.9 * gaps[:-1]) or gaps[-1] <= 1.2 * gaps[0]:
        return None  # not an RTO backoff
    peer = r[(x.client_side(r) != fc) & ((x.seg("fl", r) & ACK) != 0)]
    rel = (x.seg("ack", peer) - seq) & M32
    if np.any((rel > 0) & (rel < HALF)):
        return None  # acknowledged after all: loss, not a size limit
    small = _small_acked(x, r, thr)
    if small is None:
        return None
    k = int(copies[0])
    return {"s": s, "side": "sender", "size": pay, "retries": int(n), "gaps": (float(gaps[0]), float(gaps[-1])),
            "sender": ep(x.seg("src_hi", k), x.seg("src_lo", k), x.seg("sport", k)), "small": small,
            "frames": [int(f) for f in x.seg("frame", copies[:6])] + [int(x.seg("frame", small))], "ts": float(x.seg("ts", k))}


def _receiver_side(x: Ctx, s: int, lost_flag: np.ndarray, thr: Thr) -> dict[str, Any] | None:
    r = x.rows_of(s)
    st, c = x.a.streams, x.a.cols
    for fc in (False, True):
        snd = r[x.client_side(r) == fc]
        if not snd.size or np.any(x.seg("pay", snd) >= thr(snd)):
            continue  # full-size segments do arrive in this direction
        lost = np.flatnonzero(in_sorted(lost_flag, snd))
        if not lost.size:
            continue
        base = x.seg("seq", snd[0])
        ends = (x.seg("seq", snd) - base + x.seg("pay", snd) + ((x.seg("fl", snd) & (SYN | FIN)) != 0)) & M32
        ends = np.where(ends < HALF, ends, 0)
        pos = int(lost[0])
        hole_start = int(ends[:pos].max()) if pos else 0
        hole = int((x.seg("seq", snd[pos]) - base) & M32) - hole_start
        if hole < int(thr(snd[:1])[0]) or hole >= HALF:
            continue
        peer = r[(x.client_side(r) != fc) & ((x.seg("fl", r) & ACK) != 0)]
        rel_ack = (x.seg("ack", peer) - base) & M32
        rel_ack = rel_ack[rel_ack < HALF]
        if rel_ack.size and int(rel_ack.max()) > hole_start:
            continue  # the hole was filled and acknowledged: ordinary loss
        small = _small_acked(x, r, thr)
        if small is None:
            continue
        mss = int(st.mss_c[s] if not fc else st.mss_s[s])
        seg = mss - (12 if int(c.tsval[x.a.tcp_rows[snd[0]]]) >= 0 else 0) if mss > 0 else 0
        k = int(snd[pos])
        return {"s": s, "side": "receiver", "size": seg, "missing": hole, "sender": ep(x.seg("src_hi", k), x.seg("src_lo", k), x.seg("sport", k)),
                "small": small, "frames": [int(x.seg("frame", k)), int(x.seg("frame", small))], "ts": float(x.seg("ts", k))}
    return None


def _suspects(x: Ctx, skip: np.ndarray) -> dict[int, dict[str, Any]]:
    """Streams matching either black-hole rule, keyed by stream."""
    def thr(idx: np.ndarray) -> np.ndarray:
        return _thresholds(x, idx)

    # (index sets of flagged segments are as long as the capture in the worst case: every pass over
    # them runs in blocks, and per-segment tables are replaced by binary searches in these sorted sets)
    retr = select(x.with_flag(FLAG_BITS["retransmission"]), lambda r: (x.seg("pay", r) >= thr(r)) & x.not_copy(r))
    big_retr = retr  # ascending segment indices
    n = len(x.a.streams)
    out: dict[int, dict[str, Any]] = {}
    cand = np.flatnonzero((count_by(lambda r: take(x.sid, r), retr, n) >= MIN_RETRIES) & ~skip)
    for s in paced(cand[:MAX_STREAMS].tolist()):  # (each stream's reads fault in pages of spilled columns)
        m = _sender_side(x, s, big_retr, thr)
        if m:
            out[s] = m
    lost = x.with_flag(FLAG_BITS["lost_segment"])
    lost_flag = lost  # ascending segment indices
    # vectorised pre-filter: a direction qualifies only if it lost something and never carried a big
    # segment (big segments looked for only in the streams that lost something)
    has_lost = np.zeros(2 * n, bool)
    has_big = np.zeros(2 * n, bool)
    for lo, hi in spans(lost.shape[0]):
        part = lost[lo:hi]
        lost_key = take(x.sid, part) * 2 + x.client_side(part)
        has_lost[lost_key] = True
        # a lost-flagged segment is usually itself full-size, which settles its direction at once; only
        # the other directions need a look at all their stream's segments
        has_big[lost_key[x.seg("pay", part) >= thr(part)]] = True
    open_streams = distinct(np.flatnonzero(has_lost & ~has_big) // 2)
    for piece, _ in x.iter_rows_of_many(open_streams):
        rows = np.sort(piece)  # sorted: the gathers below run ~3x faster
        rows = rows.compress(x.seg("pay", rows) >= thr(rows))
        has_big[take(x.sid, rows) * 2 + x.client_side(rows)] = True
    ok = (has_lost & ~has_big).reshape(n, 2).any(axis=1) if n else np.zeros(0, bool)
    cand = np.flatnonzero(ok & ~skip)
    for s in paced(cand[:MAX_STREAMS].tolist()):
        if s not in out and (m := _receiver_side(x, s, lost_flag, thr)):
            out[s] = m
    return out


def _suspect_finding(x: Ctx, server: str, ms: list[dict[str, Any]], mtu: int | None, icmp_frames: list[int]) -> Finding:
    st = x.a.streams
    m0 = ms[0]
    s0 = m0["s"]
    where = (f"{flow_id(s0)} ({ep(st.c_hi[s0], st.c_lo[s0], st.c_port[s0])} ↔ {server})" if len(ms) == 1
             else f"{len(ms)} connections to {server}")
    icmp_note = f"; ICMP fragmentation-needed cites next-hop MTU {mtu}" if mtu else ""
    small = int(x.seg("pay", m0["small"]))
    if m0["side"] == "sender":
        title = (f"PMTU black hole suspected on {where} (large segments of {m0['size']} bytes never acknowledged; "
                 f"small ones pass){icmp_note}")
        detail = (f"On {flow_id(s0)} the {m0['size']}-byte segment from {m0['sender']} was retransmitted "
                  f"{m0['retries']}× with growing gaps ({m0['gaps'][0]:.2f} s → {m0['gaps'][1]:.2f} s) and never "
                  f"acknowledged, while a {small}-byte segment (frame {int(x.seg('frame', m0['small']))}) was: packets "
                  "larger than a hop's MTU are dropped and the ICMP that would tell the sender is filtered. ")
        metrics: dict[str, Any] = {"side": "sender", "segment_bytes": m0["size"],
                                   "max_retransmissions": max(m["retries"] for m in ms)}
    else:
        size = f"~{m0['size']}" if m0["size"] else "full-size"
        title = (f"PMTU black hole suspected on {where} (large segments of {size} bytes never arrive: "
                 f"{m0['missing']} bytes from {m0['sender']} missing and never acknowledged; small ones pass){icmp_note}")
        detail = (f"On {flow_id(s0)} {m0['sender']}'s sequence number jumped by {m0['missing']} bytes (frame "
                  f"{m0['frames'][0]}) that never arrived and were never acknowledged, no full-size segment was "
                  f"ever received, while a {small}-byte segment passed: the large packets die on the path. ")
        metrics = {"side": "receiver", "segment_bytes": m0["size"], "missing_bytes": m0["missing"]}
    frames = [f for m in ms[:3] for f in m["frames"]][: MAX_FRAMES - 2] + icmp_frames[:2]
    return finding("pmtu_suspect", "high", 0.9 if mtu else 0.8 if m0["side"] == "sender" else 0.7, title,
                   detail + _FIX, frames, [flow_id(m["s"]) for m in ms], min(m["ts"] for m in ms),
                   connections=len(ms), server=server, **metrics, **({"mtu": mtu} if mtu else {}))


def _icmp_blackhole(x: Ctx, server: str, mtu: int, big_retr: np.ndarray,
                    flows: list[tuple[int, list[int]]]) -> Finding:
    """One ``pmtu_blackhole`` finding per (server, next-hop MTU) over the flows the ICMP quotes."""
    st, c = x.a.streams, x.a.cols
    rs = [r for _, group in flows for r in group]
    reporters = sorted({addr(c.src_hi[r], c.src_lo[r]) for r in rs[:50]})[:2]
    quoted = np.array([s for s, _ in flows])
    m = select(big_retr, lambda r: member(x.sid[r], quoted))  # big_retr: segment indices
    s0 = flows[0][0]
    where = (f"{flow_id(s0)} ({ep(st.c_hi[s0], st.c_lo[s0], st.c_port[s0])} → {server})" if len(flows) == 1
             else f"{len(flows)} flows to {server}")
    return finding(
        "pmtu_blackhole", "high", 0.85,
        f"ICMP fragmentation-needed (next-hop MTU {mtu}) for {where} and {m.shape[0]} large segment(s) "
        "retransmitted → PMTU black hole",
        f"{', '.join(reporters)} reported a next-hop MTU of {mtu} ({len(rs)} message(s)) for these flows, whose "
        "segments of >=1000 bytes keep being retransmitted: packets larger than the path MTU are dropped. " + _FIX,
        [int(c.frame[r]) for r in rs[:5]] + [int(f) for f in x.seg("frame", m[:5])], [flow_id(s) for s, _ in flows],
        float(c.ts[min(rs)]), mtu=mtu, large_retransmissions=int(m.shape[0]), icmp_messages=len(rs),
        connections=len(flows), server=server,
    )


def pmtu(x: Ctx) -> list[Finding]:
    """ICMP "fragmentation needed"/"packet too big" tied to the TCP flow it quotes, and silent black holes.

    A black hole is claimed from ICMP only when the quoted flow itself retransmits large segments;
    an ICMP that quotes no such flow is a (medium) path-MTU fact, unless a silent black hole is found,
    whose finding then cites that next-hop MTU instead.
    """
    a, st, c = x.a, x.a.streams, x.a.cols
    out: list[Finding] = []
    big_retr = select(x.with_flag(FLAG_BITS["retransmission"]), lambda r: x.seg("pay", r) >= 1000)
    rows = nonzero_blocks(len(c), lambda lo, hi: c.icmp_type[lo:hi] >= 0)  # ICMP messages only (few)
    it, pr = take(c.icmp_type, rows), take(c.proto, rows)  # (take: scattered rows of spilled columns)
    rows = rows[((pr == 1) & (it == 3) & (take(c.icmp_code, rows) == 4)) | ((pr == 58) & (it == 2))][:5000]
    quoted = rows[take(c.in_proto, rows) == 6]
    # streams that retransmit large segments, keyed by endpoints both ways; only streams with a port
    # some ICMP quotes can ever be looked up, so the others are left out of the index
    retr_streams = np.flatnonzero(count_by(lambda r: take(x.sid, r), big_retr, len(st)))
    ports = distinct(np.concatenate((take(c.in_sport, quoted), take(c.in_dport, quoted))))
    retr_streams = retr_streams[member(st.c_port[retr_streams], ports) & member(st.s_port[retr_streams], ports)]
    index: dict[tuple[tuple[int, int, int], tuple[int, int, int]], int] = {}
    ends = [col[retr_streams].tolist() for col in (st.c_hi, st.c_lo, st.c_port, st.s_hi, st.s_lo, st.s_port)]
    for s, ch, cl, cp, sh, sl, sp in zip(retr_streams.tolist(), *ends, strict=True):
        ce, se = (ch, cl, cp), (sh, sl, sp)
        index[(ce, se)] = index[(se, ce)] = s
    groups: dict[tuple[int, int], list[int]] = {}
    cols_r = [take(col, rows).tolist() for col in (c.in_proto, c.in_src_hi, c.in_src_lo, c.in_sport, c.in_dst_hi,
                                             c.in_dst_lo, c.in_dport, c.icmp_mtu)]
    for r, ip, sh, sl, sp, dh, dl, dp, mtu in zip(rows.tolist(), *cols_r, strict=True):
        s = index.get(((sh, sl, sp), (dh, dl, dp)), -1) if ip == 6 else -1
        groups.setdefault((s, mtu), []).append(r)
    loose: list[tuple[int, list[int]]] = []
    tied: dict[tuple[str, int], list[tuple[int, list[int]]]] = {}
    for (s, mtu), rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        if s < 0:
            loose.append((mtu, rs))
            continue
        x.explained[s] = True
        tied.setdefault((ep(st.s_hi[s], st.s_lo[s], st.s_port[s]), mtu), []).append((s, rs))
    for (server, mtu), flows in tied.items():
        out.append(_icmp_blackhole(x, server, mtu, big_retr, flows))
    suspects = _suspects(x, x.explained.copy())
    mtu_cited = loose[0][0] if loose and suspects else None
    if suspects:
        x.explained[list(suspects)] = True
        for server, ss in server_groups(a, np.asarray(sorted(suspects))).items():
            icmp_frames = [int(c.frame[r]) for r in loose[0][1][:2]] if loose else []
            out.append(_suspect_finding(x, server, [suspects[s] for s in ss], mtu_cited, icmp_frames))
    for mtu, rs in loose:
        if mtu == mtu_cited:
            continue  # cited by the black-hole finding above
        reporters = sorted({addr(c.src_hi[r], c.src_lo[r]) for r in rs[:50]})[:2]
        out.append(finding(
            "pmtu_frag_needed", "medium", 0.7,
            f"ICMP fragmentation-needed from {', '.join(reporters)}: next-hop MTU {mtu} ({len(rs)} message(s))",
            "A router on the path cannot forward packets this large with DF set; senders that receive this "
            "adapt, but where such ICMP is filtered large transfers stall (PMTU black hole).",
            [int(c.frame[r]) for r in rs[:5]], [], float(c.ts[rs[0]]), mtu=mtu, count=len(rs),
        ))
    return out
