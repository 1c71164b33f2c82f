"""Optional numba acceleration with a pure-Python fallback (numba is never a hard dependency).

Two loops in the engine are inherently sequential: the pcap record walk (each record's length says
where the next starts) and the TCP rule machine (per-direction state). Both are written as plain
functions over integer sequences; when numba is importable they are JIT-compiled over numpy arrays
(~100x faster), otherwise callers run the Python version (over lists, or struct over a memoryview).
Set ``NETGHOST_NO_NUMBA=1`` to force the fallback (used by tests to check both paths agree).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["jit_or_none", "numba_module"]

_CACHE: dict[str, Any] = {}


def jit_or_none(fn: Callable[..., Any]) -> Any:
    """The numba-compiled ``fn`` (compiled once per process, cached on disk), or ``None``."""
    key = f"{fn.__module__}.{fn.__qualname__}"
    if key not in _CACHE:
        numba = numba_module()
        if numba is None:
            return None
        _CACHE[key] = numba.njit(cache=True, nogil=True)(fn)
    return _CACHE[key]


def numba_module() -> Any:
    """The numba module, or ``None`` when it is not installed or ``NETGHOST_NO_NUMBA`` is set."""
    if os.environ.get("NETGHOST_NO_NUMBA"):
        return None
    if not os.access(Path(__file__).parent, os.W_OK):
        # read-only install: numba's on-disk cache would have no writable place next to the source
        os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "netghost-numba"))
    try:
        import numba  # noqa: PLC0415  optional accelerator
    except ImportError:
        return None
    return numba
