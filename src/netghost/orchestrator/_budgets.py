"""Per-session budgets (``policies/budgets.toml``): defaults, the user's overrides, and the refusal's words.

Why here: the capture budgets are enforced by the orchestrator's preflight policy (``capture.rego``), and
the agent and the MCP server both sit above the orchestrator, so one :class:`Budgets` value read from one
data file serves the loop (calls per turn, hypotheses) and the policy (concurrent captures, capture
seconds and bytes). Every refusal is worded by :func:`budget_message`, so the model, the screen and the
audit name the budget, its limit, the count, and how to raise it the same way everywhere.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from netghost.contracts import IN_FLIGHT_TASK_STATES, TaskRecord
from netghost.errors import PolicyError

__all__ = ["BUDGETS_ENV", "BUDGET_NAMES", "Budgets", "budget_message", "capture_budget_facts"]

BUDGETS_ENV = "NETGHOST_BUDGETS"
"""``NAME=VALUE[,NAME=VALUE...]``: budgets raised (or lowered) for every session of this process."""
BUDGET_NAMES = ("calls_per_turn", "hypotheses_per_session", "concurrent_captures", "capture_seconds",
                "capture_bytes")
_SIZE = re.compile(r"^\s*(\d+)\s*([kKmMgG]?)(?:i?[bB])?\s*$")
_MULTIPLIER = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


@lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, Any]]:
    source = resources.files("netghost.orchestrator").joinpath("policies", "budgets.toml")
    try:
        raw = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PolicyError(f"budgets.toml cannot be read: {exc}", path=str(source)) from exc
    missing = [n for n in BUDGET_NAMES if not isinstance((raw.get(n) or {}).get("default"), int)]
    if missing or not str(raw.get("justification", "")).strip():
        raise PolicyError(f"budgets.toml: every budget needs an integer default ({', '.join(missing) or 'ok'}) and "
                          "the file a justification", path=str(source))
    return {n: dict(raw[n]) for n in BUDGET_NAMES}


def _value(name: str, text: str, source: str) -> int:
    match = _SIZE.match(text)
    if match is None or (match[2] and name != "capture_bytes"):
        raise PolicyError(f"{source} {name}={text}: expected a positive whole number"
                          + (" (K/M/G allowed)" if name == "capture_bytes" else ""), rule=name)
    value = int(match[1]) * _MULTIPLIER[match[2].lower()]
    if value < 1:
        raise PolicyError(f"{source} {name}={text}: must be at least 1", rule=name)
    return value


@dataclass(frozen=True)
class Budgets:
    """The limits of one session (see ``policies/budgets.toml`` for each one's meaning)."""

    calls_per_turn: int
    hypotheses_per_session: int
    concurrent_captures: int
    capture_seconds: int
    capture_bytes: int

    @classmethod
    def defaults(cls) -> Budgets:
        """The shipped defaults.

        Raises:
            PolicyError: the budgets file is unreadable or malformed.
        """
        return cls(**{n: int(spec["default"]) for n, spec in _table().items()})

    @classmethod
    def load(cls, environ: Mapping[str, str], flags: Iterable[str] = ()) -> Budgets:
        """The defaults, then ``$NETGHOST_BUDGETS``, then ``--budget NAME=VALUE`` flags (the last word wins).

        Raises:
            PolicyError: an unknown budget name or a value that is not a positive whole number.
        """
        budgets = cls.defaults()
        env_items = [i for i in environ.get(BUDGETS_ENV, "").split(",") if i.strip()]
        return budgets.with_items(env_items, BUDGETS_ENV).with_items(flags, "--budget")

    def with_items(self, items: Iterable[str], source: str) -> Budgets:
        """These budgets with ``NAME=VALUE`` items applied.

        Raises:
            PolicyError: an item is malformed, names no budget, or its value is not a positive whole number.
        """
        changes: dict[str, int] = {}
        for item in items:
            name, eq, text = item.strip().partition("=")
            name = name.strip().replace("-", "_")
            if not eq or name not in BUDGET_NAMES:
                raise PolicyError(f"{source} {item!r}: expected NAME=VALUE with NAME one of {', '.join(BUDGET_NAMES)}",
                                  rule=name or None)
            changes[name] = _value(name, text, source)
        return dataclasses.replace(self, **changes) if changes else self

    def limit(self, name: str) -> int:
        """The limit of budget ``name``."""
        return int(getattr(self, name))

    def as_dict(self) -> dict[str, int]:
        """Every budget by name."""
        return {n: self.limit(n) for n in BUDGET_NAMES}


def budget_message(name: str, limit: int, count: int, what: str = "") -> str:
    """The one wording of a refusal: the budget, its limit, the count, what was refused, how to raise it."""
    unit = str(_table()[name].get("unit", ""))
    tail = f" {what}." if what else ""
    return (f"Budget {name} exceeded: limit {limit} {unit}, count {count} {unit}.{tail} Raise it with "
            f"--budget {name}=N or {BUDGETS_ENV}={name}=N if the investigation really needs more.")


def capture_budget_facts(budgets: Budgets, tasks: Iterable[TaskRecord], *, duration_s: int,
                         limit_bytes: int, default_limit_bytes: int) -> dict[str, dict[str, Any]]:
    """The capture budgets' facts for the preflight policy: each limit, and the count with this capture in.

    ``tasks`` are the session's tasks so far (earlier runs of a resumed session included). A task counts
    against the seconds and bytes once it is on its way or its create was sent (a task the policy or
    detection stopped before that never cost anything); it counts as concurrent while it is on its way.
    """
    running = seconds = size = 0
    for task in tasks:
        on_its_way = task.state in IN_FLIGHT_TASK_STATES
        running += on_its_way
        if on_its_way or task.create_issued:
            seconds += task.parameters.duration_seconds if task.parameters is not None else 0
            size += default_limit_bytes
    counts = {"concurrent_captures": (running + 1, "This capture was not started."),
              "capture_seconds": (seconds + duration_s, f"This {duration_s} s capture was not started."),
              "capture_bytes": (size + limit_bytes, "This capture was not started.")}
    facts: dict[str, dict[str, Any]] = {}
    for name, (count, what) in counts.items():
        limit = budgets.limit(name)
        facts[name] = {"limit": limit, "count": count, "message": budget_message(name, limit, count, what)}
    return facts
