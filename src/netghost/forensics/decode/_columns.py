"""Python side of the compiled walk + decode (``_walkdecode.pyx``) and the engine's column store.

:class:`ColumnStore` holds the final per-packet columns, preallocated from an estimate and grown
when needed. The compiled kernels write decoded records straight into it (no per-batch
:class:`~netghost.forensics.decode.Packets` that would then be copied); the pure path appends the
numpy decoder's per-batch columns instead. Either way the engine ends with one ``Packets`` of views.

The compiled decode is :func:`netghost.forensics.decode.decode_batch` (``_numpy.py``) field for field (that numpy
version stays the reference and the fallback); tests compare both on the corpus and on mutations.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

import numpy as np

from netghost.forensics import spill
from netghost.forensics.accel import compiled
from netghost.forensics.decode._absent import OPTIONAL_COLUMNS, AbsentColumn
from netghost.forensics.decode._packets import COLUMN_DTYPES, Packets

if TYPE_CHECKING:
    from types import ModuleType

    from netghost.forensics.capture import RawBatch

__all__ = ["ColumnStore", "decode_batch_compiled", "packets_spec", "port_marks", "walkdecode_module"]

MIN_CAP = 1 << 16  # first allocation when nothing is known yet (grown from the first window's density)
# Columns whose absent value is 0: allocated zeroed (calloc: pages never written are never faulted in)
# because the compiled kernel only stores their non-zero values (must equal _walkdecode.ZERO_COLUMNS).
ZERO_COLUMNS = frozenset({"vlan", "ip_frag", "in_src_hi", "in_src_lo", "in_dst_hi", "in_dst_lo", "sack_perm", "issue"})


def walkdecode_module() -> ModuleType | None:
    """The compiled ``_walkdecode`` module, or ``None`` (not built, or ``NETGHOST_NO_COMPILED=1``)."""
    return compiled("decode._walkdecode")


class ColumnStore:
    """Growable, preallocated column store in the compiled kernels' column order.

    ``np.empty`` does not touch memory, so an over-estimated capacity costs address space only; an
    under-estimate (e.g. gzip, where the file size says little) grows the arrays by copying. Arrays
    come from :func:`netghost.forensics.spill.alloc`: in RAM within the process's memory budget,
    file-backed past it (bounded memory for captures larger than RAM).

    Args:
        total: file size in bytes (for the capacity estimate; 0 if unknown).
        names: column names and dtypes, in kernel order (default: ``_walkdecode.COLUMNS`` or the
            ``Packets`` field order with the numpy decoder's dtypes).
    """

    def __init__(self, total: int, names: tuple[tuple[str, str], ...], absent: frozenset[str] = frozenset()) -> None:
        if not absent <= OPTIONAL_COLUMNS:
            raise ValueError(f"only {sorted(OPTIONAL_COLUMNS)} may be left out, not {sorted(absent - OPTIONAL_COLUMNS)}")
        self.total = total
        self.spec = names
        self.absent = absent
        self.rows = 0
        self.cap = 0
        self.cols: dict[str, np.ndarray] = {}
        self.raw: tuple[np.ndarray | None, ...] = ()
        self.hot: tuple[np.ndarray, ...] = ()  # in-RAM columns every row writes (see prefault)

    def estimate(self, consumed: int, need: int) -> int:
        """Capacity for ``need`` rows given ``consumed`` file bytes so far (at least ``need``)."""
        est = 0
        if self.total > consumed > 0 and self.rows:
            # records are at least 16 bytes, so the estimate never exceeds total / 16
            est = min(int(self.total / consumed * self.rows * 1.05) + 1024, self.total // 16 + 1)
        return max(need, est, 2 * self.cap, MIN_CAP if not self.cap else 0)

    def reserve(self, need: int, consumed: int = 0) -> None:
        """Make room for ``need`` rows in total (growing by copy when the capacity is short)."""
        if need <= self.cap:
            return
        new_cap = self.estimate(consumed, need)
        cols: dict[str, np.ndarray] = {}
        for name, dt in self.spec:
            if name in self.absent:
                continue
            grown = spill.alloc(new_cap, dt, zero=name in ZERO_COLUMNS)
            if self.rows:
                grown[: self.rows] = self.cols[name][: self.rows]
            cols[name] = grown
        self.cols = cols
        self.cap = new_cap
        self.raw = tuple(None if name in self.absent else cols[name].view(np.uint8) if cols[name].dtype == np.bool_
                         else cols[name] for name, _dt in self.spec)
        self.hot = tuple(a for name, a in cols.items() if name not in ZERO_COLUMNS and not isinstance(a.base, np.memmap))

    def prefault(self, mod: Any, n: int) -> None:
        """Map the pages of the next ``n`` rows of every always-written column before the kernel runs.

        Why: one ``madvise(MADV_POPULATE_WRITE)`` per column instead of one page fault per 4 KiB the
        kernel's stores would take (fresh anonymous memory); ~25% less system time per page here.
        Zero-default columns (mostly never written) and file-backed (spilled) columns are left alone.
        """
        n = min(n, self.cap - self.rows)
        if n > 0 and self.hot:
            mod.populate(self.hot, self.rows, n)

    def append(self, part: Packets, consumed: int = 0) -> None:
        """Copy a per-batch table in (the pure path)."""
        n = len(part)
        self.reserve(self.rows + n, consumed)
        for name, _dt in self.spec:
            if name not in self.absent:
                self.cols[name][self.rows : self.rows + n] = getattr(part, name)
        self.rows += n

    def view(self, row0: int, n: int) -> Packets:
        """Rows ``row0 .. row0 + n`` as a ``Packets`` of views (valid until the next growth)."""

        if not self.cols:
            e = Packets.empty()
            for name in self.absent:
                setattr(e, name, AbsentColumn(name))
            return e
        out: dict[str, Any] = {name: AbsentColumn(name) if name in self.absent else self.cols[name][row0 : row0 + n]
                               for name, _dt in self.spec}
        return Packets(**out)

    def finish(self) -> Packets:
        """All rows as one ``Packets`` (views of the store's arrays)."""
        return self.view(0, self.rows)


def packets_spec() -> tuple[tuple[str, str], ...]:
    """Column names and dtypes in the compiled kernels' order (the ``Packets`` fields, checked)."""

    k = walkdecode_module()
    spec: tuple[tuple[str, str], ...] = k.COLUMNS if k is not None else tuple(COLUMN_DTYPES.items())
    if ([n for n, _ in spec] != [f.name for f in fields(Packets)] or dict(spec) != COLUMN_DTYPES
            or (k is not None and (frozenset(k.ZERO_COLUMNS) != ZERO_COLUMNS
                                   or frozenset(k.OPTIONAL_COLUMNS) != OPTIONAL_COLUMNS))):
        raise RuntimeError("compiled kernel's column layout differs from decode.Packets (rebuild the extension)")
    return spec


def decode_batch_compiled(mod: Any, b: RawBatch, first_frame: int) -> tuple[Packets, np.ndarray, np.ndarray]:
    """:func:`decode.decode_batch` through the compiled kernel: a fresh table for one batch."""
    n = len(b)
    store = ColumnStore(0, packets_spec())
    store.reserve(max(n, 1))
    payoff = np.empty(max(n, 1), np.int64)
    capend = np.empty(max(n, 1), np.int64)
    mod.decode_into(b.buf, _i64(b.off), _i64(b.caplen), _i64(b.wirelen), np.ascontiguousarray(b.ts, np.float64),
                    np.ascontiguousarray(b.linktype, np.int32), store.raw, 0, first_frame, payoff, capend,
                    NO_PORTS, np.empty(max(n, 1), np.int64))
    store.rows = n
    return store.finish(), payoff[:n], capend[:n]


NO_PORTS = np.zeros(65536, np.uint8)


def port_marks(ports: tuple[int, ...]) -> np.ndarray:
    """The kernels' 65536-entry port flag table (records with a flagged port are reported as candidates)."""
    out = np.zeros(65536, np.uint8)
    out[list(ports)] = 1
    return out


def _i64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.int64)
