"""A lab world: its configuration's answers plus the end-to-end verdict of each traffic flow.

:class:`World` is the one object every consumer holds: the ``az`` simulator, the probe shims and
the capture synthesizer ask it, so they cannot disagree. It adds :meth:`World.flow_outcome` (the
walk of :mod:`~netghost.lab.world._flow`, including the injected fault's data-plane impairment:
PMTU, loss, RST injection) to the configuration queries of
:class:`~netghost.lab.world._topology.Topology`.

Load one with :func:`load_world` (a path or a shipped scenario name).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from netghost.errors import LabError
from netghost.lab.world._answers import FlowOutcome
from netghost.lab.world._fault_specs import NetworkFault
from netghost.lab.world._flow import evaluate_flow
from netghost.lab.world._resources import TrafficFlow
from netghost.lab.world._spec import WorldSpec
from netghost.lab.world._topology import Topology

__all__ = [
    "SCENARIO_DIR",
    "World",
    "answer_for",
    "fault_problems",
    "load_world",
    "scenario_names",
    "world_from_yaml",
    "world_path",
]

# The shipped scenarios sit at the lab's root: the state, the CLI and the tests read them too.
SCENARIO_DIR = Path(__file__).resolve().parent.parent / "scenarios"


class World(Topology):
    """Queries over one validated world; see the module docstring for the main questions."""

    def flow_outcome(self, flow: TrafficFlow | str) -> FlowOutcome:
        """The end-to-end verdict for a flow (see :mod:`netghost.lab.world._flow`)."""
        if isinstance(flow, str):
            found = next((t for t in self.spec.traffic if t.name == flow), None)
            if found is None:
                raise LabError(f"world {self.name}: no traffic flow named {flow!r}", world=self.name, path="traffic")
            flow = found
        return evaluate_flow(self, flow)


_FAULT_OUTCOMES = {
    "nsg-deny": ("nsg-denied-inbound", "nsg-denied-outbound", "nsg-denied-at-appliance"),
    "udr-dead-appliance": ("appliance-down",),
    "service-down": ("service-down", "host-down"),  # the service stopped, or its whole VM
    "dns-nxdomain": ("dns-nxdomain",),
    "dns-private-zone-not-linked": ("dns-public-answer", "dns-nxdomain", "paas-denied"),
    "pmtu-blackhole": ("delivered",),
    "path-packet-loss": ("delivered",),
    "middlebox-rst": ("delivered",),
    "peering-disconnected": ("no-route",),
    "private-endpoint-not-approved": ("private-endpoint-not-approved",),
    "vpn-connection-down": ("no-route", "no-return-route"),
    "nva-ip-forwarding-off": ("appliance-not-forwarding",),
    "asymmetric-routing": ("asymmetric-return",),
    "firewall-deny": ("firewall-denied",),
    "lb-health-probe-failing": ("lb-no-healthy-backend",),
    "lb-backend-pool-empty": ("lb-backend-pool-empty",),
    "lb-rule-port-mismatch": ("service-down", "lb-no-rule", "lb-no-healthy-backend"),
    "snat-port-exhaustion": ("delivered",),
    "bgp-propagation-disabled": ("no-route", "no-return-route"),
    "gateway-subnet-misconfigured": ("gateway-subnet-blocked", "no-return-route", "appliance-down"),
    "dns-custom-server-no-forward": ("dns-public-answer", "dns-nxdomain", "paas-denied"),
    "vpn-mtu-mss": ("delivered",),
    "paas-network-rules-deny": ("paas-denied",),
}
_CONFIG_SIGNS: dict[str, tuple[str, Callable[[World], bool]]] = {
    "peering-disconnected": ("no peering is Disconnected",
                             lambda w: any(p.state == "Disconnected" for v in w.spec.vnets for p in v.peerings)),
    "vpn-connection-down": ("no VPN connection is NotConnected",
                            lambda w: any(c.status == "NotConnected" for c in w.spec.vpn_connections)),
    "bgp-propagation-disabled": ("no route table disables BGP route propagation",
                                 lambda w: any(r.disable_bgp_route_propagation for r in w.spec.route_tables)),
    "gateway-subnet-misconfigured": ("no GatewaySubnet has an NSG or a route table",
                                     lambda w: any(s.name == "GatewaySubnet" and (s.nsg or s.route_table)
                                                   for v in w.spec.vnets for s in v.subnets)),
    "dns-custom-server-no-forward": ("no VNet names a custom DNS server", lambda w: any(v.dns_servers
                                                                                      for v in w.spec.vnets)),
}


def _impairment_problem(fault: NetworkFault, outcome: FlowOutcome) -> str | None:
    """Why a data-plane fault cannot act on a delivered flow (it needs its hop on the path), or None."""
    if fault.type == "snat-port-exhaustion" and not outcome.params.get("egress"):
        return "the flow does not leave through a NAT gateway"
    if fault.type == "vpn-mtu-mss" and not outcome.params.get("tunnel"):
        return "the flow crosses no VPN tunnel"
    return None


def fault_problems(world: World) -> list[str]:
    """Where the declared faults and the world's configuration disagree (empty when coherent).

    Each fault's flows (``flow`` and ``also``) must fail the way its type says, computed from first
    principles; every other flow must be delivered unimpaired (or fail, when it says it is ``blocked`` by
    design), so the faults are the only things to find.
    """
    problems = []
    for flow in world.spec.traffic:
        outcome = world.flow_outcome(flow)
        fault = world.fault_for(flow.name)
        if fault is not None:
            if outcome.outcome not in _FAULT_OUTCOMES[fault.type]:
                problems.append(f"fault {fault.type} on {flow.name}: the world computes {outcome.outcome} "
                                f"({outcome.reason})")
            elif outcome.outcome == "delivered" and outcome.impairment != fault.type:
                problems.append(f"fault {fault.type} on {flow.name}: the world computes no such impairment "
                                f"({outcome.reason})")
            elif outcome.outcome == "delivered" and (why := _impairment_problem(fault, outcome)):
                problems.append(f"fault {fault.type} on {flow.name}: {why}")
            sign = _CONFIG_SIGNS.get(fault.type)
            if sign is not None and not sign[1](world):
                problems.append(f"fault {fault.type} but {sign[0]}")
        elif flow.expected == "blocked":
            if outcome.connects and not outcome.impairment:
                problems.append(f"flow {flow.name} is blocked by design but the world delivers it")
        elif outcome.outcome != "delivered" or outcome.impairment:
            problems.append(f"flow {flow.name} is not the fault's flow but computes {outcome.outcome}: {outcome.reason}")
    return list(dict.fromkeys(problems))


def scenario_names() -> list[str]:
    """Names of the shipped scenario worlds (``scenarios/*.yaml``), sorted."""
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml"))


def world_path(source: str | Path) -> Path:
    """The YAML file ``source`` names: a path (it has a ``.yaml``/``.yml`` suffix or a directory part)
    or a shipped scenario's name. A name is never looked up as a file in the current directory, so a
    folder that happens to share a scenario's name (an audit directory called ``nsg-deny``) changes
    nothing.

    Raises:
        LabError: a name that is not a shipped scenario.
    """
    text = str(source)
    path = Path(source)
    if isinstance(source, Path) or path.suffix in (".yaml", ".yml") or "/" in text or "\\" in text:
        return path
    shipped = SCENARIO_DIR / f"{text}.yaml"
    if not shipped.is_file():
        raise LabError(f"unknown lab world {text!r}: shipped worlds are {', '.join(scenario_names())}; "
                       "or give the path of a world's .yaml file", world=text, path=shipped)
    return shipped


def answer_for(source: str | Path) -> dict[str, Any] | None:
    """The ground truth of a world (``answers/<name>.json`` beside its YAML), or None when it has none.

    Only scoring reads it (the benchmark, tests); the investigator never does.
    """
    path = world_path(source)
    answer = path.parent / "answers" / f"{path.stem}.json"
    try:
        data = json.loads(answer.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError) as exc:
        raise LabError(f"cannot read the answers of lab world {source}: {exc}", world=str(source),
                       path=answer) from exc
    return data if isinstance(data, dict) else None


def load_world(source: str | Path) -> World:
    """Load and validate a world from a YAML path or a shipped scenario name (see :func:`world_path`).

    Args:
        source: a path to a ``.yaml`` file, or the name of a shipped scenario.

    Raises:
        LabError: the file is missing, is not YAML, or does not validate (the message lists
            every problem pydantic found, with its location in the file).
    """
    path = world_path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LabError(f"cannot read lab world {path}: {exc.strerror}", world=str(source), path=path) from exc
    return world_from_yaml(text, str(path))


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line naming where the YAML broke (line and column counted from 1) and what broke there.

    Why not ``str(exc)``: PyYAML names the text it was given ``<unicode string>`` and quotes a snippet over
    several lines; the file's name is already in the message and one line is what a person reads.
    """
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    what = " ".join(str(getattr(exc, "problem", None) or getattr(exc, "context", None) or exc).split())
    if mark is None:
        return what
    return f"line {mark.line + 1}, column {mark.column + 1}: {what}"


_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it: a world parses in ~5 ms instead of ~70 ms (every lab
session, resident lab and per-process ``az`` loads one). Same constructor and resolver as ``safe_load``."""


def _parse_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, through libyaml when it can; a text libyaml refuses is parsed again by the
    pure-Python loader, whose error (line, column and wording) is the one reported."""
    try:
        return yaml.load(text, Loader=_FAST_LOADER)  # a safe loader: CSafeLoader or SafeLoader
    except yaml.YAMLError:
        return yaml.safe_load(text)


def world_from_yaml(text: str, origin: str = "<string>") -> World:
    """Parse and validate YAML text into a :class:`World` (see :func:`load_world`)."""
    try:
        data = _parse_yaml(text)
    except yaml.YAMLError as exc:
        raise LabError(f"lab world {origin} is not valid YAML: {_yaml_problem(exc)}; fix the file, then run again",
                       world=origin, path=origin) from exc
    if not isinstance(data, dict):
        raise LabError(f"lab world {origin} must be a YAML mapping at the top level", world=origin, path=origin)
    try:
        spec = WorldSpec.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        locs = [".".join(str(part) for part in err["loc"]) or "<top>" for err in errors]
        lines = [f"  {loc}: {err['msg']}" for loc, err in zip(locs, errors, strict=True)]
        raise LabError(f"lab world {origin} is invalid:\n" + "\n".join(lines), world=origin,
                       path=locs[0] if locs else origin) from exc
    return World(spec)
