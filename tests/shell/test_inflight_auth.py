"""The shell's provisional ("outcome unknown") record is sealed, and a forged one never enters the chain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netghost.contracts import ProvisionalRejectedRecord
from netghost.governance import provisional_path, rejected_provisionals, write_provisional
from netghost.governance.wal import read_wal, verify
from netghost.shell import HitlDecision, SafeExecShell
from tests.shell.shell_helpers import Recorder, table_classify

FORGED_COMMAND = "az network nsg rule delete -g prod-rg --nsg-name nsg-data -n AllowRedis"


def _shell(tmp_path: Path, sid: str = "tamp", notes: list[str] | None = None, recorder: Recorder | None = None,
           ) -> SafeExecShell:
    return SafeExecShell(sid, recorder or Recorder(), audit_dir=tmp_path / "audit", classifier=table_classify,  # type: ignore[arg-type]
                         cwd=tmp_path, on_notice=notes.append if notes is not None else None)


def _forged(sid: str, seq: int) -> dict[str, object]:
    """What the attacker wrote: a completed, user-approved delete, in the shell's own record shape."""
    return {"v": 1, "kind": "shell_command", "audit_id": f"{sid}_{seq:03d}", "session_id": sid,
            "command": FORGED_COMMAND, "reasoning": "cleanup", "classification": "RISKY", "tier": 2,
            "risk_reason": "delete", "environment": "azure", "action": "user_approved", "status": "completed",
            "exit_code": 0, "error": None, "output": "", "stderr": "", "denial_reason": None,
            "modified_command": None, "plan_token": None, "policy_hash": None, "policy_rule": None,
            "duration_ms": 1.0, "output_metadata": {"truncation_applied": False, "original_lines": 0,
                                                    "shown_lines": 0, "format": "text", "redactions": 0}}


def test_a_forged_record_found_at_open_is_refused_recorded_and_reported(tmp_path: Path) -> None:
    audit = tmp_path / "audit"
    audit.mkdir()
    planted = audit / "shell_audit_tamp.jsonl.inflight"
    planted.write_text(json.dumps(_forged("tamp", 1)))
    notes: list[str] = []
    with _shell(tmp_path, notes=notes) as shell:
        assert shell.notices == notes and len(notes) == 1
        shell.execute({"command": "true", "reasoning": "after"})
        records = read_wal(shell.audit_path).records
    assert notes[0].startswith("Provisional audit record shell_audit_tamp.jsonl.inflight refused, not appended: "
                               "it carries no MAC")
    rejected = ProvisionalRejectedRecord.model_validate({k: v for k, v in records[0].items()
                                                         if k not in ("seq", "ts", "prev_sha256", "sha256")})
    assert rejected.audit_id == "tamp_001" and "carries no MAC" in rejected.reason
    assert rejected.file is not None and (audit / rejected.file).exists() and not planted.exists()
    assert [r["audit_id"] for r in records] == ["tamp_001", "tamp_002"] and records[1]["command"] == "true"
    assert all(FORGED_COMMAND not in json.dumps(r) for r in records)
    assert verify(shell.audit_path).ok


def test_a_forged_record_planted_between_calls_is_refused_before_the_next_call(tmp_path: Path) -> None:
    notes: list[str] = []
    with _shell(tmp_path, notes=notes) as shell:
        shell.execute({"command": "true", "reasoning": "one"})
        provisional_path(shell.audit_path).write_text(json.dumps(_forged("tamp", 2)))
        response = shell.execute({"command": "true", "reasoning": "two"})
        records = read_wal(shell.audit_path).records
    assert response["audit_id"] == "tamp_003"  # the rejection took seq 2 in the chain
    assert [r["kind"] for r in records] == ["shell_command", "provisional_rejected", "shell_command"]
    assert len(notes) == 1 and rejected_provisionals(shell.audit_path)


def test_an_authentic_record_for_the_wrong_call_is_still_refused(tmp_path: Path) -> None:
    """Belt and braces: even a MAC-valid envelope must hold this session's record for its seq."""
    with _shell(tmp_path) as shell:
        write_provisional(shell._writer, _forged("other", 1), session_id="tamp")
    notes: list[str] = []
    with _shell(tmp_path, notes=notes) as again:
        records = read_wal(again.audit_path).records
    assert "its record is other_001 of session other, not record 1 of this one" in notes[0]
    assert [r["kind"] for r in records] == ["provisional_rejected"]


def test_the_genuine_record_of_a_crash_is_still_appended(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    shell = _shell(tmp_path, recorder=Recorder([HitlDecision.approve()]))
    inflight: list[dict[str, object]] = []

    def crash_after_run(payload: object) -> object:
        inflight.append(json.loads(provisional_path(shell.audit_path).read_text()))
        raise OSError("disk full")

    shell._writer.append = crash_after_run  # type: ignore[method-assign,assignment]
    with pytest.raises(OSError, match="disk full"):
        shell.execute({"command": f"touch {marker}", "reasoning": "x"})
    del shell._writer.append
    shell.close()
    (envelope,) = inflight
    assert envelope["v"] == 2 and envelope["seq"] == 1 and str(envelope["mac"]).startswith("hmac-sha256:")
    assert envelope["session_id"] == "tamp" and envelope["log"] == "shell_audit_tamp.jsonl"
    notes: list[str] = []
    with _shell(tmp_path, notes=notes) as again:
        records = read_wal(again.audit_path).records
    assert notes == [] and len(records) == 1 and "outcome unknown" in records[0]["stderr"]
    assert marker.exists() and str(marker) in records[0]["command"]
