"""Probe shims: ``ping``, ``dig``, ``nslookup``, ``traceroute``, ``curl``, ``ss``, ``netstat`` that
answer as the engineer's own machine would, from the lab world.

Why they exist: seed 001's LOCAL PROBE CONTEXT WARNING says local probes run on the engineer's
machine, not in Azure, and mislead. The lab reproduces exactly that: by default the machine is a
laptop outside every VNet (public resolver, no route to private addresses), unless the world
declares ``local_machine.inside_vnet`` (e.g. a VPN). Output layouts and exit codes are the real
tools' (Ubuntu 22.04 versions), so the product's shell path parses them as it would in the field.

Entry points:

* ``python -m netghost.lab.probes <tool> ARGS...`` — run one tool;
* ``python -m netghost.lab.probes._<tool> ARGS...`` — what the ``bin/`` launchers exec;
* :data:`SHIMS` — tool → module, read by :func:`netghost.lab.bin.create_bin_dir` and
  :func:`netghost.lab.bin.install_probe_shims`, which write the launchers.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from netghost.lab.probes._vantage import load_vantage

__all__ = ["SHIMS", "main", "run_probe"]

SHIMS: dict[str, str] = {
    tool: f"netghost.lab.probes._{tool}"
    for tool in ("ping", "dig", "nslookup", "traceroute", "curl", "ss", "netstat")
}


def run_probe(tool: str, argv: Sequence[str], env: dict[str, str] | None = None,
              cwd: str = "") -> tuple[int, str, str]:
    """Run one shim in-process: (exit code, stdout, stderr), as the launcher would print them; ``cwd``
    is the caller's working directory (files a tool writes land there), default this process's.

    Raises:
        KeyError: ``tool`` is not one of :data:`SHIMS`.
        LabError: no lab state at ``$NETGHOST_LAB_STATE`` (from ``env`` or the process).
    """
    module = importlib.import_module(SHIMS[tool])
    vantage = load_vantage(env, cwd)
    result: tuple[int, str, str] = module.run(list(argv), vantage)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m netghost.lab.probes <tool> ARGS...``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in SHIMS:
        sys.stderr.write(f"usage: python -m netghost.lab.probes {{{','.join(SHIMS)}}} [ARGS...]\n")
        return 2
    module = importlib.import_module(SHIMS[args[0]])
    code: int = module.main(args[1:])
    return code
