"""When to retry a failed model call and how long to wait.

The SDK sends one request and raises (its default retry options are off); the gateway retries 429 and
5xx only: a 429 is a quota that refills, a 5xx a server that may recover, while any other 4xx is a
request that will fail the same way again. The server's own hint wins over the computed backoff: the
Gemini API puts a ``google.rpc.RetryInfo`` detail (``"retryDelay": "7s"``) in a 429's error body, and
proxies send ``Retry-After``. No jitter: one process makes one call at a time, and tests stay exact.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["backoff_delay", "is_retryable", "retry_hint"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")
_TOO_MANY = 429
_SERVER = 500


def is_retryable(status: int | None) -> bool:
    """429 and every 5xx; never another 4xx, and never a call that got no answer at all."""
    return status is not None and (status == _TOO_MANY or status >= _SERVER)


def retry_hint(details: Any, headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait: RetryInfo ``retryDelay`` in the error body, else ``Retry-After``."""
    error = details.get("error") if isinstance(details, Mapping) else None
    items = error.get("details") if isinstance(error, Mapping) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and str(item.get("@type", "")).endswith("google.rpc.RetryInfo"):
            found = _DURATION.match(str(item.get("retryDelay", "")))
            if found:
                return float(found.group(1))
    value = (headers or {}).get("retry-after") or (headers or {}).get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:  # an HTTP date: not worth parsing, fall back to our own backoff
        return None


def backoff_delay(retry: int, *, initial_s: float, max_s: float, hint: float | None) -> float:
    """Seconds before retry number ``retry`` (1, 2, ...): the server's hint, else ``initial_s * 2**(retry-1)``;
    capped at ``max_s`` so a run never stalls longer than the operator allowed."""
    delay = hint if hint is not None else initial_s * 2 ** (retry - 1)
    return max(0.0, min(delay, max_s))
