"""Semantic JSON: the compact, versioned, ranked document an LLM reads (schema: semantic.schema.json).

Counts in ``summary`` mean exactly what tshark's truth files mean (PCAP-NOTES.md §5): ``packets`` =
``packet_count``, ``tcp_conversations`` = distinct ``tcp.stream``, ``tcp_analysis`` = frames matching
each ``tcp.analysis.<flag>`` display filter (``retransmission`` includes fast and spurious ones),
``rst_packets`` = segments with RST, ``syn_without_synack`` = streams with a SYN and no SYN-ACK,
``dns_rcodes`` = responses per rcode name, ``icmp``/``icmpv6`` = messages per ``type/code``.

Everything list-shaped is bounded (flows, findings, frames per item), so the document stays a few
thousand tokens whatever the capture size. Evidence is frame numbers and flow ids, never raw bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from netghost.forensics import spill
from netghost.forensics.arrays import BLOCK, Collect, median, median_p95, member, roomy, select, spans, take
from netghost.forensics.decode import ep
from netghost.forensics.engine import Analysis
from netghost.forensics.findings import Ctx, build_findings, flow_id
from netghost.forensics.read import LINKTYPE_NAMES
from netghost.forensics.report._history import flow_details
from netghost.forensics.tcp import CONN_STATES, FLAG_BITS, FLAG_NAMES

__all__ = ["SCHEMA_ID", "SEMANTIC_VERSION", "build_semantic", "load_schema"]

SEMANTIC_VERSION = 1
SCHEMA_ID = "https://netghost.dev/schemas/forensics-semantic-v1.json"
MAX_FLOWS = 12
MAX_ITEMS = 10  # DNS failures / unanswered names / ICMP error groups kept in the document


def _schema_file(name: str) -> dict[str, Any]:
    from importlib import resources  # noqa: PLC0415  only schema readers pay its import (~8 ms, tempfile & co)

    return dict(json.loads(resources.files("netghost.forensics").joinpath("schemas", name).read_text(encoding="utf-8")))


def load_schema() -> dict[str, Any]:
    """The JSON Schema shipped with the package for the semantic document, self-contained.

    ``comparison`` (compare mode) is ``$ref``-ed by its ``$id`` in semantic.schema.json; the
    compare schema (compare.schema.json) is bundled here under ``$defs`` so a plain validator
    resolves it without a registry, and a single-capture and a compare-mode document both validate.
    """
    schema = _schema_file("semantic.schema.json")
    schema.setdefault("$defs", {})["comparison"] = _schema_file("compare.schema.json")
    return schema


def _ep(hi: Any, lo: Any, port: Any) -> str:
    return ep(hi, lo, port)  # findings' cached formatting (same text)


def _flow_scores(a: Analysis) -> np.ndarray:
    st = a.streams
    bad_state = member(st.conn_state, np.array([CONN_STATES.index(s) for s in ("S0", "REJ", "RSTO", "RSTR", "RSTOS0", "SH")]))
    out: np.ndarray = st.retrans * 2.0 + st.flagged + st.lost * 2 + st.zero_window * 2 + bad_state * 5 + (st.rst_c + st.rst_s) * 3
    return out


def _flows(a: Analysis, x: Ctx, referenced: set[int]) -> list[dict[str, Any]]:
    st = a.streams
    if not len(st):
        return []
    score = _flow_scores(a)
    order = np.lexsort((st.first_frame, -score))
    chosen = [int(s) for s in order[:MAX_FLOWS]]
    chosen += [s for s in sorted(referenced) if s not in chosen][:6]
    per_stream_flags: dict[int, dict[str, int]] = {}
    # flagged segments of the chosen streams only (ascending = capture order)
    chosen_arr = np.asarray(chosen)
    fsel = select(x.flagged, lambda f: member(take(x.sid, f), chosen_arr))
    f_sid, f_fl = take(x.sid, fsel), take(a.tcp_flags, fsel)
    for name in FLAG_NAMES:
        m = (f_fl & FLAG_BITS[name]) != 0
        if m.any():
            u, c = np.unique(f_sid[m], return_counts=True)
            for s, k in zip(u.tolist(), c.tolist(), strict=True):
                per_stream_flags.setdefault(s, {})[name] = k
    flagged_frames: dict[int, list[int]] = {}
    for s, f in zip(f_sid.tolist(), x.seg("frame", fsel).tolist(), strict=True):
        lst = flagged_frames.setdefault(s, [])
        if len(lst) < 10:
            lst.append(f)
    details = flow_details(a, chosen)
    rtt_med: dict[int, float] = {}
    if a.tcp_ack_rtt is not None:
        rtt = a.tcp_ack_rtt
        for s in sorted(chosen):  # (a stream's samples: gathered in blocks, spilled when long)
            v = _values(rtt, x.rows_of(s))
            if v.shape[0]:
                rtt_med[s] = round(median(v) * 1000, 3)
    out = []
    for s in chosen:
        data = int(st.data_pkts[s])
        out.append({
            "id": flow_id(s), "proto": "tcp", "stream": s,
            "client": _ep(st.c_hi[s], st.c_lo[s], st.c_port[s]), "server": _ep(st.s_hi[s], st.s_lo[s], st.s_port[s]),
            "conn_state": CONN_STATES[int(st.conn_state[s])], **details[s],
            "first_frame": int(st.first_frame[s]), "last_frame": int(st.last_frame[s]),
            "start_ts": float(st.first_ts[s]), "duration_s": round(max(0.0, float(st.last_ts[s] - st.first_ts[s])), 6),
            "packets": {"c2s": int(st.pkts_c2s[s]), "s2c": int(st.pkts_s2c[s])},
            "bytes": {"c2s": int(st.bytes_c2s[s]), "s2c": int(st.bytes_s2c[s])},
            "handshake_rtt_ms": None if np.isnan(st.irtt[s]) else round(float(st.irtt[s]) * 1000, 3),
            "ack_rtt_median_ms": rtt_med.get(s),
            "mss": {"c": int(st.mss_c[s]) if st.mss_c[s] >= 0 else None, "s": int(st.mss_s[s]) if st.mss_s[s] >= 0 else None},
            "wscale": {"c": int(st.ws_c[s]) if st.ws_c[s] >= 0 else None, "s": int(st.ws_s[s]) if st.ws_s[s] >= 0 else None},
            "syn": int(st.syn[s]), "synack": int(st.synack[s]),
            "fin": {"c": int(st.fin_c[s]), "s": int(st.fin_s[s])}, "rst": {"c": int(st.rst_c[s]), "s": int(st.rst_s[s])},
            "retransmissions": int(st.retrans[s]),
            "retransmission_rate": round(float(st.retrans_data[s]) / data, 4) if data else 0.0,
            "analysis": per_stream_flags.get(s, {}),
            "evidence_frames": flagged_frames.get(s, []),
            "score": round(float(score[s]), 1),
        })
    return out


def _rtt_summary(a: Analysis) -> dict[str, Any]:
    """tshark's ``tcp.analysis.ack_rtt`` samples (non-zero data/SYN/FIN → exact ACK times), in ms."""
    # index with flatnonzero, not the bool mask: ~1.5x faster on millions of scattered samples
    r = _values(a.tcp_ack_rtt, None) if a.tcp_ack_rtt is not None else np.zeros(0)
    if not r.size:
        return {"count": 0}
    lo, hi = float(r.min()) * 1000, float(r.max()) * 1000
    med, p95 = median_p95_ms(r)
    return {"count": int(r.size), "min_ms": round(lo, 3), "median_ms": round(med, 3),
            "p95_ms": round(p95, 3), "max_ms": round(hi, 3)}


