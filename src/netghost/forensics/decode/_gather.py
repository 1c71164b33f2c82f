"""Bounds-safe big-endian field gathers over a padded batch buffer (the decoder's only memory access)."""

from __future__ import annotations

import numpy as np

__all__ = ["Gather"]


class Gather:
    """Bounds-safe big-endian field gathers over a padded batch buffer."""

    def __init__(self, buf: np.ndarray) -> None:
        self.buf = buf
        self.hi = max(buf.shape[0] - 9, 0)

    def u8(self, pos: np.ndarray) -> np.ndarray:
        out: np.ndarray = self.buf[np.clip(pos, 0, self.hi)].astype(np.int64)
        return out

    def u16(self, pos: np.ndarray) -> np.ndarray:
        p = np.clip(pos, 0, self.hi)
        out: np.ndarray = (self.buf[p].astype(np.int64) << 8) | self.buf[p + 1]
        return out

    def u32(self, pos: np.ndarray) -> np.ndarray:
        p = np.clip(pos, 0, self.hi)
        b = self.buf
        out: np.ndarray = (
            (b[p].astype(np.int64) << 24)
            | (b[p + 1].astype(np.int64) << 16)
            | (b[p + 2].astype(np.int64) << 8)
            | b[p + 3]
        )
        return out

    def u64(self, pos: np.ndarray) -> np.ndarray:
        return (self.u32(pos).astype(np.uint64) << np.uint64(32)) | self.u32(pos + 4).astype(np.uint64)
