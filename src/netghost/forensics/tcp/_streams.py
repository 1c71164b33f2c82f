"""Flow keys and the per-stream TCP table (Zeek-style conn_state, bytes/packets per direction, RTT).

Pure path: everything is vectorised: a conversation key is a 64-bit hash of the canonical (lower,
upper) endpoint pair, grouped by a sort; per-stream sums are ``np.bincount`` reductions. Compiled path
(``_tcp.pyx``): an exact hash table numbers conversations in one pass, and :func:`analyze_tcp` does
grouping, the TCP rules and the stream table in a single walk over the segments.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from netghost.forensics import spill
from netghost.forensics.arrays import take
from netghost.forensics.decode import Packets
from netghost.forensics.tcp._flags import FLAG_BITS
from netghost.forensics.tcp._rules import analyze_tcp_sequences, compiled_fields, compiled_tcp

__all__ = ["CONN_STATES", "TcpAnalysis", "TcpStreams", "analyze_tcp", "build_streams", "conversation_keys",
           "group_conversations", "mix_hash"]

CONN_STATES = ("OTH", "S0", "S1", "SF", "REJ", "S2", "S3", "RSTO", "RSTR", "RSTOS0", "RSTRH", "SH", "SHR")
_C = np.uint64(0x9E3779B97F4A7C15)


def mix_hash(h: np.ndarray, v: np.ndarray) -> np.ndarray:
    """One round of a 64-bit multiplicative hash: fold column ``v`` into running hash ``h``."""
    h = (h ^ v.astype(np.uint64)) * _C
    out: np.ndarray = h ^ (h >> np.uint64(29))
    return out


def group_conversations(cols: Packets, rows: np.ndarray, proto: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group rows into conversations by unordered endpoint pair.

    Args:
        cols: decoded packets.
        rows: row indices to group (e.g. all TCP segments).
        proto: IP protocol number mixed into the key.

    Returns:
        (conversation index per row, numbered in order of first appearance; direction 0/1 where 0 is
        the direction of the conversation's first packet; a permutation of the rows that makes each
        conversation contiguous and keeps capture order inside it — the TCP kernel's walk order).
    """
    mod = compiled_tcp()
    if mod is not None:
        out: tuple[np.ndarray, np.ndarray, np.ndarray] = mod.group_conversations(
            np.ascontiguousarray(rows, dtype=np.int64), *_endpoints(cols))
        return out
    sh, sl, sp = cols.src_hi[rows], cols.src_lo[rows], cols.sport[rows].astype(np.uint64)
    dh, dl, dp = cols.dst_hi[rows], cols.dst_lo[rows], cols.dport[rows].astype(np.uint64)
    a_lt = (sh < dh) | ((sh == dh) & ((sl < dl) | ((sl == dl) & (sp <= dp))))
    n = rows.shape[0]
    # same values as chained mix_hash() rounds, computed in place (two scratch arrays, not ~30 temporaries)
    h = np.full(n, np.uint64(proto) + np.uint64(1), np.uint64)
    v = np.empty(n, np.uint64)
    for x, y, lower_first in ((sh, dh, True), (sl, dl, True), (sp, dp, True),
                              (sh, dh, False), (sl, dl, False), (sp, dp, False)):
        np.copyto(v, y)
        np.copyto(v, x, where=a_lt if lower_first else ~a_lt)
        h ^= v
        h *= _C
        np.right_shift(h, np.uint64(29), out=v)
        h ^= v
    del v
    perm, start = _stable_group_sort(h)
    del h
    # work in sorted order (sequential), then scatter conversation and direction back once
    gid_s = np.cumsum(start) - 1
    first = perm[start]  # stable sort: a group's first element is its earliest row
    rank = np.empty(first.shape[0], np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    side_s = a_lt[perm]
    conv = np.empty(n, np.int64)
    conv[perm] = rank[gid_s]
    dirn = np.empty(n, np.int64)
    dirn[perm] = side_s != side_s[start][gid_s]
    return conv, dirn, perm


def _endpoints(cols: Packets) -> list[np.ndarray]:
    """src_hi, src_lo, sport, dst_hi, dst_lo, dport in the compiled kernel's dtypes (no copy when they match)."""
    return [np.ascontiguousarray(getattr(cols, name), dtype=dt) for name, dt in (
        ("src_hi", np.uint64), ("src_lo", np.uint64), ("sport", np.int32),
        ("dst_hi", np.uint64), ("dst_lo", np.uint64), ("dport", np.int32))]


def _stable_group_sort(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(stable argsort of ``h``, True where a sorted run of equal values starts).

    Why not ``np.argsort(h, kind="stable")``: for 64-bit keys that is a merge sort, ~4x slower than
    numpy's SIMD ``np.sort``. Here the low bits of each hash are replaced by the row index, which makes
    every key unique (so an unstable value sort yields a stable order) and lets the permutation be read
    back from the sorted keys. Rows whose hashes agree on the kept high bits but differ below are then
    detected and the exact stable argsort is used instead, so the result never depends on the trick.
    """
    n = h.shape[0]
    bits = max(int(n).bit_length(), 1)
    if n == 0 or bits > 40:
        perm = np.argsort(h, kind="stable")
        start = np.ones(n, bool)
        start[1:] = h[perm][1:] != h[perm][:-1]
        return perm, start
    low = np.uint64((1 << bits) - 1)
    key = h & ~low
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    perm = (key & low).astype(np.int64)
    key >>= np.uint64(bits)
    start = np.empty(n, bool)
    start[0] = True
    np.not_equal(key[1:], key[:-1], out=start[1:])
    hs = h[perm]
    if not np.array_equal(hs[1:] == hs[:-1], ~start[1:]):  # high bits equal, low bits differ: exact path
        perm = np.argsort(h, kind="stable")
        hs = h[perm]
        start[1:] = hs[1:] != hs[:-1]
    return perm, start


def conversation_keys(cols: Packets, rows: np.ndarray, proto: int) -> tuple[np.ndarray, np.ndarray]:
    """(conversation index, direction) per row; see :func:`group_conversations`."""
    conv, dirn, _ = group_conversations(cols, rows, proto)
    return conv, dirn


@dataclass
class TcpStreams:
    """One row per tshark ``tcp.stream`` (0-based, numbered by first frame like tshark).

    ``c_*`` = client (originator), ``s_*`` = server (responder), decided by who sent the first pure
    SYN, else the receiver of the first SYN-ACK, else the sender of the first packet.
    """

    first_frame: np.ndarray
    last_frame: np.ndarray
    first_ts: np.ndarray
    last_ts: np.ndarray
    c_hi: np.ndarray
    c_lo: np.ndarray
    c_port: np.ndarray
    s_hi: np.ndarray
    s_lo: np.ndarray
    s_port: np.ndarray
    pkts_c2s: np.ndarray
    pkts_s2c: np.ndarray
    bytes_c2s: np.ndarray
    bytes_s2c: np.ndarray
    syn: np.ndarray
    synack: np.ndarray
    fin_c: np.ndarray
    fin_s: np.ndarray
    rst_c: np.ndarray
    rst_s: np.ndarray
    data_pkts: np.ndarray
    retrans: np.ndarray
    retrans_data: np.ndarray
    flagged: np.ndarray
    zero_window: np.ndarray
    lost: np.ndarray
    irtt: np.ndarray
    mss_c: np.ndarray
    mss_s: np.ndarray
    ws_c: np.ndarray
    ws_s: np.ndarray
    conn_state: np.ndarray

    def __len__(self) -> int:
        return int(self.first_frame.shape[0])

    def take(self, idx: np.ndarray) -> TcpStreams:
        """Row subset."""
        return TcpStreams(**{f.name: getattr(self, f.name)[idx] for f in fields(self)})


def build_streams(cols: Packets, rows: np.ndarray, *, conv: np.ndarray, dirn: np.ndarray, sub: np.ndarray,
                  aflags: np.ndarray, irtt_pkt: np.ndarray,
                  order: np.ndarray | None = None) -> tuple[np.ndarray, TcpStreams]:
    """Number tshark streams and aggregate per-stream statistics.

    Args:
        cols: decoded packets.
        rows: row indices of the TCP segments analysed.
        conv, dirn: from :func:`group_conversations`.
        sub, aflags, irtt_pkt: from :func:`netghost.forensics.tcp.analyze_tcp_sequences`.
        order: the grouping permutation from :func:`group_conversations` (conversation-contiguous,
            capture order inside); with it every stream is one contiguous block and no sort is needed.

    Returns:
        (stream id per row of ``rows``, the stream table).
    """
    sid, first, last = _number_streams(conv * (int(sub.max()) + 1 if sub.size else 1) + sub, order)
    ns = first.shape[0]
    fl = cols.tcp_flags[rows].astype(np.int64)
    pay = cols.paylen[rows].astype(np.int64)
    is_syn = (fl & 0x12) == 0x02
    is_synack = (fl & 0x12) == 0x12
    from_c = dirn == _originator_direction(dirn, sid, first, is_syn=is_syn, is_synack=is_synack)[sid]

    def cnt(m: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.bincount(sid[m], minlength=ns)
        return out

    # (stream, direction) in one code: one bincount gives both directions' counts
    code = sid * 2 + (~from_c)

    def pair(m: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        both = np.bincount(code if m is None else code[m], minlength=2 * ns).reshape(ns, 2)
        return np.ascontiguousarray(both[:, 0]), np.ascontiguousarray(both[:, 1])

    crow = rows[first]
    irtt = np.full(ns, np.nan)
    has = ~np.isnan(irtt_pkt)
    irtt[sid[has]] = irtt_pkt[has]
    rst = (fl & 0x04) != 0
    fin = (fl & 0x01) != 0
    retr = (aflags & FLAG_BITS["retransmission"]) != 0
    pkts_c2s, pkts_s2c = pair()
    fin_c, fin_s = pair(fin)
    rst_c, rst_s = pair(rst)
    syn_c, syn_s = pair(is_syn)
    synack_c, synack_s = pair(is_synack)
    byts = np.bincount(code, weights=pay, minlength=2 * ns).reshape(ns, 2).astype(np.int64)
    t = TcpStreams(
        first_frame=cols.frame[crow], last_frame=cols.frame[rows[last]], first_ts=cols.ts[crow],
        last_ts=cols.ts[rows[last]], **_endpoint_columns(cols, crow, from_c[first]),
        pkts_c2s=pkts_c2s, pkts_s2c=pkts_s2c,
        bytes_c2s=np.ascontiguousarray(byts[:, 0]), bytes_s2c=np.ascontiguousarray(byts[:, 1]),
        syn=syn_c + syn_s, synack=synack_c + synack_s, fin_c=fin_c, fin_s=fin_s,
        rst_c=rst_c, rst_s=rst_s, data_pkts=cnt(pay > 0), retrans=cnt(retr), retrans_data=cnt(retr & (pay > 0)),
        flagged=cnt(aflags != 0), zero_window=cnt((aflags & FLAG_BITS["zero_window"]) != 0),
        lost=cnt((aflags & (FLAG_BITS["lost_segment"] | FLAG_BITS["ack_lost_segment"])) != 0),
        irtt=irtt, **_syn_options(cols, rows, fl, sid=sid, from_c=from_c, ns=ns),
        conn_state=np.zeros(ns, np.int8),
    )
    t.conn_state = _conn_state(t, syn_c, synack_s)
    return sid, t


def _number_streams(key: np.ndarray, order: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(stream id per segment, each stream's first and last segment), streams numbered by first segment.

    ``key`` is one value per (conversation, sub-stream); ``order`` a permutation making equal keys
    contiguous in capture order (a stable sort of ``key`` when None).
    """
    n = key.shape[0]
    if order is None:
        order = np.argsort(key, kind="stable")
    ks = key[order]
    start = np.ones(n, bool)
    start[1:] = ks[1:] != ks[:-1]
    block = np.cumsum(start) - 1
    first = order[start]  # earliest row of each stream (capture order inside a block)
    last = order[np.r_[np.flatnonzero(start)[1:] - 1, n - 1]] if n else first
    ns = first.shape[0]
    by_first = np.argsort(first, kind="stable")
    rank = np.empty(ns, np.int64)
    rank[by_first] = np.arange(ns)
    sid = np.empty(n, np.int64)
    sid[order] = rank[block]
    return sid, first[by_first], last[by_first]


def _originator_direction(dirn: np.ndarray, sid: np.ndarray, first: np.ndarray, *, is_syn: np.ndarray,
                          is_synack: np.ndarray) -> np.ndarray:
    """Per stream, the direction (0/1) of its client: the sender of the first pure SYN, else the
    receiver of the first SYN-ACK, else the sender of the first segment."""
    ns = first.shape[0]
    n = dirn.shape[0]
    big = np.iinfo(np.int64).max
    pos = np.arange(n)
    first_syn = np.full(ns, big)
    np.minimum.at(first_syn, sid[is_syn], pos[is_syn])
    first_sa = np.full(ns, big)
    np.minimum.at(first_sa, sid[is_synack], pos[is_synack])
    out: np.ndarray = np.where(first_syn < big, dirn[np.minimum(first_syn, n - 1)],
                               np.where(first_sa < big, 1 - dirn[np.minimum(first_sa, n - 1)], dirn[first]))
    return out


def _endpoint_columns(cols: Packets, crow: np.ndarray, c_is_src: np.ndarray) -> dict[str, np.ndarray]:
    """Client and server address and port of each stream, read from its first segment (rows ``crow``)."""
    return {
        "c_hi": np.where(c_is_src, cols.src_hi[crow], cols.dst_hi[crow]),
        "c_lo": np.where(c_is_src, cols.src_lo[crow], cols.dst_lo[crow]),
        "c_port": np.where(c_is_src, cols.sport[crow], cols.dport[crow]),
        "s_hi": np.where(c_is_src, cols.dst_hi[crow], cols.src_hi[crow]),
        "s_lo": np.where(c_is_src, cols.dst_lo[crow], cols.src_lo[crow]),
        "s_port": np.where(c_is_src, cols.dport[crow], cols.sport[crow]),
    }


def _syn_options(cols: Packets, rows: np.ndarray, fl: np.ndarray, *, sid: np.ndarray, from_c: np.ndarray,
                 ns: int) -> dict[str, np.ndarray]:
    """MSS and window scale each side announced in its first SYN (-1 when none)."""
    mss_c, mss_s, ws_c, ws_s = (np.full(ns, -1, np.int64) for _ in range(4))
    syn_rows = np.flatnonzero((fl & 0x02) != 0)[::-1]  # reversed so the first SYN's value wins
    for tgt_m, tgt_w, side in ((mss_c, ws_c, True), (mss_s, ws_s, False)):
        sr = syn_rows[from_c[syn_rows] == side]
        tgt_m[sid[sr]] = cols.mss[rows[sr]]
        tgt_w[sid[sr]] = cols.wscale[rows[sr]]
    return {"mss_c": mss_c, "mss_s": mss_s, "ws_c": ws_c, "ws_s": ws_s}


def _conn_state(t: TcpStreams, orig_syn: np.ndarray, resp_synack: np.ndarray) -> np.ndarray:
    """Zeek conn_state from per-stream flag counts (ordering nuances of Zeek's state machine ignored)."""
    s = {name: i for i, name in enumerate(CONN_STATES)}
    osyn, rsa = orig_syn > 0, resp_synack > 0
    est = osyn & rsa
    rfin_c, rfin_s, rst_c, rst_s = t.fin_c > 0, t.fin_s > 0, t.rst_c > 0, t.rst_s > 0
    resp_any = t.pkts_s2c > 0
    conds = [
        est & rst_c, est & rst_s, est & rfin_c & rfin_s, est & rfin_c, est & rfin_s, est,
        osyn & ~rsa & rst_s, osyn & ~rsa & rst_c, osyn & ~rsa & rfin_c, osyn & ~rsa & ~resp_any,
        ~osyn & rsa & rst_s, ~osyn & rsa & rfin_s,
    ]
    choices = [s["RSTO"], s["RSTR"], s["SF"], s["S2"], s["S3"], s["S1"], s["REJ"], s["RSTOS0"], s["SH"], s["S0"],
               s["RSTRH"], s["SHR"]]
    return np.select(conds, choices, default=s["OTH"]).astype(np.int8)


class TcpAnalysis(NamedTuple):
    """Everything the engine keeps from the TCP stage (per ``rows`` entry unless noted)."""

    flags: np.ndarray  # tshark analysis-flag bitmask (tcp.FLAG_BITS), int64
    stream: np.ndarray  # tcp.stream id, int64
    streams: TcpStreams  # one row per stream
    ack_rtt: np.ndarray  # tcp.analysis.ack_rtt seconds, NaN where tshark shows none
    order: np.ndarray  # permutation: each stream contiguous, capture order inside


def analyze_tcp(cols: Packets, rows: np.ndarray) -> TcpAnalysis:
    """Conversations, tshark TCP analysis and the stream table in one call.

    Why one call: the compiled kernel does all three in a single walk over the segments in capture
    order (no sort, no gathered copies, no per-segment intermediates such as conversation ids); the
    pure path chains :func:`group_conversations`, :func:`~netghost.forensics.tcp.analyze_tcp_sequences`
    and :func:`build_streams` with the same results.

    Args:
        cols: decoded packets.
        rows: ascending row indices of the TCP segments to analyse (e.g. ``tcp_flags >= 0`` rows).
    """
    mod = compiled_tcp()
    if mod is None:
        conv, dirn, order = group_conversations(cols, rows, 6)
        aflags, sub, irtt, ack_rtt = analyze_tcp_sequences(
            conv, dirn, seq=cols.seq, ack=cols.ack, flags=cols.tcp_flags, win=cols.win, seglen=cols.paylen,
            ts=cols.ts, wscale=cols.wscale, order=order, rows=rows)
        sid, streams = build_streams(cols, rows, conv=conv, dirn=dirn, sub=sub, aflags=aflags, irtt_pkt=irtt,
                                     order=order)
        return TcpAnalysis(aflags, sid, streams, ack_rtt, order)
    n = rows.shape[0]
    # per-segment outputs come from the memory budget (in RAM, or file-backed past it: see spill.py)
    out = (spill.alloc(n, np.int64), spill.alloc(n, np.float64), spill.alloc(n, np.int64), spill.alloc(n, np.int64))
    aflags, ack_rtt, sid, order, table = mod.analyze_streams(
        np.ascontiguousarray(rows, dtype=np.int64), *_endpoints(cols),
        *compiled_fields((cols.seq, cols.ack, cols.tcp_flags, cols.win, cols.paylen, cols.ts, cols.wscale)),
        np.ascontiguousarray(cols.mss, dtype=np.int32), np.ascontiguousarray(cols.frame, dtype=np.int64), out,
        tick=spill.releaser(), tick_every=spill.RELEASE_ROWS,  # spilled columns' walked pages leave RSS as it goes
        alloc=spill.alloc, last_rows=True)  # the stream table from the budget too (~250 bytes per stream)
    # (take: each stream's last row is anywhere in the capture; gathered in pieces from a spilled column)
    table["last_frame"] = take(cols.frame, table["last_frame"])
    syn_c, synack_s = table.pop("syn_c"), table.pop("synack_s")
    t = TcpStreams(**table, conn_state=np.zeros(len(table["first_frame"]), np.int8))
    t.conn_state = _conn_state(t, syn_c, synack_s)
    return TcpAnalysis(aflags, sid, t, ack_rtt, order)
