"""The RCA checks what the model claims against the audit trail, and caps the confidence it may show.

Why: the model writes the conclusion (``complete_investigation``), and a hijacked or careless model
claims what it likes: "high" confidence with no command run, a hypothesis both confirmed and refuted,
conclusions on hypotheses it never declared, ids in another spelling (``H1`` for ``h1``, a Cyrillic
look-alike), or a denied command cited as the evidence for a confirmed state. None of that may reach
a reader as fact. Each check is a named rule in :data:`RULES` (one function, one cap); the RCA prints
every finding in its Integrity Statement, and the confidence shown everywhere (Markdown, HTML, screen,
journal) is the claimed one capped by the findings. Adding a check is adding one function and one row.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from netghost.contracts import CompleteInvestigationArgs, Hypothesis, HypothesisState, SessionState

__all__ = ["AUDIT_ID", "RULES", "ClaimCheck", "Finding", "Rule", "check_claims", "id_key", "is_plain_id"]

Confidence = Literal["high", "medium", "low"]
AUDIT_ID = re.compile(r"ghost_\d{8}_\d{6}_\d{3,}")
"""An audit id as the agent's shell writes it (``ghost_YYYYmmdd_HHMMSS_NNN``)."""
_RANK: dict[str, int] = {"low": 0, "medium": 1, "high": 2}
_LEVELS: tuple[Confidence, ...] = ("low", "medium", "high")
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_CONCLUDED: tuple[tuple[str, str], ...] = (("confirmed", "confirmed_hypotheses"), ("refuted", "refuted_hypotheses"),
                                           ("unverifiable", "unverifiable_hypotheses"))


def is_plain_id(hypothesis_id: str) -> bool:
    """A hypothesis id of ASCII letters, digits, ``.``, ``_`` and ``-`` (at most 64), as the prompt asks."""
    return _PLAIN_ID.fullmatch(hypothesis_id) is not None


def id_key(hypothesis_id: str) -> str:
    """The spelling-free key of an id: compatibility-normalised, case-folded, without spaces or
    invisible characters (``H1``, `` h1 ``, ``ｈ1`` and ``h\\u200b1`` all key to ``h1``)."""
    text = unicodedata.normalize("NFKC", hypothesis_id)
    kept = (c for c in text if not c.isspace() and unicodedata.category(c) not in ("Cf", "Cc", "Mn"))
    return "".join(kept).casefold()


@dataclass(frozen=True)
class Finding:
    """One claim the trail does not support: which rule, what it found, the most confidence it allows."""

    rule: str
    message: str
    cap: Confidence


@dataclass
class ClaimCheck:
    """The outcome: the confidence the model claimed, the one shown, and why they differ."""

    claimed: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def confidence(self) -> Confidence:
        """The claimed confidence capped by every finding."""
        rank = min([_RANK.get(self.claimed, 0), *(_RANK[f.cap] for f in self.findings)])
        return _LEVELS[rank]

    @property
    def capped(self) -> bool:
        """True when the shown confidence is lower than the claimed one."""
        return self.confidence != self.claimed

    def why(self) -> str:
        """One line for the screen: the claimed and shown confidence and the rules that capped it."""
        rules = ", ".join(dict.fromkeys(f.rule for f in self.findings if _RANK[f.cap] < _RANK.get(self.claimed, 0)))
        return f"Confidence capped at {self.confidence} (the model claimed {self.claimed}): {rules}."


@dataclass
class Evidence:
    """What the rules read: the conclusion, the hypothesis log and the shell audit records by id."""

    completion: CompleteInvestigationArgs
    log: list[Hypothesis]
    records: dict[str, Mapping[str, Any]]

    def claimed(self, kind: str) -> list[str]:
        """The ids the conclusion lists under ``kind`` (``confirmed``, ``refuted``, ...), as written."""
        return [str(i) for i in getattr(self.completion, f"{kind}_hypotheses")]

    def declared(self, hypothesis_id: str) -> Hypothesis | None:
        """The log entry with exactly this id."""
        return next((h for h in self.log if h.id == hypothesis_id), None)

    def cited(self) -> list[str]:
        """Every audit id the conclusion rests on: named in its text, or resolving a concluded hypothesis."""
        c = self.completion
        text = " ".join([c.root_cause_summary, *c.recommended_actions])
        ids = AUDIT_ID.findall(text)
        for h in self.log:
            if h.resolving_audit_id and (h.state in (HypothesisState.CONFIRMED, HypothesisState.REFUTED)
                                         or h.id in self.claimed("confirmed") or h.id in self.claimed("refuted")):
                ids.append(h.resolving_audit_id)
        return list(dict.fromkeys(ids))

    def succeeded(self, audit_id: str) -> bool:
        """The record exists and its command ran to exit code 0."""
        r = self.records.get(audit_id)
        return r is not None and r.get("status") == "completed" and r.get("exit_code") == 0


def _outcome(record: Mapping[str, Any] | None) -> str:
    if record is None:
        return "not in the audit trail"
    if record.get("status") == "completed":
        return f"exit code {record.get('exit_code')}"
    if record.get("action") == "blocked":
        return "blocked (FORBIDDEN)"
    return str(record.get("action") or record.get("status") or "did not run")


# ---- the rules: each takes the evidence and returns its findings' messages ---------------------------

def _unknown_citation(ev: Evidence) -> Iterable[str]:
    for audit_id in ev.cited():
        if audit_id not in ev.records:
            yield f"the conclusion cites {audit_id}, which is not in the audit trail"


