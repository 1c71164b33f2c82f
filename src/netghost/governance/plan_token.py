"""Plan-tokens: one canonical JSON form of a plan, hashed and tagged with its algorithm.

A plan-token binds a human approval (and the preflight verdict) to the exact thing that will
run. Everything that hashes in this product goes through :func:`canonical_json` so that the
same data always yields the same bytes: keys sorted, compact separators, UTF-8 kept as is,
and no ``NaN``/``Infinity`` (they have no JSON spelling and would make hashes ambiguous).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from netghost.errors import PlanTokenMismatchError

__all__ = ["canonical_json", "compute_plan_token", "sha256_tagged", "verify_plan_token"]

_TAG = "sha256:"
# Built once: json.dumps would construct an equivalent encoder on every call (hot in WAL verify).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_json(obj: Any) -> str:
    """Serialise ``obj`` to the one canonical JSON text used for every hash.

    Args:
        obj: plain JSON data (dict, list, str, int, float, bool, None).

    Raises:
        TypeError: ``obj`` holds a value JSON cannot represent (datetime, set, bytes...).
        ValueError: ``obj`` holds ``NaN`` or an infinity.
    """
    return _ENCODER.encode(obj)


def sha256_tagged(data: bytes | str) -> str:
    """Return ``"sha256:<hex>"`` of ``data`` (a str is hashed as its UTF-8 bytes)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return _TAG + hashlib.sha256(raw).hexdigest()


def compute_plan_token(plan: Any) -> str:
    """Return the plan-token of ``plan``: ``sha256_tagged(canonical_json(plan))``.

    Args:
        plan: the plan as plain JSON data, e.g. the shell's
            ``{"argv": [...], "cwd": str, "session_id": str, "seq": int}``.

    Raises:
        TypeError: the plan is not plain JSON data.
        ValueError: the plan holds ``NaN`` or an infinity.
    """
    return sha256_tagged(canonical_json(plan))


def verify_plan_token(plan: Any, token: str) -> None:
    """Check that ``plan`` is exactly the plan ``token`` was computed from.

    The comparison is constant-time so a caller probing tokens learns nothing from timing.

    Args:
        plan: the plan about to run.
        token: the plan-token that was approved.

    Raises:
        PlanTokenMismatchError: the plan hashes to a different token.
    """
    actual = compute_plan_token(plan)
    if not hmac.compare_digest(actual.encode("ascii"), token.encode("utf-8", "surrogatepass")):
        raise PlanTokenMismatchError(expected=token, actual=actual)
