"""The maps match the tree: each package README's map lists exactly its files, and the project README's
layout section names every package and subpackage.

A map that drifts from the code misleads the next engineer more than no map, so a move that forgets
the README fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import netghost

PKG = Path(netghost.__file__).parent
ROOT = PKG.parent.parent
# what a map lists: source, data and docs; not build products or caches
LISTED = {".py", ".pyx", ".pxi", ".md", ".json", ".yaml", ".toml", ".rego", ".typed"}
ENTRY = re.compile(r"^(?P<indent>(?:[│ ]   )*)[├└]── (?P<name>\S+)")


def _map_block(readme: Path) -> list[str]:
    text = readme.read_text(encoding="utf-8")
    blocks = re.findall(r"```\n(.*?)```", text, flags=re.S)
    for block in blocks:
        lines = block.splitlines()
        if lines and lines[0].strip() == f"{readme.parent.name}/":
            return lines[1:]
    raise AssertionError(f"{readme}: no map block starting with '{readme.parent.name}/'")


def _parse(lines: list[str]) -> dict[str, dict | None]:
    """The map as a tree: {name: children, or None for an entry with nothing itemised under it}."""
    entries = [(len(m.group("indent")) // 4, m.group("name").rstrip("/")) for m in map(ENTRY.match, lines) if m]

    def build(start: int, depth: int) -> tuple[dict[str, dict | None], int]:
        out: dict[str, dict | None] = {}
        i = start
        while i < len(entries) and entries[i][0] >= depth:
            name = entries[i][1]
            i += 1
            children = None
            if i < len(entries) and entries[i][0] > depth:
                children, i = build(i, depth + 1)
            out[name] = children
        return out, i

    return build(0, 0)[0]


def _actual(folder: Path) -> set[str]:
    return {
        p.name for p in folder.iterdir()
        if p.name != "__pycache__" and (p.is_dir() or p.suffix in LISTED)
    }


def _check(folder: Path, listed: dict[str, dict | None], where: str) -> list[str]:
    problems = []
    actual = _actual(folder)
    for name in sorted(set(listed) - actual):
        problems.append(f"{where}{name}: in the map, not in the tree")
    for name in sorted(actual - set(listed)):
        problems.append(f"{where}{name}: in the tree, not in the map")
    for name, children in listed.items():
        path = folder / name
        if not path.is_dir():
            continue
        if children is None:
            if any(path.rglob("*.py")):
                problems.append(f"{where}{name}/: holds Python modules, so the map must list them")
            continue
        problems += _check(path, children, f"{where}{name}/")
    return problems


PACKAGES = sorted(p.parent.name for p in PKG.glob("*/README.md"))


@pytest.mark.parametrize("package", PACKAGES)
def test_package_readme_map_matches_the_tree(package: str) -> None:
    readme = PKG / package / "README.md"
    listed = _parse(_map_block(readme))
    assert listed, f"{readme}: the map lists nothing"
    assert _check(PKG / package, listed, f"{package}/") == []


def test_every_package_with_subpackages_has_a_map() -> None:
    for folder in sorted(p for p in PKG.iterdir() if (p / "__init__.py").exists()):
        if any((sub / "__init__.py").exists() for sub in folder.iterdir() if sub.is_dir()):
            assert (folder / "README.md").exists(), f"{folder.name}/ has subpackages but no README map"


def test_project_readme_layout_names_every_package_and_subpackage() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    missing = []
    for package in sorted(p for p in PKG.iterdir() if (p / "__init__.py").exists()):
        if f"{package.name}/" not in layout:
            missing.append(f"{package.name}/")
        for sub in sorted(p for p in package.iterdir() if (p / "__init__.py").exists()):
            if f"{sub.name}/" not in layout:
                missing.append(f"{package.name}/{sub.name}/")
    assert missing == [], f"README layout section does not name: {missing}"
