"""The forensics engine runs as itself: every spelling of it executes the installed program.

Why: ``python3 pcap_forensics.py CAPTURE`` (the seeds' template) used to run whatever file of that name
sat in the working directory, and ``pcap-forensics`` whatever came first on PATH (a directory the lab or
a download may control). A human who approved a download to that name would have handed the model code
execution through a SAFE command. So the shell never looks the engine up: ``pcap-forensics ARGS``,
``python[3[.x]] pcap_forensics.py ARGS`` and ``python[3[.x]] -m netghost.forensics ARGS`` all become
``<this product's interpreter> -I -m netghost.forensics ARGS`` at execution time, and the audit record
keeps that argv (``executed``). ``-I`` (isolated mode) matters: ``python -m`` otherwise puts the working
directory first on sys.path, and a ``netghost/`` folder there would shadow the installed package. The
classifier has judged ARGS under the engine's option table either way.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

__all__ = ["ENGINE_MODULE", "engine_argv"]

ENGINE_MODULE = "netghost.forensics"
_PYTHON = re.compile(r"python[0-9.]*")


def engine_argv(argv: Sequence[str], interpreter: str | None = None) -> list[str] | None:
    """The argv that runs the installed engine for ``argv`` when it is a spelling of the engine, else None.

    Only bare program names are spellings (``/tmp/x/pcap-forensics`` is a path command a human judged as
    such, and runs as typed).

    Args:
        argv: the parsed command.
        interpreter: the Python to run the engine with (default: the interpreter running this product,
            whose ``netghost`` package is the installed one).
    """
    if not argv or "/" in argv[0]:
        return None
    python = interpreter or sys.executable
    name, args = argv[0], list(argv[1:])
    if name == "pcap-forensics":
        return [python, "-I", "-m", ENGINE_MODULE, *args]
    if _PYTHON.fullmatch(name):
        if args[:1] == ["pcap_forensics.py"]:
            return [python, "-I", "-m", ENGINE_MODULE, *args[1:]]
        if args[:2] == ["-m", ENGINE_MODULE]:
            return [python, "-I", "-m", ENGINE_MODULE, *args[2:]]
    return None
