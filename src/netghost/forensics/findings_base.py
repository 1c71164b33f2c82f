"""Shared building blocks of the findings detectors: the finding record, per-segment views, grouping.

Split from findings.py so each detector family (TCP, PMTU, DNS/ICMP/capture) stays a small module;
everything here is internal to :mod:`netghost.forensics` (the public entry is ``build_findings``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netghost.forensics.decode import format_addr
from netghost.forensics.engine import Analysis
from netghost.forensics.flows import mix_hash

__all__ = ["MAX_FRAMES", "SEVERITIES", "Ctx", "Finding", "capture_duplicates", "ep", "finding", "flow_id",
           "server_groups"]

SEVERITIES = ("info", "low", "medium", "high", "critical")
MAX_FRAMES = 10
Finding = dict[str, Any]


def flow_id(stream: int) -> str:
    """Stable id of a TCP stream in the semantic output (tshark's ``tcp.stream`` number)."""
    return f"tcp/{stream}"


def ep(hi: Any, lo: Any, port: Any) -> str:
    """``ip:port`` (``[v6]:port``) of one endpoint."""
    addr = format_addr(hi, lo)
    return f"[{addr}]:{int(port)}" if ":" in addr else f"{addr}:{int(port)}"


def finding(kind: str, severity: str, confidence: float, title: str, detail: str,  # noqa: PLR0917  compact call sites
            frames: list[int], flows: list[str] | None = None, ts: float | None = None, **metrics: Any) -> Finding:
    """One finding record (the semantic schema's ``findings[]`` item, before ranking assigns ``id``)."""
    return {
        "kind": kind, "severity": severity, "confidence": round(float(confidence), 2), "title": title,
        "detail": detail, "flows": (flows or [])[:MAX_FRAMES],
        "evidence": {"frames": sorted({int(f) for f in frames})[:MAX_FRAMES], "first_ts": ts},
        "metrics": metrics,
    }


class Ctx:
    """Per-segment views shared by the detectors (one entry per analysed TCP segment).

    ``explained`` is a per-stream mask: a detector that explains a stream's symptoms (a silent SYN
    drop, a PMTU black hole) sets it so the generic retransmission findings do not report the same
    packets a second time under a vaguer name.
    """

    def __init__(self, a: Analysis) -> None:
        self.a = a
        c = a.cols
        r = a.tcp_rows
        self.frame = c.frame[r]
        self.ts = c.ts[r]
        self.fl = c.tcp_flags[r].astype(np.int64)
        self.pay = c.paylen[r].astype(np.int64)
        self.seq = c.seq[r].astype(np.int64)
        self.ack = c.ack[r].astype(np.int64)
        self.ttl = c.ttl[r]
        self.sid = a.tcp_stream
        self.src_hi, self.src_lo, self.sport = c.src_hi[r], c.src_lo[r], c.sport[r]
        st = a.streams
        self.from_client = (self.src_hi == st.c_hi[self.sid]) & (self.src_lo == st.c_lo[self.sid]) & (
            self.sport == st.c_port[self.sid])
        self.explained = np.zeros(len(st), bool)

        self.dup = capture_duplicates(a)
        # each stream is one contiguous block of this permutation (the engine's, or a stable sort)
        self.order = a.tcp_order if a.tcp_order is not None else np.argsort(self.sid, kind="stable")
        ss = self.sid[self.order]
        n = ss.shape[0]
        chg = np.flatnonzero(np.r_[True, ss[1:] != ss[:-1]]) if n else np.zeros(0, np.int64)
        self.start = np.zeros(len(st), np.int64)
        self.end = np.zeros(len(st), np.int64)
        self.start[ss[chg]] = chg
        self.end[ss[chg]] = np.r_[chg[1:], n]

    def rows_of(self, s: int) -> np.ndarray:
        """Segment indices of one stream, in capture order (a slice of a grouped index)."""
        out: np.ndarray = self.order[self.start[s] : self.end[s]]
        return out

    def frames_of(self, streams: np.ndarray, mask: np.ndarray) -> list[int]:
        """First evidence frames among ``streams`` where ``mask`` holds (bounded work per group)."""
        picked: list[np.ndarray] = []
        for s in np.sort(streams)[:50].tolist():
            r = self.rows_of(s)
            picked.append(r[mask[r]][:MAX_FRAMES])
        rows = np.sort(np.concatenate(picked)) if picked else np.zeros(0, np.int64)
        return [int(x) for x in self.frame[rows[:MAX_FRAMES]]]


def server_groups(a: Analysis, streams: np.ndarray) -> dict[str, list[int]]:
    """Group streams by server host; one port keeps ``host:port``, several (a scan) list the ports."""
    st = a.streams
    groups: dict[str, list[int]] = {}
    if not streams.size:
        return groups
    hosts = np.stack([st.s_hi[streams], st.s_lo[streams]], axis=1)
    _, first, inv = np.unique(hosts, axis=0, return_index=True, return_inverse=True)
    inv = inv.ravel()
    for g in np.argsort(first, kind="stable").tolist():
        ss = streams[inv == g]
        ports = np.unique(st.s_port[ss])
        s0 = int(ss[0])
        if ports.shape[0] == 1:
            groups[ep(st.s_hi[s0], st.s_lo[s0], ports[0])] = ss.tolist()
        else:
            shown = ", ".join(str(int(p)) for p in ports[:6]) + (f" (+{ports.shape[0] - 6} more)" if ports.shape[0] > 6 else "")
            groups[f"{format_addr(st.s_hi[s0], st.s_lo[s0])} ports {shown}"] = ss.tolist()
    return groups


def capture_duplicates(a: Analysis) -> np.ndarray:
    """Per analysed TCP segment: True when it is a copy made by the capture, not by the sender.

    A copy has the same addresses, ports, IP ID, seq, ack and payload as an earlier segment and
    appears < 1 ms after it (a SPAN/bridge seeing the packet twice) or *before* it in time (files
    merged). IP ID 0 (DF packets of some stacks) is ignored, and so are copies seen later than
    1 ms: some stacks resend a segment with its old IP ID after an RTO, which is a real retransmission.
    """
    c = a.cols
    dup = np.zeros(a.tcp_rows.shape[0], bool)
    # a copy is always flagged by tshark (retransmission / dup-ACK ...), so only streams with flags matter
    flagged_stream = a.streams.flagged[a.tcp_stream] > 0 if len(a.streams) else np.zeros(0, bool)
    sel = np.flatnonzero((c.l3[a.tcp_rows] == 4) & (c.ip_id[a.tcp_rows] != 0) & flagged_stream)
    if sel.size < 2:
        return dup
    r = a.tcp_rows[sel]
    h = np.full(r.shape[0], np.uint64(7), np.uint64)
    for col in (c.src_lo[r], c.dst_lo[r], c.sport[r], c.dport[r], c.ip_id[r], c.seq[r], c.ack[r], c.pay_hash[r]):
        h = mix_hash(h, col.astype(np.uint64))
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    d = np.ones(r.shape[0], bool)
    d[first] = False
    d &= (c.ts[r] - c.ts[r[first[inv.ravel()]]]) < 0.001
    dup[sel] = d
    return dup
