"""The human gate: a RISKY command becomes an ApprovalRequest bound to the plan-token of its exact argv.

Why plan-tokens: a "yes" must approve *this* argv in *this* directory for *this* session at *this* step,
not "whatever runs next". The request carries ``sha256(canonical {"argv","cwd","session_id","seq"})``; the
decision the callback returns is turned into an :class:`ApprovalResponse` naming that token, and right
before execution the shell hashes what it is about to run again and refuses on any difference.

The callback contract the seeds use is ``hitl_callback(request) -> HitlDecision``. Anything else that comes
back (an exception, EOF, Ctrl-C, a wrong type, a response for another token) fails closed, and so does no
answer at all: the callback runs in a worker thread and the gate waits for it only until the approval
deadline. Why a thread rather than an interruptible prompt: the gate cannot interrupt an arbitrary callback
(an MCP elicitation, a web approver, a hung plugin), but it can stop listening to one. At the deadline the
answer slot is sealed; whatever the callback returns later is dropped, and it could not run anything anyway:
the shell has already audited the call as denied and the next call has another seq, hence another plan-token.
"""

from __future__ import annotations

import contextvars
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from netghost.contracts import DecidedBy
from netghost.errors import ShellError
from netghost.governance import (
    ApprovalMismatchError,
    ApprovalRequest,
    ApprovalResponse,
    build_approval_request,
    check_response,
)

__all__ = [
    "DEFAULT_APPROVAL_TIMEOUT_S",
    "TERMINAL_HUMAN",
    "GateOutcome",
    "HitlCallback",
    "HitlDecision",
    "PromptControl",
    "Waiter",
    "ask_about",
    "ask_human",
    "build_shell_request",
    "callback_decider",
    "current_prompt",
    "fail_closed",
    "shell_plan",
]

DEFAULT_APPROVAL_TIMEOUT_S = 300.0
"""How long a human has to answer one approval prompt before the command is denied (fail closed)."""

Waiter = Callable[[threading.Event, float], bool]
"""``wait(answered, timeout_s) -> answered in time``; tests inject one that never sleeps."""


@dataclass(frozen=True)
class HitlDecision:
    """What a human decided about one ApprovalRequest.

    Build it with :meth:`approve`, :meth:`deny` or :meth:`modify`; the shell binds it to the plan-token of
    the request it asked about (see :meth:`bind`), so a decision cannot be replayed for another command.
    ``by`` says who decided (the terminal's human, ``--yes``, an MCP client's elicitation, a policy); the
    audit records it. A decision that does not say is recorded as its callback's, never as a human's.
    """

    decision: Literal["approve", "deny", "modify"]
    reason: str = ""
    command: str | None = None
    by: DecidedBy | None = None

    def __post_init__(self) -> None:
        if self.decision == "modify" and not (self.command and self.command.strip()):
            raise ShellError("HitlDecision.modify needs the replacement command", field="command")
        if self.decision != "modify" and self.command is not None:
            raise ShellError(f"HitlDecision.{self.decision} takes no command", field="command")

    @classmethod
    def approve(cls, reason: str = "", *, by: DecidedBy | None = None) -> HitlDecision:
        """Run the command exactly as shown."""
        return cls("approve", reason, by=by)

    @classmethod
    def deny(cls, reason: str = "", *, by: DecidedBy | None = None) -> HitlDecision:
        """Do not run it; ``reason`` (optional) is passed back to the AI and the audit."""
        return cls("deny", reason, by=by)

    @classmethod
    def modify(cls, command: str, reason: str = "", *, by: DecidedBy | None = None) -> HitlDecision:
        """Run ``command`` instead; it is classified again and FORBIDDEN still blocks it.

        Raises:
            ShellError: ``command`` is empty.
        """
        return cls("modify", reason, command, by=by)

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


TERMINAL_HUMAN = DecidedBy(kind="human", name="terminal")
"""The decider of an answer typed at the approval prompt on this process's terminal."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value: object, limit: int) -> str:
    """``value`` as text a decider may hold: no lone surrogates (they cannot be audited), bounded."""
    return _SURROGATE.sub("\ufffd", str(value))[:limit]


def fail_closed(reason: str) -> DecidedBy:
    """The decider of a prompt nobody answered: the fail-closed policy, with why."""
    return DecidedBy(kind="policy", name="fail_closed", detail=_text(reason, 2000))


def callback_decider(callback: object) -> DecidedBy:
    """The decider of an answer whose callback did not say who decided: the callback, by name."""
    name = getattr(callback, "__qualname__", None) or type(callback).__qualname__
    return DecidedBy(kind="callback", name=_text(name, 200) or "callback")


@dataclass(frozen=True)
class GateOutcome:
    """The bound decision and who made it, or why there is none (``abandoned`` means fail closed)."""

    response: ApprovalResponse | None
    abandoned: str | None = None
    decided_by: DecidedBy | None = None

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


@dataclass
class PromptControl:
    """What a callback running under :func:`ask_human` may consult: its deadline and whether the gate left.

    ``deadline`` is on the :func:`time.monotonic` clock. ``cancelled`` is set when the gate stops listening
    (deadline passed, Ctrl-C): a prompt that reads a terminal should stop then, so that a stale reader does
    not swallow the line a human types for the next prompt.
    """

    deadline: float
    cancelled: threading.Event = field(default_factory=threading.Event)

    def remaining(self) -> float:
        """Seconds until the deadline (0 once it passed or the gate left)."""
        return 0.0 if self.cancelled.is_set() else max(0.0, self.deadline - time.monotonic())


_PROMPT: contextvars.ContextVar[PromptControl | None] = contextvars.ContextVar(
    "netghost_prompt", default=None
)


def current_prompt() -> PromptControl | None:
    """The :class:`PromptControl` of the approval being asked in this thread, None outside one."""
    return _PROMPT.get()


class _Slot:
    """The one answer of one prompt; sealed at the deadline so that a late answer is dropped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.done = threading.Event()
        self.sealed = False
        self.answer: object = None
        self.failure: str | None = None

    def put(self, answer: object, failure: str | None) -> None:
        with self._lock:
            if self.sealed:
                return  # the gate stopped listening: a late answer never reaches anyone
            self.answer, self.failure = answer, failure
            self.done.set()

    def seal(self) -> bool:
        """Stop accepting answers; True if an answer arrived before that."""
        with self._lock:
            self.sealed = True
            return self.done.is_set()


