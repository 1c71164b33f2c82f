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
from netghost.forensics.flows import mix_hash
from netghost.forensics.gather import Gather

__all__ = ["DNS_PORTS", "RCODE_NAMES", "DnsMessages", "analyze_dns", "parse_dns"]

DNS_PORTS = (53, 5353, 5355)
RCODE_NAMES = {0: "NoError", 1: "FormErr", 2: "ServFail", 3: "NXDomain", 4: "NotImp", 5: "Refused",
               6: "YXDomain", 7: "YXRRSet", 8: "NXRRSet", 9: "NotAuth", 10: "NotZone"}
QTYPES = {1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 15: "MX", 16: "TXT", 28: "AAAA", 33: "SRV",
          65: "HTTPS", 255: "ANY"}


@dataclass
class DnsMessages:
    """One row per DNS message: packet row, header fields, and the raw question section.

    The question name is parsed lazily (:meth:`question`) because only the names a report cites
    (failures, unanswered queries) are ever needed.
    """

    row: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    is_response: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    msg_id: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    rcode: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # first question sections, back to back: message k's is q_blob[q_off[k] : q_off[k + 1]] (b"" if absent)
    q_blob: bytearray = field(default_factory=bytearray)
    q_off: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))

    def __len__(self) -> int:
        return int(self.row.shape[0])

    def extend(self, other: DnsMessages, row_base: int) -> None:
        """Append another batch's messages, shifting packet rows by ``row_base``."""
        self.row = np.concatenate([self.row, other.row + row_base])
        self.is_response = np.concatenate([self.is_response, other.is_response])
        self.msg_id = np.concatenate([self.msg_id, other.msg_id])
        self.rcode = np.concatenate([self.rcode, other.rcode])
        self.q_off = np.concatenate([self.q_off, other.q_off[1:] + len(self.q_blob)])
        self.q_blob += other.q_blob

    def raw_question(self, k: int) -> bytes:
        """Message ``k``'s first question section as captured (at most 300 bytes; b"" when absent)."""
        return bytes(self.q_blob[int(self.q_off[k]) : int(self.q_off[k + 1])])

    def question(self, k: int) -> tuple[str, str]:
        """(query name, query type name) of message ``k``; ("", "") when absent or malformed."""
        data = self.raw_question(k)
        if not data:
            return "", ""
        name, p = _qname(data, 0)
        qtype = (data[p] << 8) | data[p + 1] if 0 <= p <= len(data) - 2 else -1
        return name, QTYPES.get(qtype, str(qtype))


def _qname(data: bytes, pos: int) -> tuple[str, int]:
    labels: list[str] = []
    while pos < len(data):
        ln = data[pos]
        if ln == 0:
            return ".".join(labels), pos + 1
        if ln & 0xC0:
            return ".".join(labels), -1  # compression inside the first question: not expected
        labels.append(data[pos + 1 : pos + 1 + ln].decode("ascii", "backslashreplace"))
        pos += 1 + ln
    return ".".join(labels), -1


def parse_dns(buf: np.ndarray, cols: Packets, payoff: np.ndarray, capend: np.ndarray) -> DnsMessages:
    """Extract DNS headers (vectorised) and the raw first question of every DNS packet in a batch.

    Args:
        buf: the batch buffer (padded).
        cols: the batch's decoded columns.
        payoff: batch-relative L4 payload offsets from :func:`decode_batch`.
        capend: batch-relative end of each record's captured bytes (the parse never reads past it).
    """
    port = np.isin(cols.sport, DNS_PORTS) | np.isin(cols.dport, DNS_PORTS)
    udp = (cols.proto == 17) & port & (cols.paylen >= 4)
    tcp = (cols.proto == 6) & port & (cols.paylen >= 6) & (cols.tcp_flags >= 0)
    idx = np.flatnonzero(udp | tcp)
    if not idx.size:
        return DnsMessages()
    g = Gather(buf)
    a = payoff[idx].copy()
    ln = np.minimum(cols.paylen[idx], capend[idx] - a)
    over_tcp = cols.proto[idx] == 6
    mlen = g.u16(a)
    a = np.where(over_tcp, a + 2, a)
    ln = np.where(over_tcp, ln - 2, ln)
    ok = (ln >= 4) & (~over_tcp | (mlen >= 4))
    idx, a, ln = idx[ok], a[ok], ln[ok]
    flags = g.u16(a + 2)
    qd = g.u16(a + 4)
    # one ragged gather copies every question section (no Python object per message)
    qa = a + 12
    qlen = np.where((qd > 0) & (ln > 12), np.minimum(ln, 12 + 300) - 12, 0)
    q_off = np.zeros(qlen.shape[0] + 1, np.int64)
    np.cumsum(qlen, out=q_off[1:])
    pos = np.repeat(qa - q_off[:-1], qlen) + np.arange(int(q_off[-1]), dtype=np.int64)
    return DnsMessages(row=idx.astype(np.int64), is_response=(flags & 0x8000) != 0, msg_id=g.u16(a),
                       rcode=flags & 0x0F, q_blob=bytearray(buf[pos].tobytes()), q_off=q_off)


