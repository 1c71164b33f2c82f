"""pcapng reader: sections, several interfaces (IDB ``if_tsresol``/``if_tsoffset``), EPB, SPB, obsolete PB.

The block walk is Python for everything but runs of packet blocks, which the compiled walker
(``_walkdecode.walk_pcapng_packets``) takes when built; packets leave as numpy batches either way.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from netghost.forensics.capture import MAX_RECORD, CaptureInfo, RawBatch, pad_bytes, read_bytes
from netghost.forensics.decode import walkdecode_module

__all__ = ["iter_pcapng"]


@dataclass
class _Iface:
    linktype: int
    tsdiv: float = 1e-6  # seconds per timestamp unit
    tsoffset: int = 0


def _parse_idb(body: bytes, fmt: str) -> _Iface:
    if len(body) < 8:
        raise ValueError("interface description block too short")
    linktype, _res, _snap = struct.unpack(fmt + "HHI", body[:8])
    iface = _Iface(linktype)
    pos = 8
    while pos + 4 <= len(body):
        code, length = struct.unpack(fmt + "HH", body[pos : pos + 4])
        val = body[pos + 4 : pos + 4 + length]
        if code == 0:
            break
        if code == 9 and length >= 1:  # if_tsresol
            r = val[0]
            iface.tsdiv = 2.0 ** -(r & 0x7F) if r & 0x80 else 10.0 ** -r
        elif code == 14 and length == 8:  # if_tsoffset
            iface.tsoffset = struct.unpack(fmt + "q", val)[0]
        pos += 4 + ((length + 3) & ~3)
    return iface


class _Packets:
    """Packet facts of one chunk: numpy arrays the compiled walker fills, or lists on the pure path."""

    def __init__(self, n: int, arrays: bool) -> None:
        self.k = 0
        self.arrays = arrays
        size = n // 12 + 1 if arrays else 0  # a block is at least 12 bytes
        self.offs = np.empty(size, np.int64)
        self.caps = np.empty(size, np.int64)
        self.wires = np.empty(size, np.int64)
        self.tss = np.empty(size, np.float64)
        self.lts = np.empty(size, np.int32)
        self.lists: tuple[list[int], list[int], list[int], list[float], list[int]] = ([], [], [], [], [])

    def last_ts(self) -> float:
        if self.arrays:
            return float(self.tss[self.k - 1]) if self.k else 0.0
        return self.lists[3][-1] if self.lists[3] else 0.0

    def add(self, off: int, cap: int, wire: int, ts: float, lt: int) -> None:
        if self.arrays:
            k = self.k
            self.offs[k], self.caps[k], self.wires[k], self.tss[k], self.lts[k] = off, cap, wire, ts, lt
        else:
            for col, v in zip(self.lists, (off, cap, wire, ts, lt), strict=True):
                col.append(v)  # type: ignore[attr-defined]
        self.k += 1

    def batch(self, data: bytes) -> RawBatch:
        k = self.k
        if self.arrays:
            return RawBatch(pad_bytes(data), self.offs[:k], self.caps[:k], self.wires[:k], self.tss[:k], self.lts[:k])
        o, c, w, t, lt = self.lists
        return RawBatch(pad_bytes(data), np.asarray(o, dtype=np.int64), np.asarray(c, dtype=np.int64),
                        np.asarray(w, dtype=np.int64), np.asarray(t, dtype=np.float64), np.asarray(lt, dtype=np.int32))


def _iface_arrays(ifaces: list[_Iface]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.array([i.linktype for i in ifaces], np.int32), np.array([i.tsdiv for i in ifaces], np.float64),
            np.array([i.tsoffset for i in ifaces], np.int64))


def iter_pcapng(fh: BinaryIO, head: bytes, info: CaptureInfo, chunk_bytes: int) -> Iterator[RawBatch]:
    """Walk pcapng blocks.

    Runs of packet blocks go through the compiled walker when it is built (``_walkdecode``); it stops
    at every other or malformed block, which the Python walk (:class:`_BlockWalk`) handles (interfaces,
    sections, the warnings), so both paths give the same batches and messages.
    """
    info.file_type = "pcapng"
    walk = _BlockWalk(info, walkdecode_module())
    data = head + read_bytes(fh, chunk_bytes, info)
    pos = 0
    while True:
        out = _Packets(len(data), walk.mod is not None)
        pos, corrupt = walk.blocks(data, pos, out)
        if out.k:
            yield out.batch(data)
        if corrupt:
            return
        more = read_bytes(fh, chunk_bytes, info)
        walk.consumed += pos
        data = data[pos:] + more
        pos = 0
        if not more:
            if data:
                info.truncated = True
                info.warnings.append(
                    f"capture cut short: last block at byte {walk.consumed} is incomplete; analysed up to the cut"
                )
            return


class _BlockWalk:
    """The block walk's state across chunks: the current section's byte order and interfaces.

    Why a class: the walk resumes chunk after chunk (a block may straddle two reads), and the section
    (byte order, interface table) outlives each chunk.
    """

    def __init__(self, info: CaptureInfo, mod: Any) -> None:
        self.info = info
        self.mod = mod
        self.fmt = "<"
        self.ifaces: list[_Iface] = []
        self.if_arrays = _iface_arrays(self.ifaces)
        self.consumed = 0  # file bytes before the current chunk (for the byte offsets in warnings)
        self.skipped: dict[tuple[int, str], list[int]] = {}  # kind → [warning index, first offset, count]

    def blocks(self, data: bytes, pos: int, out: _Packets) -> tuple[int, bool]:
        """Walk the whole blocks of ``data`` from ``pos``, adding packets to ``out``.

        Returns:
            (offset of the first block not walked (incomplete in this chunk), True when a corrupt
            section header or block length ends the capture there).
        """
        n = len(data)
        mod, info, fmt = self.mod, self.info, self.fmt
        while pos + 12 <= n:
            if mod is not None:
                pos, out.k = mod.walk_pcapng_packets(data, pos, n, fmt == ">", *self.if_arrays, out.offs, out.caps,
                                                     out.wires, out.tss, out.lts, out.k, MAX_RECORD + 4096)
                if pos + 12 > n:
                    break
            btype = struct.unpack_from(fmt + "I", data, pos)[0]
            if btype == 0x0A0D0D0A:
                if not self._new_section(data[pos + 8 : pos + 12], pos):
                    return pos, True
                fmt = self.fmt
            blen = struct.unpack_from(fmt + "I", data, pos + 4)[0]
            if blen < 12 or blen % 4 or blen > MAX_RECORD + 4096:
                info.truncated = True
                info.warnings.append(f"corrupt block at byte {self.consumed + pos} (length {blen}); analysed up to there")
                return pos, True
            if pos + blen > n:
                break
            try:
                self._block(btype, data[pos + 8 : pos + blen - 4], pos, out)
            except (struct.error, IndexError, ValueError) as exc:
                self._skipped(btype, self.consumed + pos, str(exc))
            pos += blen
        return pos, False

    def _skipped(self, btype: int, at: int, reason: str) -> None:
        """Warn about a skipped block once per kind (block type and reason), counting the repeats.

        Why: a file whose packet blocks all name an undefined interface would otherwise print one
        line per block (20,000 lines for 20,000 blocks); the first one's offset is kept.
        """
        kind = (btype, reason)
        seen = self.skipped.get(kind)
        if seen is None:
            self.skipped[kind] = [len(self.info.warnings), at, 1]
            self.info.warnings.append(f"skipped malformed pcapng block type {btype} at byte {at}: {reason}")
            return
        seen[2] += 1
        self.info.warnings[seen[0]] = (f"skipped {seen[2]:,} malformed pcapng blocks of type {btype} ({reason}), "
                                       f"the first at byte {seen[1]}")

    def _new_section(self, bom: bytes, pos: int) -> bool:
        """A section header: take its byte order and start an empty interface table (False: corrupt)."""
        if bom == b"\x4d\x3c\x2b\x1a":
            self.fmt = "<"
        elif bom == b"\x1a\x2b\x3c\x4d":
            self.fmt = ">"
        else:
            self.info.truncated = True
            self.info.warnings.append(f"corrupt section header at byte {self.consumed + pos}; analysed up to there")
            return False
        self.ifaces = []
        self.if_arrays = _iface_arrays(self.ifaces)
        return True

    def _block(self, btype: int, body: bytes, pos: int, out: _Packets) -> None:
        """One whole block at ``pos`` (``body`` without its type, length and trailing length).

        Raises:
            struct.error, IndexError, ValueError: the block is malformed (the caller warns and skips it).
        """
        fmt = self.fmt
        if btype in (6, 2):  # EPB / obsolete PB
            if btype == 6:
                iid, hi, lo, cap, wire = struct.unpack_from(fmt + "IIIII", body, 0)
            else:
                iid, _drops, hi, lo, cap, wire = struct.unpack_from(fmt + "HHIIII", body, 0)
            if iid >= len(self.ifaces):
                raise ValueError(f"it names interface {iid}, which no interface block defined")
            iface = self.ifaces[iid]
            if 20 + cap > len(body):
                raise ValueError("packet data overruns its block")
            out.add(pos + 8 + 20, cap, wire, ((hi << 32) | lo) * iface.tsdiv + iface.tsoffset, iface.linktype)
        elif btype == 1:
            self.ifaces.append(_parse_idb(body, fmt))
            self.if_arrays = _iface_arrays(self.ifaces)
            if self.ifaces[-1].linktype not in self.info.link_types:
                self.info.link_types.append(self.ifaces[-1].linktype)
        elif btype == 3:  # SPB: no timestamp, interface 0
            wire = struct.unpack_from(fmt + "I", body, 0)[0]
            cap = min(wire, len(body) - 4)
            out.add(pos + 8 + 4, cap, wire, out.last_ts(), self.ifaces[0].linktype)
