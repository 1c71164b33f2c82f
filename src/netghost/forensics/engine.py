"""The analysis pipeline: read → walk + decode (per window) → TCP analysis → streams → DNS/ICMP summaries.

Compiled path (``_walkdecode`` built, see ``accel``): the reader hands over pcap windows of the file
(mmap views for big files) and one Cython pass walks the records and decodes each straight into the
preallocated final columns (:class:`~netghost.forensics.decode._columns.ColumnStore`); pcapng packet
blocks are walked by a compiled loop too and decoded the same way. Pure path: the reader's record
batches, the numpy decoder, and a copy into the same store. Both give identical columns.

:func:`analyze_capture` returns an :class:`Analysis` that keeps the decoded columns (``cols``), so a
later consumer (compare mode, charts) can reuse them without decoding the capture again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from netghost.forensics import spill
from netghost.forensics.capture import MAX_RECORD, CaptureInfo, RawBatch
from netghost.forensics.decode import (
    COLUMN_DTYPES,
    ISSUES,
    OPTIONAL_COLUMNS,
    ColumnStore,
    Packets,
    decode_batch,
    packets_spec,
    port_marks,
    walkdecode_module,
)
from netghost.forensics.dns import DNS_PORTS, DnsMessages, analyze_dns, parse_dns
from netghost.forensics.icmp import analyze_icmp
from netghost.forensics.read import LINKTYPE_NAMES, PcapWindow, iter_batches, iter_windows
from netghost.forensics.tcp import FLAG_BITS, FLAG_NAMES, TcpStreams, analyze_tcp, compiled_tcp

__all__ = ["ALL_COLUMNS", "Analysis", "analyze_capture"]

ProgressFn = Callable[[int, int], None]


@dataclass
class Analysis:
    """Everything the reports need, as columns plus small summaries.

    Attributes:
        info: reader facts (file type, link types, truncation warnings).
        cols: decoded per-packet columns (:class:`~netghost.forensics.decode.Packets`).
        tcp_rows: row indices (into ``cols``) of the TCP segments that were analysed.
        tcp_flags: tshark analysis-flag bitmask per ``tcp_rows`` entry (bits: ``tcp.FLAG_BITS``).
        tcp_stream: tshark-style ``tcp.stream`` per ``tcp_rows`` entry.
        streams: per-stream table.
        dns: DNS summary dict; dns_msgs the parsed messages.
        icmp: ICMP/ICMPv6 summary dict.
    """

    info: CaptureInfo
    cols: Packets
    tcp_rows: np.ndarray
    tcp_flags: np.ndarray
    tcp_stream: np.ndarray
    streams: TcpStreams
    dns_msgs: DnsMessages
    dns: dict[str, Any]
    icmp: dict[str, Any]
    decode_issues: dict[str, int] = field(default_factory=dict)
    decode_issue_frames: dict[str, list[int]] = field(default_factory=dict)
    tcp_order: np.ndarray | None = None  # permutation of tcp_rows entries, each stream contiguous, capture order inside
    tcp_ack_rtt: np.ndarray | None = None  # tshark tcp.analysis.ack_rtt (s) per tcp_rows entry, NaN where absent
    # offset of each stream's block in tcp_order (block length pkts_c2s + pkts_s2c); None when unknown
    tcp_stream_start: np.ndarray | None = None

    @property
    def packets(self) -> int:
        """Number of captured frames (tshark's ``packet_count``)."""
        return len(self.cols)

    def flag_counts(self) -> dict[str, int]:
        """Frames per tcp.analysis flag, counted like tshark's display filters."""
        return {name: int(np.count_nonzero(self.tcp_flags & FLAG_BITS[name])) for name in FLAG_NAMES}

    def flag_frames(self, name: str, limit: int | None = None) -> list[int]:
        """Frame numbers carrying one analysis flag (ascending)."""
        m = (self.tcp_flags & FLAG_BITS[name]) != 0
        fr = self.cols.frame[self.tcp_rows[m]]
        return [int(x) for x in (fr if limit is None else fr[:limit])]

    def link_types(self) -> dict[str, int]:
        """Frames per link-layer type name."""
        names, counts = np.unique(self.cols.linktype, return_counts=True)
        return {LINKTYPE_NAMES.get(int(k), f"linktype{int(k)}"): int(c) for k, c in zip(names, counts, strict=True)}

    def rst_frames(self) -> np.ndarray:
        """Frame numbers of TCP segments with RST set."""
        fl = self.cols.tcp_flags[self.tcp_rows]
        out: np.ndarray = self.cols.frame[self.tcp_rows[(fl & 0x04) != 0]]
        return out

    def syn_without_synack(self) -> np.ndarray:
        """Stream ids with at least one pure SYN and no SYN-ACK."""
        return np.flatnonzero((self.streams.syn > 0) & (self.streams.synack == 0))


def analyze_capture(path: str | Path, progress: ProgressFn | None = None,
                    chunk_bytes: int | None = None, columns: Iterable[str] | None = None) -> Analysis:
    """Analyse one capture file end to end.

    Args:
        path: pcap/pcapng file, optionally gzip-compressed.
        progress: called with (bytes read, total file bytes) after each chunk.
        chunk_bytes: raw bytes per chunk (memory bound); default from the reader.
        columns: optional packet columns to decode as well (of ``decode_absent.OPTIONAL_COLUMNS``, which
            no analysis reads; or :data:`ALL_COLUMNS`); the others of that set are left out (their
            ``Packets`` attribute is an ``AbsentColumn`` that raises when used). Others are always decoded.

    Raises:
        CaptureFormatError: the file is missing or not a readable capture.
    """
    absent = OPTIONAL_COLUMNS - frozenset(columns or ())
    with small_pages():
        return _analyze(path, progress, chunk_bytes, absent)


ALL_COLUMNS: tuple[str, ...] = tuple(COLUMN_DTYPES)  # every Packets column (optional ones included)


@contextmanager
def small_pages() -> Iterator[None]:
    """Turn off numpy's ``madvise(MADV_HUGEPAGE)`` on large arrays for the duration of an analysis.

    Why: the engine allocates many large, short-lived or partly-filled arrays (over-estimated column
    capacities, per-window scratch). With transparent huge pages each first touch zeroes 2 MiB; on
    the benchmark capture that cost ~1.5 CPU seconds of page faults (of ~5), and ~0 with 4 KiB pages.
    The previous setting is restored afterwards (it is process-wide).
    """
    setter = getattr(getattr(getattr(np, "_core", None), "multiarray", None), "_set_madvise_hugepage", None)
    if setter is None:
        yield
        return
    previous = setter(False)
    try:
        yield
    finally:
        setter(previous)


SEGMENT_ROWS = 1 << 16  # records per kernel call: bounds the per-call scratch, whatever the window size


class _Scratch:
    """Per-segment payload offsets / captured ends / DNS candidate rows, reused across calls.

    Fixed size (:data:`SEGMENT_ROWS`): sized from a window's bytes instead, it would reserve one entry
    per 16 bytes, tens of MB of address space that counts against a process's data limit.
    """

    def __init__(self) -> None:
        self.payoff = np.empty(SEGMENT_ROWS, np.int64)
        self.capend = np.empty(SEGMENT_ROWS, np.int64)
        self.cand = np.empty(SEGMENT_ROWS, np.int64)
        self.walk = np.empty((5, SEGMENT_ROWS), np.int64)
        self.ports = port_marks(DNS_PORTS)


def walk_decode(mod: Any, w: PcapWindow, store: ColumnStore, scr: _Scratch, msgs: DnsMessages) -> int:
    """Compiled fused pass over one pcap window: walk + decode into the store's next rows, DNS parsed.

    Sets ``w.pos``/``w.bad`` for the reader; returns the number of rows added.
    """
    if store.cap == 0 and store.total > w.n:
        # size the store once from the first records' density (a header-only walk, well under 1 ms)
        # instead of growing it (a copy, and page faults on the abandoned first allocation)
        k0, pos0, _bad = mod.walk_pcap(w.buf, w.n, w.big, MAX_RECORD, scr.walk)
        if k0:
            store.reserve(min(int(store.total / pos0 * k0 * 1.05) + 1024, store.total // 16 + 1))
    pos = done = 0
    scale = w.ns_factor * 1e-9
    release = spill.releaser()  # (a window of small records decodes to more column bytes than its own size)
    while True:
        if release is not None and done:
            release()  # the rows the last call wrote to spilled columns leave the resident set
        store.reserve(store.rows + 1, w.base + pos)
        row0 = store.rows
        # rows this call will most likely write: the rest of the window at the density seen so far
        dens = store.rows / (w.base + pos) if store.rows and w.base + pos > 0 else 1 / 64
        store.prefault(mod, min(SEGMENT_ROWS, int((w.n - pos) * dens * 1.02) + 64))
        k, pos, bad, full, nc = mod.walk_decode_pcap(
            w.buf, w.n, pos, w.big, scale, w.linktype, MAX_RECORD, store.raw, row0, store.cap - row0,
            row0 + 1, scr.payoff, scr.capend, 0, scr.ports, scr.cand, 0)
        store.rows += k
        done += k
        if nc:
            msgs.extend(dns_of_segment(w.buf, store, row0, k, scr, nc), row0)
        if not full:
            break
    w.pos, w.bad = pos, bad
    return int(done)


def decode_into(mod: Any, b: RawBatch, store: ColumnStore, scr: _Scratch, consumed: int, msgs: DnsMessages) -> int:  # noqa: PLR0917  pipeline state
    """Compiled decode of a walked batch (pcapng) into the store's next rows, DNS parsed; rows added."""
    n = len(b)
    store.reserve(store.rows + n, consumed)
    for i in range(0, n, SEGMENT_ROWS):
        j = min(i + SEGMENT_ROWS, n)
        row0 = store.rows
        nc = mod.decode_into(b.buf, b.off[i:j], b.caplen[i:j], b.wirelen[i:j], b.ts[i:j], b.linktype[i:j],
                             store.raw, row0, row0 + 1, scr.payoff, scr.capend, scr.ports, scr.cand)
        store.rows += j - i
        if nc:
            msgs.extend(dns_of_segment(b.buf, store, row0, j - i, scr, nc), row0)
    return n


def dns_of_segment(buf: np.ndarray, store: ColumnStore, row0: int, k: int, scr: _Scratch, nc: int) -> DnsMessages:  # noqa: PLR0917  segment facts
    """``parse_dns`` over one kernel call's rows, examining only the DNS-port candidates it flagged.

    Why: a DNS message needs a DNS port, so the candidates contain every DNS row and ``parse_dns``
    skips the others (same messages as a full scan; rows relative to ``row0``).
    """
    return parse_dns(buf, store.view(row0, k), scr.payoff[:k], scr.capend[:k], rows=scr.cand[:nc])


def _read(path: str | Path, info: CaptureInfo, progress: ProgressFn | None, kw: dict[str, int],
          absent: frozenset[str] = frozenset()) -> tuple[Packets, DnsMessages]:
    """Read + walk + decode every record into one column store; DNS messages parsed per window."""
    total = Path(path).stat().st_size if Path(path).exists() else 0
    store = ColumnStore(total, packets_spec(), absent)
    msgs = DnsMessages()
    mod = walkdecode_module()
    if mod is None:  # pure path: reader batches, numpy decode, copy into the store
        for batch in iter_batches(path, info, **kw):
            row0 = store.rows
            cols, payoff, capend = decode_batch(batch, row0 + 1, compiled=False)
            msgs.extend(parse_dns(batch.buf, cols, payoff, capend), row0)
            store.append(cols, info.bytes_read)
            if progress is not None:
                progress(info.bytes_read, total)
        return store.finish(), msgs
    scr = _Scratch()
    for item in iter_windows(path, info, **kw):
        if isinstance(item, PcapWindow):
            walk_decode(mod, item, store, scr, msgs)
        else:
            decode_into(mod, item, store, scr, info.bytes_read, msgs)
        spill.release()  # the rows just written, if spilled, leave the resident set
        if progress is not None:
            progress(info.bytes_read, total)
    return store.finish(), msgs


def _analyze(path: str | Path, progress: ProgressFn | None, chunk_bytes: int | None,
             absent: frozenset[str]) -> Analysis:
    info = CaptureInfo(path=str(path))
    kw = {} if chunk_bytes is None else {"chunk_bytes": chunk_bytes}
    cols, msgs = _read(path, info, progress, kw, absent)

    tcp_rows = tcp_segment_rows(cols)
    ta = analyze_tcp(cols, tcp_rows)
    spill.release()  # (each stage below walks spilled columns too: their pages leave RSS after it)

    issues: Counter[str] = Counter()
    issue_frames: dict[str, list[int]] = {}
    bad = np.flatnonzero(cols.issue != 0)
    if bad.size:
        codes, counts = np.unique(cols.issue[bad], return_counts=True)
        for c, k in zip(codes.tolist(), counts.tolist(), strict=True):
            name = ISSUES[c]
            issues[name] = k
            issue_frames[name] = [int(x) for x in cols.frame[bad[cols.issue[bad] == c][:10]]]
    dns = analyze_dns(msgs, cols)
    spill.release()
    icmp = analyze_icmp(cols)
    spill.release()
    return Analysis(
        info=info, cols=cols, tcp_rows=tcp_rows, tcp_flags=ta.flags, tcp_stream=ta.stream, streams=ta.streams,
        dns_msgs=msgs, dns=dns, icmp=icmp,
        decode_issues=dict(issues), decode_issue_frames=issue_frames, tcp_order=ta.order, tcp_ack_rtt=ta.ack_rtt,
        tcp_stream_start=stream_starts(ta.streams) if compiled_tcp() is not None else None,
    )


TCP_ROWS_CHUNK = 1 << 18  # rows per pass of tcp_segment_rows (bounds its temporaries to ~1 MB)


def tcp_segment_rows(cols: Packets) -> np.ndarray:
    """Ascending rows of the decoded TCP segments (``proto == 6`` with a parsed header).

    Why chunked into a budgeted array: the result holds 8 bytes per segment, so it comes from
    :func:`~netghost.forensics.spill.alloc` (file-backed past ``NETGHOST_PCAP_MEMORY``) and the
    masks are built a chunk at a time instead of as three full-length temporaries. The array is
    sized for every row (pages past the segments found are never touched) and returned trimmed.
    When columns are spilled, each chunk's pages are released before the next one is walked.
    """
    n = len(cols)
    out = spill.alloc(n, np.int64)
    proto, flags = cols.proto, cols.tcp_flags
    m = np.empty(min(n, TCP_ROWS_CHUNK), np.bool_)
    t = np.empty_like(m)
    k = 0
    release = spill.releaser()
    for a in range(0, n, TCP_ROWS_CHUNK):
        if release is not None and a:
            release()  # the chunk just walked (spilled columns and output) leaves the resident set
        b = min(a + TCP_ROWS_CHUNK, n)
        mm, tt = m[: b - a], t[: b - a]
        np.equal(proto[a:b], 6, out=mm)
        np.greater_equal(flags[a:b], 0, out=tt)
        mm &= tt
        idx = np.flatnonzero(mm)
        out[k : k + idx.shape[0]] = idx
        out[k : k + idx.shape[0]] += a
        k += idx.shape[0]
    return out[:k]


def stream_starts(streams: TcpStreams) -> np.ndarray:
    """Offset of each stream's block in the compiled ``tcp_order`` (blocks in stream-id order).

    Block length = ``pkts_c2s + pkts_s2c``; the report side uses it instead of gathering the stream
    id of every segment through the permutation.
    """
    size = streams.pkts_c2s.astype(np.int64) + streams.pkts_s2c
    out = np.zeros(size.shape[0], np.int64)
    if size.shape[0] > 1:
        np.cumsum(size[:-1], out=out[1:])
    return out
