"""The corpus again, wrapped the way tools re-encode output: JSON strings (once, twice), ANSI colour, CRLF,
YAML block scalars, Python repr and URL encoding. The held-out split has harder shapes than the dev split;
these check that recall does not depend on the exact layout of the dev samples."""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from netghost.shell import redact

CORPUS = Path(__file__).resolve().parent.parent / "data" / "shell" / "secrets_dev.jsonl"


def _samples() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


def _ansi(text: str) -> str:
    return re.sub(r'("[^"\n]*")', lambda m: "\x1b[1;34m" + m.group(1) + "\x1b[0m", text)


VARIANTS: dict[str, Callable[[str], str]] = {
    "json-wrapped": lambda t: json.dumps({"output": t}),
    "json-wrapped-twice": lambda t: json.dumps({"o": json.dumps({"output": t})}),
    "ansi": _ansi,
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "yaml-block": lambda t: "result: |\n" + "\n".join("  " + line for line in t.splitlines()),
    "python-repr": repr,
    "url-encoded": lambda t: "GET /log?msg=" + urllib.parse.quote(t, safe=""),
}


def _spellings(secret: str) -> set[str]:
    once = json.dumps(secret)[1:-1]
    forms = {secret, once, json.dumps(once)[1:-1], urllib.parse.quote(secret, safe=""), repr(secret)[1:-1]}
    return {f for f in forms if len(f) >= 6}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_recall_survives_re_encoding(name: str) -> None:
    wrap = VARIANTS[name]
    total = missed = 0
    for sample in _samples():
        out = redact(wrap(sample["text"]), command=sample.get("command")).text
        for secret in sample["secrets"]:
            total += 1
            missed += any(form in out for form in _spellings(secret))
    # the bare tsv password is found by line context, which a wrapper removes: at most one miss
    assert missed <= 1, (name, missed, total)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_benign_samples_stay_untouched_when_re_encoded(name: str) -> None:
    wrap = VARIANTS[name]
    touched = [
        s["kind"]
        for s in _samples()
        if not s["secrets"] and redact(wrap(s["text"]), command=s.get("command")).count
    ]
    assert touched == []
