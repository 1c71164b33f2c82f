"""DNS over UDP and TCP (ports 53, and mDNS 5353 / LLMNR 5355 which share Wireshark's DNS fields).

Only the header and the first question are parsed: that is what rcode counts, query/response
matching, latency and "NXDOMAIN for name X" findings need. The per-batch parse is the compiled
``_compiled.pyx`` kernel (one pass, also computes the matching key) or, without it, numpy over the
DNS-port rows; Python touches names only for the few reported failures and unanswered queries.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netghost.forensics.accel import compiled
from netghost.forensics.arrays import median_p95
from netghost.forensics.decode import Gather, Packets

__all__ = ["DNS_PORTS", "QTYPES", "RCODE_NAMES", "DnsMessages", "analyze_dns", "parse_dns", "qnames"]

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
    # query/response matching key (see _match_keys) and capture time, taken while the batch is at hand;
    # empty when built by hand (analyze_dns then computes them from the packet columns)
    key: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    ts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))

    def __len__(self) -> int:
        return int(self.row.shape[0])

    def extend(self, other: DnsMessages, row_base: int) -> None:
        """Append another batch's messages, shifting packet rows by ``row_base``.

        Columns grow geometrically (amortised O(1) per message: a capture's ~50 batches do not copy
        the growing arrays ~50 times); the public arrays are views of the filled part.
        """
        n, m = len(self), len(other)
        if not m:
            return
        keyed = self.key.shape[0] == n and other.key.shape[0] == m
        parts = {"row": other.row + row_base, "is_response": other.is_response, "msg_id": other.msg_id,
                 "rcode": other.rcode, "q_off": other.q_off[1:] + len(self.q_blob)}
        if keyed:
            parts |= {"key": other.key, "ts": other.ts}
        else:
            self.key, self.ts = np.zeros(0, np.uint64), np.zeros(0, np.float64)
        bufs: dict[str, np.ndarray] = self.__dict__.setdefault("_grow", {})
        for name, part in parts.items():
            cur = getattr(self, name)
            filled = cur.shape[0]
            buf = bufs.get(name)
            if buf is None or buf.shape[0] < filled + m or not np.shares_memory(buf, cur):
                buf = np.empty(max(2 * (filled + m), 1024), part.dtype)
                buf[:filled] = cur
                bufs[name] = buf
            buf[filled : filled + m] = part
            setattr(self, name, buf[: filled + m])
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
        labels.append(data[pos + 1 : pos + 1 + ln].decode("utf-8", "backslashreplace"))
        pos += 1 + ln
    return ".".join(labels), -1


def _compiled_parser() -> Any:
    """The compiled ``dns._compiled`` module, or None (not built, or ``NETGHOST_NO_COMPILED`` set)."""
    return compiled("dns._compiled")


def qnames(msgs: DnsMessages, ks: np.ndarray) -> list[str]:
    """``[msgs.question(k)[0] for k in ks]``, the label walk vectorised over all messages at once.

    Why: a report cites up to 5000 unanswered queries, often all different names; one Python walk
    per name was most of ``analyze_dns``. Each step reads every unfinished message's next length
    byte; the name is then the bytes after the first length byte up to where the walk stopped, with
    the later length bytes turned into dots (what joining the decoded labels with dots gives).
    """
    ks = np.asarray(ks, np.int64)
    if not ks.size:
        return []
    # copy just these sections into a small scratch buffer (the blob holds every message's)
    lens = msgs.q_off[ks + 1] - msgs.q_off[ks]
    start = np.cumsum(lens) - lens
    end = start + lens
    src = np.repeat(msgs.q_off[ks] - start, lens) + np.arange(int(lens.sum()), dtype=np.int64)
    buf = np.frombuffer(msgs.q_blob, np.uint8)[src] if len(msgs.q_blob) else np.zeros(0, np.uint8)
    pos, stop = start.copy(), end.copy()
    active = np.flatnonzero(pos < end)
    dots: list[np.ndarray] = []
    while active.size:
        p = pos[active]
        ln = buf[p].astype(np.int64)
        done = (ln == 0) | ((ln & 0xC0) != 0)  # terminator, or compression (not expected): stop there
        stop[active[done]] = p[done]
        go = active[~done]
        p, ln = p[~done], ln[~done]
        dots.append(p[p != start[go]])  # length bytes after the first become the dots
        pos[go] = p + 1 + ln
        active = go[pos[go] < end[go]]  # a label running past the section is clipped, the walk ends
    if dots:
        buf[np.concatenate(dots)] = ord(".")
    stop = np.minimum(stop, end)
    raw = buf.tobytes()
    return [raw[a + 1 : b].decode("utf-8", "backslashreplace") if b > a else ""
            for a, b in zip(start.tolist(), stop.tolist(), strict=True)]


def parse_dns(buf: np.ndarray, cols: Packets, payoff: np.ndarray, capend: np.ndarray,
              rows: np.ndarray | None = None) -> DnsMessages:
    """Extract DNS headers and the raw first question of every DNS packet in a batch.

    The compiled kernel (``_compiled.pyx``) does it in one pass; the pure path is vectorised numpy over
    the DNS-port rows only. Both give the same messages (tests compare them).

    Args:
        buf: the batch buffer (padded).
        cols: the batch's decoded columns.
        payoff: batch-relative L4 payload offsets from :func:`decode_batch`.
        capend: batch-relative end of each record's captured bytes (the parse never reads past it).
        rows: optional ascending, unique row indices (into ``cols``/``payoff``/``capend``) to examine,
            e.g. a decoder's DNS-port candidates; other rows are skipped. Message rows still index
            ``cols``. Same messages as without ``rows`` when every DNS row is among them, and no
            column is copied (unlike ``cols.take(rows)``).
    """
    k = _compiled_parser()
    if k is not None:
        u64 = np.uint64
        res = k.parse(np.ascontiguousarray(buf), np.asarray(cols.proto, np.int16),
                      np.ascontiguousarray(cols.sport, np.int32), np.ascontiguousarray(cols.dport, np.int32),
                      np.asarray(cols.paylen, np.int32), np.asarray(cols.tcp_flags, np.int16),
                      np.asarray(payoff, np.int64), np.asarray(capend, np.int64), np.asarray(cols.src_hi, u64),
                      np.asarray(cols.src_lo, u64), np.asarray(cols.dst_hi, u64), np.asarray(cols.dst_lo, u64),
                      None if rows is None else np.asarray(rows, np.int64))
        if res is not None:  # None: a row the kernel does not handle (out-of-buffer offsets)
            idx, is_resp, msg_id, rcode, q_off, q_blob, key = res
            if not idx.size:
                return DnsMessages()
            return DnsMessages(row=idx, is_response=is_resp.view(bool), msg_id=msg_id, rcode=rcode, q_blob=q_blob,
                               q_off=q_off, key=key, ts=cols.ts[idx])
    return _parse_dns_numpy(buf, cols, payoff, capend, rows)


def _parse_dns_numpy(buf: np.ndarray, cols: Packets, payoff: np.ndarray, capend: np.ndarray,
                     rows: np.ndarray | None = None) -> DnsMessages:
    # port test by plain comparisons (np.isin over every packet cost most of the parse)
    if rows is None:
        sp, dp = cols.sport, cols.dport
        cand = np.flatnonzero((sp == 53) | (sp == 5353) | (sp == 5355) | (dp == 53) | (dp == 5353) | (dp == 5355))
    else:
        rows = np.asarray(rows, np.int64)
        sp, dp = cols.sport[rows], cols.dport[rows]
        cand = rows[(sp == 53) | (sp == 5353) | (sp == 5355) | (dp == 53) | (dp == 5353) | (dp == 5355)]
    pr, pl = cols.proto[cand], cols.paylen[cand]
    idx = cand[((pr == 17) & (pl >= 4)) | ((pr == 6) & (pl >= 6) & (cols.tcp_flags[cand] >= 0))]
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
    return _with_keys(DnsMessages(row=idx.astype(np.int64), is_response=(flags & 0x8000) != 0, msg_id=g.u16(a),
                                  rcode=flags & 0x0F, q_blob=bytearray(buf[pos].tobytes()), q_off=q_off), cols)


def _with_keys(msgs: DnsMessages, cols: Packets) -> DnsMessages:
    """Fill ``key``/``ts`` from the batch's own columns (small, still in cache)."""
    msgs.key = _match_keys(msgs, cols)
    msgs.ts = cols.ts[msgs.row]
    return msgs


