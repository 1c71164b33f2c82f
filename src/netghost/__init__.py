"""Network Ghost Agent: an AI network-forensics investigator for Azure.

The package is layered; imports only point down:
``agent``/``mcp`` -> ``orchestrator`` -> ``shell`` -> ``governance`` -> ``contracts``.
``forensics`` imports only ``contracts`` (it runs as a program through the shell) and ``lab`` is
imported only by the CLI's ``demo``/``lab`` entries and by tests. Each package is imported through
its face (``from netghost.shell import SafeExecShell``), never a module inside it, and every
exception lives in ``netghost.errors``.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
