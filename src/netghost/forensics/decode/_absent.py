"""Columns a run did not decode: which ones may be left out, and the placeholder that stands for them.

Why: every decoded column costs fresh memory per packet (~8 bytes a column on a 2M-packet capture is
16 MB, i.e. ~4,000 page faults). No analysis (single capture, compare mode, charts) reads
:data:`OPTIONAL_COLUMNS`, so the engine leaves them out unless asked (``analyze_capture(columns=...)``). A left-out
column is an :class:`AbsentColumn` in the ``Packets`` table: any use of it raises
:class:`ColumnNotDecodedError` naming the column, instead of silently reading garbage.
"""

from __future__ import annotations

from typing import Any, NoReturn

from netghost.errors import ColumnNotDecodedError

__all__ = ["OPTIONAL_COLUMNS", "AbsentColumn", "ColumnNotDecodedError"]

# Read by no analysis (grep every reader before adding one; compare mode reads dscp, PMTU tsval):
# record lengths (caplen, wirelen), TCP header length and the TS echo reply.
OPTIONAL_COLUMNS: frozenset[str] = frozenset({"caplen", "wirelen", "tcp_hlen", "tsecr"})




class AbsentColumn:
    """Stands for a column that was not decoded; every use raises :class:`ColumnNotDecodedError`.

    Row selections (``Packets.take``/``concat``) keep the placeholder, so a table stays consistent.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def fail(self, *_args: Any, **_kw: Any) -> NoReturn:
        """Raise the error naming the column (every operator and attribute lands here)."""
        raise ColumnNotDecodedError(self.name)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)  # protocol probes (copy, pickle, numpy) see a plain missing attribute
        self.fail()

    def __repr__(self) -> str:
        return f"AbsentColumn({self.name!r})"

    __getitem__ = __setitem__ = __len__ = __iter__ = __array__ = __bool__ = fail
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = fail
    __and__ = __or__ = __xor__ = __invert__ = __add__ = __sub__ = __mul__ = __neg__ = fail
    __rand__ = __ror__ = __radd__ = __rsub__ = __rmul__ = fail
    __hash__ = object.__hash__
