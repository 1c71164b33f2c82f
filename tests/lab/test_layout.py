"""The lab's shape: imports respect the directory rule and form no circle (ARCHITECTURE.md "Package layout").

Every import counts, at module level, inside functions or under ``TYPE_CHECKING``. A module may
import another lab module only if the directory holding the target is its own or an ancestor
(so subpackage internals ``_x.py`` are reached through the subpackage's face), and nothing
outside the lab may import past ``netghost.lab`` itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import netghost
import netghost.lab

LAB = Path(netghost.lab.__file__).parent
SRC = Path(netghost.__file__).parent.parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(name: str) -> Path | None:
    base = SRC.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def _imports(path: Path) -> set[str]:
    """Every lab module ``path`` names in an import (``from pkg import mod`` names ``pkg.mod``)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if _resolve(f"{base}.{alias.name}") else base)
    return {name for name in found if name.startswith("netghost.lab") and _resolve(name)}


def _holder(name: str) -> Path:
    """D(T): the directory holding module ``name`` (for a package, the one holding its folder)."""
    target = _resolve(name)
    assert target is not None
    return target.parent.parent if target.name == "__init__.py" else target.parent


def _lab_modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(LAB.rglob("*.py"))}


def test_lab_imports_follow_the_directory_rule() -> None:
    bad = []
    for path in [*sorted(LAB.rglob("*.py")), *sorted(p for p in (SRC / "netghost").rglob("*.py") if LAB not in p.parents)]:
        for target in _imports(path):
            holder = _holder(target)
            if holder != path.parent and holder not in path.parent.parents:
                bad.append(f"{_module_name(path)} imports {target}")
    assert bad == []


def test_lab_has_no_import_circle() -> None:
    modules = _lab_modules()
    graph = {name: _imports(path) for name, path in modules.items()}
    state: dict[str, int] = {}
    circles: list[str] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                circles.append(" -> ".join([*stack[stack.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert circles == []
