"""netghost.lab: an offline Azure world for demos and tests (see ARCHITECTURE.md "Lab").

Nothing in the product imports this package except the CLI's ``demo`` entry and the tests. The
public face:

* :func:`load_world` / :class:`World` — a validated scenario that answers network questions
  (NSG verdicts, effective routes, DNS, listening services, end-to-end flow outcomes);
* :func:`init_state` / :class:`LabState` — the lab's on-disk state (clock, captures, blobs, faults);
* :func:`create_bin_dir` / :func:`lab_path_env` — the ``bin/`` with the ``az`` launcher;
* :class:`CloudFaultSpec` — cloud-API faults to inject.
"""

from netghost.lab.bin import create_bin_dir, lab_path_env
from netghost.lab.state import LabState, init_state
from netghost.lab.world import (
    CloudFaultSpec,
    DnsAnswer,
    FlowOutcome,
    NextHop,
    NsgDecision,
    World,
    WorldSpec,
    fault_problems,
    load_world,
    scenario_names,
)

__all__ = [
    "CloudFaultSpec",
    "DnsAnswer",
    "FlowOutcome",
    "LabState",
    "NextHop",
    "NsgDecision",
    "World",
    "WorldSpec",
    "create_bin_dir",
    "fault_problems",
    "init_state",
    "lab_path_env",
    "load_world",
    "scenario_names",
]
