"""DNS over UDP and TCP (ports 53, and mDNS 5353 / LLMNR 5355 which share Wireshark's DNS fields).

Only the header and the first question are parsed: that is what rcode counts, query/response
matching, latency and "NXDOMAIN for name X" findings need. DNS packets are a small fraction of
traffic, so this is a Python loop over *DNS packets only*, never over all packets.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netghost.forensics.decode import Packets

__all__ = ["DNS_PORTS", "RCODE_NAMES", "DnsMessages", "analyze_dns", "parse_dns"]

DNS_PORTS = (53, 5353, 5355)
RCODE_NAMES = {0: "NoError", 1: "FormErr", 2: "ServFail", 3: "NXDomain", 4: "NotImp", 5: "Refused",
               6: "YXDomain", 7: "YXRRSet", 8: "NXRRSet", 9: "NotAuth", 10: "NotZone"}
QTYPES = {1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 15: "MX", 16: "TXT", 28: "AAAA", 33: "SRV",
          65: "HTTPS", 255: "ANY"}


@dataclass
class DnsMessages:
    """One row per DNS message: the packet row index, header fields and first question."""

    row: list[int] = field(default_factory=list)
    is_response: list[bool] = field(default_factory=list)
    msg_id: list[int] = field(default_factory=list)
    rcode: list[int] = field(default_factory=list)
    qname: list[str] = field(default_factory=list)
    qtype: list[int] = field(default_factory=list)

    def extend(self, other: DnsMessages, row_base: int) -> None:
        """Append another batch's messages, shifting packet rows by ``row_base``."""
        self.row.extend(r + row_base for r in other.row)
        self.is_response.extend(other.is_response)
        self.msg_id.extend(other.msg_id)
        self.rcode.extend(other.rcode)
        self.qname.extend(other.qname)
        self.qtype.extend(other.qtype)


def _qname(data: bytes, pos: int) -> tuple[str, int]:
    labels: list[str] = []
    jumps = 0
    ret = -1
    while pos < len(data):
        ln = data[pos]
        if ln == 0:
            pos += 1
            break
        if ln & 0xC0 == 0xC0:
            if pos + 1 >= len(data) or jumps > 10:
                return ".".join(labels), -1
            if ret < 0:
                ret = pos + 2
            pos = ((ln & 0x3F) << 8) | data[pos + 1]
            jumps += 1
            continue
        labels.append(data[pos + 1 : pos + 1 + ln].decode("ascii", "replace"))
        pos += 1 + ln
    return ".".join(labels), (ret if ret >= 0 else pos)


def parse_dns(buf: np.ndarray, cols: Packets, payoff: np.ndarray, capend: np.ndarray) -> DnsMessages:
    """Parse the DNS header and first question of every DNS packet in a batch.

    Args:
        buf: the batch buffer (padded).
        cols: the batch's decoded columns.
        payoff: batch-relative L4 payload offsets from :func:`decode_batch`.
        capend: batch-relative end of each record's captured bytes (the parse never reads past it).
    """
    out = DnsMessages()
    port = np.isin(cols.sport, DNS_PORTS) | np.isin(cols.dport, DNS_PORTS)
    udp = (cols.proto == 17) & port & (cols.paylen >= 4)
    tcp = (cols.proto == 6) & port & (cols.paylen >= 6) & (cols.tcp_flags >= 0)
    idx = np.flatnonzero(udp | tcp)
    if not idx.size:
        return out
    for i in idx.tolist():
        a = int(payoff[i])
        ln = min(int(cols.paylen[i]), int(capend[i]) - a)
        if ln < 4:
            continue
        if cols.proto[i] == 6:
            mlen = (int(buf[a]) << 8) | int(buf[a + 1])
            if mlen < 4 or mlen > ln - 2 + 65535:
                continue
            a += 2
            ln -= 2
        data = buf[a : a + min(ln, 4096)].tobytes()
        if len(data) < 4:
            continue
        flags = (data[2] << 8) | data[3]
        qname, qtype = "", -1
        if len(data) >= 12 and ((data[4] << 8) | data[5]) > 0:
            qname, p = _qname(data, 12)
            if 0 <= p <= len(data) - 2:
                qtype = (data[p] << 8) | data[p + 1]
        out.row.append(i)
        out.is_response.append(bool(flags & 0x8000))
        out.msg_id.append((data[0] << 8) | data[1])
        out.rcode.append(flags & 0x0F)
        out.qname.append(qname)
        out.qtype.append(qtype)
    return out


