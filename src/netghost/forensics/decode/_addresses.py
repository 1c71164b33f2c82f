"""Address text: what ``ipaddress`` prints for an address held as two uint64 halves, without its objects.

Why: reports render a thousand or more distinct hosts on a big capture; building an ``ipaddress``
object per address (and importing the module) costs several times this arithmetic. Shared by the
findings, the ICMP summary and the semantic document.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from netghost.forensics.decode._packets import V4_MARK, format_addr

__all__ = ["addr", "addr_text", "ep", "smallest_texts"]


def addr_text(hi: int, lo: int, v4_mark: int) -> str | None:
    """The text ``str(ipaddress.IPv4Address/IPv6Address)`` gives for an address held as (hi, lo) halves.

    Why: reports render a thousand or more distinct hosts on a big capture, and building an
    ``ipaddress`` object per IPv6 address (plus importing the module) costs several times this
    arithmetic. None for an IPv4-mapped IPv6 address, whose text depends on the Python version
    (the caller then asks ``ipaddress``).
    """
    if hi == v4_mark:
        v = lo & 0xFFFFFFFF
        return f"{v >> 24}.{(v >> 16) & 255}.{(v >> 8) & 255}.{v & 255}"
    if hi == 0 and lo >> 32 == 0xFFFF:
        return None
    words = [(hi >> 48) & 0xFFFF, (hi >> 32) & 0xFFFF, (hi >> 16) & 0xFFFF, hi & 0xFFFF,
             (lo >> 48) & 0xFFFF, (lo >> 32) & 0xFFFF, (lo >> 16) & 0xFFFF, lo & 0xFFFF]
    # RFC 5952 as ipaddress._compress_hextets does it: the first longest run (>= 2) of zero words -> "::"
    best, best_len, run = -1, 0, 0
    for i, w in enumerate(words):
        run = run + 1 if w == 0 else 0
        if run > best_len:
            best, best_len = i - run + 1, run
    text = [f"{w:x}" for w in words]
    if best_len < 2:
        return ":".join(text)
    return ":".join(text[:best]) + "::" + ":".join(text[best + best_len :])


_V4 = int(V4_MARK)


@lru_cache(maxsize=65536)
def _addr(hi: int, lo: int) -> str:
    # the text of str(IPv4Address / IPv6Address), without building the object
    text = addr_text(hi, lo, _V4)
    return text if text is not None else format_addr(hi, lo)


def addr(hi: Any, lo: Any) -> str:
    """:func:`format_addr` with a cache (reports name the same few hosts many times)."""
    return _addr(int(hi), int(lo))


# rank of each octet's decimal text among those of 0..255: dotted quads compare as text exactly as
# the tuples of their octets' ranks do ('.' sorts before every digit, so a shorter octet text that is
# a prefix of a longer one sorts first either way)
_OCTET_RANK = np.argsort(np.argsort(np.array([str(v) for v in range(256)]), kind="stable")).astype(np.uint64)


def smallest_texts(hi: np.ndarray, lo: np.ndarray, bounds: list[int], k: int = 3) -> list[list[str]]:
    """Per group ``i`` of addresses ``[bounds[i], bounds[i + 1])``: its ``k`` smallest distinct texts, sorted.

    ``sorted({addr(h, l) for h, l in group})[:k]`` without rendering every address: IPv4 addresses are
    ranked by a key that orders like their text (octet text ranks), so only each group's ``k`` first
    IPv4 addresses and its IPv6 ones (never equal to an IPv4 text: they hold a ':') are rendered.
    """
    n_groups = len(bounds) - 1
    v4 = hi == np.uint64(_V4)
    v = lo & np.uint64(0xFFFFFFFF)
    key = np.zeros(v.shape[0], np.uint64)
    for shift in (24, 16, 8, 0):
        key = (key << np.uint64(8)) | _OCTET_RANK.take(((v >> np.uint64(shift)) & np.uint64(255)).astype(np.int64))
    grp = np.repeat(np.arange(n_groups), [bounds[i + 1] - bounds[i] for i in range(n_groups)])
    i4 = np.flatnonzero(v4)
    o = i4.take(np.lexsort((key.take(i4), grp.take(i4))))  # IPv4 ones by group, then text order
    g4, k4 = grp.take(o), key.take(o)
    new = np.ones(o.shape[0], bool)
    new[1:] = (g4[1:] != g4[:-1]) | (k4[1:] != k4[:-1])
    o, g4 = o.compress(new), g4.compress(new)  # distinct texts
    rank = np.arange(o.shape[0]) - np.searchsorted(g4, g4)
    keep = rank < k
    picked: list[list[int]] = [[] for _ in range(n_groups)]
    for g, j in zip(g4.compress(keep).tolist(), o.compress(keep).tolist(), strict=True):
        picked[g].append(j)
    for j in np.flatnonzero(~v4).tolist():
        picked[int(grp[j])].append(j)
    his, los = hi.tolist(), lo.tolist()
    return [sorted({addr(his[j], los[j]) for j in js})[:k] for js in picked]


def ep(hi: Any, lo: Any, port: Any) -> str:
    """``ip:port`` (``[v6]:port``) of one endpoint."""
    a = addr(hi, lo)
    return f"[{a}]:{int(port)}" if ":" in a else f"{a}:{int(port)}"