def _no_evidence(ev: Evidence) -> Iterable[str]:
    if ev.completion.confidence != "low" and not any(ev.succeeded(i) for i in ev.cited()):
        yield (f"confidence {ev.completion.confidence} with no cited command that ran and succeeded "
               f"({len(ev.records)} audit records, none cited as evidence that succeeded)")


def _high_without_cloud(ev: Evidence) -> Iterable[str]:
    if ev.completion.confidence == "high" and not any(
            ev.succeeded(i) and ev.records[i].get("environment") == "azure" for i in ev.cited()):
        yield "confidence high without cited [CLOUD] evidence (an Azure command that ran and succeeded)"


def _conflicting_conclusion(ev: Evidence) -> Iterable[str]:
    seen: dict[str, str] = {}
    for kind, _ in _CONCLUDED:
        for hid in ev.claimed(kind):
            key = id_key(hid)
            if key in seen and seen[key] != kind:
                yield f"{hid} is listed both as {seen[key]} and as {kind}"
            seen.setdefault(key, kind)
    for kind, state in (("confirmed", HypothesisState.CONFIRMED), ("refuted", HypothesisState.REFUTED)):
        for hid in ev.claimed(kind):
            hyp = ev.declared(hid)
            if hyp is not None and hyp.state != state and hyp.state in (
                    HypothesisState.CONFIRMED, HypothesisState.REFUTED, HypothesisState.UNVERIFIABLE):
                yield f"{hid} is claimed {kind}, but the hypothesis log ends it {hyp.state.value}"


def _concluded_without_audit_id(ev: Evidence) -> Iterable[str]:
    named = {*ev.claimed("confirmed"), *ev.claimed("refuted")}
    for h in ev.log:
        concluded = h.state in (HypothesisState.CONFIRMED, HypothesisState.REFUTED) or h.id in named
        if concluded and not h.resolving_audit_id:
            yield f"{h.id} is concluded ({h.state.value}) with no resolving audit id"


def _undeclared(ev: Evidence) -> Iterable[str]:
    keys = {id_key(h.id) for h in ev.log}
    for kind, _ in _CONCLUDED:
        for hid in ev.claimed(kind):
            if ev.declared(hid) is None and id_key(hid) not in keys:
                yield f"{hid} is listed as {kind} but was never declared in the hypothesis log"


def _shown_id(hypothesis_id: str) -> str:
    """The id as written, with its non-ASCII characters named (a Cyrillic ``һ`` looks like ``h``)."""
    odd = [f"U+{ord(c):04X}" for c in dict.fromkeys(hypothesis_id) if ord(c) > 0x7E or ord(c) < 0x20]
    return f"'{hypothesis_id}'" + (f" (holds {', '.join(odd)})" if odd else "")


def _other_spelling(ev: Evidence) -> Iterable[str]:
    for kind, _ in _CONCLUDED:
        for hid in ev.claimed(kind):
            if ev.declared(hid) is not None and is_plain_id(hid):
                continue
            same = [h.id for h in ev.log if id_key(h.id) == id_key(hid) and h.id != hid]
            if same:
                yield f"{_shown_id(hid)} ({kind}) is not the declared id '{same[0]}', only spelled like it"
            elif not is_plain_id(hid):
                yield f"{_shown_id(hid)} ({kind}) is not a plain id (spaces, punctuation or non-ASCII look-alikes)"
    by_key: dict[str, str] = {}
    for h in ev.log:
        first = by_key.setdefault(id_key(h.id), h.id)
        if first != h.id:
            yield f"the hypothesis log holds {_shown_id(first)} and {_shown_id(h.id)}, one id in two spellings"


def _failed_evidence(ev: Evidence) -> Iterable[str]:
    confirmed = set(ev.claimed("confirmed"))
    for h in ev.log:
        if (h.state == HypothesisState.CONFIRMED or h.id in confirmed) and h.resolving_audit_id \
                and h.resolving_audit_id in ev.records and not ev.succeeded(h.resolving_audit_id):
            record = ev.records[h.resolving_audit_id]
            yield (f"{h.id} is confirmed by {h.resolving_audit_id}, a command that did not succeed "
                   f"({_outcome(record)})")


@dataclass(frozen=True)
class Rule:
    """One check: its name (printed), the most confidence it allows when it fires, and its function."""

    name: str
    cap: Confidence
    check: Callable[[Evidence], Iterable[str]]


RULES: tuple[Rule, ...] = (
    Rule("unknown_citation", "low", _unknown_citation),
    Rule("no_evidence", "low", _no_evidence),
    Rule("high_without_cloud_evidence", "medium", _high_without_cloud),
    Rule("conflicting_conclusion", "low", _conflicting_conclusion),
    Rule("concluded_without_audit_id", "medium", _concluded_without_audit_id),
    Rule("undeclared_hypothesis", "low", _undeclared),
    Rule("other_spelling", "low", _other_spelling),
    Rule("failed_evidence", "low", _failed_evidence),
)
"""The claim checks, in the order the Integrity Statement prints their findings."""


def check_claims(state: SessionState, completion: CompleteInvestigationArgs,
                 records: Iterable[Mapping[str, Any]]) -> ClaimCheck:
    """Run every rule of :data:`RULES` over the conclusion, the hypothesis log and the shell audit.

    Args:
        state: the session (its hypothesis log).
        completion: what the model concluded (``complete_investigation``'s arguments).
        records: the session's shell audit records.
    """
    ev = Evidence(completion, list(state.hypothesis_log), {str(r.get("audit_id")): r for r in records})
    out = ClaimCheck(completion.confidence)
    for rule in RULES:
        out.findings += [Finding(rule.name, message, rule.cap) for message in dict.fromkeys(rule.check(ev))]
    return out
