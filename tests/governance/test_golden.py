"""A recorded workflow WAL (tests/data/governance) replays to a known state; damaged copies are rejected.

The file pins the on-disk format: if hashing, canonical JSON or the line layout ever change,
old logs must still verify, and this test says so first.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from netghost.errors import WalCorruptError
from netghost.governance.wal import WalWriter, verify
from netghost.governance.workflow import Workflow, replay_workflows

from .test_audit_cli import _run

HEAD = "sha256:c1d02ff4ff43d120c4923692bf0d5704238fcb689496e976739a7c5b64790cc2"
TOKEN = "sha256:7818b93e7c176fa09b5608b9128174b2fe2003c127c03eec4f8dfa22c11179ba"


@pytest.fixture
def golden(data_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "workflow_golden.jsonl"
    shutil.copy(data_dir / "governance" / "workflow_golden.jsonl", copy)
    return copy


def test_golden_log_verifies_with_pinned_head(golden: Path) -> None:
    report = verify(golden, expected_head=HEAD)
    assert report.ok and report.records == 12 and report.head_sha256 == HEAD and report.breaks == []


def test_golden_log_replays_to_the_known_state(golden: Path) -> None:
    state = replay_workflows(golden)["golden-001"]
    assert state.state == "completed" and state.plan_token == TOKEN
    assert state.completed_steps == ["flight_plan", "preflight", "approval", "take_off", "audit", "completion"]
    assert state.approvals[0].response is not None and state.approvals[0].response.decision == "approve"


def test_reordered_copy_is_rejected(golden: Path) -> None:
    lines = golden.read_bytes().splitlines(keepends=True)
    lines[5], lines[6] = lines[6], lines[5]
    golden.write_bytes(b"".join(lines))
    assert {b.seq for b in verify(golden).breaks} == {6, 7}
    with WalWriter(golden, fsync=False) as w, pytest.raises(WalCorruptError):
        Workflow.resume(w, "golden-001")


def test_truncated_copy_is_rejected_against_the_remembered_head(golden: Path) -> None:
    lines = golden.read_bytes().splitlines(keepends=True)
    golden.write_bytes(b"".join(lines[:-3]))
    assert verify(golden).ok  # the chain alone cannot see a cut-off end...
    report = verify(golden, expected_head=HEAD)
    assert not report.ok and [b.kind for b in report.breaks] == ["head_mismatch"]  # ...the anchor can
    assert replay_workflows(golden)["golden-001"].state == "took_off"
    assert _run("verify", "--head", HEAD, str(golden))[0] == 1
    assert _run("verify", "--head", HEAD, str(golden), str(golden))[0] == 2


def test_extended_copy_names_the_anchor_record(golden: Path) -> None:
    with WalWriter(golden, fsync=False) as w:
        w.append({"note": "appended later"})
    report = verify(golden, expected_head=HEAD)
    assert [(b.kind, b.seq) for b in report.breaks] == [("head_mismatch", 13)]
    assert "it is record 12" in report.breaks[0].detail
