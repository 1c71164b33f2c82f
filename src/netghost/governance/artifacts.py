"""Artifact registration and validation (CabinCrew §9): chain of custody for every output file.

A workspace's ``artifact.json`` lists each file of ``artifacts/`` with its SHA-256, size and
role (``evidence``, ``state`` or ``log``). Validation checks the directory structure, the
manifest's schema, that every referenced file is present, inside ``artifacts/``, of the recorded
size and hash, and (optionally) that the manifest still matches the records a workflow WAL
holds. All problems are collected, not only the first, and raised together: an invalid artifact
fails the workflow.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from netghost.contracts import ArtifactManifest, ArtifactRecord, ArtifactRole
from netghost.errors import ArtifactError, ArtifactValidationError
from netghost.governance.workspace import ARTIFACTS_DIRNAME, Workspace

__all__ = [
    "MANIFEST_NAME",
    "ArtifactValidationError",
    "bind_artifacts",
    "file_sha256",
    "load_manifest",
    "register_artifact",
    "validate_artifacts",
]

MANIFEST_NAME = "artifact.json"
_CHUNK = 1 << 20


def _root(workspace: Workspace | Path) -> Path:
    return workspace.root if isinstance(workspace, Workspace) else Path(workspace)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Return ``"sha256:<hex>"`` of a file's bytes, read in 1 MiB chunks.

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def bind_artifacts(plan: Any, artifacts: Sequence[ArtifactRecord]) -> dict[str, Any]:
    """The plan together with the metadata and roles of its artifacts, sorted by path.

    Its plan-token therefore changes if any artifact's content, size or role changes between
    flight-plan and take-off (§4.1, §5). Times and descriptions are left out: they are not content.
    """
    entries = sorted(
        ({"path": a.path, "sha256": a.sha256, "size": a.size, "role": a.role} for a in artifacts),
        key=lambda e: str(e["path"]),
    )
    return {"plan": plan, "artifacts": entries}


def load_manifest(workspace: Workspace | Path) -> ArtifactManifest:
    """Read and schema-check ``artifact.json`` (an absent manifest is an empty one).

    Raises:
        ArtifactValidationError: the manifest is not valid JSON or does not match its schema.
    """
    root = _root(workspace)
    path = root / MANIFEST_NAME
    if not path.exists():
        return ArtifactManifest()
    try:
        return ArtifactManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, UnicodeDecodeError, ValidationError) as exc:
        raise ArtifactValidationError(root, [f"{MANIFEST_NAME} is malformed: {exc}"]) from exc


def _write_manifest(root: Path, manifest: ArtifactManifest) -> None:
    """Replace artifact.json atomically (write, fsync, rename) so a crash leaves old or new, never half."""
    tmp = root / f".{MANIFEST_NAME}.tmp"
    data = manifest.model_dump_json(indent=2).encode("utf-8") + b"\n"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, root / MANIFEST_NAME)


def _relative(root: Path, file: Path) -> str:
    artifacts = (root / ARTIFACTS_DIRNAME).resolve()
    resolved = file.resolve()
    if not resolved.is_relative_to(artifacts) or resolved == artifacts:
        raise ArtifactError(f"{file} is not inside {artifacts}")
    return resolved.relative_to(artifacts).as_posix()


def register_artifact(
    workspace: Workspace | Path,
    file: str | os.PathLike[str],
    role: ArtifactRole,
    *,
    now: datetime,
    description: str = "",
) -> ArtifactRecord:
    """Hash a file of ``artifacts/`` and record it in ``artifact.json`` (replacing an older entry).

    Args:
        workspace: the workspace (or its root directory).
        file: the file; relative paths are taken relative to ``artifacts/``.
        role: ``evidence``, ``state`` or ``log``.
        now: registration time (from the injected clock).
        description: a short human label.

    Raises:
        ArtifactError: the file is outside ``artifacts/``, missing, not a regular file, or the role is unknown.
    """
    root = _root(workspace)
    path = Path(file)
    if not path.is_absolute():
        path = root / ARTIFACTS_DIRNAME / path
    rel = _relative(root, path)
    if not path.is_file():
        raise ArtifactError(f"artifact {path} is missing or not a regular file")
    try:
        record = ArtifactRecord(
            path=rel,
            sha256=file_sha256(path),
            size=path.stat().st_size,
            role=role,
            created_at=now,
            description=description,
        )
    except ValidationError as exc:
        raise ArtifactError(f"artifact {rel}: {exc}") from exc
    manifest = load_manifest(root)
    kept = [a for a in manifest.artifacts if a.path != rel]
    _write_manifest(root, ArtifactManifest(artifacts=[*kept, record]))
    return record


def validate_artifacts(
    workspace: Workspace | Path,
    *,
    expected: Sequence[ArtifactRecord] | None = None,
) -> list[ArtifactRecord]:
    """Check structure, schema, presence, size, hash and role of every artifact; return them.

    Args:
        workspace: the workspace (or its root directory).
        expected: records kept elsewhere (a workflow's WAL); each must still be in the manifest
            with the same hash, size and role.

    Raises:
        ArtifactValidationError: anything is wrong; ``problems`` lists every finding.
    """
    root = _root(workspace)
    artifacts_dir = root / ARTIFACTS_DIRNAME
    if not artifacts_dir.is_dir():
        raise ArtifactValidationError(root, [f"no {ARTIFACTS_DIRNAME}/ directory"])
    manifest = load_manifest(root)
    problems: list[str] = []
    seen: set[str] = set()
    for rec in manifest.artifacts:
        pure = PurePosixPath(rec.path)
        if pure.is_absolute() or ".." in pure.parts or not rec.path:
            problems.append(f"{rec.path}: path escapes {ARTIFACTS_DIRNAME}/")
            continue
        if rec.path in seen:
            problems.append(f"{rec.path}: listed twice")
        seen.add(rec.path)
        path = artifacts_dir / pure
        if path.is_symlink() or not path.is_file():
            problems.append(f"{rec.path}: referenced file is missing or not a regular file")
            continue
        size = path.stat().st_size
        if size != rec.size:
            problems.append(f"{rec.path}: size {size} differs from recorded {rec.size}")
        actual = file_sha256(path)
        if actual != rec.sha256:
            problems.append(f"{rec.path}: content hash {actual} differs from recorded {rec.sha256}")
    by_path = {a.path: a for a in manifest.artifacts}
    for exp in expected or ():
        got = by_path.get(exp.path)
        if got is None:
            problems.append(f"{exp.path}: recorded in the workflow but absent from {MANIFEST_NAME}")
        elif (got.sha256, got.size, got.role) != (exp.sha256, exp.size, exp.role):
            problems.append(f"{exp.path}: {MANIFEST_NAME} entry differs from the workflow's record")
    if problems:
        raise ArtifactValidationError(root, problems)
    return list(manifest.artifacts)
