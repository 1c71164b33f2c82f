"""What one playbook turn produces: calls (:class:`Move`), or the conclusion (:class:`Verdict`).

One :class:`Verdict` per finished investigation: the hypothesis family it confirms, the faults with
the resource at fault, and the fixes. The recommended actions name the resource and the
change (seed 001 §7 asks for actionable steps); the diagnosis uses the fault-type vocabulary of
``netghost.contracts.FAULT_TYPES`` so the benchmark can score it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from netghost.agent.brains._protocol import FunctionCall

__all__ = ["FAMILIES", "Conflict", "Family", "Move", "Verdict", "hypothesis_text", "merge", "shell_call"]

Family = Literal["dns", "nsg", "route", "service", "path"]
FAMILIES: tuple[Family, ...] = ("dns", "nsg", "route", "service", "path")


def hypothesis_text(family: Family, flow: str, client: str, server: str, port: int | None) -> str:
    """The falsifiable statement a family stands for, for this flow."""
    texts = {
        "dns": f"{server} resolves to the wrong address from {client}'s VNet (a missing record or an unlinked "
               "private DNS zone).",
        "nsg": f"An NSG rule denies {flow} (outbound at {client} or inbound at the server).",
        "route": f"The route from {client} to {server} is broken: a user route to a dead appliance, no route "
                 "at all (a disconnected peering), or a private endpoint whose connection is not approved.",
        "service": f"Nothing listens on {server}:{port or '?'}: the service or its VM is down.",
        "path": f"A device on the path of {flow} drops, resets or cannot pass large packets (loss, injected "
                "RSTs, a PMTU black hole).",
    }
    return texts[family]


@dataclass(frozen=True)
class Conflict:
    """A disagreement between the control plane and the packets, stated as a finding of its own: the audit
    ids of each side, what they disagree on, and which side is trusted and why."""

    control: list[str]
    packets: str
    text: str
    trusted: str

    def ids(self) -> list[str]:
        return [a for a in dict.fromkeys([*self.control, self.packets]) if a]


@dataclass
class Verdict:
    """How the investigation ends."""

    family: Family | None
    summary: str
    confidence: Literal["high", "medium", "low"]
    faults: list[dict[str, str]] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)  # audit ids that decided it
    is_anomaly: bool = True
    conflict: Conflict | None = None
    also: list[Family] = field(default_factory=list)  # the families of further faults (several independent faults)

    def diagnosis(self) -> dict[str, Any]:
        """``complete_investigation``'s structured diagnosis."""
        return {"is_anomaly": self.is_anomaly, "faults": self.faults if self.is_anomaly else []}


_RANK = {"high": 2, "medium": 1, "low": 0}


def merge(verdicts: list[Verdict]) -> Verdict:
    """One verdict for several independent faults (on one path, or on the several flows a complaint names):
    every fault and fix, the first's family, the weakest confidence, each summary numbered."""
    faults: list[dict[str, str]] = []
    kept: list[Verdict] = []
    for v in verdicts:  # a fault met twice (the same dead box both ways) is one fault
        new = [x for x in v.faults if x not in faults]
        if new or not v.faults:
            kept.append(v)
            faults += new
    verdicts = kept
    if len(verdicts) == 1:
        return verdicts[0]
    first = verdicts[0]
    confidence = min((v.confidence for v in verdicts), key=lambda c: _RANK[c])
    named = "; ".join(f"{x['fault_type']} at {x['resource_id'].rsplit('/', 1)[-1]}" for x in faults)
    unnamed = sum(1 for v in verdicts if not v.faults)  # a finding no fault type names (a missing route)
    what = "faults" if not unnamed else "problems"
    named += f"{'; ' if named else ''}{unnamed} no fault type names" if unnamed else ""
    summary = f"{len(verdicts)} independent {what}, each to be fixed ({named}). " + " ".join(
        f"({i}) {v.summary}" for i, v in enumerate(verdicts, 1))
    also = [f for v in verdicts[1:] for f in (v.family, *v.also) if f is not None and v.faults and f != first.family]
    return Verdict(first.family, summary, confidence, faults=faults, also=list(dict.fromkeys(also)),
                   actions=list(dict.fromkeys(a for v in verdicts for a in v.actions)),
                   evidence=list(dict.fromkeys(a for v in verdicts for a in v.evidence)),
                   is_anomaly=any(v.is_anomaly for v in verdicts),
                   conflict=next((v.conflict for v in verdicts if v.conflict is not None), None))


@dataclass
class Move:
    """One model turn: reasoning text and calls, or the verdict that ends the investigation."""

    text: str
    calls: list[FunctionCall] = field(default_factory=list)
    verdict: Verdict | None = None


def shell_call(command: str, reasoning: str) -> FunctionCall:
    """A ``run_shell_cmd`` call."""
    return FunctionCall("run_shell_cmd", {"command": command, "reasoning": reasoning})
