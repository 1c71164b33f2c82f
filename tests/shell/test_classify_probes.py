"""Regression lists beyond the corpus: everyday read-only diagnostics must stay SAFE (usability),
and further bypass spellings must never become SAFE (security)."""

from __future__ import annotations

from pathlib import Path

import pytest

from netghost.shell.classify import classify
from tests.shell.egress_scopes import INVESTIGATION

DATA = Path(__file__).resolve().parents[1] / "data" / "shell"


def _lines(name: str) -> list[str]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("command", _lines("safe_probes.txt"))
def test_everyday_diagnostics_stay_safe(command: str) -> None:
    c = classify(command, scope=INVESTIGATION)
    assert c.verdict == "SAFE", c.reason


@pytest.mark.parametrize("command", _lines("egress_tightened.txt"))
def test_shapes_issue28_tightened_ask_a_human(command: str) -> None:
    c = classify(command, scope=INVESTIGATION)
    assert c.verdict == "RISKY", c.reason


@pytest.mark.parametrize("command", _lines("not_safe_probes.txt"))
def test_bypass_spellings_never_safe(command: str) -> None:
    assert classify(command).verdict != "SAFE"
    assert classify(command, scope=INVESTIGATION).verdict != "SAFE"
