"""Shared building blocks of the findings detectors: the finding record, per-segment views, grouping.

Split from findings.py so each detector family (TCP, PMTU, DNS/ICMP/capture) stays a small module;
everything here is internal to :mod:`netghost.forensics` (the public entry is ``build_findings``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np

from netghost.forensics import spill
from netghost.forensics.arrays import (
    BLOCK,
    Collect,
    gather,
    group_rows,
    in_sorted,
    nonzero_blocks,
    roomy,
    select,
    spans,
    take,
)
from netghost.forensics.decode import addr, ep, smallest_texts
from netghost.forensics.engine import Analysis
from netghost.forensics.findings._copies import capture_copies, capture_duplicates

__all__ = ["MAX_FRAMES", "SEVERITIES", "Ctx", "Finding", "addr", "capture_copies", "capture_duplicates", "ep", "finding", "flow_id",
           "group_rows", "server_groups", "smallest_texts"]

SEVERITIES = ("info", "low", "medium", "high", "critical")
MAX_FRAMES = 10
Finding = dict[str, Any]


def flow_id(stream: int) -> str:
    """Stable id of a TCP stream in the semantic output (tshark's ``tcp.stream`` number)."""
    return f"tcp/{stream}"


def finding(kind: str, severity: str, confidence: float, title: str, detail: str,  # noqa: PLR0917  compact call sites
            frames: list[int], flows: list[str] | None = None, ts: float | None = None, **metrics: Any) -> Finding:
    """One finding record (the semantic schema's ``findings[]`` item, before ranking assigns ``id``)."""
    return {
        "kind": kind, "severity": severity, "confidence": round(float(confidence), 2), "title": title,
        "detail": detail, "flows": (flows or [])[:MAX_FRAMES],
        "evidence": {"frames": sorted({int(f) for f in frames})[:MAX_FRAMES], "first_ts": ts},
        "metrics": metrics,
    }


_SEG_COLS = {"frame": "frame", "ts": "ts", "fl": "tcp_flags", "pay": "paylen", "seq": "seq", "ack": "ack",
             "ttl": "ttl", "src_hi": "src_hi", "src_lo": "src_lo", "sport": "sport"}
_WIDE = ("pay", "seq", "ack")  # widened to int64 (sequence arithmetic); tcp flags stay int16


class Ctx:
    """Per-segment views shared by the detectors (one entry per analysed TCP segment).

    ``explained`` is a per-stream mask: a detector that explains a stream's symptoms (a silent SYN
    drop, a PMTU black hole) sets it so the generic retransmission findings do not report the same
    packets a second time under a vaguer name.

    Why lazy: on a 2M-packet capture each full per-segment column costs a ~2M-element gather, and
    most detectors only look at a few thousand rows (flagged segments, RSTs, a few streams). Full
    columns (``x.seq``, ``x.from_client`` ...) are built on first use; :meth:`seg` and
    :meth:`client_side` read the same values for a subset of segments without building them.
    """

    def __init__(self, a: Analysis) -> None:
        self.a = a
        self.sid = a.tcp_stream
        self.explained = np.zeros(len(a.streams), bool)

    def __getattr__(self, name: str) -> np.ndarray:
        # full per-segment columns, gathered on first use (frame, ts, fl, pay, seq, ack, ttl, src_hi ...)
        if name not in _SEG_COLS:
            raise AttributeError(name)
        # long captures: spill-allocated, gathered in blocks (no capture-sized temporaries)
        v = gather(getattr(self.a.cols, _SEG_COLS[name]), self.a.tcp_rows, np.int64 if name in _WIDE else None)
        self.__dict__[name] = v
        return v

    def seg(self, name: str, idx: Any) -> Any:
        """Column ``name`` (as in ``x.<name>``) for segment indices ``idx`` (array or one index) only."""
        full = self.__dict__.get(name)
        if full is not None:
            return take(full, idx) if isinstance(idx, np.ndarray) and idx.dtype.kind in "iu" else full[idx]
        col = getattr(self.a.cols, _SEG_COLS[name])
        if isinstance(idx, np.ndarray) and idx.dtype.kind in "iu":  # (take: faster than fancy indexing)
            v = take(col, take(self.a.tcp_rows, idx))  # (in pieces when spilled: bounded resident pages)
        else:
            v = col[self.a.tcp_rows[idx]]
        return v.astype(np.int64) if name in _WIDE else v

    def client_side(self, idx: np.ndarray) -> np.ndarray:
        """True where segment ``idx`` was sent by its stream's client (``x.from_client[idx]``).

        A stream's segments come from its client or its server endpoint, so where the two ports
        differ the source port alone decides; addresses are compared only for same-port streams.
        """
        full = self.__dict__.get("from_client")
        if full is not None:
            out: np.ndarray = take(full, idx)
            return out
        if idx.shape[0] > BLOCK and not roomy(idx.shape[0] * 32):
            res_all = spill.alloc(idx.shape[0], bool)
            for lo, hi in spans(idx.shape[0]):
                res_all[lo:hi] = self.client_side(idx[lo:hi])
            return res_all
        return self.side_of(take(self.a.tcp_rows, idx), take(self.sid, idx))

    def side_of(self, r: np.ndarray, s: np.ndarray) -> np.ndarray:
        """:meth:`client_side` of segments given by their packet rows ``r`` and streams ``s`` (already at hand)."""
        st, c = self.a.streams, self.a.cols
        cport = st.c_port.take(s)
        res: np.ndarray = take(c.sport, r) == cport
        same = np.flatnonzero(cport == st.s_port.take(s))
        if same.size:
            rs, ss = r.take(same), s.take(same)
            res[same] &= (take(c.src_hi, rs) == st.c_hi.take(ss)) & (take(c.src_lo, rs) == st.c_lo.take(ss))
        return res

    @cached_property
    def rst_rows(self) -> np.ndarray:
        """Indices of the segments with RST set (ascending).

        Looked for only in the streams whose table counts an RST (``rst_c``/``rst_s`` count exactly
        these segments), not over every segment.
        """
        st = self.a.streams
        if not len(st):
            return np.zeros(0, np.int64)
        acc = Collect(self.sid.shape[0], np.int64)
        for rows, _ in self.iter_rows_of_many(np.flatnonzero((st.rst_c + st.rst_s) > 0)):
            acc.add(rows.compress((self.seg("fl", rows) & 0x04) != 0))
        out = acc.result()
        out.sort()
        return out

    @cached_property
    def carrying(self) -> int:
        """Segments carrying payload or FIN (not SYN): the data-segment count before exclusions.

        One chunked pass over the segments' flags and payload lengths (small temporaries).
        """
        c, rows = self.a.cols, self.a.tcp_rows
        total = 0
        for lo, hi in spans(rows.shape[0], 1 << 16):  # (spans: walked pages of spilled columns leave RSS)
            r = rows[lo:hi]
            fl = c.tcp_flags[r]
            total += int(np.count_nonzero(((fl & 0x02) == 0) & ((c.paylen[r] > 0) | ((fl & 0x01) != 0))))
        return total

    @cached_property
    def from_client(self) -> np.ndarray:
        """Per segment: sent by the stream's client."""
        n = self.sid.shape[0]
        if n <= BLOCK or roomy(n * 32):
            return self.client_side(np.arange(n))
        out = spill.alloc(n, bool)
        for lo, hi in spans(n):
            out[lo:hi] = self.client_side(np.arange(lo, hi))
        return out

    @cached_property
    def flagged(self) -> np.ndarray:
        """Indices of the segments carrying any tshark analysis flag (ascending)."""
        fl = self.a.tcp_flags  # (a bool mask: ~3x faster than nonzero of int64)
        return nonzero_blocks(fl.shape[0], lambda lo, hi: fl[lo:hi] != 0)

    def with_flag(self, bit: int) -> np.ndarray:
        """Indices of the segments whose analysis flags include ``bit`` (ascending; cached per bit)."""
        cache: dict[int, np.ndarray] = self.__dict__.setdefault("_with_flag", {})
        if bit not in cache:
            fl = self.a.tcp_flags
            cache[bit] = select(self.flagged, lambda f: (take(fl, f) & bit) != 0)
        return cache[bit]

    @cached_property
    def copies(self) -> np.ndarray:
        """Ascending indices of the segments that are copies made by the capture (:func:`capture_copies`)."""
        return capture_copies(self.a)

    @cached_property
    def dup(self) -> np.ndarray:
        """Per segment: a copy made by the capture (the mask of :attr:`copies`)."""
        n = self.sid.shape[0]
        dup = np.zeros(n, bool) if roomy(n * 2) else spill.alloc(n, bool, zero=True)
        for lo, hi in spans(self.copies.shape[0]):
            dup[self.copies[lo:hi]] = True
        return dup

    def not_copy(self, idx: np.ndarray) -> np.ndarray:
        """``~x.dup[idx]`` by binary search in :attr:`copies` (no per-segment mask)."""
        out: np.ndarray = ~in_sorted(self.copies, idx)
        return out

    @cached_property
    def _blocks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # each stream is one contiguous block of this permutation (the engine's, or a stable sort)
        a = self.a
        given = getattr(a, "tcp_stream_start", None)
        if a.tcp_order is not None and given is not None and len(a.streams) and given.shape[0] == len(a.streams):
            # the engine knows where each stream's block starts in its order (see /tmp/api_notes.md)
            start = np.asarray(given, np.int64)
            return a.tcp_order, start, start + a.streams.pkts_c2s + a.streams.pkts_s2c
        order = a.tcp_order if a.tcp_order is not None else np.argsort(self.sid, kind="stable")
        # narrow copy first: the gather through the permutation is random access, and fewer bytes per
        # entry make it several times faster (uint16 when the stream ids fit)
        narrow = np.uint16 if len(a.streams) <= 1 << 16 else np.int32 if len(a.streams) < 1 << 31 else np.int64
        n = order.shape[0]
        start = np.zeros(len(a.streams), np.int64)
        end = np.zeros(len(a.streams), np.int64)
        if not n:
            return order, start, end
        step = n if roomy(n * 16) else BLOCK  # past the memory budget: in blocks (fixed temporaries)
        sid_n = self.sid.astype(narrow) if step == n else None
        heads: list[np.ndarray] = []
        head_sid: list[np.ndarray] = []
        prev = None
        for lo, hi in spans(n, step):
            ss = sid_n[order[lo:hi]] if sid_n is not None else self.sid[order[lo:hi]].astype(narrow)
            chg = np.flatnonzero(ss[1:] != ss[:-1]) + 1
            if prev is None or prev != ss[0]:
                chg = np.r_[0, chg]
            heads.append(chg + lo)
            head_sid.append(ss[chg])
            prev = ss[-1]
        h, hs = np.concatenate(heads), np.concatenate(head_sid)
        start[hs] = h
        end[hs] = np.r_[h[1:], n]
        return order, start, end

    def rows_of(self, s: int) -> np.ndarray:
        """Segment indices of one stream, in capture order (a slice of a grouped index)."""
        order, start, end = self._blocks
        out: np.ndarray = order[start[s] : end[s]]
        return out

    def rows_of_many(self, streams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(segment indices of several streams, position in ``streams`` of each one's stream).

        Streams follow the order of ``streams``, each in capture order.
        """
        order, start, end = self._blocks
        streams = np.asarray(streams, np.int64)
        lo, ln = start[streams], end[streams] - start[streams]
        total = int(ln.sum())
        first = np.cumsum(ln) - ln
        pos = np.repeat(lo - first, ln) + np.arange(total, dtype=np.int64)
        return order[pos], np.repeat(np.arange(streams.shape[0]), ln)

    def iter_rows_of_many(self, streams: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """:meth:`rows_of_many` in pieces of at most BLOCK segments (their concatenation is its result).

        Why: the streams of interest (every stream with an RST, with a loss ...) can hold most of
        the capture's segments; per-piece temporaries keep the working set fixed. One piece (the
        plain result) when it fits in what is left of the memory budget.
        """
        order, start, end = self._blocks
        streams = np.asarray(streams, np.int64)
        ln = end[streams] - start[streams]
        cum = np.cumsum(ln)
        total = int(cum[-1]) if cum.shape[0] else 0
        if total <= BLOCK or roomy(total * 32):
            if total:
                yield self.rows_of_many(streams)
            return
        first = cum - ln
        for p0, p1 in spans(total):
            i0 = int(np.searchsorted(cum, p0, "right"))
            i1 = int(np.searchsorted(cum, p1 - 1, "right")) + 1
            f = first[i0:i1]
            cl = np.minimum(f + ln[i0:i1], p1) - np.maximum(f, p0)
            pos = np.repeat(start[streams[i0:i1]] - f, cl) + np.arange(p0, p1, dtype=np.int64)
            yield order[pos], np.repeat(np.arange(i0, i1), cl)

    def frames_of(self, streams: np.ndarray, pick: Callable[[np.ndarray], np.ndarray]) -> list[int]:
        """First evidence frames among ``streams`` (the first 50 by id) where ``pick(segments)`` holds.

        Args:
            streams: stream ids.
            pick: maps segment indices to a bool mask (evaluated on those streams' segments only).
        """
        rows, _ = self.rows_of_many(np.sort(streams)[:50])
        rows = np.sort(rows[pick(rows)])[:MAX_FRAMES]
        return [int(x) for x in self.seg("frame", rows)]

    def frames_of_groups(self, groups: list[Any], pick: Callable[[np.ndarray], np.ndarray]) -> list[list[int]]:
        """:meth:`frames_of` for several stream groups (arrays or lists) at once: one pass over their segments.

        Each group's first 50 streams by id are found with one lexsort over all groups (a hundred
        or more small groups on a big capture: no numpy call per group).
        """
        if not groups:
            return []
        sizes = np.fromiter((len(g) for g in groups), np.int64, len(groups))
        every = np.fromiter(chain.from_iterable(groups), np.int64, int(sizes.sum()))
        label = np.repeat(np.arange(len(groups)), sizes)
        o = np.lexsort((every, label))  # per group, its streams by id
        rank = np.arange(every.shape[0]) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        firsts, label = every[o][rank < 50], label[rank < 50]
        rows, owner = self.rows_of_many(firsts)
        keep = pick(rows)
        rows, grp = rows.compress(keep), label.take(owner.compress(keep))
        o = np.lexsort((rows, grp))
        rows, grp = rows[o], grp[o]
        bounds = np.searchsorted(grp, np.arange(len(groups) + 1)).tolist()
        frames = self.seg("frame", rows).tolist()
        return [frames[bounds[i] : min(bounds[i + 1], bounds[i] + MAX_FRAMES)] for i in range(len(groups))]


def server_groups(a: Analysis, streams: np.ndarray) -> dict[str, list[int]]:
    """Group streams by server host; one port keeps ``host:port``, several (a scan) list the ports.

    Groups come in order of first appearance in ``streams``, members in ``streams`` order.
    Vectorised: one lexsort finds every group's distinct ports (not one ``np.unique`` per group:
    SYN failures on a big capture span a hundred or more servers).
    """
    st = a.streams
    groups: dict[str, list[int]] = {}
    if not streams.size:
        return groups
    o, b = group_rows(st.s_hi[streams], st.s_lo[streams])
    members = streams[o]
    ng = b.shape[0] - 1
    label = np.repeat(np.arange(ng), np.diff(b))
    ports = st.s_port[members]
    po = np.lexsort((ports, label))  # per group, its ports ascending
    ps, ls = ports[po], label[po]
    new = np.empty(ps.shape[0], bool)
    new[0] = True
    new[1:] = (ps[1:] != ps[:-1]) | (ls[1:] != ls[:-1])
    uport = ps[new].tolist()
    nports = np.bincount(ls[new], minlength=ng)
    pstart = (np.cumsum(nports) - nports).tolist()
    mem, bl, heads = members.tolist(), b.tolist(), members[b[:-1]]
    hi, lo = st.s_hi[heads].tolist(), st.s_lo[heads].tolist()
    nl = nports.tolist()
    for i in np.argsort(o[b[:-1]], kind="stable").tolist():  # by first appearance
        k, p0 = nl[i], pstart[i]
        if k == 1:
            key = ep(hi[i], lo[i], uport[p0])
        else:
            shown = ", ".join(str(p) for p in uport[p0 : p0 + min(k, 6)]) + (f" (+{k - 6} more)" if k > 6 else "")
            key = f"{addr(hi[i], lo[i])} ports {shown}"
        groups[key] = mem[bl[i] : bl[i + 1]]
    return groups
