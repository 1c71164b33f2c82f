"""The shipped schema covers the compare-mode document (``comparison``) as well as the single-capture one."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from netghost.forensics import load_schema
from netghost.forensics.cli import main

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
A = PAIRS / "chrissanders_ppa2e_http_espn_A.pcap"
B = PAIRS / "chrissanders_ppa2e_http_espn_B.pcap"


@pytest.fixture(scope="module")
def compare_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The compare-mode semantic JSON exactly as the CLI writes it."""
    out = tmp_path_factory.mktemp("cmp")
    assert main([str(A), "--compare", str(B), "--semantic-dir", str(out), "--report-dir", str(out), "--format", "json"]) == 0
    files = list(out.glob("*_vs_*_semantic.json"))
    assert len(files) == 1
    doc: dict[str, Any] = json.loads(files[0].read_text(encoding="utf-8"))
    return doc


def test_compare_mode_document_validates_against_shipped_schema(compare_doc: dict[str, Any]) -> None:
    assert "comparison" in compare_doc
    assert compare_doc["comparison"]["matched_packets"] > 0
    jsonschema.validate(compare_doc, load_schema())


def test_comparison_object_is_checked_not_just_allowed(compare_doc: dict[str, Any]) -> None:
    bad = copy.deepcopy(compare_doc)
    bad["comparison"]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, load_schema())
    bad = copy.deepcopy(compare_doc)
    del bad["comparison"]["lost"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, load_schema())
    bad = copy.deepcopy(compare_doc)
    bad["unexpected_top_level"] = {}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, load_schema())


def test_raw_schema_files_resolve_through_a_registry(compare_doc: dict[str, Any]) -> None:
    """A consumer that loads the two shipped files itself (no bundling) gets the same verdict."""
    pkg = resources.files("netghost.forensics").joinpath("schemas")
    sem = json.loads(pkg.joinpath("semantic.schema.json").read_text(encoding="utf-8"))
    cmp_schema = json.loads(pkg.joinpath("compare.schema.json").read_text(encoding="utf-8"))
    assert sem["properties"]["comparison"]["$ref"] == cmp_schema["$id"]
    registry: Registry[Any] = Registry().with_resource(cmp_schema["$id"], Resource.from_contents(cmp_schema))
    jsonschema.Draft202012Validator(sem, registry=registry).validate(compare_doc)


def test_single_capture_document_needs_no_comparison(compare_doc: dict[str, Any]) -> None:
    single = {k: v for k, v in compare_doc.items() if k != "comparison"}
    jsonschema.validate(single, load_schema())
    assert "comparison" not in load_schema()["required"]
