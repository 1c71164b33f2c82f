"""Reading captures: pcap (mmap windows for big files) and pcapng, plain or gzip, in bounded chunks.

The readers yield raw records (:class:`~netghost.forensics.capture.RawBatch`) or, for big classic
pcaps, whole mapped windows (:class:`PcapWindow`) that the compiled kernel walks and decodes in one
pass. Nothing here decodes a header past the record framing.
"""

from netghost.forensics.read._pcap import (
    LINKTYPE_NAMES,
    PcapWindow,
    iter_batches,
    iter_windows,
    read_all,
    walk_records,
)

__all__ = ["LINKTYPE_NAMES", "PcapWindow", "iter_batches", "iter_windows", "read_all", "walk_records"]
