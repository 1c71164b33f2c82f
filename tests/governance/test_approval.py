"""Approvals answer only the plan-token they name (CabinCrew §7)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from netghost.governance.approval import (
    ApprovalMismatchError,
    ApprovalRequest,
    ApprovalResponse,
    build_approval_request,
    check_response,
)
from netghost.governance.plan_token import compute_plan_token

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
PLAN = {"argv": ["az", "vm", "restart"], "cwd": "/", "session_id": "s", "seq": 1}


def _request(plan: object = PLAN) -> ApprovalRequest:
    return build_approval_request(plan, what="az vm restart", why="test", risk="restarts a VM", requested_at=NOW)


def test_request_carries_the_plans_token() -> None:
    assert _request().plan_token == compute_plan_token(PLAN)


def test_response_answers_only_its_token() -> None:
    req = _request()
    other = _request(dict(PLAN, seq=2))
    resp = ApprovalResponse(plan_token=req.plan_token, decision="approve", decided_at=NOW)
    assert resp.answers(req)
    assert not resp.answers(other)
    assert check_response(req, resp) is resp
    with pytest.raises(ApprovalMismatchError):
        check_response(other, resp)


def test_wire_models_forbid_unknown_fields_and_bad_decisions() -> None:
    with pytest.raises(ValidationError):
        ApprovalResponse.model_validate(
            {"plan_token": "sha256:x", "decision": "approve", "decided_at": NOW.isoformat(), "extra": 1}
        )
    with pytest.raises(ValidationError):
        ApprovalResponse.model_validate({"plan_token": "sha256:x", "decision": "yes", "decided_at": NOW.isoformat()})


def test_request_round_trips_through_json() -> None:
    req = build_approval_request(
        PLAN, what="w", why="y", risk="r", requested_at=NOW, context={"tier": 3, "argv": ["az"]}
    )
    assert ApprovalRequest.model_validate_json(req.model_dump_json()) == req
