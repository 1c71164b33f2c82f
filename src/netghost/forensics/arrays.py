"""Block-wise numpy helpers over capture-long columns: selection, grouping, order statistics.

Why: numpy imports its masked-array package (~15-40 ms CPU, once per process) the first time
``np.median``, ``np.percentile``, a plain ``np.unique`` (no index/inverse/count outputs),
``np.union1d`` or a sort-based ``np.isin`` runs. Nothing else in the CLI pipeline needs it, so the
report stages use these equivalents instead (same values; tests compare with numpy).
The block helpers (``BLOCK``, ``spans``, ``Collect``, ``nonzero_blocks``) keep every temporary to a
block of rows, so the engine's memory budget (``spill``) holds on the report path too.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import numpy as np

from netghost.forensics import spill

T = TypeVar("T")

__all__ = ["BLOCK", "CHUNK", "TAKE_WINDOWS", "Collect", "count_by", "distinct", "gather", "group_rows", "in_sorted",
           "median", "median_p95", "member", "nonzero_blocks", "paced", "roomy", "select", "spans", "spilled", "take"]


def distinct(x: np.ndarray) -> np.ndarray:
    """``np.unique(x)`` for a 1-D integer array (sorted distinct values)."""
    s = np.sort(x)
    if s.shape[0] < 2:
        return s
    keep = np.empty(s.shape[0], bool)  # (not np.r_[True, ...]: its index-trick parsing costs ~20 us a call)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    out: np.ndarray = s[keep]
    return out


def member(x: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.isin(x, values)`` for integer arrays, by binary search in the distinct values."""
    u = distinct(np.asarray(values))
    if u.shape[0] <= 8:  # a few values: plain comparisons beat a binary search per element
        hit = np.zeros(np.shape(x), bool)
        for v in u:
            hit |= x == v
        return hit
    pos = np.minimum(np.searchsorted(u, x), u.shape[0] - 1)
    out: np.ndarray = u[pos] == x
    return out


def _partition(v: np.ndarray, kth: Any) -> None:
    """``v.partition(kth)`` in place; float64 samples without a sign bit are partitioned as their int64 view.

    Why: numpy's vectorised selection is ~30% faster on int64 than on float64 here, and for IEEE
    doubles whose sign bit is clear (+0.0, positive, +inf) the bit patterns order exactly like the
    values, so the same order statistics land at ``kth`` (RTT samples are never negative; -0.0 or a
    negative sample takes the plain float path).
    """
    if v.dtype == np.float64 and v.shape[0] > 1024 and v.flags.c_contiguous:
        iv = v.view(np.int64)
        if int(iv.min()) >= 0:
            iv.partition(kth)
            return
    v.partition(kth)


def _stats_at(v: np.ndarray, ks: list[int]) -> list[float]:
    """The order statistics ``ks`` of ``v`` (what ``v.partition(ks)`` leaves at those positions).

    Why: numpy's fast (vectorised) selection serves one kth only; a list of kth takes its generic
    path, ~5x slower on a million samples. So each pair of adjacent ranks is one single-kth selection
    of the upper one plus the ``max`` of what lies before it (the rank just below), and a later rank is
    selected within the part above the earlier one. ``v`` is reordered in place.
    """
    n = v.shape[0]
    want = sorted(set(ks))
    runs: list[list[int]] = []
    for k in want:
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    if n < 64 or want[0] < 0 or want[-1] >= n or any(len(r) > 2 for r in runs):
        v.partition(want)
        return [float(v[k]) for k in ks]
    got: dict[int, float] = {}
    base = 0
    for run in runs:
        part = v[base:]
        top = run[-1] - base
        _partition(part, top)
        got[run[-1]] = float(part[top])
        if len(run) == 2:
            got[run[0]] = float(part[:top].max())  # everything before the selected value is <= it
        base = run[-1] + 1
    if any(math.isnan(x) for x in got.values()):
        v.partition(want)  # NaN among the samples: numpy's own ordering (NaN last)
        return [float(v[k]) for k in ks]
    return [got[k] for k in ks]


