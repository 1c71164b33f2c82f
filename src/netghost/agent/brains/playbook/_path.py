"""The path walk's vocabulary: a flow, the hops of its path, what a check on a hop can answer, and the walk.

Why a walk and not a list of faults: a fault is a property of some hop on the path the packets really take
(a route to a dead appliance, a rule on the appliance's own NIC, a peering that is half gone, a tunnel that
is down), so the investigator builds that path from what Azure says, hop by hop, and asks every hop the same
questions its type raises. A new fault shape on a known hop type is then found by the hop's checks, and a
new hop type is one more row of the check table (:mod:`netghost.agent.brains.playbook._checks`), not a new
branch of the plan.

A check (:class:`Check`) looks at one hop with the evidence gathered so far and answers one of: it needs
reads first (:class:`Need`), the hop is at fault (:class:`Fault`, carrying the verdict), the walk goes on
to the next hops (:class:`Next`), the hop is suspect but the control plane cannot settle it
(:class:`Suspect`: only the packets can), or nothing (the hop passes this check). :func:`walk` runs the
table over the path, forward then back; the reads every unsettled hop needs are asked in one turn (one hop
level at a time), and the reads of the far end are asked with the first level, since the inventory already
names it.

A fault does not end the investigation: a path can hold two independent faults (a deny at the client and
another at the server, a firewall that drops and a user route that misroutes the replies), and fixing the
first would leave the engineer with the second. A fault that only filters the flow at a hop (an NSG or a
firewall rule, an appliance NIC that does not forward, a load balancer's failing probe) leaves the path as it is, so the walk goes on past it
as if it were fixed; a fault that ends the path (a dead next hop, no route, a tunnel down) stops the walk
there, and the far end, whose properties do not depend on the path (its power, its own NSG rules), is still
checked. The investigation concludes once every hop walked is settled, with every fault found.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from netghost.agent.brains._protocol import FunctionCall
from netghost.agent.brains.playbook._facts import Facts, Observation
from netghost.agent.brains.playbook._moves import Verdict

__all__ = ["MAX_HOPS", "PASSABLE", "Check", "Direction", "Fault", "Flow", "Hop", "Need", "Next", "Outcome", "Suspect", "Table", "Walk",
           "walk"]

MAX_HOPS = 16
"""A path longer than this is a routing loop (appliances sending to each other); the walk stops there."""

Direction = Literal["forward", "return"]

PASSABLE = frozenset({"nsg-deny", "firewall-deny", "nva-ip-forwarding-off", "lb-health-probe-failing"})
"""Fault types that filter the flow at a hop without changing where it goes (a rule, a forwarding flag, a probe
that fails the members the balancer would send the flow to): the walk goes on past them."""


@dataclass(frozen=True)
class Flow:
    """The traffic in question: who talks to what, on which port (from the complaint and the inventory)."""

    client_ip: str
    server_ip: str
    port: int | None
    client: Mapping[str, Any] | None = None  # the client VM, when the client is one
    server: Mapping[str, Any] | None = None  # the server VM, when the server is one
    scale_set: Mapping[str, Any] | None = None  # the server's scale set, when it is one
    protocol: str = "Tcp"
    client_range: str | None = None  # clients outside Azure, known by their network (on premises)

    @property
    def client_name(self) -> str:
        if self.client is None and self.client_range:
            return f"the clients in {self.client_range}"
        return str((self.client or {}).get("name") or self.client_ip)

    @property
    def server_name(self) -> str:
        if self.scale_set is not None:
            return str(self.scale_set.get("name"))
        return str((self.server or {}).get("name") or self.server_ip)

    def text(self) -> str:
        """``web-vm-01 (10.1.1.4) -> 10.1.2.4:6379``."""
        return f"{self.client_name} ({self.client_ip}) -> {self.server_ip}:{self.port or '*'}"


@dataclass(frozen=True)
class Hop:
    """One element of the path: its kind (the row of the check table), a name, the address packets are
    sent to, the inventory document it stands for, and the way it was reached.

    ``via`` is the route that led here (an effective route's entry and the NIC it was read at), ``direction``
    whether the hop is on the way to the server or on the reply's way back.
    """

    kind: str
    name: str
    ip: str | None = None
    doc: Mapping[str, Any] = field(default_factory=dict)
    via: Mapping[str, Any] = field(default_factory=dict)
    direction: Direction = "forward"

    @property
    def key(self) -> tuple[str, str, str | None, str]:
        return (self.kind, self.name, self.ip, self.direction)


@dataclass(frozen=True)
class Need:
    """The reads a check needs before it can answer (already-sent reads are never asked again)."""

    calls: tuple[FunctionCall, ...]
    why: str


@dataclass(frozen=True)
class Fault:
    """The hop is at fault: the verdict names the resource, the fault type, the fix and the evidence."""

    verdict: Verdict
    goes_on: bool = False  # the path goes on past this hop whatever the fault's type (one instance of several down)

    @property
    def passable(self) -> bool:
        """The packets would go on along the same path once this fault is fixed (see :data:`PASSABLE`)."""
        return self.goes_on or (bool(self.verdict.faults) and all(x.get("fault_type") in PASSABLE
                                                                  for x in self.verdict.faults))

    @property
    def on_own_rule(self) -> bool:
        """The fault is a rule someone wrote, not a default rule (a default deny at the far end of a broken path
        is what any address the server's VNet no longer reaches gets: the path's fault, not a second one)."""
        return not any("/defaultSecurityRules/" in str(x.get("resource_id")) for x in self.verdict.faults)


@dataclass(frozen=True)
class Next:
    """The walk goes on to these hops (in order)."""

    hops: tuple[Hop, ...]


@dataclass(frozen=True)
class Suspect:
    """The hop may explain the complaint, but only the packets can tell (a stateful box on one direction
    only, a tunnel whose MTU is smaller): the data plane is read with this in mind."""

    hop: Hop
    fault_type: str
    resource_id: str
    text: str
    evidence: tuple[str, ...] = ()


Outcome = Need | Fault | Next | Suspect | None


@dataclass(frozen=True)
class Check:
    """One question a hop type raises: its name, the fault type it would prove, the evidence it reads, and
    the function (the walk's context and the hop in, an :data:`Outcome` out)."""

    name: str
    proves: str
    evidence: str
    run: Callable[[Walk, Hop], Outcome]


@dataclass
class Walk:
    """The walk's context and result: the facts, the flow, the hops so far, and what the checks answered."""

    facts: Facts
    flow: Flow
    hops: list[Hop] = field(default_factory=list)
    needs: list[tuple[int, Need]] = field(default_factory=list)
    faults: list[tuple[int, Fault]] = field(default_factory=list)
    suspects: list[Suspect] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)  # audit ids the walk rests on (the clean control plane)
    translated_source: str | None = None  # the address the server sees as the source (a firewall's SNAT)

    # ---- helpers the checks share -------------------------------------------------------------------

    def need(self, why: str, *calls: FunctionCall) -> Need | None:
        """A :class:`Need` of the calls not sent before, or None when every one was (answered or refused:
        the check then decides with what it has)."""
        unsent = tuple(c for c in calls if c.name != "run_shell_cmd" or not self.facts.sent(str(c.args["command"])))
        return Need(unsent, why) if unsent else None

    def cite(self, *obs: Observation | None) -> None:
        """Record the audit ids of reads that showed a hop healthy (the disagreement finding cites them)."""
        for o in obs:
            if o is not None and o.ok and o.audit_id and o.audit_id not in self.evidence:
                self.evidence.append(o.audit_id)

    @property
    def seen_source(self) -> str:
        """The source address of the packets as they reach the server (the client's, unless a hop translated it)."""
        return self.translated_source or self.flow.client_ip

    def forward(self) -> list[Hop]:
        return [h for h in self.hops if h.direction == "forward"]

    def returning(self) -> list[Hop]:
        return [h for h in self.hops if h.direction == "return"]

    # ---- the result -------------------------------------------------------------------------------

    def first_fault(self) -> Fault | None:
        """The fault of the earliest hop at fault, once every hop up to it is settled (no read pending)."""
        if not self.faults:
            return None
        index, fault = min(self.faults, key=lambda x: x[0])
        if any(i <= index for i, need in self.needs if need.calls):
            return None
        return fault

    def all_faults(self) -> list[Fault]:
        """Every fault found so far, in path order (the investigation reports them all)."""
        return [fault for _, fault in sorted(self.faults, key=lambda x: x[0])]

    def pending(self) -> list[FunctionCall]:
        """The reads to ask now: those of every unsettled hop, deduplicated."""
        out: list[FunctionCall] = []
        seen: set[str] = set()
        for _, need in self.needs:
            for call in need.calls:
                key = f"{call.name}:{sorted(call.args.items())}"
                if key not in seen:
                    seen.add(key)
                    out.append(call)
        return out

    def reasons(self) -> list[str]:
        return list(dict.fromkeys(need.why for i, need in self.needs if need.calls))


Table = Mapping[str, Sequence[Check]]


def walk(facts: Facts, flow: Flow, start: Sequence[Hop], table: Table, *,
         prefetch: Sequence[Hop] = ()) -> Walk:
    """Run ``table``'s checks over the path from ``start``, each hop once, following :class:`Next`.

    ``prefetch`` are hops the walk will reach but that are known already (the far end): their reads join
    the first turn's. A hop that needs reads still lets later checks of the same hop run (their reads are
    batched in the same turn); a passable fault lets the hop's other checks and the walk go on, any other
    fault ends the walk there, and then the far end is still checked on its own (:func:`_far_end`).
    """
    w = Walk(facts=facts, flow=flow)
    queue = list(start)
    seen: set[tuple[str, str, str | None, str]] = set()
    stop = False
    while queue and len(w.hops) < MAX_HOPS:
        hop = queue.pop(0)
        if hop.key in seen:
            continue
        seen.add(hop.key)
        index = len(w.hops)
        w.hops.append(hop)
        stop = False
        for check in table.get(hop.kind, ()):
            outcome = check.run(w, hop)
            if isinstance(outcome, Need):
                w.needs.append((index, outcome))
            elif isinstance(outcome, Fault):
                w.faults.append((index, outcome))
                if not outcome.passable:
                    stop = True
                    break
            elif isinstance(outcome, Suspect):
                w.suspects.append(outcome)
            elif isinstance(outcome, Next):
                queue[:0] = [h for h in outcome.hops if h.key not in seen]
        if stop:
            break
    rest = [h for h in prefetch if h.key not in seen]
    if stop:
        _far_end(w, rest, table)
    elif w.needs:
        _prefetch(w, rest, table)
    return w


def _far_end(w: Walk, hops: Sequence[Hop], table: Table) -> None:
    """The far end once the path is broken before it: its power and its own rules do not depend on the path, and
    neither does the way its replies take back, so a fault there is a second one to fix. The replies' way is
    walked back to the client, past any box already found at fault (the same dead box both ways is one fault);
    a default rule's deny is the broken path's doing, not the server's."""
    dead = {hop.ip for i, _ in w.faults for hop in w.hops[i:i + 1]}
    queue = list(hops)
    seen = {h.key for h in w.hops}
    while queue and len(w.hops) < MAX_HOPS:
        hop = queue.pop(0)
        if hop.key in seen or (hop.direction == "return" and hop.ip in dead):
            continue
        seen.add(hop.key)
        index = len(w.hops)
        w.hops.append(hop)
        for check in table.get(hop.kind, ()):
            outcome = check.run(w, hop)
            if isinstance(outcome, Need):
                w.needs.append((index, outcome))
            elif isinstance(outcome, Next):
                queue[:0] = [h for h in outcome.hops if h.direction == "return" and h.key not in seen]
            elif isinstance(outcome, Fault):
                if outcome.on_own_rule:
                    w.faults.append((index, outcome))
                break


def _prefetch(w: Walk, hops: Sequence[Hop], table: Table) -> None:
    """The reads of hops the walk has not reached yet, asked with this turn's (their other answers wait)."""
    index = len(w.hops)
    for hop in hops:
        for check in table.get(hop.kind, ()):
            outcome = check.run(w, hop)
            if isinstance(outcome, Need):
                w.needs.append((index, outcome))
