"""The lab's probe shims: ``ping``, ``dig``, ``nslookup``, ``traceroute``, ``curl``, ``ss``, ``netstat``
answering as the engineer's own machine would, from the lab world.

By default that machine is a laptop outside every VNet (public resolver, no route to private
addresses), which is exactly why seed 001 warns that local probes mislead; a world may put it
inside a VNet instead. Output layouts and exit codes are the real tools'. :data:`SHIMS` maps each
tool to the module its ``bin/`` launcher runs; :func:`run_probe` runs one in-process, :func:`main`
is ``python -m netghost.lab.probes <tool> ARGS...``.
"""

from netghost.lab.probes._tools import SHIMS, main, run_probe

__all__ = ["SHIMS", "main", "run_probe"]
