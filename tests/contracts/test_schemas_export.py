"""The committed ``schemas/`` directory is exactly what ``python -m netghost.contracts.export`` writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from netghost.contracts.export import build_schemas, main

SCHEMAS_DIR = Path(__file__).resolve().parents[2] / "schemas"
REGENERATE = "python -m netghost.contracts.export schemas   (or: make schemas)"


def test_committed_schemas_are_not_stale(tmp_path: Path) -> None:
    out = tmp_path / "schemas"
    assert main([str(out)]) == 0
    fresh = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()}
    committed = {p.name: p.read_text(encoding="utf-8") for p in SCHEMAS_DIR.glob("*.schema.json")}
    missing = sorted(set(fresh) - set(committed))
    extra = sorted(set(committed) - set(fresh))
    changed = sorted(name for name in set(fresh) & set(committed) if fresh[name] != committed[name])
    assert not (missing or extra or changed), (
        f"schemas/ is stale (missing {missing}, no longer exported {extra}, changed {changed}); "
        f"regenerate with: {REGENERATE}"
    )


def test_export_runs_as_a_module(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "netghost.contracts.export", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "out" / "audit-event.schema.json").is_file()
    assert "wrote" in completed.stdout


def test_export_is_deterministic_sorted_and_newline_terminated(tmp_path: Path) -> None:
    main([str(tmp_path / "a")])
    main([str(tmp_path / "b")])
    for path in sorted((tmp_path / "a").iterdir()):
        text = path.read_text(encoding="utf-8")
        assert text == (tmp_path / "b" / path.name).read_text(encoding="utf-8")
        assert text.endswith("}\n") and not text.endswith("\n\n")
        assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_every_schema_is_valid_draft_2020_12_and_names_are_stable() -> None:
    schemas = build_schemas()
    expected = {
        "approval-request",
        "approval-response",
        "artifact-manifest",
        "artifact-record",
        "audit-event",
        "orchestrator-request",
        "orchestrator-response",
        "provisional-rejected-record",
        "session-state",
        "shell-audit-record",
        "shell-request",
        "shell-response",
        "stored-shell-audit-record",
        "stored-task-record",
        "task-record",
        "tool-cancel-task-args",
        "tool-capture-traffic-args",
        "tool-check-task-args",
        "tool-cleanup-task-args",
        "tool-complete-investigation-args",
        "tool-error-result",
        "tool-run-shell-cmd-args",
        "wal-entry",
        "workflow-state-record",
    }
    assert set(schemas) == {f"{name}.schema.json" for name in expected}
    for name, schema in schemas.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", name


def test_schemas_use_wire_aliases_and_forbid_extra_fields() -> None:
    schemas = build_schemas()
    session = schemas["session-state.schema.json"]
    assert "_checksum" in session["properties"] and "checksum" not in session["properties"]
    assert session["additionalProperties"] is False
    assert "_meta" in schemas["shell-response.schema.json"]["properties"]
    validator = jsonschema.Draft202012Validator(schemas["orchestrator-request.schema.json"])
    assert not validator.is_valid({"intent": "list_tasks", "surprise": 1})
    assert not validator.is_valid({"intent": "delete_everything"})
    assert validator.is_valid({"intent": "list_tasks"})
