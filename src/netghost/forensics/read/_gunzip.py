"""A gunzip stream that hands over every byte it could decompress before a cut or a corruption.

Why not ``gzip.GzipFile``: when the compressed file ends early, its ``read``/``readinto`` raise
``EOFError`` and the bytes decompressed inside that call are lost with it; a capture cut at 5,000
bytes (65 whole packets inside) was analysed as empty. Here the input is fed to ``zlib`` in small
blocks, what comes out is buffered, and the error is raised only once the buffer is drained, so the
reader analyses everything up to the cut and then reports it (``capture.STREAM_ERRORS``). A corrupt
block is fed again in small pieces from the state before it, so little before the bad byte is lost.
Concatenated gzip members are read one after the other, as ``gzip`` does.
"""

from __future__ import annotations

import zlib
from typing import BinaryIO

__all__ = ["GunzipStream"]

IN_BLOCK = 64 * 1024  # compressed bytes per step
SALVAGE_PIECE = 64  # after a corruption the failed block is re-fed this many bytes at a time


class GunzipStream:
    """Read-only, forward-only decompressed view of a gzip file object (``read``, ``readinto``)."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._z = zlib.decompressobj(wbits=31)
        self._buf = bytearray()
        self._error: BaseException | None = None
        self._done = False

    def _step(self) -> None:
        """Decompress one more input block into the buffer; remember (not raise) an error or the end."""
        if self._done or self._error is not None:
            return
        data = self._z.unconsumed_tail or self._raw.read(IN_BLOCK)
        if self._z.eof:  # the member ended: another may follow (its bytes are unused_data)
            data = self._z.unused_data + data
            if not data.strip(b"\x00"):  # trailing zero padding, as gzip tolerates
                self._done = True
                return
            self._z = zlib.decompressobj(wbits=31)
        if not data:
            self._done = True
            if not self._z.eof:
                self._error = EOFError("Compressed file ended before the end-of-stream marker was reached")
            return
        saved = self._z.copy()
        try:
            self._buf += self._z.decompress(data, 4 * IN_BLOCK)
        except zlib.error as exc:
            self._z = saved
            self._salvage(data)
            self._error = exc

    def _salvage(self, data: bytes) -> None:
        """Feed the block that failed again in small pieces, keeping the output before the bad byte."""
        for i in range(0, len(data), SALVAGE_PIECE):
            try:
                self._buf += self._z.decompress(data[i : i + SALVAGE_PIECE])
            except zlib.error:
                return

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` decompressed bytes (all with ``n < 0``); ``b""`` at the end.

        Raises:
            EOFError, zlib.error: the stream is cut or corrupt, raised once the bytes before it are read.
        """
        while (n < 0 or len(self._buf) < n) and not self._done and self._error is None:
            self._step()
        if not self._buf and self._error is not None:
            err, self._error = self._error, None
            self._done = True
            raise err
        k = len(self._buf) if n < 0 else min(n, len(self._buf))
        out = bytes(self._buf[:k])
        del self._buf[:k]
        return out

    def readinto(self, mv: memoryview) -> int:
        """Fill ``mv`` with decompressed bytes; returns how many (0 at the end); raises as :meth:`read`."""
        data = self.read(len(mv))
        mv[: len(data)] = data
        return len(data)

    def close(self) -> None:
        """Nothing to release: the raw file is closed by its owner."""

    def __enter__(self) -> GunzipStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
