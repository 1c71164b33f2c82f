"""Shared fixtures of the forensics tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from netghost.forensics import analyze_capture
from netghost.forensics.engine import Analysis

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted(p for d in ("pcaps", "pairs") for p in (REPO / "tests" / "data" / d).iterdir()
                if p.name.endswith((".pcap", ".pcapng")))


@pytest.fixture(scope="session")
def corpus_analyses() -> list[Analysis]:
    """Every corpus and pair capture analysed once per test session (the parity suites compare
    fast helpers with their plain numpy versions on these)."""
    return [analyze_capture(p) for p in CORPUS]
