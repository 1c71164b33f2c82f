"""Every JSON example of the seeds validates against its contract and round-trips unchanged.

``tests/golden/index.json`` names, for each golden file, the seed and line it was copied from, the
contract used to validate it, the variant it must resolve to, and the cleanup applied (if any).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter

from netghost import contracts
from netghost.contracts.export import build_schemas

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden"
INDEX: dict[str, Any] = json.loads((GOLDEN_DIR / "index.json").read_text(encoding="utf-8"))
EXAMPLES: list[dict[str, Any]] = INDEX["examples"]


@functools.cache
def _schemas() -> dict[str, dict[str, Any]]:
    return build_schemas()


def _load(name: str) -> Any:
    return json.loads((GOLDEN_DIR / name).read_text(encoding="utf-8"))


def test_index_lists_every_golden_file_exactly_once() -> None:
    on_disk = {p.name for p in GOLDEN_DIR.glob("*.json")} - {"index.json"}
    listed = [e["file"] for e in EXAMPLES]
    assert len(listed) == len(set(listed)), "a golden file is listed twice in index.json"
    assert set(listed) == on_disk, f"unlisted: {on_disk - set(listed)}; missing: {set(listed) - on_disk}"


def test_every_cleanup_and_exclusion_is_explained() -> None:
    for example in EXAMPLES:
        if example["cleanup"] is not None:
            assert example["cleanup"]["source"] and example["cleanup"]["why"], example["file"]
    for excluded in INDEX["excluded"]:
        assert excluded["source"] and excluded["why"], excluded


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["file"] for e in EXAMPLES])
def test_golden_validates_and_round_trips(example: dict[str, Any]) -> None:
    original = _load(example["file"])
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(contracts, example["model"]))
    parsed = adapter.validate_python(original)
    assert type(parsed).__name__ == example["variant"]
    dumped = adapter.dump_python(parsed, mode="json", by_alias=True, exclude_unset=True)
    assert dumped == original
    # Through JSON text too, the way the files are actually read.
    reparsed = adapter.validate_json(json.dumps(original))
    assert adapter.dump_python(reparsed, mode="json", by_alias=True, exclude_unset=True) == original


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["file"] for e in EXAMPLES])
def test_golden_satisfies_exported_json_schema(example: dict[str, Any]) -> None:
    schema = _schemas()[example["schema"]]
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(_load(example["file"]))


def test_fenced_examples_are_stored_verbatim_with_their_trailing_newline() -> None:
    """Fenced blocks are byte copies: no re-indentation, so the text still matches the seed."""
    for example in EXAMPLES:
        text = (GOLDEN_DIR / example["file"]).read_text(encoding="utf-8")
        assert text.endswith("}\n"), example["file"]
        if example["cleanup"] is None:
            assert text.startswith('{\n  "'), example["file"]


def test_seed_session_example_checksum_is_a_placeholder() -> None:
    """Seed 001 §8 shows a truncated digest; a resume of that file must report a mismatch."""
    data = _load("001_s8_session-state.json")
    assert data["_checksum"] == "a3f1e9d2b7c04581..."
    assert contracts.check_session_checksum(data) == "mismatch"
