"""The generated corpus (tests/shell/secret_corpus.py): recall over issue 16's secret classes, and benign
look-alikes (plus the hand-made benign corpora) that must come back byte-identical."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.redact import redact
from tests.shell.secret_corpus import SECRET_CLASSES, benign_samples, secret_samples

DATA = Path(__file__).resolve().parent.parent / "data" / "shell"
SECRETS = secret_samples()
BENIGN = benign_samples()


def _jsonl(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def test_corpus_is_larger_than_the_hand_made_one() -> None:
    assert len(SECRETS) > 94 * 5
    assert {s.kind for s in SECRETS} >= {"openvpn-static-key", "netrc", "pgpass", "cisco-pre-shared-key"}
    assert len(SECRETS) == 60 * len(SECRET_CLASSES)


def test_recall_over_generated_secrets() -> None:
    total = 0
    missed: Counter[str] = Counter()
    for sample in SECRETS:
        out = redact(sample.text, command=sample.command).text
        for secret in sample.secrets:
            total += 1
            missed[sample.kind] += secret in out
    assert total >= 1500
    assert (total - sum(missed.values())) / total >= 0.995, +missed


def test_recall_holds_per_class() -> None:
    """No class may hide behind the others: each one on its own is at 99.5% too."""
    per_class: dict[str, list[int]] = {}
    for sample in SECRETS:
        out = redact(sample.text, command=sample.command).text
        counts = per_class.setdefault(sample.kind, [0, 0])
        for secret in sample.secrets:
            counts[0] += 1
            counts[1] += secret in out
    low = {kind: c for kind, c in per_class.items() if (c[0] - c[1]) / c[0] < 0.995}
    assert low == {}


def test_ids_and_names_beside_secrets_survive() -> None:
    lost = [
        (s.meta["id"], keep)
        for s in SECRETS
        for keep in s.keep
        if keep not in redact(s.text, command=s.command).text
    ]
    assert lost == []


def test_redacted_json_stays_valid_json() -> None:
    for sample in SECRETS:
        if sample.text.lstrip().startswith(("{", "[")):
            json.loads(redact(sample.text).text)


def test_generated_benign_look_alikes_are_byte_identical() -> None:
    altered = {s.meta["id"]: s.kind for s in BENIGN if redact(s.text, command=s.command).text != s.text}
    assert sum(len(s.text) for s in BENIGN) > 50_000
    assert altered == {}


@pytest.mark.parametrize("name", ["benign_dev.jsonl", "secrets_dev.jsonl"])
def test_hand_made_benign_samples_are_byte_identical(name: str) -> None:
    benign = [s for s in _jsonl(name) if not s.get("secrets")]
    altered = [
        s["kind"]
        for s in benign
        if redact(str(s["text"]), command=s.get("command")).text != s["text"]  # type: ignore[arg-type]
    ]
    assert benign
    assert altered == []


def test_generated_corpus_is_idempotent() -> None:
    for sample in SECRETS[::7] + BENIGN[::7]:
        once = redact(sample.text, command=sample.command)
        twice = redact(once.text, command=sample.command)
        assert (twice.text, twice.count) == (once.text, 0), sample.meta["id"]


# --- properties: field-name case and JSON layout never let a named secret through -------------------------

_FIELDS = [
    ("sharedKey", "shared_key"),
    ("authorizationKey", "authorization_key"),
    ("userData", "user_data"),
    ("customData", "custom_data"),
    ("connectionString", "connection_string"),
    ("primaryConnectionString", "connection_string"),
    ("primaryKey", "access_key"),
    ("secondaryKey", "access_key"),
    ("password", "password"),
    ("masterKey", "host_key"),
]
_VALUES = st.text(
    alphabet=st.characters(codec="ascii", categories=["L", "N", "P", "S"]), min_size=1, max_size=30
)


def _spell(name: str, style: int) -> str:
    snake = "".join("_" + c.lower() if c.isupper() else c for c in name)
    return [name, name.upper(), name.lower(), name[0].upper() + name[1:], snake, snake.upper()][style]


@settings(max_examples=200, deadline=None)
@given(
    st.tuples(st.sampled_from(_FIELDS), st.integers(0, 5)),
    _VALUES,
    st.sampled_from([None, 0, 2, 4]),
    st.tuples(st.booleans(), st.booleans()),
)
def test_named_field_secret_is_redacted_whatever_case_and_layout(
    spelling: tuple[tuple[str, str], int], value: str, indent: int | None, layout: tuple[bool, bool]
) -> None:
    (name, kind), style = spelling
    nested, sort = layout
    doc: dict[str, object] = {"name": "res1", "id": "/subscriptions/x/rg/y", _spell(name, style): value}
    if nested:
        doc = {"properties": doc, "location": "westeurope"}
    text = json.dumps(doc, indent=indent, sort_keys=sort)
    out = redact(text).text
    parsed = json.loads(out)
    inner = parsed["properties"] if nested else parsed
    if value.strip() and "REDACTED" not in value:
        assert inner[_spell(name, style)] == f"[REDACTED:{kind}]", (text, out)
    assert inner["name"] == "res1"
    assert inner["id"] == "/subscriptions/x/rg/y"
    assert redact(out).text == out


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(SECRETS), st.sampled_from([None, 2, 4]))
def test_reindented_json_sample_keeps_its_secrets_redacted(sample: object, indent: int | None) -> None:
    text = sample.text  # type: ignore[attr-defined]
    try:
        doc = json.loads(text)
    except ValueError:
        return
    out = redact(json.dumps(doc, indent=indent)).text
    leaked = [s for s in sample.secrets if json.dumps(s)[1:-1] in out]  # type: ignore[attr-defined]
    assert leaked == []
