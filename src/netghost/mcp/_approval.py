"""RISKY commands asked of the human behind the MCP client, through MCP elicitation.

The shell's gate is synchronous: it calls ``hitl_callback(request)`` in a worker thread and waits for a
:class:`HitlDecision` until the approval deadline. The MCP session is asynchronous. The bridge sends the
``elicitation/create`` request onto the server's event loop with ``asyncio.run_coroutine_threadsafe`` and
blocks the worker thread on its answer (never the loop, so the server keeps serving the client while the
human decides). The request is tied to the tool call that caused it (``related_request_id``), so a
streamable HTTP client gets it on that call's stream.

Fail closed, always: a client that did not declare the elicitation capability gets a denial saying why
(never an approval), and so does an answer that is not an explicit "approve" (decline, cancel, an
invalid form, a broken connection, no answer before the deadline). An elicitation answer is whatever the
connected client sends: the message asks that a human answer it, and every decision is bound to the
command's plan-token and audited with the client's name, but a client that auto-accepts cannot be told
apart from a human here. Use a client that shows elicitations to a person.

Every decision names who made it (the audit's ``decided_by``): ``mcp_elicitation`` with the client's declared
name and version for an answer, the ``closed_gate`` policy when there was nobody to ask, ``fail_closed``
when the elicitation failed or timed out. Under ``--lab`` a command the lab does not simulate is marked
``needs_person`` by the shell's lab confinement; the message says it would run for real.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from netghost.contracts import ApprovalRequest, DecidedBy
from netghost.shell import HitlDecision

__all__ = ["APPROVAL_SCHEMA", "CallContext", "ElicitingApprover", "no_elicitation_reason"]

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["approve", "deny"], "title": "Decision",
                     "description": "approve runs exactly the command shown; deny refuses it"},
        "reason": {"type": "string", "title": "Reason", "description": "optional; written to the audit trail"},
    },
    "required": ["decision"],
}
"""The form the client shows: an explicit decision and an optional reason (primitive fields only)."""

Elicit = Callable[[str, dict[str, Any]], Coroutine[Any, Any, Any]]
"""``elicit(message, schema) -> ElicitResult``: the session's ``elicit_form`` bound to the current call."""


@dataclass
class CallContext:
    """What the bridge needs from the tool call in flight: its loop, the session's elicit, the client."""

    loop: asyncio.AbstractEventLoop
    elicit: Elicit | None
    client: str


def no_elicitation_reason(client: str) -> str:
    """Why a RISKY command was denied for a client that cannot ask a human."""
    return (f"RISKY commands need a human's approval, and the MCP client {client} did not declare the "
            "elicitation capability, so there is no one to ask: denied (fail closed). Use a client that "
            "supports elicitation, or run the command yourself outside the agent.")


def _message(request: ApprovalRequest) -> str:
    ctx = request.context
    real = ctx.get("needs_person")
    return "\n".join([
        "SAFETY SHELL: a human must approve this RISKY command (do not let a model answer).",
        *([f"REAL:     {real}. Approve only if you want it run on the machine serving these tools."] if real else []),
        f"Command:  {request.what}",
        f"Why:      {request.why}",
        f"Risk:     {request.risk}",
        f"Audit id: {ctx.get('audit_id', '?')} · environment {ctx.get('environment', '?')}",
        f"Plan-token: {request.plan_token} (the decision applies to this exact argv only)",
        f"Answer by {ctx.get('approval_deadline', '?')} or it is denied.",
    ])


class ElicitingApprover:
    """The shell's HITL callback for one MCP session; ``current`` is set around each tool call.

    Calls are serialised per session (one at a time), so a single ``current`` slot is enough.
    """

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.current: CallContext | None = None

    def __call__(self, request: ApprovalRequest) -> HitlDecision:
        call = self.current
        if call is None:  # a RISKY step outside any tool call (none today): nobody to ask
            why = "no MCP tool call in flight to ask a human through: denied (fail closed)"
            return HitlDecision.deny(why, by=_policy("closed_gate", why))
        if call.elicit is None:
            why = no_elicitation_reason(call.client)
            return HitlDecision.deny(why, by=_policy("closed_gate", f"MCP client {call.client} cannot elicit"))
        future = asyncio.run_coroutine_threadsafe(call.elicit(_message(request), APPROVAL_SCHEMA), call.loop)
        try:
            result = future.result(timeout=self.timeout_s)
        except TimeoutError:
            future.cancel()
            why = f"no answer to the elicitation within {self.timeout_s:g} s: denied (fail closed)"
            return HitlDecision.deny(why, by=_policy("fail_closed", why))
        except Exception as exc:  # the connection broke, the client answered with an error: no approval
            why = f"the elicitation failed ({type(exc).__name__}: {exc}): denied (fail closed)"
            return HitlDecision.deny(why, by=_policy("fail_closed", why[:500]))
        return _decision(result, DecidedBy(kind="mcp_elicitation", name=call.client[:200] or "unnamed client"))


def _policy(name: str, detail: str) -> DecidedBy:
    return DecidedBy(kind="policy", name=name, detail=detail[:2000])


def _decision(result: Any, by: DecidedBy) -> HitlDecision:
    action = getattr(result, "action", None)
    content = getattr(result, "content", None) or {}
    reason = str(content.get("reason") or "")[:500]
    if action != "accept":
        return HitlDecision.deny(reason or f"the human answered the elicitation with {action!r}", by=by)
    if content.get("decision") == "approve":
        return HitlDecision.approve(reason or "approved through MCP elicitation", by=by)
    return HitlDecision.deny(reason or "denied through MCP elicitation", by=by)
