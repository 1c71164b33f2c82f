"""Which engine path runs: the compiled (Cython) kernels or the pure numpy/Python fallback.

The hot loops (record walk + decode, TCP analysis) are Cython extension modules built at install time
by ``setup.py`` (optional extensions: without a C compiler the install still succeeds). A compiled
module is used when it is importable and ``NETGHOST_NO_COMPILED=1`` is not set; otherwise callers run
the pure path, which gives the same output (tests compare both paths).

Why no JIT: numba's import and first cached dispatch cost ~0.5 CPU s per process, more than the whole
decode budget; an extension module costs one ``dlopen``.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["compiled", "compiled_enabled"]

DISABLE_ENV = "NETGHOST_NO_COMPILED"


def compiled_enabled() -> bool:
    """False when ``NETGHOST_NO_COMPILED`` is set to a non-empty value other than ``0``."""
    return os.environ.get(DISABLE_ENV, "") in {"", "0"}


def compiled(name: str) -> ModuleType | None:
    """The extension module ``netghost.forensics.<name>``, or ``None`` (not built, or disabled).

    Args:
        name: module name inside the package, e.g. ``"decode._walkdecode"``.
    """
    if not compiled_enabled():
        return None
    try:
        return importlib.import_module(f"netghost.forensics.{name}")
    except ImportError:
        return None

