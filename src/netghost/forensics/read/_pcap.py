"""Capture reader: pcap (both byte orders, µs/ns), pcapng (multi-interface, EPB/SPB/OPB, if_tsresol) and gzip.

The reader yields :class:`RawBatch` objects: one bytes buffer per chunk plus numpy columns of record
offsets, lengths, timestamps and link types. Decoding is a separate, vectorised step (``forensics/decode/``),
the way dpkt's reader yields raw ``(ts, bytes)`` and decodes lazily, except that here a whole chunk
is handed over at once so no Python object is created per packet.

Why chunks: a capture larger than memory must be analysable in bounded memory. Each batch holds at
most ``chunk_bytes`` of raw data; only the decoded columns (tens of bytes per packet) outlive it.

The format is detected by magic number, never by extension (corpus ``ndpi_rtsp.pcap`` is pcapng).
Azure Network Watcher ``.cap`` files are libpcap/Ethernet, so they take the pcap path.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from netghost.errors import CaptureFormatError
from netghost.forensics.capture import MAX_RECORD, PAD, STREAM_ERRORS, CaptureInfo, RawBatch, read_bytes
from netghost.forensics.decode import walkdecode_module
from netghost.forensics.read._gunzip import GunzipStream
from netghost.forensics.read._pcapng import iter_pcapng

__all__ = ["LINKTYPE_NAMES", "CaptureInfo", "PcapWindow", "RawBatch", "iter_batches", "iter_windows"]

RELEASE_ALIGN = 2 * 1024 * 1024  # each window's mapping starts on a huge-page boundary (a multiple of PAGESIZE)
CHUNK_BYTES = 32 * 1024 * 1024  # mmap windows: views of the page cache, no memory of their own
# Read (not mapped) input — small pcaps, gzip, pcapng — lands in buffers the process owns, so their
# size counts against its memory: a few MiB keep it small at no measurable cost per chunk.
STREAM_CHUNK_BYTES = 4 * 1024 * 1024
MMAP_MIN = 64 * 1024 * 1024  # smaller files are simply read

LINKTYPE_NAMES: dict[int, str] = {
    0: "null",
    1: "ether",
    12: "rawip",
    14: "rawip",
    101: "rawip",
    108: "loop",
    113: "linux-sll",
    228: "rawip4",
    229: "rawip6",
    239: "nflog",
    276: "linux-sll2",
}

PCAP_MAGICS: dict[bytes, tuple[str, int]] = {
    b"\xd4\xc3\xb2\xa1": ("<", 1_000),  # little-endian, microseconds (ns factor)
    b"\xa1\xb2\xc3\xd4": (">", 1_000),
    b"\x4d\x3c\xb2\xa1": ("<", 1),  # little-endian, nanoseconds
    b"\xa1\xb2\x3c\x4d": (">", 1),
}
PCAPNG_SHB = b"\x0a\x0d\x0d\x0a"


def _open(path: Path, info: CaptureInfo) -> tuple[BinaryIO, BinaryIO]:
    """Return (raw file, stream to read): the same object, or a gunzip stream over the raw file."""
    try:
        raw = path.open("rb")
    except IsADirectoryError as exc:
        raise CaptureFormatError(f"{path}: is a directory, not a capture file", path=path) from exc
    except OSError as exc:
        raise CaptureFormatError(f"{path}: cannot open ({exc.strerror or exc})", path=path) from exc
    head = raw.read(2)
    raw.seek(0)
    if head == b"\x1f\x8b":
        info.compressed = True
        return raw, GunzipStream(raw)  # type: ignore[return-value]
    return raw, raw


@dataclass
class PcapWindow:
    """A run of pcap record bytes to walk: ``buf[:n]`` starts at a record header (file offset ``base``).

    The consumer walks the records (compiled: walk + decode in one pass; pure: :func:`walk_records`)
    and sets ``pos`` (end of the last whole record) and ``bad`` (an impossible caplen met there, or
    -1) before asking for the next window; the reader continues from ``pos``. ``buf`` extends at least
    ``PAD`` bytes past ``n`` (zeros, or the file's next bytes) so clipped reads stay in bounds.
    """

    buf: np.ndarray
    n: int
    big: bool
    ns_factor: int
    linktype: int
    base: int
    pos: int = 0
    bad: int = -1


def iter_windows(path: str | Path, info: CaptureInfo | None = None,
                 chunk_bytes: int | None = None) -> Iterator[PcapWindow | RawBatch]:
    """Yield the capture as pcap windows (records not yet walked) or, for pcapng, walked batches.

    Args:
        path: capture file (pcap, pcapng, optionally gzip-compressed).
        info: filled with file type, link types, warnings (truncation, corruption) as reading proceeds.
        chunk_bytes: raw bytes per window/batch (default: :data:`CHUNK_BYTES` for mmap windows,
            :data:`STREAM_CHUNK_BYTES` for read input); bounds memory for huge files.

    Raises:
        CaptureFormatError: the file is missing, unreadable, empty of any header, or not a capture.
    """
    p = Path(path)
    info = info if info is not None else CaptureInfo(path=str(p))
    if not p.exists():
        raise CaptureFormatError(f"{p}: no such file", path=p)
    raw, fh = _open(p, info)
    with raw, fh:
        head = read_bytes(fh, 24, info)
        if len(head) < 4:
            if info.compressed and info.truncated:
                raise CaptureFormatError(f"{p}: compressed stream is corrupt or cut before the capture header", path=p)
            raise CaptureFormatError(f"{p}: not a capture file (too short for a pcap/pcapng header)", path=p, offset=0)
        magic = head[:4]
        if magic in PCAP_MAGICS and not info.compressed and len(head) == 24 and p.stat().st_size > MMAP_MIN:
            yield from _iter_pcap_mmap(raw, head, info, chunk_bytes or CHUNK_BYTES)
        elif magic in PCAP_MAGICS:
            yield from _iter_pcap(fh, head, info, chunk_bytes or STREAM_CHUNK_BYTES)
        elif magic == PCAPNG_SHB:
            yield from iter_pcapng(fh, head, info, chunk_bytes or STREAM_CHUNK_BYTES)
        else:
            raise CaptureFormatError(
                f"{p}: not a pcap/pcapng capture (unrecognised magic); one in another format (not a pcap or pcapng) "
                "converts with editcap -F pcap",
                path=p, offset=0,
            )


def iter_batches(path: str | Path, info: CaptureInfo | None = None, chunk_bytes: int | None = None) -> Iterator[RawBatch]:
    """Yield the capture's records in batches of at most ``chunk_bytes`` raw bytes.

    Args:
        path: capture file (pcap, pcapng, optionally gzip-compressed).
        info: filled with file type, link types, warnings (truncation, corruption) as reading proceeds.
        chunk_bytes: raw bytes per batch (default as :func:`iter_windows`); bounds memory for huge files.

    Raises:
        CaptureFormatError: the file is missing, unreadable, empty of any header, or not a capture.
    """
    walk_out: np.ndarray | None = None
    for item in iter_windows(path, info, chunk_bytes):
        if isinstance(item, RawBatch):
            yield item
            continue
        if walk_out is None or walk_out.shape[1] < item.n // 16 + 1:
            walk_out = np.empty((5, item.n // 16 + 1), np.int64)
        rec, item.pos, item.bad = walk_records(item.buf, item.n, item.big, walk_out)
        if rec.shape[1]:
            yield _pcap_batch(item.buf, rec, item.ns_factor, item.linktype)


def _u32(buf: np.ndarray, pos: np.ndarray, big: bool) -> np.ndarray:
    b = [buf[pos + k].astype(np.uint32) for k in range(4)]
    out: np.ndarray = (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3] if big else (b[3] << 24) | (b[2] << 16) | (b[1] << 8) | b[0]
    return out


def walk_records(buf: np.ndarray, n: int, big: bool, out: np.ndarray | None = None) -> tuple[np.ndarray, int, int]:
    """Return (record headers, end position, first bad caplen or -1) for ``buf[:n]``.

    The record headers are an int64 array of shape (5, records): header offset, seconds, fraction,
    caplen, wire length. Each record's length decides where the next one starts, so the walk cannot
    be vectorised: the compiled kernel runs it when built, otherwise a tight struct loop over a
    memoryview (the one per-record Python loop the pure path keeps). ``out`` (shape
    ``(5, >= n//16+1)``) may be passed to reuse one scratch array across windows; the result aliases it.
    """
    mod = walkdecode_module()
    if mod is not None:
        if out is None or out.shape[1] < n // 16 + 1:
            out = np.empty((5, n // 16 + 1), np.int64)
        k, pos, bad = mod.walk_pcap(buf, n, big, MAX_RECORD, out)
        return out[:, :k], pos, bad
    offs: array[int] = array("q")
    app = offs.append
    unpack = struct.Struct((">" if big else "<") + "I").unpack_from
    mv = buf.data
    pos = 0
    bad = -1
    while pos + 16 <= n:
        incl = unpack(mv, pos + 8)[0]
        if incl > MAX_RECORD:
            bad = incl
            break
        end = pos + 16 + incl
        if end > n:
            break
        app(pos)
        pos = end
    hdr = np.frombuffer(offs, dtype=np.int64) if offs else np.zeros(0, np.int64)
    rec = np.stack([hdr, *(_u32(buf, hdr + 4 * f, big).astype(np.int64) for f in range(4))]) if hdr.size else np.zeros((5, 0), np.int64)
    return rec, pos, bad


def _fill(fh: BinaryIO, mv: memoryview, info: CaptureInfo) -> int:
    """readinto until ``mv`` is full or the stream ends; a corrupt gzip stream ends it with a warning."""
    got = 0
    while got < len(mv):
        try:
            k = fh.readinto(mv[got:])  # type: ignore[attr-defined]
        except STREAM_ERRORS as exc:
            info.truncated = True
            info.warnings.append(f"compressed stream ends early or is corrupt ({exc}); analysed up to the cut")
            break
        if not k:
            break
        got += k
    info.bytes_read += got
    return got


def _pcap_header(head: bytes, info: CaptureInfo) -> tuple[str, int, int]:
    """Read the 24-byte pcap global header into ``info``, for both the stream and the mmap paths.

    Returns the struct byte-order prefix, the timestamp fraction's ns factor and the link type.
    """
    fmt, ns_factor = PCAP_MAGICS[head[:4]]
    info.file_type = "pcap" if ns_factor == 1_000 else "pcap-ns"
    _maj, _min, _zone, _sig, snaplen, network = struct.unpack(fmt + "HHiIII", head[4:24])
    linktype = network & 0x0FFFFFFF
    info.snaplen = snaplen
    info.link_types = [linktype]
    return fmt, ns_factor, linktype


def _stop_corrupt(info: CaptureInfo, at: int, caplen: int) -> None:
    """Both pcap paths stop at an impossible record length with the same warning."""
    info.truncated = True
    info.warnings.append(f"corrupt record at byte {at}: caplen {caplen} exceeds {MAX_RECORD}; analysed up to there")


def _stop_cut(info: CaptureInfo, at: int, tail_bytes: int) -> None:
    """Both pcap paths report a last record cut short by the end of the file with the same warning."""
    info.truncated = True
    info.warnings.append(
        f"capture cut short: last record at byte {at} is incomplete ({tail_bytes} bytes); analysed up to the cut"
    )


def _iter_pcap(fh: BinaryIO, head: bytes, info: CaptureInfo, chunk_bytes: int) -> Iterator[PcapWindow]:
    if len(head) < 24:
        raise CaptureFormatError(f"{info.path}: pcap global header cut short ({len(head)} of 24 bytes)", path=info.path,
                                 offset=len(head))
    fmt, ns_factor, linktype = _pcap_header(head, info)
    carry = np.zeros(0, np.uint8)
    consumed = 24
    while True:
        # a fresh buffer per chunk (np.empty does not touch the pages): batches stay valid for callers
        buf = np.empty(carry.shape[0] + chunk_bytes + PAD, np.uint8)
        buf[: carry.shape[0]] = carry
        got = _fill(fh, buf.data[carry.shape[0] : carry.shape[0] + chunk_bytes], info)
        n = carry.shape[0] + got
        buf[n : n + PAD] = 0
        if n == 0:
            return
        win = PcapWindow(buf, n, fmt == ">", ns_factor, linktype, consumed)
        yield win
        pos, bad = win.pos, win.bad
        if bad >= 0:
            _stop_corrupt(info, consumed + pos, bad)
            return
        consumed += pos
        carry = buf[pos:n].copy()
        if got == 0 or (got < chunk_bytes and info.truncated):
            if carry.shape[0]:
                _stop_cut(info, consumed, carry.shape[0])
            return


def _iter_pcap_mmap(raw: BinaryIO, head: bytes, info: CaptureInfo, chunk_bytes: int) -> Iterator[PcapWindow]:
    """Large uncompressed pcap: windows of the file, each its own read-only mapping (no copy out of the
    page cache).

    Why a mapping per window, not one of the whole file: the pages of a mapping count in the process's
    resident set (what a Dask worker's memory monitor and the OOM killer see) and its length in the
    address space (``RLIMIT_AS``). A window's mapping is dropped with the last view of it (the
    consumer's, at the latest when it asks for the window after next), so at most two windows are
    mapped whatever the file's size: a 10 GB capture is analysed under a 1 GB limit.
    """
    fmt, ns_factor, linktype = _pcap_header(head, info)
    chunk_bytes = max(chunk_bytes, MAX_RECORD + 16)  # a window always holds at least one whole record
    fd = raw.fileno()
    size = os.fstat(fd).st_size
    start = 24
    while start < size:
        end = min(start + chunk_bytes, size)
        if end + PAD > size and size - PAD - start > MAX_RECORD + 16:
            end = size - PAD  # walk all but the file's last bytes as a view; only that small rest is copied
        if end + PAD <= size:
            # a view: PAD real bytes past the window keep gathers in bounds. The mapping starts on a
            # huge-page boundary (a multiple of the allocation granularity) at or before the window.
            base = start // RELEASE_ALIGN * RELEASE_ALIGN
            mm = mmap.mmap(fd, end + PAD - base, offset=base, access=mmap.ACCESS_READ)
            _advise_huge(mm)
            buf = np.frombuffer(mm, dtype=np.uint8)[start - base:]  # the array holds the mapping
            del mm
        else:
            # the file's tail: copy it with PAD zero bytes, as the stream path does. A bare view would
            # let the decoder's clipped gathers (at most len - 9) misread a header in the last bytes.
            raw.seek(start)
            buf = np.zeros(size - start + PAD, np.uint8)
            raw.readinto(buf.data[: size - start])  # type: ignore[attr-defined]
            buf.flags.writeable = False
        info.bytes_read = end
        win = PcapWindow(buf, end - start, fmt == ">", ns_factor, linktype, start)
        del buf
        yield win
        pos, bad = win.pos, win.bad
        del win  # this window's mapping goes with the consumer's last view of it
        info.bytes_read = start + pos
        if bad >= 0:
            _stop_corrupt(info, start + pos, bad)
            return
        if pos == 0 and end == size:
            _stop_cut(info, start, size - start)
            return
        start += pos


def _advise_huge(mm: mmap.mmap) -> None:
    """Ask for huge pages on the capture's mapping (``MADV_HUGEPAGE``), where the kernel offers it.

    Why: mapping a capture cached in 4 KiB pages costs the kernel one fault per 64 KiB and one
    page-table entry per 4 KiB (measured on the 1.5 GB bench capture: ~22k faults, 0.1-0.2 CPU s with
    the unmapping); cached in 2 MiB folios it maps with one entry per folio (~700 faults). Kernels and
    file systems with large page-cache folios (here Linux 6.18, ext4) build those on a sequential read
    from disk anyway; the hint asks for them from the first fault on. Advisory: it changes no byte
    read, and kernels without file-backed huge pages ignore it or refuse it (ignored here).
    """
    if hasattr(mmap, "MADV_HUGEPAGE"):
        with contextlib.suppress(OSError):
            mm.madvise(mmap.MADV_HUGEPAGE)


def _pcap_batch(buf: np.ndarray, rec: np.ndarray, ns_factor: int, linktype: int) -> RawBatch:
    ts = rec[1].astype(np.float64) + rec[2].astype(np.float64) * (ns_factor * 1e-9)
    lt = np.full(rec.shape[1], linktype, dtype=np.int32)
    return RawBatch(buf, rec[0] + 16, rec[3].copy(), rec[4].copy(), ts, lt)


def read_all(path: str | Path) -> tuple[list[RawBatch], CaptureInfo]:
    """Read a whole (small) capture into memory; convenience for tests and tools."""
    info = CaptureInfo(path=str(path))
    return list(iter_batches(path, info)), info

