"""Artifact registration and validation (CabinCrew §9)."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from netghost.errors import ArtifactError
from netghost.governance.artifacts import (
    MANIFEST_NAME,
    ArtifactValidationError,
    file_sha256,
    load_manifest,
    register_artifact,
    validate_artifacts,
)
from netghost.governance.workspace import Workspace, create_workspace

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    w = create_workspace(tmp_path / "workspaces", "task-1")
    (w.artifacts_dir / "cap.pcap").write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(range(200)))
    (w.artifacts_dir / "logs").mkdir()
    (w.artifacts_dir / "logs" / "engine.log").write_text("started\n")
    return w


def test_register_records_hash_size_role(ws: Workspace) -> None:
    rec = register_artifact(ws, "cap.pcap", "evidence", now=NOW, description="server-side capture")
    data = (ws.artifacts_dir / "cap.pcap").read_bytes()
    assert rec.sha256 == "sha256:" + hashlib.sha256(data).hexdigest()
    assert rec.size == len(data) and rec.role == "evidence" and rec.path == "cap.pcap"
    manifest = json.loads((ws.root / MANIFEST_NAME).read_text())
    assert manifest["artifacts"][0]["sha256"] == rec.sha256
    assert (ws.root / MANIFEST_NAME).stat().st_mode & 0o077 == 0


def test_register_replaces_an_entry_and_keeps_others(ws: Workspace) -> None:
    register_artifact(ws, "cap.pcap", "evidence", now=NOW)
    register_artifact(ws, ws.artifacts_dir / "logs" / "engine.log", "log", now=NOW)
    (ws.artifacts_dir / "cap.pcap").write_bytes(b"new")
    register_artifact(ws, "cap.pcap", "evidence", now=NOW)
    paths = [a.path for a in load_manifest(ws).artifacts]
    assert sorted(paths) == ["cap.pcap", "logs/engine.log"]
    assert len(validate_artifacts(ws)) == 2


def test_register_refuses_files_outside_artifacts_and_missing_files(ws: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("x")
    with pytest.raises(ArtifactError, match="not inside"):
        register_artifact(ws, outside, "log", now=NOW)
    with pytest.raises(ArtifactError, match="not inside"):
        register_artifact(ws, "../artifact.json", "log", now=NOW)
    with pytest.raises(ArtifactError, match="missing"):
        register_artifact(ws, "nope.bin", "log", now=NOW)
    with pytest.raises(ArtifactError):
        register_artifact(ws, "cap.pcap", "secret", now=NOW)  # type: ignore[arg-type]


def test_validation_reports_every_problem(ws: Workspace) -> None:
    register_artifact(ws, "cap.pcap", "evidence", now=NOW)
    register_artifact(ws, "logs/engine.log", "log", now=NOW)
    (ws.artifacts_dir / "cap.pcap").write_bytes(b"edited")
    (ws.artifacts_dir / "logs" / "engine.log").unlink()
    with pytest.raises(ArtifactValidationError) as info:
        validate_artifacts(ws)
    problems = info.value.problems
    assert any("cap.pcap: size" in p for p in problems)
    assert any("cap.pcap: content hash" in p for p in problems)
    assert any("logs/engine.log: referenced file is missing" in p for p in problems)


def test_same_size_edit_is_caught_by_hash(ws: Workspace) -> None:
    register_artifact(ws, "cap.pcap", "evidence", now=NOW)
    data = bytearray((ws.artifacts_dir / "cap.pcap").read_bytes())
    data[10] ^= 0xFF
    (ws.artifacts_dir / "cap.pcap").write_bytes(bytes(data))
    with pytest.raises(ArtifactValidationError) as info:
        validate_artifacts(ws)
    assert [p.split(":")[0] for p in info.value.problems] == ["cap.pcap"]


@pytest.mark.parametrize(
    ("manifest", "fragment"),
    [
        ("{not json", "malformed"),
        (json.dumps({"v": 1, "artifacts": [{"path": "cap.pcap"}]}), "malformed"),
        (json.dumps({"v": 1, "artifacts": [], "extra": True}), "malformed"),
    ],
)
def test_malformed_manifest_fails(ws: Workspace, manifest: str, fragment: str) -> None:
    (ws.root / MANIFEST_NAME).write_text(manifest)
    with pytest.raises(ArtifactValidationError, match=fragment):
        validate_artifacts(ws)


def test_wrong_role_fails_schema(ws: Workspace) -> None:
    rec = register_artifact(ws, "cap.pcap", "evidence", now=NOW)
    doc = json.loads((ws.root / MANIFEST_NAME).read_text())
    doc["artifacts"][0]["role"] = "evidenc"
    (ws.root / MANIFEST_NAME).write_text(json.dumps(doc))
    with pytest.raises(ArtifactValidationError, match="malformed"):
        validate_artifacts(ws)
    assert rec.role == "evidence"


def test_path_escape_and_symlink_and_missing_dir(ws: Workspace, tmp_path: Path) -> None:
    good = register_artifact(ws, "cap.pcap", "evidence", now=NOW)
    doc = json.loads((ws.root / MANIFEST_NAME).read_text())
    doc["artifacts"].append(dict(doc["artifacts"][0], path="../artifact.json"))
    (ws.root / MANIFEST_NAME).write_text(json.dumps(doc))
    with pytest.raises(ArtifactValidationError, match="escapes"):
        validate_artifacts(ws)
    (ws.root / MANIFEST_NAME).unlink()
    target = tmp_path / "t.bin"
    target.write_bytes((ws.artifacts_dir / "cap.pcap").read_bytes())
    (ws.artifacts_dir / "cap.pcap").unlink()
    os.symlink(target, ws.artifacts_dir / "cap.pcap")
    doc["artifacts"] = [good.model_dump(mode="json")]
    (ws.root / MANIFEST_NAME).write_text(json.dumps(doc))
    with pytest.raises(ArtifactValidationError, match="not a regular file"):
        validate_artifacts(ws)
    empty = tmp_path / "not-a-workspace"
    empty.mkdir()
    with pytest.raises(ArtifactValidationError, match="no artifacts/"):
        validate_artifacts(empty)


def test_expected_records_must_still_match(ws: Workspace) -> None:
    rec = register_artifact(ws, "cap.pcap", "evidence", now=NOW)
    assert validate_artifacts(ws, expected=[rec]) == [rec]
    (ws.artifacts_dir / "cap.pcap").write_bytes(b"other")
    register_artifact(ws, "cap.pcap", "evidence", now=NOW)  # re-registered: manifest consistent, WAL not
    with pytest.raises(ArtifactValidationError, match="differs from the workflow"):
        validate_artifacts(ws, expected=[rec])
    (ws.root / MANIFEST_NAME).unlink()
    with pytest.raises(ArtifactValidationError, match="absent from"):
        validate_artifacts(ws, expected=[rec])


def test_file_sha256_streams_large_files(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    data = os.urandom(3 * (1 << 20) + 17)
    big.write_bytes(data)
    assert file_sha256(big) == "sha256:" + hashlib.sha256(data).hexdigest()
