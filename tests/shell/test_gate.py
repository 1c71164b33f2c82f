"""HitlDecision and the binding of decisions to plan-tokens."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from netghost.errors import ShellError
from netghost.governance.approval import ApprovalRequest, ApprovalResponse
from netghost.governance.plan_token import compute_plan_token
from netghost.shell import HitlDecision
from netghost.shell.gate import ask_human, build_shell_request, shell_plan

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


def _request(argv: list[str] | None = None, seq: int = 1) -> ApprovalRequest:
    plan = shell_plan(argv or ["rm", "notes.txt"], cwd="/work", session_id="s1", seq=seq)
    return build_shell_request(
        plan,
        command="rm notes.txt",
        reasoning="clean up",
        risk="deletes a file",
        requested_at=NOW,
        context={"tier": 3},
    )


def test_plan_token_covers_argv_cwd_session_and_seq() -> None:
    base = shell_plan(["rm", "a"], cwd="/w", session_id="s", seq=1)
    token = compute_plan_token(base)
    assert _request().plan_token.startswith("sha256:")
    for changed in (
        shell_plan(["rm", "b"], cwd="/w", session_id="s", seq=1),
        shell_plan(["rm", "a"], cwd="/x", session_id="s", seq=1),
        shell_plan(["rm", "a"], cwd="/w", session_id="t", seq=1),
        shell_plan(["rm", "a"], cwd="/w", session_id="s", seq=2),
        shell_plan(["rm", "a", ""], cwd="/w", session_id="s", seq=1),
    ):
        assert compute_plan_token(changed) != token


def test_constructors() -> None:
    assert HitlDecision.approve() == HitlDecision("approve", "")
    assert HitlDecision.deny(reason="wrong rg").reason == "wrong rg"
    mod = HitlDecision.modify("ls -l", reason="list only")
    assert (mod.decision, mod.command, mod.reason) == ("modify", "ls -l", "list only")
    with pytest.raises(ShellError):
        HitlDecision.modify("  ")


def test_decision_binds_to_the_request_token_only() -> None:
    req = _request()
    resp = HitlDecision.modify("ls", reason="r").bind(req, decided_at=NOW)
    assert resp.plan_token == req.plan_token
    assert resp.answers(req)
    assert not resp.answers(_request(seq=2))
    assert resp.modified_plan == {"command": "ls"}


@pytest.mark.parametrize("exc", [EOFError(), KeyboardInterrupt(), RuntimeError("boom")])
def test_callback_failures_fail_closed(exc: BaseException) -> None:
    def callback(request: ApprovalRequest) -> HitlDecision:
        raise exc

    outcome = ask_human(callback, _request(), now=lambda: NOW)
    assert outcome.response is None
    assert outcome.decision is None
    assert type(exc).__name__ in (outcome.abandoned or "")


def test_wrong_return_type_fails_closed() -> None:
    outcome = ask_human(lambda request: "yes", _request(), now=lambda: NOW)  # type: ignore[arg-type,return-value]
    assert outcome.response is None


def test_response_for_another_token_is_refused() -> None:
    other = _request(seq=9)
    stale = ApprovalResponse(plan_token=other.plan_token, decision="approve", decided_at=NOW)
    outcome = ask_human(lambda request: stale, _request(), now=lambda: NOW)  # type: ignore[arg-type,return-value]
    assert outcome.response is None
    assert "answers" in (outcome.abandoned or "")


def test_matching_response_is_accepted() -> None:
    req = _request()
    ok = ApprovalResponse(plan_token=req.plan_token, decision="approve", decided_at=NOW)
    assert ask_human(lambda request: ok, req, now=lambda: NOW).decision == "approve"  # type: ignore[arg-type,return-value]
