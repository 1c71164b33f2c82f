"""The capture plan's approval covers reading the session's own capture outputs and removing its own capture
file, nothing else: a real dual-end lab investigation, then requests built around its trail."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from netghost.agent._plan_cover import COVER_NAME, plan_cover
from netghost.agent.cli import main
from netghost.contracts import ApprovalRequest
from netghost.governance import compute_plan_token, read_wal, replay_latest
from netghost.shell import HitlDecision

INTENT = "intermittent errors from web-vm-01 to redis-primary on port 6379"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    root = tmp_path_factory.mktemp("cover")
    home = root / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
            patch.delenv(name, raising=False)
        assert main(["--lab", "path-packet-loss", "--yes", "--brain", "playbook", "--audit-dir",
                     str(root / "audit"), "--intent", INTENT]) == 0
    audit = (root / "audit").resolve()
    sid = json.loads((audit / "ghost_session.json").read_text())["session_id"]
    return audit, sid, home


def test_the_sessions_own_reads_and_removals_were_not_asked_and_name_the_plan(
        session: tuple[Path, str, Path]) -> None:
    audit, sid, _ = session
    records = read_wal(audit / f"shell_audit_{sid}.jsonl").records
    covered = [r for r in records if (r.get("decided_by") or {}).get("name") == COVER_NAME]
    programs = sorted(r["command"].split()[0] for r in covered)
    assert programs == ["cat", "rm", "rm"]  # the executive summary, and each end's capture file
    tasks = replay_latest(audit / f"orchestrator_tasks_{sid}.jsonl", "task_id")
    for r in covered:
        detail = r["decided_by"]["detail"]
        (task_id,) = [t for t in tasks if t in detail]
        assert f"plan {tasks[task_id]['plan_token']}" in detail and "approved by --yes" in detail
        assert r["status"] == "completed" and r["decided_by"]["kind"] == "policy"  # never claimed as a person's
    asked = [r for r in records if r.get("action") == "user_approved"
             and r["decided_by"]["name"] != COVER_NAME and "delete" not in r["command"]]
    assert len(asked) == 4  # per capture: its create and its download


def _request(audit: Path, sid: str, argv: list[str], seq: int = 999, token: str | None = None) -> ApprovalRequest:
    plan = {"argv": argv, "cwd": str(audit), "session_id": sid, "seq": seq}
    return ApprovalRequest(plan_token=token or compute_plan_token(plan), what=" ".join(argv), why="", risk="",
                           requested_at=datetime.now(UTC),
                           context={"argv": argv, "audit_id": f"{sid}_{seq:03d}"})


def test_nothing_outside_the_sessions_own_outputs_is_covered(session: tuple[Path, str, Path], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    audit, sid, home = session
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    asked: list[str] = []

    def person(request: ApprovalRequest) -> HitlDecision:
        asked.append(request.what)
        return HitlDecision.deny("asked")

    gate = plan_cover(person, audit, sid)
    summary = next(audit.glob("captures/*/artifacts/*_executive_summary.md"))
    assert gate(_request(audit, sid, ["cat", str(summary)])).decision == "approve"  # still the product's output
    assert not asked
    outside = tmp_path / "notes.md"
    outside.write_text("x")
    link = summary.parent / "link_executive_summary.md"
    link.symlink_to("/etc/hostname")
    try:
        cases = [
            ["cat", "/etc/hostname"],
            ["cat", str(outside)],
            ["cat", str(link)],  # inside the directory, pointing out of it
            ["cat", "-n", str(summary)],  # an option: not a plain read
            ["cat", str(summary), "/etc/hostname"],  # one file outside is enough
            ["rm", "-f", str(summary)],  # only the capture file is removed under the plan
            ["rm", "-rf", str(summary.parent)],
            ["cp", str(summary), str(outside)],
        ]
        for argv in cases:
            assert gate(_request(audit, sid, argv)).decision == "deny", argv
        # a token that does not hash the argv shown: judged as it would run, so asked
        assert gate(_request(audit, sid, ["cat", str(summary)], token="sha256:" + "0" * 64)).decision == "deny"
        copy = tmp_path / "tampered"
        shutil.copy(summary, copy)
        summary.write_text(summary.read_text() + "\nadded later\n")  # no longer the registered content
        assert gate(_request(audit, sid, ["cat", str(summary)])).decision == "deny"
        shutil.copy(copy, summary)
    finally:
        os.unlink(link)
    assert len(asked) == len(cases) + 2
    # another session's gate covers nothing of this one
    assert plan_cover(person, audit, "ghost_20000101_000000")(_request(audit, sid, ["cat", str(summary)])) \
        .decision == "deny"
