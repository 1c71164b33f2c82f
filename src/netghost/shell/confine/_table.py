"""The sealed lab's table (``programs.toml``), read once and checked: readers, the remover, file options.

Why a separate module: the table is data a reviewer reads entry by entry; this module only turns it into
typed values, and a malformed table is a :class:`~netghost.errors.PolicyError` at first use, never a
silently weaker boundary.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from netghost.errors import PolicyError

__all__ = ["ConfinementTable", "OptionTable", "load_table"]


@dataclass(frozen=True)
class OptionTable:
    """The options a reader may be given: flags alone, and options that take a (non-file) value."""

    flags: frozenset[str]
    values: frozenset[str]


@dataclass(frozen=True)
class ConfinementTable:
    """Everything ``programs.toml`` says."""

    readers: dict[str, OptionTable]
    remover: str
    remover_flags: frozenset[str]
    files: dict[str, frozenset[str]]
    engine_script: str
    engine_module: str


def _strings(value: Any, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.startswith("-") for v in value):
        raise PolicyError(f"confinement table: {where} must be a list of options", path="programs.toml")
    return frozenset(value)


@lru_cache(maxsize=1)
def load_table() -> ConfinementTable:
    """The compiled table (cached: read once per process).

    Raises:
        PolicyError: the file is unreadable or an entry is malformed.
    """
    source = resources.files("netghost.shell.confine").joinpath("programs.toml")
    try:
        raw = tomllib.loads(source.read_text(encoding="utf-8"))
        if not str(raw.get("justification", "")).strip():
            raise PolicyError("confinement table: justification is mandatory", path="programs.toml")
        readers = {name: OptionTable(_strings(spec["flags"], f"readers.{name}.flags"),
                                     _strings(spec["values"], f"readers.{name}.values"))
                   for name, spec in raw["readers"].items()}
        remover = raw["remover"]
        files = {name: _strings(options, f"files.{name}") for name, options in raw["files"].items()}
        engine = raw["engine"]
        return ConfinementTable(readers, str(remover["program"]), _strings(remover["flags"], "remover.flags"), files,
                         str(engine["console_script"]), str(engine["module"]))
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise PolicyError(f"confinement table programs.toml cannot be read: {exc}", path=str(source)) from exc
