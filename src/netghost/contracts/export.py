"""Export one JSON Schema per top-level contract: ``python -m netghost.contracts.export DIR``.

The schemas let non-Python consumers (MCP clients, auditors, CabinCrew's ``audit-event.schema.json``
of seed 004 §10) check documents without importing this package. Output is deterministic (sorted keys,
two-space indent, trailing newline, stable file names) so the committed ``schemas/`` directory can be
compared byte for byte with a fresh export; a test fails when it is stale.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from netghost.contracts.audit import ProvisionalRejectedRecord, ShellAuditRecord, StoredShellAuditRecord
from netghost.contracts.cabincrew import (
    ApprovalRequest,
    ApprovalResponse,
    ArtifactManifest,
    ArtifactRecord,
    AuditEvent,
    WalEntry,
    WorkflowStateRecord,
)
from netghost.contracts.orchestrator_request import OrchestratorRequest
from netghost.contracts.orchestrator_response import OrchestratorResponse
from netghost.contracts.session import SessionState
from netghost.contracts.shell import ShellRequest, ShellResponse
from netghost.contracts.task import StoredTaskRecord, TaskRecord
from netghost.contracts.tools import (
    CancelTaskArgs,
    CaptureTrafficArgs,
    CheckTaskArgs,
    CleanupTaskArgs,
    CompleteInvestigationArgs,
    RunShellCmdArgs,
    ToolErrorResult,
)

__all__ = ["SCHEMA_DIALECT", "build_schemas", "main", "render_schema", "write_schemas"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_MODELS: tuple[tuple[str, type[BaseModel]], ...] = (
    ("approval-request", ApprovalRequest),
    ("approval-response", ApprovalResponse),
    ("artifact-manifest", ArtifactManifest),
    ("artifact-record", ArtifactRecord),
    ("audit-event", AuditEvent),
    ("provisional-rejected-record", ProvisionalRejectedRecord),
    ("session-state", SessionState),
    ("shell-audit-record", ShellAuditRecord),
    ("shell-request", ShellRequest),
    ("shell-response", ShellResponse),
    ("stored-shell-audit-record", StoredShellAuditRecord),
    ("stored-task-record", StoredTaskRecord),
    ("task-record", TaskRecord),
    ("tool-cancel-task-args", CancelTaskArgs),
    ("tool-capture-traffic-args", CaptureTrafficArgs),
    ("tool-check-task-args", CheckTaskArgs),
    ("tool-cleanup-task-args", CleanupTaskArgs),
    ("tool-complete-investigation-args", CompleteInvestigationArgs),
    ("tool-error-result", ToolErrorResult),
    ("tool-run-shell-cmd-args", RunShellCmdArgs),
    ("wal-entry", WalEntry),
    ("workflow-state-record", WorkflowStateRecord),
)

_UNIONS: tuple[tuple[str, str, Any], ...] = (
    ("orchestrator-request", "OrchestratorRequest", OrchestratorRequest),
    ("orchestrator-response", "OrchestratorResponse", OrchestratorResponse),
)


def build_schemas() -> dict[str, dict[str, Any]]:
    """Every schema by file name (``<name>.schema.json``), in validation mode with wire aliases."""
    schemas: dict[str, dict[str, Any]] = {}
    for name, model in _MODELS:
        schemas[f"{name}.schema.json"] = model.model_json_schema(by_alias=True, mode="validation")
    for name, title, union in _UNIONS:
        schema = TypeAdapter(union).json_schema(by_alias=True, mode="validation")
        schema["title"] = title
        schemas[f"{name}.schema.json"] = schema
    for schema in schemas.values():
        schema["$schema"] = SCHEMA_DIALECT
    return dict(sorted(schemas.items()))


def render_schema(schema: dict[str, Any]) -> str:
    """The exact text written to disk: sorted keys, two-space indent, trailing newline."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    """Write every schema into ``directory`` (created if missing) and return the paths written.

    Args:
        directory: Target directory; existing files with other names are left alone.

    Raises:
        OSError: If the directory cannot be created or a file cannot be written.
    """
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, schema in build_schemas().items():
        path = directory / file_name
        path.write_text(render_schema(schema), encoding="utf-8")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m netghost.contracts.export",
        description="Write one JSON Schema per top-level netghost contract into DIR.",
    )
    parser.add_argument("directory", type=Path, metavar="DIR", help="output directory (e.g. schemas/)")
    args = parser.parse_args(argv)
    paths = write_schemas(args.directory)
    sys.stdout.write(f"wrote {len(paths)} schemas to {args.directory}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
