"""Redacting a JSON-like value (a tool result, a model's function-call arguments) rather than one text.

Why two passes: walking the value redacts each string where it stands (multi-line output keeps its
context), but a string alone loses its label (``{"password": "hunter2x"}`` holds the bare
``hunter2x``), so the walked value is redacted once more as JSON text, where the label rules see the
keys. The second pass only replaces inside string values, so the JSON stays valid; if it ever did
not, the walked value is kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from netghost.redact._redact import redact

__all__ = ["redact_value"]


def _walk(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, Mapping):
        return {_walk(str(k)): _walk(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(v) for v in value]
    return value


def redact_value(value: Any) -> Any:
    """``value`` with every string in it (keys too) redacted; dicts and lists come back as new ones.

    Numbers, booleans and None are kept; tuples come back as lists (the JSON shape).
    """
    walked = _walk(value)
    if not isinstance(walked, dict | list):
        return walked
    try:
        dumped = json.dumps(walked, ensure_ascii=False)
    except (TypeError, ValueError):
        return walked  # not JSON data: the walk is all there is
    done = redact(dumped)
    if not done.count:
        return walked
    try:
        return json.loads(done.text)
    except ValueError:
        return walked
