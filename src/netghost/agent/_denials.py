"""The denial state machine of seed 001 §4/§6 and the ``_meta`` it injects into a tool result.

A denial is a human's (or the fail-closed gate's) "no": ``status`` ``denied`` from the shell, or
``task_cancelled`` from the orchestrator, with ``user_denied`` / ``user_abandoned`` as the action.
FORBIDDEN (``blocked``) is not a denial: nobody was asked. Each denial is charged to every active
hypothesis: one denial gives DENIED_ONCE and a pivot instruction, two DENIED_TWICE and a warning, three
UNVERIFIABLE (the hypothesis leaves the active set) and ``denial_threshold_reached``. The denial reason
comes from the shell's ``denial_reason`` (for the orchestrator, from the shell call it made).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from netghost.agent._hypotheses import find
from netghost.contracts import DenialEvent, HypothesisState, SessionState, format_timestamp
from netghost.redact import redact

__all__ = ["MAX_DENIALS_PER_HYPOTHESIS", "charge_denial", "denied_action", "is_denial"]

MAX_DENIALS_PER_HYPOTHESIS = 3
_HUMAN = frozenset({"user_denied", "user_abandoned"})
H = HypothesisState


def denied_action(result: Mapping[str, Any]) -> str | None:
    """``user_denied`` / ``user_abandoned`` when ``result`` is a denial, else None."""
    if result.get("status") == "denied":
        action = result.get("action")
    elif result.get("status") == "task_cancelled":
        action = result.get("denied_action")
    else:
        return None
    return str(action) if action in _HUMAN else None


def is_denial(result: Mapping[str, Any]) -> bool:
    """True when a human (or the fail-closed gate) said no to this call."""
    return denied_action(result) is not None


def charge_denial(
    state: SessionState,
    *,
    turn: int,
    command: str,
    reason: str | None,
    audit_id: str,
    now: datetime,
) -> dict[str, Any]:
    """Charge one denial to every active hypothesis; return the ``_meta`` for the tool result.

    The keys and texts are seed 001 §4's. With several active hypotheses the meta speaks for the one
    closest to the threshold (the seed's loop overwrites per hypothesis); every one that reaches it is
    named in ``instruction``.
    """
    command = redact(command).text  # the model's command line: kept in the session file
    reason = redact(reason).text if reason else reason
    meta: dict[str, Any] = {}
    if reason:
        meta["denial_reason"] = reason
    worst = 0
    exhausted: list[str] = []
    for hid in list(state.active_hypothesis_ids):
        count = state.denial_tracker.get(hid, 0) + 1
        state.denial_tracker[hid] = count
        state.consecutive_denial_counter[hid] = state.consecutive_denial_counter.get(hid, 0) + 1
        hyp = find(state, hid)
        if hyp is not None:
            hyp.denial_count = count
            hyp.denial_events.append(DenialEvent(turn=turn, command=command, denial_reason=reason or "",
                                                 audit_id=audit_id))
            hyp.state = H.DENIED_ONCE if count == 1 else H.DENIED_TWICE if count == 2 else H.UNVERIFIABLE
            if hyp.state == H.UNVERIFIABLE:
                hyp.resolved_at = format_timestamp(now)
                hyp.resolving_audit_id = audit_id
        if count >= MAX_DENIALS_PER_HYPOTHESIS:
            exhausted.append(hid)
        if count >= worst:
            worst = count
            meta.update(_meta_for(hid, count))
    if exhausted:
        state.active_hypothesis_ids = [h for h in state.active_hypothesis_ids if h not in exhausted]
        meta["denial_threshold_reached"] = True
        meta["instruction"] = (
            f"Hypothesis {', '.join(exhausted)} marked UNVERIFIABLE. Move to next hypothesis or call "
            "complete_investigation if active_hypothesis_ids is now empty."
        )
    return meta


def _meta_for(hid: str, count: int) -> dict[str, Any]:
    if count == 1:
        return {"denial_count": 1,
                "pivot_instruction": "Command denied. Consider an alternative diagnostic approach."}
    if count == 2:
        return {"denial_count": 2, "approaching_threshold": True,
                "warning": f"Second denial for hypothesis {hid}. If denied again, hypothesis will be marked "
                           "UNVERIFIABLE."}
    return {"denial_count": count}
