"""Test-wide isolation: no test sees the developer's HOME, keys or Azure settings."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "tests" / "data"
GOLDEN_DIR = REPO_ROOT / "tests" / "golden"

pytest_plugins = ("tests._schedule",)  # the order of the test list: the slow modules head the workers' blocks

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


@pytest.fixture(autouse=True)
def no_resident_lab_left() -> Iterator[None]:
    """A test that prepared a lab (``prepare_lab`` starts the state's resident lab process) without closing
    it must not leave that process to its idle timeout: stop what this worker started during the test (a
    module- or session-scoped fixture's resident lab, started before, lives on until that fixture ends)."""
    process = sys.modules.get("netghost.lab.resident._process")
    before = process.started_residents() if process is not None else []
    yield
    process = sys.modules.get("netghost.lab.resident._process")
    if process is not None:
        process.stop_started_residents(keep=before)


@pytest.fixture
def data_dir() -> Path:
    """The corpora copied from ../shared/corpus (tests never read ../shared directly)."""
    return DATA_DIR


@pytest.fixture
def golden_dir() -> Path:
    """JSON examples copied verbatim from the seeds."""
    return GOLDEN_DIR


@pytest.fixture(autouse=True)
def sigint_left_as_found(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test (or a library it drives) that ignores or blocks SIGINT and does not put it back would leave
    every later child process deaf to Ctrl-C (both are inherited across exec): restore and say which."""
    handler = signal.getsignal(signal.SIGINT)
    yield
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    if blocked:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if signal.getsignal(signal.SIGINT) is not handler or blocked:
        signal.signal(signal.SIGINT, handler if handler is not None else signal.default_int_handler)
        print(f"\n{request.node.nodeid} left SIGINT {'blocked' if blocked else 'changed'}; restored", file=sys.stderr)
