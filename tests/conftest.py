"""Test-wide isolation: no test sees the developer's HOME, keys or Azure settings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "tests" / "data"
GOLDEN_DIR = REPO_ROOT / "tests" / "golden"

_SCRUBBED_PREFIXES = ("GEMINI_", "GOOGLE_", "AZURE_", "GHOST_", "CABINCREW_", "NETGHOST_")
# Kept: selects the PCAP engine's pure-numpy path, so `NETGHOST_NO_COMPILED=1 make test` runs the whole
# suite on the fallback a machine without a C compiler gets.
_KEPT = frozenset({"NETGHOST_NO_COMPILED"})


@pytest.fixture(autouse=True)
def clean_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point HOME at tmp_path and drop every variable that could reach a real cloud or model."""
    for name in list(os.environ):
        if name.startswith(_SCRUBBED_PREFIXES) and name not in _KEPT:
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    # the audit key and its checkpoints live under the config dir: never the developer's
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    yield


@pytest.fixture
def data_dir() -> Path:
    """The corpora copied from ../shared/corpus (tests never read ../shared directly)."""
    return DATA_DIR


@pytest.fixture
def golden_dir() -> Path:
    """JSON examples copied verbatim from the seeds."""
    return GOLDEN_DIR