def analyze_dns(msgs: DnsMessages, cols: Packets, max_items: int = 20) -> dict[str, Any]:
    """Queries, responses, rcode counts, unanswered queries and latency, matched like the truth tool.

    A query is keyed by (client ip, client port, server ip, server port, id); a response answers every
    pending copy of its query (retries included); latency is measured from the first copy. The
    matching is vectorised: events sorted by (key, frame) form runs "Q..Q R" per key.
    """
    r = msgs.row
    resp = msgs.is_response
    src = (cols.src_hi[r], cols.src_lo[r], cols.sport[r])
    dst = (cols.dst_hi[r], cols.dst_lo[r], cols.dport[r])
    key = np.full(r.shape[0], np.uint64(53), np.uint64)
    for x, y in zip(src, dst, strict=True):  # client side first: queries src, responses dst
        key = mix_hash(key, np.where(resp, y, x))
    for x, y in zip(src, dst, strict=True):
        key = mix_hash(key, np.where(resp, x, y))
    key = mix_hash(key, msgs.msg_id)
    order = np.lexsort((r, key))
    k, q = key[order], ~resp[order]
    n = k.shape[0]
    newkey = np.r_[True, k[1:] != k[:-1]] if n else np.zeros(0, bool)
    run_start = newkey | np.r_[False, ~q[:-1]] if n else np.zeros(0, bool)
    starts = np.flatnonzero(run_start)
    first_of_run = starts[np.cumsum(run_start) - 1] if n else np.zeros(0, np.int64)
    answered = ~q & ~run_start
    lastkey = np.r_[k[1:] != k[:-1], True] if n else np.zeros(0, bool)
    unanswered_pos = first_of_run[lastkey & q]
    lat = cols.ts[r[order[answered]]] - cols.ts[r[order[first_of_run[answered]]]]

    rcodes: Counter[str] = Counter()
    rcode_frames: dict[str, list[int]] = {}
    resp_idx = np.flatnonzero(resp)
    codes, counts = np.unique(msgs.rcode[resp_idx], return_counts=True)
    for c, cnt in zip(codes.tolist(), counts.tolist(), strict=True):
        name = RCODE_NAMES.get(c, str(c))
        rcodes[name] = cnt
        rcode_frames[name] = [int(f) for f in cols.frame[r[resp_idx[msgs.rcode[resp_idx] == c]]][:max_items]]
    # group failures by the raw question bytes; only the reported groups get their name parsed
    groups: dict[tuple[bytes, int], list[int]] = {}
    for m in resp_idx[msgs.rcode[resp_idx] != 0].tolist():
        groups.setdefault((msgs.raw_question(m), int(msgs.rcode[m])), []).append(m)
    failures: list[dict[str, Any]] = []
    for (_, code), ms in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))[:max_items]:
        qname, qtype = msgs.question(ms[0])
        failures.append({"qname": qname, "rcode": RCODE_NAMES.get(code, str(code)), "count": len(ms), "qtype": qtype,
                         "frames": [int(cols.frame[r[m]]) for m in ms[:5]]})
    unanswered_names: Counter[str] = Counter()
    first_frames: dict[str, list[int]] = {}
    for pos in unanswered_pos[:5000].tolist():
        m = int(order[pos])
        nm = msgs.question(m)[0]
        unanswered_names[nm] += 1
        fl = first_frames.setdefault(nm, [])
        if len(fl) < 5:
            fl.append(int(cols.frame[r[m]]))
    return {
        "queries": int(np.count_nonzero(~resp)),
        "responses": int(resp_idx.shape[0]),
        "rcode_counts": dict(rcodes.most_common()),
        "rcode_frames": rcode_frames,
        "answered": int(np.count_nonzero(answered)),
        "unanswered": int(unanswered_pos.shape[0]),
        "unsolicited_responses": int(np.count_nonzero(~q & run_start)),
        "unanswered_names": [
            {"qname": nm, "queries": c, "frames": first_frames[nm]} for nm, c in unanswered_names.most_common(max_items)
        ],
        "failures": failures,
        "latency_s": None if not lat.size else {
            "count": int(lat.size), "median": float(np.median(lat)), "p95": float(np.percentile(lat, 95)),
            "max": float(lat.max()),
        },
    }
