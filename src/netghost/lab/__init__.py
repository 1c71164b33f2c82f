"""netghost.lab: an offline Azure world for demos and tests (see ARCHITECTURE.md "Lab").

Nothing in the product imports this package except the ``ghost-agent lab`` and ``demo``
commands and the tests. Inside, the lab is cut into :mod:`~netghost.lab.world` (the scenario and
its answers), :mod:`~netghost.lab.az` (the ``az`` simulator), :mod:`~netghost.lab.probes` (the
``ping``/``dig``/... shims) and :mod:`~netghost.lab.synth` (synthesized captures), with the
state, clock, ``bin/`` and CLI modules at the root. Other packages use only this face:

* :func:`load_world` / :func:`scenario_names` / :class:`World` — a validated scenario that
  answers network questions (NSG verdicts, effective routes, DNS, flow outcomes);
* :func:`init_state` — create the lab's on-disk state (clock, captures, blobs, faults) as a
  :class:`LabState`, whose ``inject_fault(CloudFaultSpec(kind=...))`` (kinds: :data:`CLOUD_FAULT_KINDS`)
  makes Azure fail the way a test needs and ``advance_clock(seconds)`` moves lab time;
* :func:`lab_path_env` — an environment whose PATH finds the lab's ``az`` and probe shims first
  (:func:`create_bin_dir` writes them alone);
* :func:`start_resident` — the lab state's resident lab process (a :class:`Resident` its starter
  stops): the shims' calls cost milliseconds instead of a process each, and the same process serves
  lab ARM for the real azure-cli (:mod:`netghost.lab.arm`); :func:`stop_started_residents` stops every
  one this process started;
* :data:`SCALE_ENV` — the variable that makes lab time run faster than wall time;
* :func:`add_arguments` / :func:`run` — the ``ghost-agent lab list|show|reset|inject`` command;
* :class:`FakeGemini` / :class:`FakeTurn` / :class:`FakeCall` — a local fake Gemini API that answers the
  real google-genai SDK from a script of model turns (``python -m netghost.lab.fake_gemini``).
"""

from typing import TYPE_CHECKING

from netghost._lazy import lazy_face

if TYPE_CHECKING:  # imported on first use (PEP 562): the `az` and probe shims, one process per call,
    # load only the world and the state they need, not the CLI or the fake Gemini server
    from netghost.lab.bin import create_bin_dir, lab_path_env
    from netghost.lab.cli import add_arguments, run
    from netghost.lab.clock import SCALE_ENV
    from netghost.lab.fake_gemini import FakeCall, FakeGemini, FakeTurn
    from netghost.lab.resident import Resident, start_resident, stop_started_residents
    from netghost.lab.state import LabState, init_state
    from netghost.lab.world import (
        CLOUD_FAULT_KINDS,
        CloudFaultSpec,
        World,
        answer_for,
        load_world,
        scenario_names,
        world_path,
    )

__all__ = [
    "CLOUD_FAULT_KINDS",
    "SCALE_ENV",
    "CloudFaultSpec",
    "FakeCall",
    "FakeGemini",
    "FakeTurn",
    "LabState",
    "Resident",
    "World",
    "add_arguments",
    "answer_for",
    "create_bin_dir",
    "init_state",
    "lab_path_env",
    "load_world",
    "run",
    "scenario_names",
    "start_resident",
    "stop_started_residents",
    "world_path",
]


_HOME: dict[str, str] = {
    "CLOUD_FAULT_KINDS": "world",
    "CloudFaultSpec": "world",
    "FakeCall": "fake_gemini",
    "FakeGemini": "fake_gemini",
    "FakeTurn": "fake_gemini",
    "LabState": "state",
    "Resident": "resident",
    "SCALE_ENV": "clock",
    "World": "world",
    "add_arguments": "cli",
    "answer_for": "world",
    "create_bin_dir": "bin",
    "init_state": "state",
    "lab_path_env": "bin",
    "load_world": "world",
    "run": "cli",
    "scenario_names": "world",
    "start_resident": "resident",
    "stop_started_residents": "resident",
    "world_path": "world",
}
"""Which module defines each public name."""

__getattr__, __dir__ = lazy_face(__name__, _HOME, __all__)