def _match_keys(msgs: DnsMessages, cols: Packets) -> np.ndarray:
    """Per message: hash of (client ip, client port, server ip, server port, id) — queries src→dst,
    responses dst→src. The same values as chained ``mix_hash`` rounds, computed in place."""
    r = msgs.row
    resp = msgs.is_response
    n = r.shape[0]
    src = (cols.src_hi[r], cols.src_lo[r], cols.sport[r])
    dst = (cols.dst_hi[r], cols.dst_lo[r], cols.dport[r])
    key = np.full(n, np.uint64(53), np.uint64)
    v = np.empty(n, np.uint64)
    c, sh = np.uint64(0x9E3779B97F4A7C15), np.uint64(29)

    def mix(col: np.ndarray) -> None:
        np.bitwise_xor(key, col, out=key, casting="unsafe")
        np.multiply(key, c, out=key)
        np.right_shift(key, sh, out=v)
        np.bitwise_xor(key, v, out=key)

    for client_first in (True, False):  # client side first: queries src, responses dst
        for x, y in zip(src, dst, strict=True):
            np.copyto(v, x, casting="unsafe")
            np.copyto(v, y, where=resp if client_first else ~resp, casting="unsafe")
            mix(v)
    np.copyto(v, msgs.msg_id, casting="unsafe")
    mix(v)
    return key


