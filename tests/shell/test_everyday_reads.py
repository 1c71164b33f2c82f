"""A network engineer's everyday reads (tests/shell/everyday_corpus.py) get the verdict their data says.

Classified as an investigation runs them: the egress scope seeded from a problem statement, the shell's working
directory the session's. SAFE-expected rows must be SAFE (the learned stage on, as users get it), NOT_SAFE rows
must not be; rows the data calls secret-free that the classifier still stops are known gaps (``why`` starts with
``gap:``), marked strict so that fixing one fails here until its mark is removed.
"""

from __future__ import annotations

import json

import pytest

from netghost.redact import PathContext
from netghost.shell.classify import EgressScope, classify
from tests.shell.everyday_corpus import OUT, SCOPE_TEXT, SESSION, generate, render

ROWS = [json.loads(line) for line in OUT.read_text(encoding="utf-8").splitlines() if line.strip()]
SCOPE = EgressScope().with_text(SCOPE_TEXT)
LOCAL = PathContext(cwd=SESSION, home="/home/azureuser")


def _verdict(command: str) -> str:
    return classify(command, scope=SCOPE, local=LOCAL).verdict


def _param(row: dict[str, str]) -> object:
    gap = row["why"].startswith("gap:")
    marks = [pytest.mark.xfail(reason=row["why"], strict=True)] if gap else []
    return pytest.param(row, marks=marks, id=row["command"][:80])


def test_data_file_is_what_the_generator_produces() -> None:
    assert OUT.read_text(encoding="utf-8") == render(generate())


def test_the_corpus_covers_a_network_engineers_day() -> None:
    classes = {r["class"] for r in ROWS}
    assert {"az-network", "az-compute", "az-storage", "az-monitor", "dns", "http", "path", "sockets", "capture", "tls"} <= classes
    assert sum(r["expected"] == "SAFE" for r in ROWS) >= 300


@pytest.mark.parametrize("row", [_param(r) for r in ROWS if r["expected"] == "SAFE"])
def test_everyday_read_is_safe(row: dict[str, str]) -> None:
    c = classify(row["command"], scope=SCOPE, local=LOCAL)
    assert c.verdict == "SAFE", f"{row['why']}: {c.reason}"


@pytest.mark.parametrize("row", [r for r in ROWS if r["expected"] == "NOT_SAFE"], ids=lambda r: r["command"][:80])
def test_read_the_data_calls_unsafe_is_not_safe(row: dict[str, str]) -> None:
    assert _verdict(row["command"]) != "SAFE", row["why"]


def test_print_safe_share(capsys: pytest.CaptureFixture[str]) -> None:
    safe = [r for r in ROWS if r["expected"] == "SAFE"]
    got = sum(_verdict(r["command"]) == "SAFE" for r in safe)
    gaps = sum(r["why"].startswith("gap:") for r in safe)
    with capsys.disabled():
        print(f"\neveryday reads: {got}/{len(safe)} SAFE-expected rows SAFE ({got / len(safe):.1%}); {gaps} known gaps")
    assert got + gaps >= len(safe)
