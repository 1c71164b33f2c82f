"""The human gate: a RISKY command becomes an ApprovalRequest bound to the plan-token of its exact argv.

Why plan-tokens: a "yes" must approve *this* argv in *this* directory for *this* session at *this* step,
not "whatever runs next". The request carries ``sha256(canonical {"argv","cwd","session_id","seq"})``; the
decision the callback returns is turned into an :class:`ApprovalResponse` naming that token, and right
before execution the shell hashes what it is about to run again and refuses on any difference.

The callback contract the seeds use is ``hitl_callback(request) -> HitlDecision``. Anything else that comes
back (an exception, EOF, Ctrl-C, a wrong type, a response for another token) fails closed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from netghost.errors import ShellError
from netghost.governance import (
    ApprovalMismatchError,
    ApprovalRequest,
    ApprovalResponse,
    build_approval_request,
    check_response,
)

__all__ = [
    "GateOutcome",
    "HitlCallback",
    "HitlDecision",
    "ask_human",
    "build_shell_request",
    "shell_plan",
]


@dataclass(frozen=True)
class HitlDecision:
    """What a human decided about one ApprovalRequest.

    Build it with :meth:`approve`, :meth:`deny` or :meth:`modify`; the shell binds it to the plan-token of
    the request it asked about (see :meth:`bind`), so a decision cannot be replayed for another command.
    """

    decision: Literal["approve", "deny", "modify"]
    reason: str = ""
    command: str | None = None

    def __post_init__(self) -> None:
        if self.decision == "modify" and not (self.command and self.command.strip()):
            raise ShellError("HitlDecision.modify needs the replacement command", field="command")
        if self.decision != "modify" and self.command is not None:
            raise ShellError(f"HitlDecision.{self.decision} takes no command", field="command")

    @classmethod
    def approve(cls, reason: str = "") -> HitlDecision:
        """Run the command exactly as shown."""
        return cls("approve", reason)

    @classmethod
    def deny(cls, reason: str = "") -> HitlDecision:
        """Do not run it; ``reason`` (optional) is passed back to the AI and the audit."""
        return cls("deny", reason)

    @classmethod
    def modify(cls, command: str, reason: str = "") -> HitlDecision:
        """Run ``command`` instead; it is classified again and FORBIDDEN still blocks it.

        Raises:
            ShellError: ``command`` is empty.
        """
        return cls("modify", reason, command)

    def bind(self, request: ApprovalRequest, *, decided_at: datetime) -> ApprovalResponse:
        """The CabinCrew response for ``request``: this decision, answering its plan-token only."""
        return ApprovalResponse(
            plan_token=request.plan_token,
            decision=self.decision,
            reason=self.reason,
            modified_plan={"command": self.command} if self.command is not None else None,
            decided_at=decided_at,
        )


HitlCallback = Callable[[ApprovalRequest], HitlDecision]


@dataclass(frozen=True)
class GateOutcome:
    """The bound decision, or why there is none (``abandoned`` means fail closed)."""

    response: ApprovalResponse | None
    abandoned: str | None = None

    @property
    def decision(self) -> Literal["approve", "deny", "modify"] | None:
        """The decision, None when the gate was abandoned."""
        return self.response.decision if self.response is not None else None


def shell_plan(argv: Sequence[str], *, cwd: str, session_id: str, seq: int) -> dict[str, Any]:
    """The plan a shell plan-token hashes: exact argv, working directory, session and step."""
    return {"argv": list(argv), "cwd": cwd, "session_id": session_id, "seq": seq}


def build_shell_request(
    plan: dict[str, Any],
    *,
    command: str,
    reasoning: str,
    risk: str,
    requested_at: datetime,
    context: dict[str, Any],
) -> ApprovalRequest:
    """The ApprovalRequest for one RISKY command (``command`` is already redacted)."""
    return build_approval_request(
        plan, what=command, why=reasoning, risk=risk, requested_at=requested_at, context=context
    )


def ask_human(
    callback: HitlCallback, request: ApprovalRequest, *, now: Callable[[], datetime]
) -> GateOutcome:
    """Ask ``callback`` about ``request`` and bind its answer to the request's plan-token.

    Every way of not answering fails closed: an exception (including EOFError and KeyboardInterrupt from a
    terminal, and SystemExit or GeneratorExit from a callback that tries to end the program), a return value that is not a decision, or a response that names another plan-token.
    A callback may also return a ready :class:`ApprovalResponse` (an MCP or web approver); it is accepted
    only if it answers this request.
    """
    try:
        answer: object = callback(request)
    except (EOFError, KeyboardInterrupt) as exc:
        return GateOutcome(None, f"approval prompt closed ({type(exc).__name__})")
    except Exception as exc:  # fail closed on any callback failure; the reason is audited
        return GateOutcome(None, f"approval callback failed ({type(exc).__name__}: {exc})")
    except BaseException as exc:  # SystemExit, GeneratorExit from a callback: still no approval
        return GateOutcome(None, f"approval callback exited ({type(exc).__name__}: {exc})")
    if isinstance(answer, HitlDecision):
        return GateOutcome(answer.bind(request, decided_at=now()))
    if isinstance(answer, ApprovalResponse):
        try:
            return GateOutcome(check_response(request, answer))
        except ApprovalMismatchError as exc:
            return GateOutcome(None, str(exc))
    return GateOutcome(None, f"approval callback returned {type(answer).__name__}, not a HitlDecision")
