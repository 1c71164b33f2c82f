"""The AST node of a function, parsed from its own lines only.

Why not ``inspect.getsource``: it tokenises from the definition to its end for every call, and
parsing whole modules is worse (azure-cli's generated files run to tens of thousands of lines; a
first version spent ten minutes in ``compile``). The definition's lines are cut by indentation from
``co_firstlineno`` (decorators included) and only they are parsed; when the cut does not parse (a
multi-line string dedented below the body), ``inspect.getsource`` is the fallback.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from functools import cache
from typing import Any

__all__ = ["node_of"]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


@cache
def _parse_code(filename: str, first: int, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    lines = linecache.getlines(filename)
    if not lines or first < 1 or first > len(lines):
        return None
    start = first - 1
    base = _indent(lines[start])
    end = start + 1
    seen_def = lines[start].lstrip().startswith(("def ", "async def "))
    while end < len(lines):
        line = lines[end]
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and _indent(line) <= base:
            if not seen_def and stripped.startswith(("@", "def ", "async def ")):
                seen_def = seen_def or stripped.startswith(("def ", "async def "))
                end += 1
                continue
            if not stripped.startswith((")", "]", "}")):
                break
        end += 1
    snippet = textwrap.dedent("".join(lines[start:end]))
    try:
        tree = ast.parse(snippet)
    except SyntaxError:
        return None
    node = tree.body[0] if tree.body else None
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
        return node
    return None


def node_of(obj: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The definition node of a function (decorators unwrapped), or None without source."""
    obj = getattr(obj, "__func__", obj)
    if not callable(obj) or inspect.isclass(obj):
        return None
    try:
        obj = inspect.unwrap(obj)  # @distributed_trace and friends wrap with functools.wraps
    except ValueError:
        return None
    code = getattr(obj, "__code__", None)
    if code is None:
        return None
    node = _parse_code(code.co_filename, code.co_firstlineno, code.co_name)
    if node is not None:
        return node
    return _fallback(obj)


def _fallback(obj: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