def _call(callback: HitlCallback, request: ApprovalRequest, slot: _Slot) -> None:
    """The worker: run the callback and put its answer, or why there is none, in the slot."""
    try:
        slot.put(callback(request), None)
    except (EOFError, KeyboardInterrupt) as exc:
        slot.put(None, f"approval prompt closed ({type(exc).__name__})")
    except Exception as exc:  # fail closed on any callback failure; the reason is audited
        slot.put(None, f"approval callback failed ({type(exc).__name__}: {exc})")
    except BaseException as exc:  # SystemExit, GeneratorExit from a callback: still no approval
        slot.put(None, f"approval callback exited ({type(exc).__name__}: {exc})")


def _event_wait(answered: threading.Event, timeout_s: float) -> bool:
    return answered.wait(timeout_s)


def ask_human(
    callback: HitlCallback,
    request: ApprovalRequest,
    *,
    now: Callable[[], datetime],
    timeout_s: float = DEFAULT_APPROVAL_TIMEOUT_S,
    wait: Waiter | None = None,
) -> GateOutcome:
    """Ask ``callback`` about ``request`` and bind its answer to the request's plan-token.

    Every way of not answering fails closed: no answer within ``timeout_s`` (the callback is left running
    in its daemon thread and its answer, if one ever comes, is dropped), Ctrl-C while waiting, an exception
    (including EOFError and KeyboardInterrupt from a terminal, and SystemExit or GeneratorExit from a callback
    that tries to end the program), a return value that is not a decision, or a response that names another
    plan-token. A callback may also return a ready :class:`ApprovalResponse` (an MCP or web approver); it is
    accepted only if it answers this request.

    Args:
        callback: the approver; runs in a worker thread with :func:`current_prompt` set.
        request: what is asked.
        now: the clock that dates the decision.
        timeout_s: how long to wait for an answer.
        wait: ``wait(answered, timeout_s) -> bool``; ``threading.Event.wait`` when None (tests inject one).
    """
    slot = _Slot()
    control = PromptControl(deadline=time.monotonic() + timeout_s)
    context = contextvars.copy_context()
    context.run(_PROMPT.set, control)
    worker = threading.Thread(
        target=context.run, args=(_call, callback, request, slot), name="hitl-prompt", daemon=True
    )
    try:
        # start() inside the try: the prompt can be on screen before this thread reaches the wait, and a
        # Ctrl-C in that window must still cancel the prompt (else it waits for an answer until the deadline)
        worker.start()
        (wait or _event_wait)(slot.done, timeout_s)
    except KeyboardInterrupt:  # Ctrl-C reaches the waiting thread, not the prompt's: still no approval
        slot.seal()
        control.cancelled.set()
        return _abandoned("approval prompt closed (KeyboardInterrupt)")
    answered = slot.seal()
    control.cancelled.set()
    if not answered:
        return _abandoned(f"approval timed out: no answer within {timeout_s:g} s")
    if slot.failure is not None:
        return _abandoned(slot.failure)
    return _bind(slot.answer, request, now, callback)


def _abandoned(reason: str) -> GateOutcome:
    return GateOutcome(None, reason, fail_closed(reason))


def _bind(answer: object, request: ApprovalRequest, now: Callable[[], datetime], callback: object) -> GateOutcome:
    """The callback's answer as a response bound to ``request`` with its decider, or why it is none."""
    if isinstance(answer, HitlDecision):
        return GateOutcome(answer.bind(request, decided_at=now()), None, answer.by or callback_decider(callback))
    if isinstance(answer, ApprovalResponse):
        try:
            return GateOutcome(check_response(request, answer), None, callback_decider(callback))
        except ApprovalMismatchError as exc:
            return _abandoned(str(exc))
    return _abandoned(f"approval callback returned {type(answer).__name__}, not a HitlDecision")


def ask_about(
    callback: HitlCallback,
    plan: dict[str, Any],
    *,
    what: str,
    why: str,
    risk: str,
    context: dict[str, Any],
    now: Callable[[], datetime],
    timeout_s: float = DEFAULT_APPROVAL_TIMEOUT_S,
) -> GateOutcome:
    """Ask the approval callback about a step that is not a shell command (a capture on a target nobody read).

    The same gate as a command's: a plan-token over ``plan``, the deadline, every way of not answering
    failing closed, and the decider recorded. ``context["needs_person"]`` tells an automatic approver
    (``--yes``) that only a person may approve it; the caller still checks ``decided_by.is_person``.
    """
    request = build_approval_request(plan, what=what, why=why, risk=risk, requested_at=now(), context=context)
    return ask_human(callback, request, now=now, timeout_s=timeout_s)
