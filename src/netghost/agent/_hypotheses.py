"""The hypothesis log of seed 001 §6: what the Brain reports, applied to the session file.

The Brain declares hypotheses and moves them between ACTIVE, CONTRADICTED, CONFIRMED and REFUTED through
the optional ``hypotheses`` / ``active_hypothesis_ids`` tool arguments (:mod:`netghost.agent._tools`);
the denial states (DENIED_ONCE, DENIED_TWICE, UNVERIFIABLE) are the loop's (:mod:`netghost.agent._denials`).
:data:`TRANSITIONS` is the table of moves the Brain may make; anything else is refused with a note the
Brain sees, never applied. The session file is the single source of truth: these functions edit the
:class:`~netghost.contracts.SessionState` in place and the loop saves it at the end of the turn.

Everything the Brain reports is hostile text: it is redacted before it touches the session
(:func:`~netghost.agent._untrusted.scrub`), and a hypothesis id must be plain (ASCII letters, digits,
``.``, ``_``, ``-``) and may not be another declared id in another spelling (``H1`` beside ``h1``, a
look-alike), so the log the RCA prints can hold no two ids a reader would take for one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from netghost.agent._claims import id_key, is_plain_id
from netghost.agent._untrusted import scrub
from netghost.contracts import EvidenceConflict, Hypothesis, HypothesisState, SessionState, format_timestamp

__all__ = ["MAX_ACTIVE", "TERMINAL", "TRANSITIONS", "apply_updates", "find", "mark_succeeded"]

H = HypothesisState
MAX_ACTIVE = 3
"""At most three hypotheses are investigated at once (seed 001 §2)."""
TERMINAL = frozenset({H.CONFIRMED, H.REFUTED, H.UNVERIFIABLE})
_OPEN = (H.ACTIVE, H.DENIED_ONCE, H.DENIED_TWICE)
TRANSITIONS: Mapping[HypothesisState, frozenset[HypothesisState]] = {
    **{s: frozenset({H.CONFIRMED, H.REFUTED, H.CONTRADICTED, H.ACTIVE}) for s in _OPEN},
    H.CONTRADICTED: frozenset({H.CONFIRMED, H.REFUTED, H.CONTRADICTED}),
    # Resume re-validation: "a prior hypothesis marked CONFIRMED but contradicted reverts to ACTIVE".
    H.CONFIRMED: frozenset({H.ACTIVE, H.CONTRADICTED}),
    H.REFUTED: frozenset({H.ACTIVE, H.CONTRADICTED}),
    H.UNVERIFIABLE: frozenset(),
}
"""Moves the Brain may report (seed 001 §6); the denial states are set by the loop only."""


def find(state: SessionState, hypothesis_id: str) -> Hypothesis | None:
    """The hypothesis with that id, or None."""
    return next((h for h in state.hypothesis_log if h.id == hypothesis_id), None)


def _new(state: SessionState, update: Mapping[str, Any], now: datetime) -> Hypothesis:
    hyp = Hypothesis(id=str(update["id"]), description=str(update.get("description") or update["id"]),
                     state=H.ACTIVE, denial_count=0, created_at=format_timestamp(now))
    state.hypothesis_log.append(hyp)
    state.denial_tracker.setdefault(hyp.id, 0)
    state.consecutive_denial_counter.setdefault(hyp.id, 0)
    return hyp


def _move(state: SessionState, hyp: Hypothesis, update: Mapping[str, Any], now: datetime) -> str | None:
    """Apply one state change; the note for the Brain when it is refused."""
    try:
        target = HypothesisState(str(update["state"]).upper())
    except ValueError:
        return f"{hyp.id}: unknown state {update['state']!r}"
    if target == hyp.state:
        return None
    if target not in TRANSITIONS[hyp.state]:
        return f"{hyp.id}: {hyp.state.value} -> {target.value} is not allowed"
    hyp.state = target
    audit_id = update.get("resolving_audit_id")
    if target in TERMINAL:
        hyp.resolved_at = format_timestamp(now)
        hyp.resolving_audit_id = str(audit_id) if audit_id else hyp.resolving_audit_id
        for conflict in state.evidence_conflicts:
            if conflict.hypothesis_id == hyp.id and conflict.resolution is None and target != H.UNVERIFIABLE:
                conflict.resolution = "CONFIRMED" if target == H.CONFIRMED else "REFUTED"
    else:
        hyp.resolved_at = None
    if target == H.CONTRADICTED:
        ids = update.get("conflicting_audit_ids") or []
        state.evidence_conflicts.append(EvidenceConflict(
            hypothesis_id=hyp.id,
            conflicting_audit_ids=[str(i) for i in ids] if isinstance(ids, list) else [str(ids)],
            higher_fidelity_source=str(update["higher_fidelity_source"]) if update.get("higher_fidelity_source") else None,
            description=str(update["description"]) if update.get("description") and find(state, hyp.id) else None,
        ))
    return None


def apply_updates(
    state: SessionState,
    updates: object,
    active_ids: object,
    *,
    now: datetime,
) -> list[str]:
    """Apply the Brain's hypothesis updates and active set; return notes on what was refused.

    Args:
        state: the session (edited in place).
        updates: the ``hypotheses`` argument (a list of dicts with at least ``id``), or None.
        active_ids: the ``active_hypothesis_ids`` argument, or None (then new hypotheses join the
            active set while it has room).
        now: the time stamped on new and resolved hypotheses.
    """
    notes: list[str] = []
    new_ids: list[str] = []
    updates, active_ids = scrub(updates), scrub(active_ids)
    for update in updates if isinstance(updates, list) else []:
        if not isinstance(update, Mapping) or not update.get("id"):
            notes.append(f"ignored a hypothesis update without an id: {update!r}"[:300])
            continue
        hyp = find(state, str(update["id"]))
        if hyp is None:
            refused = _refuse_id(state, str(update["id"]))
            if refused:
                notes.append(refused)
                continue
            hyp = _new(state, update, now)
            new_ids.append(hyp.id)
        elif update.get("description") and hyp.description == hyp.id:
            hyp.description = str(update["description"])
        if update.get("state"):
            note = _move(state, hyp, update, now)
            if note:
                notes.append(note)
    if isinstance(active_ids, list):
        wanted = [str(i) for i in active_ids]
    else:
        wanted = [*state.active_hypothesis_ids, *new_ids]
    notes.extend(_set_active(state, wanted))
    return notes


def _refuse_id(state: SessionState, hypothesis_id: str) -> str | None:
    """Why a new hypothesis id is refused (not plain, or a declared id in another spelling), or None."""
    if not is_plain_id(hypothesis_id):
        return (f"{hypothesis_id!a}: a hypothesis id is 1-64 ASCII letters, digits, '.', '_' or '-' "
                "(e.g. h1); not declared")[:300]
    twin = next((h.id for h in state.hypothesis_log if id_key(h.id) == id_key(hypothesis_id)), None)
    if twin is not None:
        return f"{hypothesis_id}: that is {twin} spelled differently; use {twin}"
    return None


def _set_active(state: SessionState, wanted: Sequence[str]) -> list[str]:
    notes: list[str] = []
    active: list[str] = []
    for hid in dict.fromkeys(wanted):
        hyp = find(state, hid)
        if hyp is None:
            notes.append(f"{hid}: no such hypothesis (declare it with hypotheses=[{{id, description}}])")
        elif hyp.state in TERMINAL:
            continue
        elif len(active) >= MAX_ACTIVE:
            notes.append(f"{hid}: at most {MAX_ACTIVE} hypotheses are active at once")
        else:
            active.append(hid)
    state.active_hypothesis_ids = active
    return notes


def mark_succeeded(state: SessionState) -> None:
    """A call of the active hypotheses went through: consecutive denials reset, DENIED_* back to ACTIVE."""
    for hid in state.active_hypothesis_ids:
        state.consecutive_denial_counter[hid] = 0
        hyp = find(state, hid)
        if hyp is not None and hyp.state in (H.DENIED_ONCE, H.DENIED_TWICE):
            hyp.state = H.ACTIVE
