"""The RCA's first screen: what a reader needs before any table, the same for the Markdown and HTML reports.

Why a separate value: a reader who opens an RCA asks five things, in this order: what was wrong (the
symptom the engineer reported), why (the root cause in one sentence), what to do (the fix, as a command
when the conclusion gives one), how sure (the confidence and why: the claim checks that capped it, or that
nothing did) and on what evidence (the audit ids the conclusion cites). Hypotheses are named by their text,
never by bare ids. Both renderers take this :class:`Answer` and escape every field themselves: everything
here is the model's or the user's text, hostile wherever it is shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netghost.agent._claims import AUDIT_ID, ClaimCheck
from netghost.contracts import CompleteInvestigationArgs, SessionState
from netghost.governance import read_wal

__all__ = ["Answer", "answer_of", "first_sentence", "fix_command", "symptom_of"]

_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.S)
# a recommended action that is a command: a backquoted span, or the action itself starting with a CLI
_SPAN = re.compile(r"`([^`\n]{3,})`")
_CLI = re.compile(r"^(az|kubectl|ping|dig|nslookup|curl|tcpping|traceroute|ssh|ip|iptables|sysctl)\s")


@dataclass(frozen=True)
class Answer:
    """The first screen's facts (untrusted text; the renderers escape it)."""

    symptom: str
    root_cause: str
    fix: str | None
    """A command to run (the first the recommended actions give), or None."""
    fix_text: str | None
    """The first recommended action in words when it is not a command (or its sentence around the command)."""
    confidence: str
    why: list[str]
    evidence: list[str]
    hypotheses: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    """(label, [(id, text)]) for Confirmed, Refuted, Unverifiable, Contradicted (only those with ids)."""


def symptom_of(turns_log: Path) -> str:
    """The problem statement the session started from (the journal's first user turn; "" when none)."""
    if not turns_log.exists():
        return ""
    for record in read_wal(turns_log).records:
        if record.get("kind") == "user_turn" and record.get("turn") == 0:
            return " ".join(str(record.get("text", "")).split())
    return ""


def first_sentence(text: str, limit: int = 400) -> str:
    """The first sentence of ``text`` (to its first ``.``, ``!`` or ``?``), on one line, at most ``limit``."""
    flat = " ".join(text.split())
    match = _SENTENCE.match(flat)
    sentence = match.group(1) if match else flat
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def fix_command(actions: Iterable[str]) -> tuple[str | None, str | None]:
    """(the first command the recommended actions give, the first action's words): either may be None."""
    words: str | None = None
    for action in actions:
        flat = " ".join(action.split())
        words = words or flat
        span = _SPAN.search(flat)
        if span and _CLI.match(span.group(1)):
            return span.group(1), flat
        if _CLI.match(flat):
            return flat, None
    return None, words


def answer_of(state: SessionState, completion: CompleteInvestigationArgs, claims: ClaimCheck,
              symptom: str, known: set[str]) -> Answer:
    """The first screen of a session's RCA (``known``: the audit ids of the trail, for the evidence line)."""
    fix, words = fix_command(completion.recommended_actions)
    why = [f"{f.message} (caps it at {f.cap})" for f in claims.findings]
    if not why:
        why = ["the claim checks found the conclusion's citations and hypotheses consistent with the audit trail"]
    if claims.capped:
        why.insert(0, f"the model claimed {claims.claimed}")
    cited = list(dict.fromkeys(AUDIT_ID.findall(completion.root_cause_summary)))
    for h in state.hypothesis_log:
        if h.id in completion.confirmed_hypotheses and h.resolving_audit_id:
            cited.append(h.resolving_audit_id)
    evidence = [i for i in dict.fromkeys(cited) if i in known] + [i for i in dict.fromkeys(cited) if i not in known]
    texts: Mapping[str, Any] = {h.id: h.description for h in state.hypothesis_log}
    groups = []
    for label, ids in (("Confirmed", completion.confirmed_hypotheses), ("Refuted", completion.refuted_hypotheses),
                       ("Unverifiable", completion.unverifiable_hypotheses),
                       ("Contradicted", completion.contradicted_hypotheses)):
        if ids:
            groups.append((label, [(i, str(texts.get(i) or "(not declared by the model)")) for i in ids]))
    return Answer(symptom=symptom, root_cause=first_sentence(completion.root_cause_summary), fix=fix,
                  fix_text=words, confidence=claims.confidence, why=why, evidence=evidence, hypotheses=groups)
