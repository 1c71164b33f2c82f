"""Human approvals bound to plan-tokens (CabinCrew §7).

The wire models live in :mod:`netghost.contracts.cabincrew` and are re-exported here. The helpers
make the binding hard to get wrong: a request is built *from the plan* (so its token is the plan's),
and a response is accepted only if it names that same token.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from netghost.contracts import ApprovalDecision, ApprovalRequest, ApprovalResponse
from netghost.errors import ApprovalMismatchError
from netghost.governance.plan_token import compute_plan_token

__all__ = [
    "ApprovalDecision",
    "ApprovalMismatchError",
    "ApprovalRequest",
    "ApprovalResponse",
    "build_approval_request",
    "check_response",
]


def build_approval_request(
    plan: Any,
    *,
    what: str,
    why: str,
    risk: str,
    requested_at: datetime,
    context: Mapping[str, Any] | None = None,
) -> ApprovalRequest:
    """Build an :class:`ApprovalRequest` whose plan-token is computed from ``plan`` itself.

    Args:
        plan: the exact plan that will run if approved (plain JSON data).
        what: what will happen (for the shell: the redacted command line).
        why: why it is proposed (for the shell: the AI's reasoning).
        risk: the human-readable risk.
        requested_at: when the request is made (from the injected clock).
        context: anything else a reviewer should see.

    Raises:
        TypeError: the plan is not plain JSON data.
    """
    return ApprovalRequest(
        plan_token=compute_plan_token(plan),
        what=what,
        why=why,
        risk=risk,
        requested_at=requested_at,
        context=dict(context or {}),
    )


def check_response(request: ApprovalRequest, response: ApprovalResponse) -> ApprovalResponse:
    """Return ``response`` if it answers ``request``'s plan-token, else raise.

    Args:
        request: the pending request.
        response: the decision offered for it.

    Raises:
        ApprovalMismatchError: the response names another plan-token.
    """
    if not response.answers(request):
        raise ApprovalMismatchError(request.plan_token, response.plan_token)
    return response
