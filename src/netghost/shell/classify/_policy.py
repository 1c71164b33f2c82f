"""An organisation policy once loaded: its prefix rules and how they decide one argv.

Why apart from the file loader (``_policy_file``): the classifier applies a policy and the loader
verifies a policy's examples with the classifier, so the loaded shape sits below both of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Decision", "OrgPolicy", "OrgRule"]

Decision = Literal["SAFE", "RISKY", "FORBIDDEN"]
_RANK = {"SAFE": 0, "RISKY": 1, "FORBIDDEN": 2}


@dataclass(frozen=True)
class OrgRule:
    """One prefix rule."""

    id: str
    prefix: tuple[frozenset[str], ...]
    decision: Decision
    justification: str

    def matches(self, argv: Sequence[str]) -> bool:
        """True when ``argv`` starts with this rule's prefix (each element one of its words)."""
        return len(argv) >= len(self.prefix) and all(a in alts for a, alts in zip(argv, self.prefix, strict=False))


@dataclass(frozen=True, eq=False)
class OrgPolicy:
    """A loaded, verified organisation policy (compare by identity; hashable for caching)."""

    rules: tuple[OrgRule, ...]
    hash: str
    source: str

    def decide(self, argv: Sequence[str]) -> OrgRule | None:
        """The strictest rule matching ``argv`` (first in file order among equals), or None."""
        best: OrgRule | None = None
        for rule in self.rules:
            if rule.matches(argv) and (best is None or _RANK[rule.decision] > _RANK[best.decision]):
                best = rule
        return best
