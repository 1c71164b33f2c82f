"""A lab world: its configuration's answers plus the end-to-end verdict of each traffic flow.

:class:`World` is the one object every consumer holds: the ``az`` simulator, the probe shims and
the capture synthesizer ask it, so they cannot disagree. It adds :meth:`World.flow_outcome` (the
walk of :mod:`~netghost.lab.world._flow`, including the injected fault's data-plane impairment:
PMTU, loss, RST injection) to the configuration queries of
:class:`~netghost.lab.world._topology.Topology`.

Load one with :func:`load_world` (a path or a shipped scenario name).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from netghost.errors import LabError
from netghost.lab.world._answers import FlowOutcome
from netghost.lab.world._flow import evaluate_flow
from netghost.lab.world._resources import TrafficFlow
from netghost.lab.world._spec import WorldSpec
from netghost.lab.world._topology import Topology

__all__ = ["SCENARIO_DIR", "World", "fault_problems", "load_world", "scenario_names", "world_from_yaml"]

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
    "nsg-deny": ("nsg-denied-inbound", "nsg-denied-outbound"),
    "udr-dead-appliance": ("appliance-down",),
    "service-down": ("service-down",),
    "dns-nxdomain": ("dns-nxdomain",),
    "dns-private-zone-not-linked": ("dns-public-answer", "dns-nxdomain"),
    "pmtu-blackhole": ("delivered",),
    "path-packet-loss": ("delivered",),
    "middlebox-rst": ("delivered",),
    "peering-disconnected": ("no-route",),
}


def fault_problems(world: World) -> list[str]:
    """Where the declared fault and the world's configuration disagree (empty when coherent).

    The fault's flow must fail the way its type says, computed from first principles; every
    other flow must be delivered unimpaired, so the fault is the only thing to find.
    """
    problems = []
    fault = world.fault
    for flow in world.spec.traffic:
        outcome = world.flow_outcome(flow)
        if fault is not None and flow.name == fault.flow:
            if outcome.outcome not in _FAULT_OUTCOMES[fault.type]:
                problems.append(f"fault {fault.type} on {flow.name}: the world computes {outcome.outcome} "
                                f"({outcome.reason})")
            if fault.type == "peering-disconnected" and not any(
                p.state == "Disconnected" for v in world.spec.vnets for p in v.peerings
            ):
                problems.append("fault peering-disconnected but no peering is Disconnected")
        elif outcome.outcome != "delivered" or outcome.impairment:
            problems.append(f"flow {flow.name} is not the fault's flow but computes {outcome.outcome}: {outcome.reason}")
    return problems


def scenario_names() -> list[str]:
    """Names of the shipped scenario worlds (``scenarios/*.yaml``), sorted."""
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml"))


def load_world(source: str | Path) -> World:
    """Load and validate a world from a YAML path or a shipped scenario name.

    Args:
        source: a path to a ``.yaml`` file, or the name of a shipped scenario.

    Raises:
        LabError: the file is missing, is not YAML, or does not validate (the message lists
            every problem pydantic found, with its location in the file).
    """
    path = Path(source)
    if not path.suffix and not path.exists():
        path = SCENARIO_DIR / f"{source}.yaml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LabError(f"cannot read lab world {path}: {exc.strerror}", world=str(source), path=path) from exc
    return world_from_yaml(text, str(path))


def world_from_yaml(text: str, origin: str = "<string>") -> World:
    """Parse and validate YAML text into a :class:`World` (see :func:`load_world`)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise LabError(f"lab world {origin} is not valid YAML: {exc}", world=origin, path=origin) from exc
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
