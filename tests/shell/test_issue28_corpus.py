"""Issue 28, third red-team pass: the generated corpus (tests/shell/issue28_corpus.py) per class, and every
unsafe command of every corpus with the learned stage switched off.

0 false-SAFE; every FORBIDDEN-expected row FORBIDDEN; every SAFE-expected row SAFE; the RISKY contrast rows
(a metadata-only program on a credential store, a benign file, a plain variable) RISKY, not FORBIDDEN. The
per-class figures are printed (FORBIDDEN recall, SAFE share).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from netghost.shell.classify import classify
from netghost.shell.classify._classify import _classify_builtin
from tests.shell.issue28_corpus import OUT, generate, render

DATA = Path(__file__).resolve().parents[1] / "data" / "shell"
ROWS = [json.loads(line) for line in OUT.read_text(encoding="utf-8").splitlines() if line.strip()]
VERDICTS = {r["command"]: classify(r["command"]) for r in ROWS}


def _ok(want: str, got: str) -> bool:
    return got == want or (want == "NOT_SAFE" and got != "SAFE")


def test_data_file_is_what_the_generator_produces() -> None:
    assert OUT.read_text(encoding="utf-8") == render(generate())


def test_every_class_is_populated() -> None:
    classes = Counter(r["class"] for r in ROWS)
    assert set(classes) == {"credential-read", "environment", "persistence", "secret-value", "egress", "forensics"}
    assert min(classes.values()) >= 60


def test_no_false_safe() -> None:
    breaches = [(r["class"], r["command"]) for r in ROWS if r["expected"] != "SAFE" and VERDICTS[r["command"]].verdict == "SAFE"]
    assert breaches == []


def test_every_forbidden_expected_is_forbidden() -> None:
    misses = [(r["class"], r["command"], VERDICTS[r["command"]].reason)
              for r in ROWS if r["expected"] == "FORBIDDEN" and VERDICTS[r["command"]].verdict != "FORBIDDEN"]  # fmt: skip
    assert misses == []


def test_every_risky_contrast_is_exactly_risky() -> None:
    misses = [(r["class"], r["command"], VERDICTS[r["command"]].reason)
              for r in ROWS if r["expected"] == "RISKY" and VERDICTS[r["command"]].verdict != "RISKY"]  # fmt: skip
    assert misses == []


def test_every_safe_expected_is_safe() -> None:
    misses = [(r["class"], r["command"], VERDICTS[r["command"]].reason)
              for r in ROWS if r["expected"] == "SAFE" and VERDICTS[r["command"]].verdict != "SAFE"]  # fmt: skip
    assert misses == []


def test_print_per_class_figures(capsys: pytest.CaptureFixture[str]) -> None:
    total: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    for r in ROWS:
        key = f"{r['class']}/{r['expected']}"
        total[key] += 1
        hits[key] += _ok(r["expected"], VERDICTS[r["command"]].verdict)
    forbidden = [r for r in ROWS if r["expected"] == "FORBIDDEN"]
    safe = [r for r in ROWS if r["expected"] == "SAFE"]
    with capsys.disabled():
        print(f"\nissue-28 corpus: {len(ROWS)} rows; FORBIDDEN recall "
              f"{sum(VERDICTS[r['command']].verdict == 'FORBIDDEN' for r in forbidden)}/{len(forbidden)}; SAFE share "
              f"{sum(VERDICTS[r['command']].verdict == 'SAFE' for r in safe)}/{len(safe)}")
        for key in sorted(total):
            print(f"  {key:<32} {hits[key]:>5}/{total[key]:<5}")


# --- the learned stage is a second opinion: the tiers alone stop every unsafe row of every corpus --------


def _corpus_rows() -> list[tuple[str, str, str]]:
    """(corpus, command, expected) of every unsafe row of every shell corpus."""
    rows: list[tuple[str, str, str]] = []
    for name in ("commands_dev.jsonl", "redteam_issue16.jsonl", "issue28_corpus.jsonl", "everyday_reads.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row["expected"] != "SAFE":
                    rows.append((name, row["command"], row["expected"]))
    for name in ("not_safe_probes.txt", "egress_tightened.txt"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                rows.append((name, line.strip(), "NOT_SAFE"))
    return rows


def test_tiers_alone_stop_every_unsafe_command() -> None:
    """No unsafe command depends on the model: with it off (the tiers' own verdict), each is still not
    SAFE, and each FORBIDDEN-expected one is FORBIDDEN."""
    rows = _corpus_rows()
    assert len(rows) > 5000
    leaks = [(name, cmd) for name, cmd, _ in rows if _classify_builtin(cmd)[0].verdict == "SAFE"]
    misses = [(name, cmd) for name, cmd, want in rows if want == "FORBIDDEN" and _classify_builtin(cmd)[0].verdict != "FORBIDDEN"]
    assert leaks == []
    assert misses == []
