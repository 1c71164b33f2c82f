"""Seed 003's coupling rules: the agent never imports subprocess or the forensics package (layer 1)."""

from __future__ import annotations

import ast
from pathlib import Path

import netghost.agent

AGENT = Path(netghost.agent.__file__).parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_module_under_agent_imports_subprocess_or_forensics() -> None:
    offenders = {}
    for path in AGENT.rglob("*.py"):
        bad = {n for n in _imports(path) if n.split(".")[0] in {"subprocess", "pty", "multiprocessing"}
               or n.startswith("netghost.forensics") or n in {"os.system"}}
        text = path.read_text(encoding="utf-8")
        if "os.system(" in text or "os.popen(" in text or "os.exec" in text:
            bad.add("os process call")
        if bad:
            offenders[str(path.relative_to(AGENT))] = bad
    assert offenders == {}
