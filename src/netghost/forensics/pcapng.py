"""pcapng reader: sections, several interfaces (IDB ``if_tsresol``/``if_tsoffset``), EPB, SPB, obsolete PB.

A per-block Python walk: pcapng files in the field are small or rare (Network Watcher writes
libpcap), so clarity wins over speed here; packets still leave as numpy batches.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from netghost.forensics.capture import MAX_RECORD, CaptureInfo, RawBatch, pad_bytes, read_bytes

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


def iter_pcapng(fh: BinaryIO, head: bytes, info: CaptureInfo, chunk_bytes: int) -> Iterator[RawBatch]:
    """Walk pcapng blocks. Per-block Python work; pcapng files in the field are small or rare."""
    info.file_type = "pcapng"
    data = head + read_bytes(fh, chunk_bytes, info)
    fmt = "<"
    ifaces: list[_Iface] = []
    pos = 0
    consumed = 0
    eof = False
    while True:
        offs: list[int] = []
        caps: list[int] = []
        wires: list[int] = []
        tss: list[float] = []
        lts: list[int] = []
        n = len(data)
        while pos + 12 <= n:
            btype = struct.unpack_from(fmt + "I", data, pos)[0]
            if btype == 0x0A0D0D0A:
                bom = data[pos + 8 : pos + 12]
                if bom == b"\x4d\x3c\x2b\x1a":
                    fmt = "<"
                elif bom == b"\x1a\x2b\x3c\x4d":
                    fmt = ">"
                else:
                    info.truncated = True
                    info.warnings.append(f"corrupt section header at byte {consumed + pos}; analysed up to there")
                    eof = True
                    break
                ifaces = []
            blen = struct.unpack_from(fmt + "I", data, pos + 4)[0]
            if blen < 12 or blen % 4 or blen > MAX_RECORD + 4096:
                info.truncated = True
                info.warnings.append(f"corrupt block at byte {consumed + pos} (length {blen}); analysed up to there")
                eof = True
                break
            if pos + blen > n:
                break
            body = data[pos + 8 : pos + blen - 4]
            try:
                if btype == 1:
                    ifaces.append(_parse_idb(body, fmt))
                    if ifaces[-1].linktype not in info.link_types:
                        info.link_types.append(ifaces[-1].linktype)
                elif btype in (6, 2):  # EPB / obsolete PB
                    if btype == 6:
                        iid, hi, lo, cap, wire = struct.unpack_from(fmt + "IIIII", body, 0)
                    else:
                        iid, _drops, hi, lo, cap, wire = struct.unpack_from(fmt + "HHIIII", body, 0)
                    iface = ifaces[iid]
                    if 20 + cap > len(body):
                        raise ValueError("packet data overruns its block")
                    offs.append(pos + 8 + 20)
                    caps.append(cap)
                    wires.append(wire)
                    tss.append(((hi << 32) | lo) * iface.tsdiv + iface.tsoffset)
                    lts.append(iface.linktype)
                elif btype == 3:  # SPB: no timestamp, interface 0
                    wire = struct.unpack_from(fmt + "I", body, 0)[0]
                    cap = min(wire, len(body) - 4)
                    lt0 = ifaces[0].linktype  # first: a missing IDB must not leave the columns uneven
                    offs.append(pos + 8 + 4)
                    caps.append(cap)
                    wires.append(wire)
                    tss.append(tss[-1] if tss else 0.0)
                    lts.append(lt0)
            except (struct.error, IndexError, ValueError) as exc:
                info.warnings.append(f"skipped malformed pcapng block type {btype} at byte {consumed + pos}: {exc}")
            pos += blen
        if offs:
            buf = pad_bytes(data)
            yield RawBatch(
                buf,
                np.asarray(offs, dtype=np.int64),
                np.asarray(caps, dtype=np.int64),
                np.asarray(wires, dtype=np.int64),
                np.asarray(tss, dtype=np.float64),
                np.asarray(lts, dtype=np.int32),
            )
        if eof:
            return
        more = read_bytes(fh, chunk_bytes, info)
        consumed += pos
        data = data[pos:] + more
        pos = 0
        if not more:
            if data:
                info.truncated = True
                info.warnings.append(
                    f"capture cut short: last block at byte {consumed} is incomplete; analysed up to the cut"
                )
            return
