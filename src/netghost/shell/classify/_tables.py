"""Load and compile the built-in policy tables (``rules/*.toml``) once per process.

Why TOML data: the tiers are policy that a reviewer reads rule by rule, each with its
justification and examples; the code only interprets them. Loading is strict: an unknown field,
a missing justification or a bad value check is a ``PolicyError`` at import time, and the
examples are verified by ``_classify`` right after it has compiled the tables.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from netghost.errors import PolicyError
from netghost.shell.classify._az import AzTable, compile_az
from netghost.shell.classify._options import OptionSpec, compile_spec
from netghost.shell.classify._tier0 import Tier0Index, compile_tier0, index_tier0

__all__ = ["Tables", "load_tables"]


@dataclass(frozen=True)
class Tables:
    """Every built-in table, compiled."""

    tier0: Tier0Index
    tier1: dict[str, OptionSpec]
    az: AzTable
    tier3_reasons: dict[str, str]
    wrappers: frozenset[str]


def _read(name: str) -> dict[str, Any]:
    source = resources.files("netghost.shell.classify").joinpath("rules", name)
    try:
        return tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PolicyError(f"built-in rule file rules/{name} cannot be read: {exc}", path=str(source)) from exc


@lru_cache(maxsize=1)
def load_tables() -> Tables:
    """Compile the built-in tables (cached: called once per process).

    Raises:
        PolicyError: A rule file is unreadable or a rule is malformed.
    """
    try:
        t0 = compile_tier0(_read("tier0.toml")["rule"])
        t1_raw = _read("tier1.toml")["binary"]
        t1 = {name: compile_spec(name, spec) for name, spec in t1_raw.items()}
        az = compile_az(_read("az.toml"))
        t3 = _read("tier3.toml")
        reasons = dict(t3["reasons"])
        if not str(reasons.pop("justification", "")).strip():
            raise ValueError("tier3 reasons: justification is mandatory")
        wrappers = frozenset(t3["wrappers"])
    except (KeyError, ValueError, TypeError) as exc:
        raise PolicyError(f"built-in rule tables are malformed: {exc}") from exc
    return Tables(tier0=index_tier0(t0), tier1=t1, az=az, tier3_reasons=reasons, wrappers=wrappers)