def median_p95(v: np.ndarray, scale: float = 1.0) -> tuple[float, float]:
    """``np.median(v * scale)`` and ``np.percentile(v * scale, 95)`` from order statistics of ``v``.

    Exactness: scaling by a positive constant is monotonic, so the order statistics of ``v * scale``
    are the scaled order statistics of ``v``; the mean of the middle pair and the linear
    interpolation use numpy's own formulas (``_median``: mean of the pair; ``_lerp``: ``a + d*g``,
    or ``b - d*(1-g)`` when ``g >= 0.5``) on the same float64 values.

    Args:
        v: finite samples, at least one (reordered in place).
        scale: positive factor applied to the samples (1000 turns seconds into milliseconds).
    """
    n = v.shape[0]
    mid = [n // 2 - 1, n // 2] if n % 2 == 0 else [(n - 1) // 2]
    vi = (n - 1) * (95 / 100)
    prev = math.floor(vi)
    nxt = prev + 1
    if vi >= n - 1:
        prev = nxt = n - 1
    vals = _stats_at(v, [*mid, prev, nxt])
    med = (vals[0] * scale + vals[1] * scale) / 2 if len(mid) == 2 else vals[0] * scale
    g = vi - prev
    lo, hi = vals[-2] * scale, vals[-1] * scale
    d = hi - lo
    return med, (hi - d * (1 - g) if g >= 0.5 else lo + d * g)


def median(v: np.ndarray) -> float:
    """``float(np.median(v))`` of finite samples (at least one), ``v`` reordered in place."""
    n = v.shape[0]
    if n % 2:
        return _stats_at(v, [(n - 1) // 2])[0]
    lo, hi = _stats_at(v, [n // 2 - 1, n // 2])
    return (lo + hi) / 2


# --- bounded-memory helpers --------------------------------------------------------------------
# Why: a capture can hold more segments than the process may keep in RAM (spill.py). A pass over
# every segment (or over an index set as long as the capture, e.g. "every flagged segment") runs in
# blocks of BLOCK rows, so its temporaries are a fixed working set; a result as long as the capture
# goes to spill.alloc (file-backed past the budget). Inputs of at most BLOCK rows take the plain
# one-shot path (same code as before, so small captures pay nothing).

# NETGHOST_PCAP_BLOCK (rows) is a test knob: tiny blocks drive every blocked path on small captures.
BLOCK = int(os.environ.get("NETGHOST_PCAP_BLOCK") or 1 << 17)
# Passes over every segment on the one-shot path also run in pieces of CHUNK rows: each temporary is
# then a few hundred KiB that the allocator hands back piece after piece (cache-warm, no fresh pages),
# where a capture-long temporary costs a page fault per 4 KiB (~3 us each) on top of the arithmetic.
CHUNK = min(BLOCK, 1 << 16)


def roomy(nbytes: int) -> bool:
    """True when ``nbytes`` more of temporaries fit in what is left of the memory budget (one-shot path)."""
    b = spill.budget()
    return b.limit - b.in_ram >= nbytes


def spans(n: int, step: int | None = None) -> Iterator[tuple[int, int]]:
    """``(lo, hi)`` blocks of ``step`` (default BLOCK) rows covering ``range(n)``, in order.

    Between two blocks the spilled arrays' pages leave the resident set (:func:`spill.releaser`): a
    blocked pass over file-backed columns otherwise keeps every page it walked mapped, so its resident
    set would grow with the capture instead of staying a block's worth. Dropped pages keep their
    contents (a page used again is mapped again); with nothing spilled nothing is called.
    """
    step = step or BLOCK
    release = spill.releaser() if n > step else None
    for lo in range(0, n, step):
        if release is not None and lo:
            release()
        yield lo, min(lo + step, n)


# A read fault on a file mapping maps the page's neighbours too (the kernel's fault-around, 64 KiB by
# default, which MADV_RANDOM does not turn off): a gather at a few thousand scattered rows of a spilled
# column makes most of the column resident. A gather from a spilled column therefore runs in pieces that
# each touch at most TAKE_WINDOWS such 64 KiB windows (16 MiB), releasing between pieces.
TAKE_WINDOWS = 256
_WINDOW_SHIFT = 16


def spilled(a: np.ndarray) -> bool:
    """True when ``a`` is (a view of) a file-backed array from :func:`spill.alloc`."""
    base: Any = a
    while base is not None:
        if isinstance(base, np.memmap):
            return True
        base = getattr(base, "base", None)
    return False


def take(col: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``col.take(idx)`` whose resident-set cost stays bounded when ``col`` is spilled.

    Why: what a Dask worker's monitor (or a container limit) measures is RSS, which counts the pages a
    gather faulted in from a spilled column; 13k ICMP rows scattered over a 14M-packet capture made
    ~100 MiB of each gathered column resident. In pieces of at most :data:`TAKE_WINDOWS` distinct
    64 KiB windows (counted as changes between consecutive rows: exact for ascending ``idx``, an upper
    bound otherwise) with a release between them, a gather keeps ~16 MiB of it. In-RAM columns, and
    gathers touching fewer windows than one piece, take the plain path (same values either way).
    """
    if idx.dtype.kind == "b":  # a mask selects (``col[mask]``); take would read it as indices 0 and 1
        idx = np.flatnonzero(idx)
    n = idx.shape[0]
    if n <= TAKE_WINDOWS or not spilled(col):
        out: np.ndarray = col.take(idx)
        return out
    res = np.empty(n, col.dtype) if n <= BLOCK or roomy(n * col.itemsize) else spill.alloc(n, col.dtype)
    shift = _WINDOW_SHIFT - max(int(col.itemsize).bit_length() - 1, 0)  # rows per window: 2**shift
    for lo in range(0, n, BLOCK):
        part = idx[lo : lo + BLOCK]
        w = part >> shift
        cuts = np.flatnonzero(w[1:] != w[:-1])[TAKE_WINDOWS - 1 :: TAKE_WINDOWS] + 1  # each piece: <= TAKE_WINDOWS windows
        a = 0
        for b in [*cuts.tolist(), part.shape[0]]:
            res[lo + a : lo + b] = col.take(part[a:b])
            spill.release()
            a = b
    return res


def paced(items: Iterable[T], every: int = 1) -> Iterator[T]:
    """``items``, with spilled pages released after every ``every`` of them (when any array is spilled).

    Why: a loop that examines a few hundred streams one by one (the PMTU rules) reads each stream's
    segments at its own scattered rows of several spilled columns; without a release the pages all
    those reads faulted in (64 KiB each, see :data:`TAKE_WINDOWS`) stayed resident until the loop ended.
    A release with little resident costs ~0.1 ms, so the default is one per item.
    """
    release = spill.releaser()
    for i, item in enumerate(items):
        if release is not None and i and i % every == 0:
            release()
        yield item


class Collect:
    """Concatenation of result blocks that stays a plain array while small, then moves to spill.alloc.

    Args:
        cap: upper bound of the total length (size of the spilled array once it is needed).
        dtype: element type.
    """

    def __init__(self, cap: int, dtype: Any) -> None:
        self.cap, self.dtype = int(cap), np.dtype(dtype)
        self.parts: list[np.ndarray] = []
        self.k = 0
        self.out: np.ndarray | None = None

    def add(self, part: np.ndarray) -> None:
        """Append one block of results."""
        if self.out is None:
            self.parts.append(part)
            self.k += part.shape[0]
            if self.k > BLOCK:
                self.out = spill.alloc(self.cap, self.dtype)
                self.out[: self.k] = np.concatenate(self.parts)
                self.parts = []
            return
        self.out[self.k : self.k + part.shape[0]] = part
        self.k += part.shape[0]

    def result(self) -> np.ndarray:
        """The concatenated results (a view of the spilled array when large)."""
        if self.out is not None:
            return self.out[: self.k]
        if len(self.parts) == 1:
            return self.parts[0].astype(self.dtype, copy=False)
        return np.concatenate(self.parts).astype(self.dtype, copy=False) if self.parts else np.zeros(0, self.dtype)


def nonzero_blocks(n: int, mask: Callable[[int, int], np.ndarray]) -> np.ndarray:
    """``np.flatnonzero`` of a length-``n`` mask computed block by block (``mask(lo, hi)``)."""
    if n <= BLOCK or roomy(n * 9):
        return np.flatnonzero(mask(0, n))
    acc = Collect(n, np.int64)
    for lo, hi in spans(n):
        acc.add(np.flatnonzero(mask(lo, hi)) + lo)
    return acc.result()


def select(idx: np.ndarray, pred: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``idx[pred(idx)]`` in blocks (order kept)."""
    if idx.shape[0] <= BLOCK or roomy(idx.shape[0] * 16):
        out: np.ndarray = idx.compress(pred(idx))  # (compress: ~3x faster than boolean indexing here)
        return out
    acc = Collect(idx.shape[0], idx.dtype)
    for lo, hi in spans(idx.shape[0]):
        part = idx[lo:hi]
        acc.add(part.compress(pred(part)))
    return acc.result()


def gather(col: np.ndarray, idx: np.ndarray, dtype: Any = None) -> np.ndarray:
    """``col[idx].astype(dtype)`` with a spill-allocated result when ``idx`` is long."""
    if idx.shape[0] <= BLOCK or roomy(idx.shape[0] * 16):
        v: np.ndarray = col[idx]
        return v if dtype is None else v.astype(dtype)
    out = spill.alloc(idx.shape[0], col.dtype if dtype is None else dtype)
    for lo, hi in spans(idx.shape[0]):
        out[lo:hi] = col[idx[lo:hi]]
    return out


def count_by(keys: Callable[[np.ndarray], np.ndarray], idx: np.ndarray, n: int) -> np.ndarray:
    """``np.bincount(keys(idx), minlength=n)`` in blocks of ``idx``."""
    if idx.shape[0] <= BLOCK or roomy(idx.shape[0] * 16):
        return np.bincount(keys(idx), minlength=n)
    total = np.zeros(n, np.int64)
    for lo, hi in spans(idx.shape[0]):
        total += np.bincount(keys(idx[lo:hi]), minlength=n)
    return total


def in_sorted(sorted_idx: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Per ``r``: present in the ascending index array ``sorted_idx`` (a bool mask without a per-segment table)."""
    if not sorted_idx.shape[0]:
        return np.zeros(np.shape(r), bool)
    pos = np.minimum(np.searchsorted(sorted_idx, r), sorted_idx.shape[0] - 1)
    out: np.ndarray = sorted_idx[pos] == r
    return out


def group_rows(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices grouped by equal key tuples: group ``i`` is ``o[b[i]:b[i + 1]]`` for the returned ``(o, b)``.

    Groups come in lexicographic key order, members ascending: the grouping (and group order) of
    ``np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)``, several times faster (a
    lexsort instead of a sort of structured rows).
    """
    n = keys[0].shape[0] if keys else 0
    if not n:
        return np.zeros(0, np.int64), np.zeros(1, np.int64)
    o = np.lexsort(keys[::-1])
    new = np.zeros(n, bool)
    new[0] = True
    for k in keys:
        ks = k[o]
        new[1:] |= ks[1:] != ks[:-1]
    return o, np.r_[np.flatnonzero(new), n]
