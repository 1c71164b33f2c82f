"""Probe shims: ``ping``, ``dig``, ``nslookup``, ``traceroute``, ``curl``, ``ss``, ``netstat`` that
answer as the engineer's own machine would, from the lab world.

Why they exist: seed 001's LOCAL PROBE CONTEXT WARNING says local probes run on the engineer's
machine, not in Azure, and mislead. The lab reproduces exactly that: by default the machine is a
laptop outside every VNet (public resolver, no route to private addresses), unless the world
declares ``local_machine.inside_vnet`` (e.g. a VPN). Output layouts and exit codes are the real
tools' (Ubuntu 22.04 versions), so the product's shell path parses them as it would in the field.

Entry points:

* ``python -m netghost.lab.probes <tool> ARGS...`` — run one tool;
* ``python -m netghost.lab.probes_<tool> ARGS...`` — what the ``bin/`` launchers exec;
* :data:`SHIMS` — tool → module, read by :func:`netghost.lab.bin.create_bin_dir`;
* :func:`install_probe_shims` — write the launchers into a ``bin/`` directory yourself.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from netghost.lab.probes_net import load_vantage

__all__ = ["SHIMS", "install_probe_shims", "main", "run_probe"]

SHIMS: dict[str, str] = {
    tool: f"netghost.lab.probes_{tool}"
    for tool in ("ping", "dig", "nslookup", "traceroute", "curl", "ss", "netstat")
}


def install_probe_shims(bin_dir: Path, state_dir: Path, python: str | None = None) -> list[Path]:
    """Write one launcher per tool in ``bin_dir`` (beside the ``az`` launcher), pinned to a lab.

    Each is written by :func:`netghost.lab.bin.write_launcher`, as the ``az`` launcher is: it sets
    ``NETGHOST_LAB_STATE`` and ``exec``s this interpreter with ``-m netghost.lab.probes_<tool>``.

    Args:
        bin_dir: directory to write into (created if missing).
        state_dir: the lab state the shims answer from.
        python: interpreter to run; default the current one.

    Returns:
        The launcher paths, in :data:`SHIMS` order.
    """
    from netghost.lab.bin import write_launcher  # noqa: PLC0415  bin imports SHIMS from here

    bin_dir.mkdir(parents=True, exist_ok=True)
    interpreter = python or sys.executable
    state = Path(state_dir).resolve()
    return [write_launcher(bin_dir / tool, module, state, interpreter) for tool, module in SHIMS.items()]


def run_probe(tool: str, argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run one shim in-process: (exit code, stdout, stderr), as the launcher would print them.

    Raises:
        KeyError: ``tool`` is not one of :data:`SHIMS`.
        LabError: no lab state at ``$NETGHOST_LAB_STATE`` (from ``env`` or the process).
    """
    module = importlib.import_module(SHIMS[tool])
    vantage = load_vantage(env)
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


if __name__ == "__main__":
    sys.exit(main())
