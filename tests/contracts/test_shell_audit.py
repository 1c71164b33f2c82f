"""Shell response and audit record contracts, including a round trip through the real governance WAL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from netghost.contracts import (
    CHAIN_FIELD_NAMES,
    ShellAuditRecord,
    ShellResponse,
    StoredShellAuditRecord,
    StoredTaskRecord,
    TaskRecord,
)
from netghost.governance.wal import WalWriter, read_wal, replay_latest, verify


def _audit_payload(**overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "v": 1,
        "kind": "shell_command",
        "audit_id": "ghost_20250115_143022_007",
        "session_id": "ghost_20250115_143022",
        "command": "az network route-table route update --name r1 --resource-group prod-rg",
        "reasoning": "Attempting to correct the next-hop for route 10.0.2.0",
        "classification": "RISKY",
        "tier": 2,
        "risk_reason": "Azure CLI verb 'update' is classified as mutative",
        "environment": "azure",
        "action": "user_denied",
        "status": "denied",
        "exit_code": None,
        "error": None,
        "output": "",
        "stderr": "",
        "output_metadata": {
            "truncation_applied": False,
            "original_lines": 0,
            "shown_lines": 0,
            "format": "text",
            "redactions": 0,
        },
        "denial_reason": "Wrong resource group — use cache-rg, not prod-rg",
        "modified_command": None,
        "plan_token": "sha256:" + "ab" * 32,
        "policy_hash": None,
        "policy_rule": None,
        "duration_ms": 1.5,
    }
    payload.update(overrides)
    return payload


def _response(**overrides: Any) -> dict[str, Any]:
    response: dict[str, Any] = {
        "status": "completed",
        "classification": "SAFE",
        "action": "auto_approved",
        "output": "[]",
        "stderr": "",
        "exit_code": 0,
        "error": None,
        "audit_id": "ghost_20250115_143022_001",
        "tier": 2,
        "risk_reason": "Tier 2: Azure verb 'list' is read-only",
        "environment": "azure",
        "output_metadata": {
            "truncation_applied": True,
            "original_lines": 812,
            "shown_lines": 200,
            "format": "json",
            "redactions": 2,
        },
        "plan_token": None,
        "denial_reason": None,
    }
    response.update(overrides)
    return response


def test_shell_audit_record_has_exactly_the_agreed_fields() -> None:
    record = ShellAuditRecord.model_validate(_audit_payload())
    assert record.model_dump(mode="json") == _audit_payload()
    # optional fields added after the contract was agreed (absent, not null, when unset): who asked over MCP,
    # who decided, and a sealed lab's verdict
    assert list(ShellAuditRecord.model_fields) == [*_audit_payload(), "client", "decided_by", "confinement"]


DECIDERS: dict[str, dict[str, Any]] = {
    # golden: one record per kind of decider, as the shell writes them (issue 23 "honest approvals")
    "human": {"kind": "human", "name": "terminal", "detail": None},
    "yes": {"kind": "flag", "name": "--yes", "detail": "lab nsg-deny"},
    "mcp": {"kind": "mcp_elicitation", "name": "claude-code", "detail": "2.1"},
    "safe": {"kind": "policy", "name": "safe_tier", "detail": None},
    "org": {"kind": "policy", "name": "org_policy", "detail": "allow-nsg-reads"},
    "sealed": {"kind": "policy", "name": "sealed_lab", "detail": "--yes (lab nsg-deny) approved a command the lab "
                                                               "does not simulate"},
    "callback": {"kind": "callback", "name": "my_approver", "detail": None},
}
LABELS = {
    "human": "the human at the terminal", "yes": "--yes (lab nsg-deny)", "mcp": "MCP client claude-code 2.1 "
    "(elicitation)", "safe": "policy safe_tier", "org": "policy org_policy (allow-nsg-reads)",
    "sealed": "policy sealed_lab (--yes (lab nsg-deny) approved a command the lab does not simulate)",
    "callback": "approval callback my_approver",
}


@pytest.mark.parametrize("who", sorted(DECIDERS))
def test_who_decided_is_recorded_round_trips_and_reads_as_words(who: str) -> None:
    record = {**_audit_payload(), "decided_by": DECIDERS[who]}
    parsed = ShellAuditRecord.model_validate(record)
    assert parsed.model_dump(mode="json") == record
    assert parsed.decided_by is not None and parsed.decided_by.label() == LABELS[who]
    assert parsed.decided_by.is_person is (who in ("human", "mcp"))
    # the action keeps the seed's wire values: who decided never changes what was decided
    assert parsed.action == "user_denied"


def test_an_older_record_without_a_decider_still_reads_and_keeps_its_bytes() -> None:
    dumped = ShellAuditRecord.model_validate(_audit_payload()).model_dump(mode="json")
    assert "decided_by" not in dumped and "confinement" not in dumped


def test_a_decider_or_confinement_of_another_shape_is_refused() -> None:
    for bad in ({"kind": "robot", "name": "x"}, {"kind": "flag", "name": ""}, {"kind": "flag"},
                {"kind": "human", "name": "terminal", "extra": 1}):
        with pytest.raises(ValidationError):
            ShellAuditRecord.model_validate({**_audit_payload(), "decided_by": bad})
    with pytest.raises(ValidationError):
        ShellAuditRecord.model_validate({**_audit_payload(), "confinement": {"scope": "lab:x", "simulated": True}})


def test_a_sealed_lab_verdict_round_trips() -> None:
    verdict = {"scope": "lab:nsg-deny", "simulated": False, "kind": "unsimulated", "program": "/usr/bin/rm",
               "reason": "the lab does not simulate `rm` (/usr/bin/rm): it would run for real on this machine"}
    record = {**_audit_payload(), "confinement": verdict, "decided_by": DECIDERS["sealed"]}
    assert ShellAuditRecord.model_validate(record).model_dump(mode="json") == record


def test_the_mcp_client_is_recorded_when_given_and_absent_not_null_otherwise() -> None:
    with_client = {**_audit_payload(), "client": {"via": "mcp", "name": "claude-code", "version": "2.1"}}
    assert ShellAuditRecord.model_validate(with_client).model_dump(mode="json") == with_client
    assert "client" not in ShellAuditRecord.model_validate(_audit_payload()).model_dump(mode="json")
    with pytest.raises(ValidationError):  # an unknown channel or a missing version is not a client
        ShellAuditRecord.model_validate({**_audit_payload(), "client": {"via": "http", "name": "x", "version": "1"}})
    with pytest.raises(ValidationError):
        ShellAuditRecord.model_validate({**_audit_payload(), "client": {"via": "mcp", "name": "x"}})


@pytest.mark.parametrize("missing", sorted(_audit_payload()))
def test_every_audit_field_is_required(missing: str) -> None:
    payload = _audit_payload()
    del payload[missing]
    with pytest.raises(ValidationError):
        ShellAuditRecord.model_validate(payload)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("v", 2),
        ("kind", "task"),
        ("classification", "safe"),
        ("action", "approved"),
        ("status", "task_completed"),
        ("error", "boom"),
        ("environment", "cloud"),
        ("tier", 4),
    ],
)
def test_audit_wire_strings_are_the_seeds(field: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        ShellAuditRecord.model_validate(_audit_payload(**{field: value}))


def test_shell_audit_record_round_trips_through_the_wal(tmp_path: Path) -> None:
    path = tmp_path / "audit" / "shell_audit_ghost_20250115_143022.jsonl"
    payloads = [
        ShellAuditRecord.model_validate(_audit_payload(audit_id=f"ghost_20250115_143022_{n:03d}"))
        for n in (1, 2, 3)
    ]
    with WalWriter(path, fsync=False) as wal:
        stored = [wal.append(p.model_dump(mode="json")) for p in payloads]
    assert verify(path).ok
    read = read_wal(path).records
    assert read == stored
    for line, payload in zip(read, payloads, strict=True):
        model = StoredShellAuditRecord.model_validate(line)
        assert model.model_dump(mode="json") == line, "stored form must re-serialise to the hashed bytes"
        assert (
            ShellAuditRecord.model_validate({k: v for k, v in line.items() if k not in CHAIN_FIELD_NAMES})
            == payload
        )
    assert [StoredShellAuditRecord.model_validate(r).seq for r in read] == [1, 2, 3]
    assert StoredShellAuditRecord.model_validate(read[0]).prev_sha256 is None


def test_task_registry_replay_yields_valid_latest_records(tmp_path: Path) -> None:
    path = tmp_path / "orchestrator_tasks_s1.jsonl"
    base = {
        "task_id": "ghost_web-vm-01_20250115T143200",
        "session_id": "s1",
        "intent": "capture_traffic",
        "state": "CREATED",
        "timestamps": {"created": "2025-01-15T14:32:00Z"},
    }
    with WalWriter(path, fsync=False) as wal:
        for state in ("CREATED", "DETECTING", "APPROVED", "PROVISIONING", "WAITING"):
            record = TaskRecord.model_validate(dict(base, state=state))
            wal.append(record.model_dump(mode="json"))
    latest = replay_latest(path, "task_id")
    (line,) = latest.values()
    stored = StoredTaskRecord.model_validate(line)
    assert stored.state == "WAITING" and stored.seq == 5 and stored.v == 2
    assert stored.storage_container == "captures" and stored.max_polls == 20


def test_stored_record_rejects_untagged_or_missing_chain_fields() -> None:
    line = dict(_audit_payload(), seq=1, ts="2026-11-22T06:15:02.123456Z", prev_sha256=None)
    with pytest.raises(ValidationError):
        StoredShellAuditRecord.model_validate(line)  # no sha256
    with pytest.raises(ValidationError):
        StoredShellAuditRecord.model_validate(dict(line, sha256="deadbeef"))
    with pytest.raises(ValidationError):
        StoredShellAuditRecord.model_validate(dict(line, sha256="sha256:" + "0" * 64, seq=0))
    ok = StoredShellAuditRecord.model_validate(dict(line, sha256="sha256:" + "0" * 64))
    assert ok.ts == "2026-11-22T06:15:02.123456Z"


def test_shell_response_requires_every_key_and_accepts_loop_meta() -> None:
    response = ShellResponse.model_validate(_response())
    assert response.meta is None
    assert response.model_dump(mode="json", exclude_unset=True) == _response()
    for key in _response():
        with pytest.raises(ValidationError):
            ShellResponse.model_validate({k: v for k, v in _response().items() if k != key})
    denied = _response(
        status="denied",
        action="user_denied",
        classification="RISKY",
        exit_code=None,
        _meta={"denial_reason": "Too expensive", "denial_count": 2, "approaching_threshold": True},
    )
    parsed = ShellResponse.model_validate(denied)
    assert parsed.meta is not None and parsed.meta.denial_count == 2
    assert parsed.model_dump(mode="json", exclude_unset=True) == denied
    with pytest.raises(ValidationError):
        ShellResponse.model_validate(dict(denied, _meta={"denial_cnt": 1}))


@settings(max_examples=150, deadline=None)
@given(
    output=st.text(max_size=200),
    exit_code=st.none() | st.integers(-255, 255),
    redactions=st.integers(0, 50),
    duration=st.floats(0, 1e6, allow_nan=False),
    action=st.sampled_from(["auto_approved", "user_approved", "user_modified", "blocked"]),
)
def test_any_valid_audit_record_round_trips(
    output: str, exit_code: int | None, redactions: int, duration: float, action: str
) -> None:
    payload = _audit_payload(output=output, exit_code=exit_code, duration_ms=duration, action=action)
    payload["output_metadata"] = dict(payload["output_metadata"], redactions=redactions)
    record = ShellAuditRecord.model_validate(payload)
    assert ShellAuditRecord.model_validate_json(record.model_dump_json()) == record
    assert record.model_dump(mode="json") == payload