def _latency(lat: np.ndarray) -> dict[str, Any]:
    """Count, median, p95 and max of the query latencies (``lat`` is partitioned in place)."""
    top = float(lat.max())
    med, p95 = median_p95(lat)
    return {"count": int(lat.size), "median": med, "p95": p95, "max": top}


def _stable_argsort(key: np.ndarray) -> np.ndarray:
    """``np.argsort(key, kind="stable")`` for uint64 keys, via numpy's faster (SIMD) value sort.

    The low bits of each key are replaced by its index, which makes the keys unique and ordered like
    (key, index) as long as no two distinct keys agree on the kept high bits; that is checked, and
    the plain stable argsort is used otherwise.
    """
    n = key.shape[0]
    bits = max(n - 1, 1).bit_length()
    if n < 2 or bits > 40:
        return np.argsort(key, kind="stable")
    low = np.uint64((1 << bits) - 1)
    packed = np.sort((key & ~low) | np.arange(n, dtype=np.uint64))
    perm = (packed & low).astype(np.int64)
    ks = key[perm]
    same_hi = (packed[1:] & ~low) == (packed[:-1] & ~low)
    if np.any(same_hi & (ks[1:] != ks[:-1])):
        return np.argsort(key, kind="stable")
    return perm


def analyze_dns(msgs: DnsMessages, cols: Packets, max_items: int = 20) -> dict[str, Any]:
    """Queries, responses, rcode counts, unanswered queries and latency, matched like the truth tool.

    A query is keyed by (client ip, client port, server ip, server port, id); a response answers every
    pending copy of its query (retries included); latency is measured from the first copy. The
    matching is vectorised: events sorted by (key, frame) form runs "Q..Q R" per key.
    """
    r = msgs.row
    resp = msgs.is_response
    keyed = msgs.key.shape[0] == r.shape[0]
    key = msgs.key if keyed else _match_keys(msgs, cols)
    ts = msgs.ts if keyed else cols.ts[r]
    # rows are strictly increasing (one message per packet), so a stable sort by key is the (key, row) order
    order = _stable_argsort(key) if np.all(r[1:] > r[:-1]) else np.lexsort((r, key))
    k, q = key[order], ~resp[order]
    n = k.shape[0]
    newkey = np.r_[True, k[1:] != k[:-1]] if n else np.zeros(0, bool)
    run_start = newkey | np.r_[False, ~q[:-1]] if n else np.zeros(0, bool)
    starts = np.flatnonzero(run_start)
    first_of_run = starts[np.cumsum(run_start) - 1] if n else np.zeros(0, np.int64)
    answered = ~q & ~run_start
    lastkey = np.r_[k[1:] != k[:-1], True] if n else np.zeros(0, bool)
    unanswered_pos = first_of_run[lastkey & q]
    lat = ts[order[answered]] - ts[order[first_of_run[answered]]]

    rcodes: Counter[str] = Counter()
    rcode_frames: dict[str, list[int]] = {}
    resp_idx = np.flatnonzero(resp)
    codes, counts = np.unique(msgs.rcode[resp_idx], return_counts=True)
    for c, cnt in zip(codes.tolist(), counts.tolist(), strict=True):
        name = RCODE_NAMES.get(c, str(c))
        rcodes[name] = cnt
        rcode_frames[name] = [int(f) for f in cols.frame[r[resp_idx[msgs.rcode[resp_idx] == c]]][:max_items]]
    # group failures by the raw question bytes (group ids in order of first appearance); only the
    # reported groups get their name parsed
    blob = bytes(msgs.q_blob)
    fail = resp_idx[msgs.rcode[resp_idx] != 0]
    lo, hi = msgs.q_off[fail].tolist(), msgs.q_off[fail + 1].tolist()
    ids: dict[tuple[bytes, int], int] = {}
    gid = np.fromiter((ids.setdefault((blob[a:b], code), len(ids))
                       for a, b, code in zip(lo, hi, msgs.rcode[fail].tolist(), strict=True)), np.int64, fail.shape[0])
    sizes = np.bincount(gid, minlength=len(ids))
    # groups are numbered by first appearance, so (-size, id) is (-size, first message) order
    top = np.lexsort((np.arange(len(ids)), -sizes))[:max_items]
    failures: list[dict[str, Any]] = []
    for g in top.tolist():
        ms = fail[gid == g]
        code = int(msgs.rcode[ms[0]])
        qname, qtype = msgs.question(int(ms[0]))
        failures.append({"qname": qname, "rcode": RCODE_NAMES.get(code, str(code)), "count": int(sizes[g]),
                         "qtype": qtype, "frames": [int(f) for f in cols.frame[r[ms[:5]]]]})
    unanswered_names: Counter[str] = Counter()
    first_frames: dict[str, list[int]] = {}
    ms = order[unanswered_pos[:5000]]
    names = qnames(msgs, ms)
    for nm, frame in zip(names, cols.frame[r[ms]].tolist(), strict=True):
        unanswered_names[nm] += 1
        fl = first_frames.setdefault(nm, [])
        if len(fl) < 5:
            fl.append(frame)
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
        "latency_s": None if not lat.size else _latency(lat),
    }
