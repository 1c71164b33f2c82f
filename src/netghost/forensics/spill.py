"""Memory-budgeted allocation of the engine's per-packet arrays: in RAM up to a budget, then on disk.

Why: a capture can be larger than the machine's memory. The engine keeps a few dozen bytes of
decoded columns per packet (the capture itself is only ever mapped a window at a time), so a 40 GB
capture of small packets would need more RAM than a laptop has. Past the budget, new per-packet
arrays are backed by an unlinked temporary file (``np.memmap`` of a ``TemporaryFile``): the kernel
pages them in and out like any file, so the process's anonymous memory stays bounded by the budget
and the analysis still finishes; the files vanish when the arrays are freed (or the process dies).

The budget is process-wide: ``NETGHOST_PCAP_MEMORY`` (bytes, or with a ``K``/``M``/``G`` suffix;
``0`` spills everything), else half the physical memory. Numbers decide only *where* an array
lives, never what it contains: spilled and in-RAM runs give identical outputs (tested).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["RELEASE_ROWS", "MemoryBudget", "alloc", "budget", "parse_size", "release", "releaser", "reset_budget"]

# Rows a pass over spilled columns walks between two releases: at a few dozen bytes per row over the
# columns a pass reads and writes, a few MiB of walked pages are resident at a time, whatever the
# capture's size (and ~20 releases per million rows cost well under a millisecond each).
RELEASE_ROWS = 1 << 16

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes from ``"512M"``, ``"2G"``, ``"1048576"`` (binary units, optional ``B``/``iB``).

    Raises:
        ValueError: not a size.
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if m is None:
        raise ValueError(f"not a memory size: {text!r} (examples: 512M, 2G, 1048576)")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def _physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 8 << 30


class MemoryBudget:
    """Bytes of per-packet arrays this process may still hold in RAM; the rest is spilled.

    Args:
        limit: bytes allowed in RAM.
        spill_dir: where temporary files go (default: the system temp dir).
    """

    def __init__(self, limit: int, spill_dir: str | None = None) -> None:
        self.limit = max(int(limit), 0)
        self.spill_dir = spill_dir
        self.in_ram = 0
        self.spilled = 0
        self._lock = threading.Lock()
        self._maps: weakref.WeakSet[Any] = weakref.WeakSet()  # live spill mappings (see release)

    def _claim(self, nbytes: int) -> bool:
        """True (and counted) when ``nbytes`` more fit in RAM."""
        with self._lock:
            if self.in_ram + nbytes <= self.limit:
                self.in_ram += nbytes
                return True
            self.spilled += nbytes
            return False

    def alloc(self, n: int, dtype: Any, *, zero: bool = False) -> np.ndarray:
        """A 1-D array of ``n`` elements, in RAM if the budget allows, else file-backed.

        ``zero`` asks for zero-filled contents (a fresh file reads as zeros, so a spilled array is
        never written up front either).
        """
        dt = np.dtype(dtype)
        nbytes = n * dt.itemsize
        if n == 0 or self._claim(nbytes):
            return np.zeros(n, dt) if zero else np.empty(n, dt)
        import tempfile  # noqa: PLC0415  only when spilling: it drags in shutil/bz2/lzma (~5-10 ms at start-up)

        with tempfile.TemporaryFile(prefix="netghost-spill-", dir=self.spill_dir) as fh:
            fh.truncate(nbytes)
            mm = np.memmap(fh, dtype=dt, mode="r+", shape=(n,))
        raw = getattr(mm, "_mmap", None)
        if raw is not None:
            _advise_small_folios(raw)
            self._maps.add(raw)
        # a plain ndarray view: the mapping outlives the (already unlinked) file's descriptor
        return mm.view(np.ndarray)

    def spilling(self) -> bool:
        """True while a spilled array is alive (so :meth:`release` has pages to drop)."""
        return len(self._maps) > 0

    def release(self) -> None:
        """Drop the spilled arrays' pages from this process's resident set (their contents stay in the
        page cache and the file; the next access maps them again).

        Why: a spilled array's touched pages count in the process's RSS, which is what a Dask worker's
        memory monitor and a container's limit measure; without this a run under a 64 MiB budget still
        showed ~340 MB of file-backed RSS at the end of a 2M-packet capture. Called between stages and,
        where a pass walks every packet or segment, every :data:`RELEASE_ROWS` rows of it (see
        :func:`releaser`): dropping pages of a shared file mapping keeps their contents, so a page
        still in use is only mapped again on its next access.
        """
        import mmap  # noqa: PLC0415

        if not hasattr(mmap, "MADV_DONTNEED"):
            return
        for m in list(self._maps):
            with contextlib.suppress(ValueError, OSError):  # closed meanwhile, or a kernel refusing
                m.madvise(mmap.MADV_DONTNEED)


def _advise_small_folios(m: Any) -> None:
    """``MADV_RANDOM`` on a fresh spill mapping, before anything is written to it.

    Why: without it the kernel builds the file's page cache in large folios as the decoder writes
    the column sequentially, and later maps a whole folio (up to 2 MiB) on a read fault. A pass that
    reads a spilled column at scattered rows (the findings' flagged segments, ICMP errors) then made
    the whole column resident: 128 reads one MiB apart mapped 100 MiB, with the hint 8 MiB (one
    64 KiB fault-around each). The end-to-end spilled run measured no slower. Advisory only: a
    kernel refusing it changes no byte.
    """
    import mmap  # noqa: PLC0415

    if hasattr(mmap, "MADV_RANDOM"):
        with contextlib.suppress(OSError):
            m.madvise(mmap.MADV_RANDOM)


_BUDGET: MemoryBudget | None = None


def budget() -> MemoryBudget:
    """The process-wide budget (from ``NETGHOST_PCAP_MEMORY`` on first use).

    Raises:
        ValueError: ``NETGHOST_PCAP_MEMORY`` is set but is not a size.
    """
    global _BUDGET  # noqa: PLW0603  one budget per process
    if _BUDGET is None:
        raw = os.environ.get("NETGHOST_PCAP_MEMORY", "").strip()
        limit = parse_size(raw) if raw else _physical_memory() // 2
        _BUDGET = MemoryBudget(limit, os.environ.get("NETGHOST_PCAP_SPILL_DIR") or None)
    return _BUDGET


def reset_budget(limit: int | None = None) -> MemoryBudget:
    """Start a fresh budget (``limit`` bytes, or re-read the environment); used by the CLI and tests."""
    global _BUDGET  # noqa: PLW0603  one budget per process
    _BUDGET = None if limit is None else MemoryBudget(limit, os.environ.get("NETGHOST_PCAP_SPILL_DIR") or None)
    return budget()


def alloc(n: int, dtype: Any, *, zero: bool = False) -> np.ndarray:
    """:meth:`MemoryBudget.alloc` on the process-wide budget."""
    return budget().alloc(n, dtype, zero=zero)


def release() -> None:
    """:meth:`MemoryBudget.release` on the process-wide budget (a no-op when nothing was spilled)."""
    if _BUDGET is not None:
        _BUDGET.release()


def releaser() -> Callable[[], None] | None:
    """:func:`release` when some array is spilled, else ``None``: what a long pass calls every
    :data:`RELEASE_ROWS` rows.

    Why ``None``: with everything in RAM there is nothing to drop, and the pass (e.g. the compiled TCP
    walk) then skips the calls altogether, so an unspilled run pays nothing for them.
    """
    return release if _BUDGET is not None and _BUDGET.spilling() else None
