"""One lazy package face (PEP 562), shared by every package whose face re-exports its submodules' names.

Why: a process that needs one name (each ``az`` shim of the lab is a new process; so is every CLI start)
should not import every submodule a face lists. The face keeps its imports under ``TYPE_CHECKING`` for
type checkers and binds ``__getattr__, __dir__ = lazy_face(__name__, HOMES, __all__)``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_face"]


def lazy_face(package: str, homes: Mapping[str, str],
              public: Sequence[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a public name is imported from ``package.<homes[name]>``
    on first use and bound in the package, so later look-ups skip the function."""
    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(public))

    return getattr_, dir_
