"""The shape of ``src/netghost``: layers, faces, no import circles, complete faces, no import-time effects.

What ARCHITECTURE.md ("One system, six parts", "Package layout") and the README's layout section
promise, checked on the code itself. Every import counts: module level, inside functions and under
``if TYPE_CHECKING:`` (an import deferred into a function still makes a circle; it only hides it).

- **Layers**: imports point down only (``agent``/``mcp`` → ``orchestrator`` → ``shell`` →
  ``governance`` → ``contracts``, with ``errors``, ``redact`` and ``safetext`` at the bottom and the LLM gateway
  ``llm`` just above governance); ``forensics`` imports only ``contracts``, ``redact``, ``safetext`` and ``llm`` (it
  runs as a program);
  ``lab`` is imported by nothing in the product but the CLI's demo/lab entries.
- **Faces (the directory rule)**: a module may import another only if the directory holding the
  target is its own or an ancestor; so ``netghost.lab`` is the face other packages use, and
  ``netghost.lab.world._spec`` is reached only from inside ``lab/world/``.
- **No circles** in the module graph. An edge goes to the module named, not to its parent packages.
- **Complete faces**: every package's ``__init__`` has a sorted ``__all__`` whose names resolve, and
  every name any module takes from a face is in that face's ``__all__``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import netghost

SRC = Path(netghost.__file__).parent.parent
PKG = SRC / "netghost"

# Which top-level parts each part may import (besides itself). ``errors`` sits with ``contracts`` at
# the bottom, with ``_lazy`` (the one lazy package face every face uses). The root modules (``netghost/__init__``, ``__main__``) are entry points above everything.
# ``redact`` (the secret redactor) sits at the bottom too, so that everything that lets text out (the
# shell, the LLM gateway, the forensics narrative) can use the one redactor; ``safetext`` (untrusted text
# made safe for a terminal or Markdown) sits beside it for the same reason. ``llm`` (the LLM gateway every
# Gemini call passes) sits just above ``governance`` (its WAL), below everything that talks to a model.
_BASE = {"contracts", "errors", "redact", "safetext", "_lazy"}
ALLOWED: dict[str, set[str]] = {
    "_lazy": set(),
    "errors": set(),
    "redact": set(),
    "safetext": set(),
    "contracts": {"errors", "_lazy"},
    "governance": _BASE,
    "llm": {"governance", *_BASE},
    "shell": {"governance", *_BASE},
    "orchestrator": {"shell", "governance", *_BASE},
    "agent": {"orchestrator", "shell", "llm", "governance", *_BASE},
    "mcp": {"orchestrator", "shell", "llm", "governance", *_BASE},
    "forensics": {"llm", *_BASE},
    "lab": _BASE,
}
# The only product modules that may import the lab (ARCHITECTURE.md: the CLI's demo entry, and the benchmark that runs it).
LAB_IMPORTERS = {"netghost.agent.cli", "netghost.agent.demo", "netghost.agent.eval"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _resolve(name: str) -> Path | None:
    base = SRC.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


@cache
def _import_nodes(path: Path) -> list[tuple[str, list[str]]]:
    """``(module named, names taken from it)`` for every import statement in ``path``, resolved."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.append((base, [alias.name for alias in node.names]))
    return found


def _edges(path: Path) -> set[str]:
    """The netghost modules ``path`` imports (``from pkg import mod`` names ``pkg.mod``)."""
    out: set[str] = set()
    for base, names in _import_nodes(path):
        submodules = {f"{base}.{n}" for n in names if _resolve(f"{base}.{n}")}
        out.update(submodules)
        if len(submodules) < len(names) or not names:
            out.add(base)
    return {name for name in out if name.split(".")[0] == "netghost" and _resolve(name)}


def _holder(name: str) -> Path:
    """D(T): the directory holding module ``name`` (for a package, the one holding its folder)."""
    target = _resolve(name)
    assert target is not None
    return target.parent.parent if target.name == "__init__.py" else target.parent


def _part(name: str) -> str:
    """The top-level part a module belongs to (``netghost.shell.classify._az`` → ``shell``)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def _graph() -> dict[str, set[str]]:
    return {name: _edges(path) for name, path in _modules().items()}


def test_the_walk_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The checks below are only as good as the edges: function-level, TYPE_CHECKING and relative
    imports must all be edges (a checker that skipped them would pass a circle they hide)."""
    edges = _edges(PKG / "forensics" / "__init__.py")  # its imports sit under TYPE_CHECKING only
    assert "netghost.forensics.engine" in edges
    edges = _edges(PKG / "forensics" / "__main__.py")  # imports the CLI inside main()
    assert "netghost.forensics.cli" in edges
    relative = [p for p in PKG.rglob("*.py") if "from ." in p.read_text(encoding="utf-8")]
    for path in relative:
        assert _edges(path), f"{path}: relative imports not resolved"


