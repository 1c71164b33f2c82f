"""The differential test: every az argv the product issues, through the simulator and through the real
azure-cli 2.91 over lab ARM on the same world; they must agree, or differ exactly as a documented lab
limitation says (``tests/data/lab_arm/limitations.json``).

The argvs are ``tests/data/lab_arm/product_argvs.json`` (``collect_argvs.py`` collects them: the playbook
over every shipped world, the orchestrator under each cloud fault, every command builder), replayed run
by run, each on two fresh labs of its world with the same faults and a clock moved to the same lab times.
Agreeing means: the same exit code, the same parsed stdout (JSON compared as data, text as text), the same
error class (ARM code, storage error code, or the error's first words) and the same bytes in any file
written. The real side runs the commands in one long-lived azure-cli process (``az_driver.py``, as azure-cli's
own tests run commands in-process); a test checks that driver against the ``az`` program itself.

The real side runs under the least-privilege role the README ships (``docs/azure/ghost-agent-role.json``,
enforced by lab ARM) in every run but those that use storage key mode (the role grants no ``listKeys``):
so the replay also proves that role lets every product argv through.

Which az: ``$NETGHOST_REAL_AZ`` (CI's .venv-az), else an azure-cli ``az`` on PATH; skipped with the reason
when there is none; failing when ``NETGHOST_REAL_AZ`` names something that is not a working az.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .differential import DATA, SHIPPED_ROLE, AzDriver, RealSide, Step, load_runs, real_az, replay

AZ = real_az()  # read at import: the autouse fixture scrubs NETGHOST_* from the environment of each test
RUNS = load_runs()
LIMITATIONS: list[dict[str, Any]] = json.loads((DATA / "limitations.json").read_text())["limitations"]
ROLE: dict[str, Any] = json.loads(SHIPPED_ROLE.read_text())
KEY_MODE_RUNS = ("orchestrator:key-mode", "orchestrator:shared-key-off", "builders")
"""Runs that use storage key mode: ``listKeys``, which the shipped role leaves out on purpose."""
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(AZ is None, reason="azure-cli (`az`) is not installed and NETGHOST_REAL_AZ is unset")]


@pytest.fixture(scope="module")
def driver() -> Iterator[AzDriver]:
    assert AZ is not None and Path(AZ).is_file(), f"NETGHOST_REAL_AZ={AZ} is not a file"
    running = AzDriver(AZ)
    yield running
    running.close()


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory, driver: AzDriver) -> Iterator[RealSide]:
    """One lab served as Azure for the whole module (made fresh for each run): one resident lab, one login."""
    assert AZ is not None
    side = RealSide(tmp_path_factory.mktemp("real"), AZ, driver=driver, template=tmp_path_factory.mktemp("profile"))
    yield side
    side.close()


def _limitation(run: str, step: Step) -> dict[str, Any] | None:
    words = " ".join(step.argv)
    for entry in LIMITATIONS:
        if any(fnmatch.fnmatch(run, pattern) for pattern in entry["runs"]) and words.startswith(entry["command"]) \
                and set(step.differ) <= set(entry["differ"]):
            return entry
    return None


def _describe(step: Step) -> str:
    return (f"{step.run}[{step.index}] az {' '.join(step.argv)}: differ in {step.differ}\n"
            f"  simulator: exit {step.sim.code}\n{step.sim.stdout[:1500]}{step.sim.stderr[:800]}\n"
            f"  real az:   exit {step.real.code}\n{step.real.stdout[:1500]}{step.real.stderr[:800]}")


@pytest.mark.parametrize("run", RUNS, ids=[r["name"] for r in RUNS])
def test_the_simulator_and_the_real_az_over_lab_arm_agree(run: dict[str, Any], real: RealSide, tmp_path: Path) -> None:
    assert AZ is not None
    unexplained: list[str] = []
    observed: set[str] = set()
    steps = 0
    role = None if run["name"] in KEY_MODE_RUNS else ROLE
    for step in replay(run, tmp_path, real, role=role):
        steps += 1
        if step.differ:
            entry = _limitation(run["name"], step)
            if entry is None:
                unexplained.append(_describe(step))
            else:
                observed.add(entry["id"])
    assert steps == len(run["calls"])
    assert unexplained == [], "\n\n".join(unexplained)
    expected = {e["id"] for e in LIMITATIONS if any(fnmatch.fnmatch(run["name"], p) for p in e["runs"])}
    assert observed == expected, f"documented limitations not shown any more: {sorted(expected - observed)}"


def test_every_collected_run_and_limitation_is_well_formed() -> None:
    names = [r["name"] for r in RUNS]
    assert len(names) == len(set(names))
    assert sum(1 for n in names if n.startswith("playbook:")) >= 29  # every shipped world
    assert {e["id"] for e in LIMITATIONS} and all(e["reason"] and e["differ"] for e in LIMITATIONS)
    for entry in LIMITATIONS:
        assert any(fnmatch.fnmatch(n, p) for p in entry["runs"] for n in names), entry["id"]


def test_the_in_process_driver_answers_as_the_az_program(real: RealSide, tmp_path: Path) -> None:
    """The shortcut the test takes (commands in one azure-cli process) changes nothing: the same run
    through the ``az`` program, one process per command, gives the same exit codes, output and errors."""
    run = next(r for r in RUNS if r["name"] == "orchestrator:target-missing")
    run = {**run, "calls": [*run["calls"], *next(r for r in RUNS if r["name"] == "playbook:nsg-deny")["calls"][:3]]}
    by_driver = [(s.real.code, s.real.stdout, s.real.stderr) for s in replay(run, tmp_path / "driver", real)]
    by_program = [(s.real.code, s.real.stdout, s.real.stderr)
                  for s in replay(run, tmp_path / "program", real.process())]
    assert by_driver == by_program
    assert {code for code, _, _ in by_program} == {0, 3}
