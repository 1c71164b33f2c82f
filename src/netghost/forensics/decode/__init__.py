"""Decoding: raw records to one numpy column per header field (the :class:`Packets` table).

Two decoders give the same table: the compiled walk + decode (``_walkdecode.pyx``, writing straight
into a preallocated :class:`ColumnStore`) and the numpy one (:func:`decode_batch` with
``compiled=False``), which is the reference and the fallback. Address text helpers live here too,
since they read the table's address encoding.
"""

from netghost.forensics.decode._absent import OPTIONAL_COLUMNS, AbsentColumn
from netghost.forensics.decode._addresses import addr, addr_text, ep, smallest_texts
from netghost.forensics.decode._columns import (
    ColumnStore,
    decode_batch_compiled,
    packets_spec,
    port_marks,
    walkdecode_module,
)
from netghost.forensics.decode._gather import Gather
from netghost.forensics.decode._numpy import decode_batch
from netghost.forensics.decode._packets import (
    COLUMN_DTYPES,
    ISSUES,
    V4_MARK,
    Packets,
    format_addr,
    issue_code,
)

__all__ = [
    "COLUMN_DTYPES",
    "ISSUES",
    "OPTIONAL_COLUMNS",
    "V4_MARK",
    "AbsentColumn",
    "ColumnStore",
    "Gather",
    "Packets",
    "addr",
    "addr_text",
    "decode_batch",
    "decode_batch_compiled",
    "ep",
    "format_addr",
    "issue_code",
    "packets_spec",
    "port_marks",
    "smallest_texts",
    "walkdecode_module",
]