def test_imports_point_down_the_layers() -> None:
    bad = []
    for name, targets in _graph().items():
        part = _part(name)
        if part in {"__main__", ""}:
            continue
        for target in targets:
            other = _part(target)
            if other in {part, ""} or other in ALLOWED[part]:  # "": the root package (its version)
                continue
            if other == "lab" and name in LAB_IMPORTERS:
                continue
            bad.append(f"{name} ({part}) imports {target} ({other})")
    assert bad == []


def test_imports_go_through_faces() -> None:
    """The directory rule: a target's holding directory is the importer's own or an ancestor."""
    bad = []
    for name, path in _modules().items():
        for target in _edges(path):
            holder = _holder(target)
            if holder != path.parent and holder not in path.parent.parents:
                bad.append(f"{name} imports {target}, past its face")
    assert bad == []


def test_no_import_circles() -> None:
    graph = _graph()
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


def _faces() -> list[str]:
    return sorted(_module_name(p) for p in PKG.rglob("__init__.py"))


def _ruff_order(name: str) -> tuple[int, str]:
    """RUF022's order: SCREAMING_CASE, then CamelCase, then the rest."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def _declared_all(path: Path) -> list[str] | None:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:  # type: ignore[union-attr]
            return list(ast.literal_eval(node.value))  # type: ignore[union-attr]
    return None


@pytest.mark.parametrize("face", _faces())
def test_face_declares_a_sorted_all_that_resolves(face: str) -> None:
    import importlib

    path = _resolve(face)
    assert path is not None
    names = _declared_all(path)
    assert names is not None, f"{face}: no __all__"
    assert names == sorted(set(names), key=_ruff_order), f"{face}.__all__: unsorted or duplicated"
    module = importlib.import_module(face)
    missing = [n for n in names if not hasattr(module, n)]
    assert missing == [], f"{face}.__all__ names what it does not have: {missing}"
    assert (module.__doc__ or "").strip(), f"{face}: no docstring saying what the package is for"


def test_every_name_taken_from_a_face_is_in_its_all() -> None:
    faces = set(_faces())
    bad = []
    for name, path in _modules().items():
        for base, names in _import_nodes(path):
            if base not in faces or base == name:
                continue
            declared = set(_declared_all(_resolve(base)) or ())  # type: ignore[arg-type]
            for n in names:
                if n != "*" and n not in declared and not _resolve(f"{base}.{n}"):
                    bad.append(f"{name} takes {n} from {base}, which does not export it")
    assert bad == []


def test_importing_any_module_has_no_side_effects(tmp_path: Path) -> None:
    """Importing every module changes no environment variable, no working directory and writes no file."""
    script = """
import importlib, json, os, pkgutil, sys
import netghost
before_env, before_cwd = dict(os.environ), os.getcwd()
names = [m.name for m in pkgutil.walk_packages(netghost.__path__, "netghost.") if not m.name.endswith("__main__")]
for name in names:
    importlib.import_module(name)
changed = sorted(k for k in set(before_env) | set(os.environ) if before_env.get(k) != os.environ.get(k))
home = os.environ["HOME"]
written = sorted(os.path.relpath(os.path.join(d, f), home) for d, _, fs in os.walk(home) for f in fs)
print(json.dumps({"modules": len(names), "env": changed, "cwd": os.getcwd() == before_cwd, "files": os.listdir("."),
                  "home": written}))
"""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                         check=True)
    seen = json.loads(out.stdout)
    assert seen["modules"] > 150
    assert seen["env"] == [], f"importing changed environment variables: {seen['env']}"
    assert seen["cwd"] is True
    assert seen["files"] == [], f"importing wrote files: {seen['files']}"
    assert seen["home"] == [], f"importing wrote under HOME (where the audit key lives): {seen['home']}"


def test_every_public_exception_class_lives_in_errors() -> None:
    """The whole error tree reads in one file (errors.py); a module may keep a private control-flow
    exception (``_Stop``) that never leaves it."""
    bad = []
    for name, path in _modules().items():
        if name == "netghost.errors":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                if any(b.endswith(("Error", "Exception")) or b in {"Exception", "BaseException"} for b in bases):
                    bad.append(f"{name}.{node.name}")
    assert bad == [], f"define these in netghost/errors.py: {bad}"
