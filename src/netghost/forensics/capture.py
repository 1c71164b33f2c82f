"""Types shared by the capture readers: the raw batch handed to the decoder and the reader's facts."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np

__all__ = ["MAX_RECORD", "PAD", "STREAM_ERRORS", "CaptureInfo", "RawBatch", "pad_bytes", "read_bytes"]

# Largest record tshark accepts for ordinary link types (WTAP_MAX_PACKET_SIZE_STANDARD).
MAX_RECORD = 262_144
PAD = 128  # zero bytes after each chunk so vectorised gathers never index out of bounds
# What a corrupt gzip stream raises mid-read: BadGzipFile (an OSError), EOFError at a cut, and
# zlib.error for damaged deflate data. Each ends the data with a warning, never a traceback.
STREAM_ERRORS = (OSError, EOFError, zlib.error)


@dataclass
class RawBatch:
    """One chunk of records: ``buf[off[i] : off[i] + caplen[i]]`` is packet ``i``'s data.

    ``buf`` is padded with :data:`PAD` zero bytes. ``ts`` is seconds since the epoch (float64).
    """

    buf: np.ndarray
    off: np.ndarray
    caplen: np.ndarray
    wirelen: np.ndarray
    ts: np.ndarray
    linktype: np.ndarray

    def __len__(self) -> int:
        return int(self.off.shape[0])


@dataclass
class CaptureInfo:
    """What the reader learned about the file (filled while iterating)."""

    path: str
    file_type: str = "unknown"
    compressed: bool = False
    snaplen: int = 0
    link_types: list[int] = field(default_factory=list)
    truncated: bool = False
    warnings: list[str] = field(default_factory=list)
    bytes_read: int = 0


def read_bytes(fh: BinaryIO, n: int, info: CaptureInfo) -> bytes:
    """Read up to ``n`` bytes; a corrupt gzip stream ends the data with a warning."""
    try:
        data = fh.read(n)
    except STREAM_ERRORS as exc:
        info.truncated = True
        info.warnings.append(f"compressed stream ends early or is corrupt ({exc}); analysed up to the cut")
        return b""
    info.bytes_read += len(data)
    return data


def pad_bytes(data: bytes) -> np.ndarray:
    buf = np.zeros(len(data) + PAD, dtype=np.uint8)
    buf[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    return buf