def analyze_dns(msgs: DnsMessages, cols: Packets, max_items: int = 20) -> dict[str, Any]:
    """Queries, responses, rcode counts, unanswered queries and latency, matched like the truth tool.

    A query is keyed by (client ip, client port, server ip, server port, id); a response answers every
    pending copy of its query (retries included); latency is measured from the first copy.
    """
    rcodes: Counter[str] = Counter()
    rcode_frames: dict[str, list[int]] = {}
    pending: dict[tuple[int, ...], list[int]] = {}
    latencies: list[float] = []
    failures: dict[tuple[str, str], dict[str, Any]] = {}
    unsolicited = 0
    answered = 0
    queries = 0
    for k in range(len(msgs.row)):
        r = msgs.row[k]
        a = (int(cols.src_hi[r]), int(cols.src_lo[r]), int(cols.sport[r]))
        b = (int(cols.dst_hi[r]), int(cols.dst_lo[r]), int(cols.dport[r]))
        if not msgs.is_response[k]:
            queries += 1
            pending.setdefault((*a, *b, msgs.msg_id[k]), []).append(r)
            continue
        name = RCODE_NAMES.get(msgs.rcode[k], str(msgs.rcode[k]))
        rcodes[name] += 1
        frames = rcode_frames.setdefault(name, [])
        if len(frames) < max_items:
            frames.append(int(cols.frame[r]))
        key = (*b, *a, msgs.msg_id[k])
        waiting = pending.get(key)
        if waiting:
            answered += 1
            latencies.append(float(cols.ts[r] - cols.ts[waiting[0]]))
            pending[key] = []
        else:
            unsolicited += 1
        if msgs.rcode[k] != 0:
            f = failures.setdefault((msgs.qname[k], name), {"qname": msgs.qname[k], "rcode": name, "count": 0,
                                                           "qtype": QTYPES.get(msgs.qtype[k], str(msgs.qtype[k])),
                                                           "frames": []})
            f["count"] += 1
            if len(f["frames"]) < 5:
                f["frames"].append(int(cols.frame[r]))
    unanswered = [v for v in pending.values() if v]
    unanswered_names: Counter[str] = Counter()
    first_frames: dict[str, list[int]] = {}
    row_of = {r: k for k, r in enumerate(msgs.row)}
    for v in unanswered:
        nm = msgs.qname[row_of[v[0]]]
        unanswered_names[nm] += 1
        fl = first_frames.setdefault(nm, [])
        if len(fl) < 5:
            fl.append(int(cols.frame[v[0]]))
    lat = np.asarray(latencies) if latencies else None
    return {
        "queries": queries,
        "responses": int(sum(rcodes.values())),
        "rcode_counts": dict(rcodes.most_common()),
        "rcode_frames": rcode_frames,
        "answered": answered,
        "unanswered": len(unanswered),
        "unsolicited_responses": unsolicited,
        "unanswered_names": [
            {"qname": nm, "queries": c, "frames": first_frames[nm]} for nm, c in unanswered_names.most_common(max_items)
        ],
        "failures": sorted(failures.values(), key=lambda f: -f["count"])[:max_items],
        "latency_s": None if lat is None else {
            "count": int(lat.size), "median": float(np.median(lat)), "p95": float(np.percentile(lat, 95)),
            "max": float(lat.max()),
        },
    }
