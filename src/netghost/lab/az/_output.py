"""Rendering a command result the way az (knack) renders it: ``--query`` then ``-o``.

* ``json``: sorted keys, two-space indent, non-ASCII kept;
* ``jsonc``: the same document with ANSI colours (pygments, as knack does);
* ``tsv``: knack's ``_TsvOutput`` — a top-level list gives one row per item; a dict row lists its
  values in sorted-key order, except a ``--query`` multiselect hash, which keeps query order; a nested dict becomes an empty field and a nested list its length;
  a bool inside a dict prints ``True``/``False`` but a top-level bool prints ``true``/``false``;
* ``table``: knack's auto table (scalar columns only, ``id``/``type``/``etag`` skipped, first
  letter capitalised) or the command's own table transformer, laid out like tabulate's
  ``simple`` format;
* ``yaml``/``yamlc``: ``yaml.safe_dump``;
* ``none``: nothing.

A result of ``None`` (and a query that evaluates to null) prints nothing at all.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import jmespath
import yaml

__all__ = ["add_resource_groups", "apply_query", "render", "render_table", "render_tsv"]

_SKIP_KEYS = ("id", "type", "etag")


def apply_query(result: Any, query: str | None) -> Any:
    """Apply a JMESPath ``--query`` the way az does (the ``jmespath`` package)."""
    if query is None:
        return result
    # As az: multiselect hashes become OrderedDicts, which tsv/table keep in query order.
    return jmespath.search(query, result, jmespath.Options(dict_cls=OrderedDict))


def _tsv_obj(value: Any) -> str:
    if isinstance(value, list):
        return str(len(value))
    if isinstance(value, dict):
        return ""
    return value if isinstance(value, str) else str(value)


def _tsv_row(item: Any) -> str:
    if isinstance(item, OrderedDict):
        return "\t".join(_tsv_obj(v) for v in item.values())
    if isinstance(item, dict):
        return "\t".join(_tsv_obj(v) for _, v in sorted(item.items()))
    if isinstance(item, list):
        return "\t".join(_tsv_obj(v) for v in item)
    if isinstance(item, bool):
        return str(item).lower()
    return _tsv_obj(item)


def add_resource_groups(value: Any) -> None:
    """az's output transform (``azure.cli.core.commands.transform``), before ``--query``: every object with an
    ARM ``id`` under a resource group and no ``resourceGroup`` key gets one (``sourceVault`` is skipped)."""
    if isinstance(value, list):
        for item in value:
            add_resource_groups(item)
    elif isinstance(value, dict):
        rid = value.get("id")
        if isinstance(rid, str) and rid and "resourcegroup" not in (k.lower() for k in value):
            parts = rid.split("/")
            if len(parts) > 8 and parts[3].lower() == "resourcegroups":
                value["resourceGroup"] = parts[4]
        for key, item in value.items():
            if key != "sourceVault":
                add_resource_groups(item)


def render_tsv(result: Any) -> str:
    """knack's tsv: one line per top-level item."""
    rows = result if isinstance(result, list) else [result]
    return "".join(_tsv_row(item) + "\n" for item in rows)


def _format_key(key: str) -> str:
    return key[0].upper() + key[1:] if key else key


def _auto_row(item: Any, sort_keys: bool) -> dict[str, Any]:
    if isinstance(item, dict):
        keys = sorted(item) if sort_keys else list(item)
        return {
            _format_key(k): item[k] for k in keys
            if k not in _SKIP_KEYS and item[k] is not None and not isinstance(item[k], (list, dict, set))
        }
    if isinstance(item, list):
        return {f"Column{i + 1}": v for i, v in enumerate(item)}
    return {"Result": item}


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    return str(value)


def render_table(rows: Sequence[dict[str, Any]]) -> str:
    """tabulate ``simple`` layout (headers, dashes, two-space gaps), trailing spaces trimmed."""
    if not rows:
        return ""
    headers: list[str] = []
    for row in rows:
        for key in row:
            if key not in headers:
                headers.append(key)
    cells = [[_cell(row.get(h)) for h in headers] for row in rows]
    numeric = [
        all(isinstance(row.get(h), (int, float)) and not isinstance(row.get(h), bool)
            for row in rows if row.get(h) is not None)
        and any(row.get(h) is not None for row in rows)
        for h in headers
    ]
    widths = [max(len(h) + 2, *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]

    def line(values: Sequence[str], header: bool = False) -> str:
        parts = []
        for i, value in enumerate(values):
            right = numeric[i] and not header
            parts.append(value.rjust(widths[i]) if right else value.ljust(widths[i]))
        return "  ".join(parts).rstrip()

    out = [line(headers, header=True), "  ".join("-" * w for w in widths)]
    out.extend(line(c) for c in cells)
    return "\n".join(out) + "\n"


def _auto_table(result: Any, sort_keys: bool) -> list[dict[str, Any]]:
    if isinstance(result, list):
        return [_auto_row(item, sort_keys) for item in result]
    return [_auto_row(result, sort_keys)]


def _jsonc(text: str) -> str:
    # pygments is imported only for -o jsonc: it costs ~50 ms and most calls never colour.
    from pygments import highlight  # noqa: PLC0415  lazy on purpose (see above)
    from pygments.formatters import TerminalFormatter  # noqa: PLC0415
    from pygments.lexers import JsonLexer  # noqa: PLC0415

    return str(highlight(text, JsonLexer(), TerminalFormatter()))


def render(
    result: Any,
    output: str,
    query: str | None = None,
    table_transformer: Callable[[Any], list[dict[str, Any]]] | None = None,
) -> str:
    """The exact stdout text az prints for ``result`` (empty string when it prints nothing)."""
    add_resource_groups(result)
    if query is not None:
        result = apply_query(result, query)
    if result is None or output == "none":
        return ""
    if output in ("json", "jsonc"):
        text = json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        return _jsonc(text) if output == "jsonc" else text
    if output in ("yaml", "yamlc"):
        return str(yaml.safe_dump(result, default_flow_style=False, allow_unicode=True))
    if output == "tsv":
        return render_tsv(result)
    if output == "table":
        if table_transformer is not None and query is None:
            return render_table(table_transformer(result))
        return render_table(_auto_table(result, sort_keys=query is None))
    raise ValueError(f"unknown output format {output!r}")
