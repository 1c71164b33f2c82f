"""The ``pcap-forensics`` program: ``python -m netghost.forensics`` and the console script both run :func:`main`.

Why the entry is here and not in ``cli``: a program may settle process-wide settings that numpy reads
when it is imported, and only the entry point runs before that import (the package face is lazy).
One OpenBLAS thread halves numpy's import cost and keeps idle BLAS threads off the CPU budget (the
engine never calls BLAS); ``setdefault``, so a user's own choice wins.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pcap-forensics`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # The imports below create objects that live as long as the process, so every cyclic collection
    # they would trigger is wasted work (measured with gc.callbacks: ~12 ms in 49 collections).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        from netghost.forensics.cli import main as cli_main  # noqa: PLC0415  after the settings above
    finally:
        if was_enabled:
            gc.enable()
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
