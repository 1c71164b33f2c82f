"""The resident lab: one process per lab state that answers the ``az`` and probe shims over a Unix socket.

Without it every lab call is a new Python process that imports the simulator and parses the world
(~0.5 s); with it a shim is a ~15 ms client (:data:`SHIM_PATH`, run by the ``bin/`` launchers) and the
answer comes from the same in-process code against the same state directory. :func:`start_resident`
starts it on demand (or finds the one already serving the state) and returns a :class:`Resident` whose
owner stops it; the server also stops when its owner is gone or after ``idle_s`` without a call. The
same process serves the lab ARM endpoint (:mod:`netghost.lab.arm`) when asked
(``Resident.control("arm")``). When no resident lab runs, the shims fall back to one process per call.
"""

from pathlib import Path

from netghost.lab.resident._process import (
    DEFAULT_IDLE_S,
    IDLE_ENV,
    Resident,
    main,
    start_resident,
    started_residents,
    stop_started_residents,
)
from netghost.lab.resident._shim import SOCKET_NAME, socket_path

SHIM_PATH = Path(__file__).with_name("_shim.py")
"""The shim client the ``bin/`` launchers run with ``python -I -S`` (it imports nothing from netghost)."""

__all__ = [
    "DEFAULT_IDLE_S",
    "IDLE_ENV",
    "SHIM_PATH",
    "SOCKET_NAME",
    "Resident",
    "main",
    "socket_path",
    "start_resident",
    "started_residents",
    "stop_started_residents",
]
