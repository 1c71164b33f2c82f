"""Issue 16, second red-team pass: the generated corpus (tests/shell/redteam_corpus.py) per class.

0 false-SAFE, every FORBIDDEN-expected row FORBIDDEN, every everyday read SAFE. The per-class
counts are printed so a run shows the size and hit rate of each class.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from netghost.shell.classify import classify
from tests.shell.egress_scopes import INVESTIGATION
from tests.shell.redteam_corpus import OUT, generate, render

ROWS = [json.loads(line) for line in OUT.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_data_file_is_what_the_generator_produces() -> None:
    assert OUT.read_text(encoding="utf-8") == render(generate())


def test_corpus_is_larger_than_the_dev_split() -> None:
    assert len(ROWS) > 549


def test_no_false_safe() -> None:
    breaches = [(r["class"], r["command"]) for r in ROWS if r["expected"] != "SAFE" and classify(r["command"]).verdict == "SAFE"]
    assert breaches == []


def test_every_forbidden_expected_is_forbidden() -> None:
    misses = [
        (r["class"], r["command"], classify(r["command"]).reason)
        for r in ROWS
        if r["expected"] == "FORBIDDEN" and classify(r["command"]).verdict != "FORBIDDEN"
    ]
    assert misses == []


def test_every_safe_expected_is_safe() -> None:
    """In an investigation that names the public hosts the everyday reads probe (issue 28: a probe is SAFE
    only toward the investigation's destinations); none of the unsafe rows becomes SAFE there either."""
    misses = [(r["class"], r["command"], classify(r["command"], scope=INVESTIGATION).reason)
              for r in ROWS if r["expected"] == "SAFE" and classify(r["command"], scope=INVESTIGATION).verdict != "SAFE"]
    assert misses == []
    breaches = [r["command"] for r in ROWS if r["expected"] != "SAFE" and classify(r["command"], scope=INVESTIGATION).verdict == "SAFE"]
    assert breaches == []


def test_print_counts(capsys: pytest.CaptureFixture[str]) -> None:
    total: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    for r in ROWS:
        key = f"{r['class']}/{r['expected']}"
        total[key] += 1
        want = r["expected"]
        got = classify(r["command"], scope=INVESTIGATION).verdict
        hits[key] += got == want or (want == "NOT_SAFE" and got != "SAFE")
    with capsys.disabled():
        print(f"\nissue-16 corpus: {len(ROWS)} rows")
        for key in sorted(total):
            print(f"  {key:<40} {hits[key]:>4}/{total[key]:<4}")
