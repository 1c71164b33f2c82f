"""PlaybookBrain: the offline investigator behind the same Brain protocol as Gemini.

Each turn it reads the whole history into facts, decides the next move, and answers as a model would:
reasoning text and function calls carrying its hypothesis updates, or ``complete_investigation``
with the confidence, the hypotheses, the recommended actions and the structured diagnosis. It knows
only what the tools returned (never the lab's world file or answers).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from netghost.agent.brains._protocol import FunctionCall, Message, ModelTurn, Part
from netghost.agent.brains.playbook._facts import Facts, read_history
from netghost.agent.brains.playbook._moves import FAMILIES, Family, Move, Verdict, hypothesis_text
from netghost.agent.brains.playbook._plan import decide, families

__all__ = ["PlaybookBrain"]


def _ids(f: Facts) -> dict[Family, str]:
    """h1.. for the first families, then h4.. for any family a verdict adds."""
    first = families(f)
    ids = {fam: f"h{i}" for i, fam in enumerate(first, 1)}
    extra = [fam for fam in FAMILIES if fam not in ids]
    ids.update({fam: f"h{len(first) + i}" for i, fam in enumerate(extra, 1)})
    return ids


def _statement(f: Facts, fam: Family) -> str:
    s = f.symptom
    client = s.client or "the client"
    server = s.server or "the server"
    return hypothesis_text(fam, s.flow(), client, server, s.port)


def _opening(f: Facts) -> list[dict[str, Any]]:
    ids = _ids(f)
    return [{"id": ids[fam], "description": _statement(f, fam)} for fam in families(f)]


def _unverifiable(history: Sequence[Message]) -> set[str]:
    """Hypotheses the loop marked UNVERIFIABLE (three denials): its ``_meta`` says so."""
    out: set[str] = set()
    for m in history:
        for p in m.parts:
            meta = (p.response.response.get("_meta") or {}) if p.response else {}
            if meta.get("denial_threshold_reached"):
                out.update(re.findall(r"\bh\d+\b", str(meta.get("instruction", ""))))
    return out


def _closing(f: Facts, v: Verdict, history: Sequence[Message]) -> FunctionCall:
    ids = _ids(f)
    opened = families(f)
    unverifiable = sorted(_unverifiable(history))
    confirmed: list[str] = []
    updates: list[dict[str, Any]] = []
    resolving = v.evidence[0] if v.evidence else None
    contradicted: list[str] = []
    if v.family is not None and v.is_anomaly and (v.faults or v.conflict):
        hid = ids[v.family]
        if v.family not in opened:
            updates.append({"id": hid, "description": _statement(f, v.family)})
        if v.conflict is not None:  # the disagreement, recorded on the hypothesis it bore on, then resolved
            updates.append({"id": hid, "state": "CONTRADICTED", "conflicting_audit_ids": v.conflict.ids(),
                            "higher_fidelity_source": v.conflict.trusted, "description": v.conflict.text})
            contradicted.append(hid)
        if v.faults:
            for fam in (v.family, *v.also):  # several independent faults confirm each family they belong to
                fid = ids[fam]
                if fid in confirmed:
                    continue
                if fam not in opened and fam != v.family:
                    updates.append({"id": fid, "description": _statement(f, fam)})
                confirmed.append(fid)
                update: dict[str, Any] = {"id": fid, "state": "CONFIRMED"}
                if resolving:
                    update["resolving_audit_id"] = resolving
                updates.append(update)
    refuted = [ids[fam] for fam in opened if ids[fam] not in confirmed and ids[fam] not in unverifiable
               and ids[fam] not in contradicted and (v.confidence != "low")]
    for hid in refuted:
        updates.append({"id": hid, "state": "REFUTED", **({"resolving_audit_id": resolving} if resolving else {})})
    confidence = "low" if unverifiable and not confirmed else v.confidence
    args: dict[str, Any] = {
        "confidence": confidence,
        "root_cause_summary": v.summary + (f" Evidence: {', '.join(v.evidence)}." if v.evidence else ""),
        "confirmed_hypotheses": confirmed,
        "refuted_hypotheses": refuted,
        "unverifiable_hypotheses": unverifiable,
        "recommended_actions": v.actions,
        "diagnosis": v.diagnosis(),
        "hypotheses": updates,
    }
    return FunctionCall("complete_investigation", args)


class PlaybookBrain:
    """The deterministic offline investigator (``--brain playbook``)."""

    name = "playbook"
    model = "playbook"

    def next_turn(self, history: Sequence[Message], *, system_prompt: str) -> ModelTurn:
        """The next turn for ``history`` (the system prompt is the seeds'; the playbook follows it by design)."""
        facts = read_history(history)
        move: Move = decide(facts)
        if move.verdict is not None:
            call = _closing(facts, move.verdict, history)
            text = f"Conclusion ({call.args['confidence']} confidence): {move.verdict.summary}"
            return ModelTurn(parts=(Part(text=text), Part(call=call)), finish_reason="STOP")
        calls = list(move.calls)
        if facts.model_turns == 0 and calls:
            first = calls[0]
            calls[0] = FunctionCall(first.name, {**first.args, "hypotheses": _opening(facts)}, first.id)
        parts = (Part(text=move.text), *(Part(call=c) for c in calls))
        return ModelTurn(parts=parts, finish_reason="STOP")