def _values(v: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """The non-NaN ``v[rows]`` (all of ``v`` when ``rows`` is None), in order; a fresh array (partitioned later).

    In blocks, the result spill-allocated when long (a capture's RTT samples can outgrow the memory budget).
    """
    n = v.shape[0] if rows is None else rows.shape[0]
    if n <= BLOCK or roomy(n * 24):
        w = v if rows is None else v[rows]
        # np.compress, not the bool mask (~3x slower on millions of scattered samples) nor a gather
        # through flatnonzero (as fast, but its index array is 8 more bytes of fresh memory per sample)
        out: np.ndarray = np.compress(~np.isnan(w), w)  # always a copy
        return out
    acc = Collect(n, v.dtype)
    for lo, hi in spans(n):
        w = v[lo:hi] if rows is None else v[rows[lo:hi]]
        acc.add(w[~np.isnan(w)])
    return acc.result()


def median_p95_ms(r: np.ndarray) -> tuple[float, float]:
    """``np.median(r * 1000)`` and ``np.percentile(r * 1000, 95)`` from one in-place partition of ``r``
    (two partitions and copies of ~10^6 samples were a third of the semantic build on the benchmark).

    Args:
        r: finite samples in seconds (partitioned in place).
    """
    return median_p95(r, 1000.0)


PEEL = 4  # values counted by comparison before the rest is sorted (a capture has few EtherTypes)
COUNT_BLOCK = 1 << 18  # rows per block of _value_counts


def _value_counts(v: np.ndarray) -> list[tuple[int, int]]:
    """``np.unique(v, return_counts=True)`` as (value, count) pairs, sorting only what is left after a
    few values are counted by comparison: one pass when every row has the same value (a capture's
    link type), a few for EtherTypes (sorting 2M of them was ~20 ms with its copy)."""
    n = v.shape[0]
    total: dict[int, int] = {}
    # in blocks: the comparison masks and the rest stay small (reused memory, no fresh pages to fault in)
    for lo, hi in spans(n, min(BLOCK, COUNT_BLOCK)):
        part = v[lo:hi]
        # peel off values one comparison pass each (the first row's value, in a capture usually the
        # dominant one), each pass keeping only the rows not yet counted; what is left after a few is sorted
        for _ in range(PEEL):
            if not part.size:
                break
            same = part == part[0]
            total[int(part[0])] = total.get(int(part[0]), 0) + int(np.count_nonzero(same))
            part = part[~same]
        if part.size:
            u, k = np.unique(part, return_counts=True)
            for val, cnt in zip(u.tolist(), k.tolist(), strict=True):
                total[val] = total.get(val, 0) + cnt
    return sorted(total.items())


def _count_udp(proto: np.ndarray) -> int:
    n = proto.shape[0]
    return sum(int(np.count_nonzero(proto[lo:hi] == 17)) for lo, hi in spans(n, max(n, 1) if roomy(n) else BLOCK))


def _flag_counts(a: Analysis, x: Ctx) -> dict[str, int]:
    """``Analysis.flag_counts()`` over the flagged segments only (same counts)."""
    counts = dict.fromkeys(FLAG_NAMES, 0)
    fl = x.flagged
    for lo, hi in spans(fl.shape[0], fl.shape[0] if roomy(fl.shape[0] * 16) else BLOCK):
        f = take(a.tcp_flags, fl[lo:hi])
        for name in FLAG_NAMES:
            counts[name] += int(np.count_nonzero(f & FLAG_BITS[name]))
    return counts


def build_semantic(a: Analysis, file_size: int | None = None) -> dict[str, Any]:
    """Build the semantic document (validated against :func:`load_schema` in the tests).

    Args:
        a: the capture analysis.
        file_size: capture size in bytes (reported as-is).
    """
    x = Ctx(a)
    findings = build_findings(a, ctx=x)
    # each part below walks spilled columns (past the memory budget): their pages leave RSS after it
    referenced = {int(f.split("/")[1]) for fd in findings for f in fd["flows"] if f.startswith("tcp/")}
    flows = _flows(a, x, referenced)
    spill.release()
    rtt = _rtt_summary(a)
    spill.release()
    c = a.cols
    st = a.streams
    states = {}
    if len(st):
        u, k = np.unique(st.conn_state, return_counts=True)
        states = {CONN_STATES[int(x)]: int(n) for x, n in zip(u, k, strict=True)}
    l3: dict[str, int] = {}
    for et, n in _value_counts(c.ethertype):
        name = {0x0800: "ipv4", 0x86DD: "ipv6", 0x0806: "arp", -1: "undecoded"}.get(et, f"ethertype_0x{et:04x}")
        l3[name] = n
    t_min, t_max = (float(c.ts.min()), float(c.ts.max())) if len(c) else (None, None)
    dns = a.dns
    return {
        "schema": SCHEMA_ID,
        "version": SEMANTIC_VERSION,
        "capture": {
            "file": Path(a.info.path).name, "file_type": a.info.file_type, "compressed": a.info.compressed,
            "size_bytes": file_size, "first_ts": t_min, "last_ts": t_max,
            "duration_s": round(t_max - t_min, 6) if t_min is not None and t_max is not None else 0.0,
            "truncated": a.info.truncated, "warnings": a.info.warnings[:10],
        },
        "summary": {
            "packets": a.packets,
            "link_types": {LINKTYPE_NAMES.get(k, f"linktype{k}"): n for k, n in _value_counts(c.linktype)},
            "l3": l3,
            "tcp_segments": int(a.tcp_rows.shape[0]),
            "udp_packets": _count_udp(c.proto),
            "tcp_conversations": len(st),
            "tcp_analysis": _flag_counts(a, x),
            "rst_packets": int(x.rst_rows.shape[0]),
            "syn_without_synack": len(a.syn_without_synack()),
            "conn_states": states,
            "ack_rtt": rtt,
            "dns_rcodes": dns["rcode_counts"],
            "dns": {"queries": dns["queries"], "responses": dns["responses"], "unanswered": dns["unanswered"],
                    "latency_s": dns["latency_s"]},
            "icmp": a.icmp["type_code_counts"],
            "icmpv6": a.icmp["icmpv6_type_code_counts"],
            "decode_issues": a.decode_issues,
        },
        "findings": findings,
        "flows": flows,
        "dns": {"failures": dns["failures"][:MAX_ITEMS], "unanswered": dns["unanswered_names"][:MAX_ITEMS]},
        "icmp_errors": a.icmp["errors"][:MAX_ITEMS],
    }
