"""The four fields the governance WAL adds to every record it stores (ARCHITECTURE.md departure 4).

The seeds' audit and registry files keep their field names; the chain fields are appended by
``netghost.governance.wal.WalWriter.append``. Mixing :class:`ChainFields` into a payload model gives the
model of a stored line, so readers can validate what they read without knowing about the WAL.
"""

from __future__ import annotations

from pydantic import Field

from netghost.contracts.base import IsoTimestamp, Sha256Tag, WireModel

__all__ = ["CHAIN_FIELD_NAMES", "ChainFields"]

CHAIN_FIELD_NAMES: tuple[str, ...] = ("seq", "ts", "prev_sha256", "sha256")
"""Keys reserved by the WAL; a payload that already carries one is refused by the writer."""


class ChainFields(WireModel):
    """``seq`` (monotonic from 1 per file), ``ts``, and the SHA-256 links of the hash chain.

    ``sha256`` covers the canonical JSON of the whole record without ``sha256`` itself;
    ``prev_sha256`` is ``None`` only for the first record of a file.
    """

    seq: int = Field(ge=1)
    ts: IsoTimestamp
    prev_sha256: Sha256Tag | None
    sha256: Sha256Tag
