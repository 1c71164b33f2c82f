"""The differential test's machinery: replay argvs through the simulator and the real az over lab ARM.

Each world gets two fresh lab states made alike (same world, same frozen clock): the simulator answers
from one in-process (``run_az``), the real azure-cli answers from the other through its resident lab's
ARM endpoint (a long-lived :mod:`az_driver` process, or the ``az`` program itself). Before each call both
clocks move to the lab time the call was made at in the collected run, so a capture has stopped in both
when the collected run saw it stopped. Files a call writes (``storage blob download -f``) go to a
directory per side and are compared too.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netghost.lab.arm import az_environment, az_login, install_role
from netghost.lab.az import run_az
from netghost.lab.resident import Resident, start_resident
from netghost.lab.state import LabState, init_state
from netghost.lab.world import CloudFaultSpec

DATA = Path(__file__).resolve().parents[2] / "data" / "lab_arm"
SHIPPED_ROLE = Path(__file__).resolve().parents[3] / "docs" / "azure" / "ghost-agent-role.json"
"""The least-privilege custom role the README tells users to assign (login mode: no listKeys)."""
DRIVER = Path(__file__).with_name("az_driver.py")
LAB_START = 1795770000.0  # 2026-11-28T05:00:00Z: both sides' clocks start here
FROZEN = 0.0
"""Clock scale of both labs: lab time moves only when the replay moves it (so both read the same times)."""


def real_az() -> str | None:
    """The real azure-cli: ``$NETGHOST_REAL_AZ`` (CI's .venv-az), else ``az`` on PATH when it is azure-cli."""
    explicit = os.environ.get("NETGHOST_REAL_AZ")
    if explicit:
        return explicit
    found = shutil.which("az")
    if found and "netghost lab shim" not in Path(found).read_text(errors="replace")[:200]:
        return found
    return None


@dataclass
class Outcome:
    """What one command did: exit code, stdout, stderr, and the files it wrote."""

    code: int
    stdout: str
    stderr: str
    files: dict[str, bytes] = field(default_factory=dict)


_ARM_CODE = re.compile(r"^ERROR: \(([^)]+)\)", re.M)
_STORAGE_CODE = re.compile(r"^ErrorCode:(\S+)", re.M)


def error_class(stderr: str) -> str:
    """What kind of error ``stderr`` reports: the ARM code, the storage error code, or its first words."""
    for pattern in (_ARM_CODE, _STORAGE_CODE):
        found = pattern.search(stderr)
        if found:
            return found[1]
    errors = [line for line in stderr.splitlines() if line.startswith("ERROR:")]
    if not errors:
        return ""
    text = errors[0].removeprefix("ERROR:").strip()
    if not text and "You do not have the required permissions" in stderr:
        return "StorageRbac"
    return " ".join(text.split()[:4])


def _without_nulls(value: Any) -> Any:
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


def parsed(stdout: str) -> Any:
    """stdout as data: JSON parsed, a null field the same as an absent one (``--query`` reads both as null:
    the SDK-shaped commands print every model attribute, set or not); other text as is."""
    try:
        return _without_nulls(json.loads(stdout)) if stdout.strip() else None
    except json.JSONDecodeError:
        return stdout


def differences(sim: Outcome, real: Outcome) -> list[str]:
    """What differs that matters: exit code, parsed stdout, error class, written files."""
    out = []
    if sim.code != real.code:
        out.append("exit")
    if parsed(sim.stdout) != parsed(real.stdout):
        out.append("stdout")
    if error_class(sim.stderr) != error_class(real.stderr):
        out.append("error")
    if sim.files != real.files:
        out.append("files")
    return out


class Side:
    """One lab state and a way to run az argvs against it; :meth:`reset` makes it a fresh lab of another run."""

    def __init__(self, root: Path, world: str | Path, faults: Sequence[dict[str, Any]] = ()) -> None:
        self.root = root
        self.work = root / "work"
        self.state = LabState(root / "lab")
        self.reset(world, faults)

    def reset(self, world: str | Path, faults: Sequence[dict[str, Any]] = ()) -> None:
        """A fresh lab of ``world`` with ``faults`` in the same directory (a resident lab serving it goes on)."""
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        self.state = init_state(self.root / "lab", world, lab_start=LAB_START, scale=FROZEN, force=True)
        for fault in faults:
            self.state.inject_fault(CloudFaultSpec.model_validate(fault))

    def advance_to(self, at: float) -> None:
        now = self.state.clock().now() - LAB_START
        if at > now:
            self.state.advance_clock(at - now)

    def argv(self, argv: Sequence[str]) -> list[str]:
        """``argv`` with ``{WORK}`` pointing here; a download's folder exists, as the orchestrator makes it."""
        out = [a.replace("{WORK}", str(self.work)) for a in argv]
        for flag, value in itertools.pairwise(out):
            if flag in ("-f", "--file") and value.startswith(str(self.work)):
                Path(value).parent.mkdir(parents=True, exist_ok=True)
        return out

    def run(self, argv: Sequence[str]) -> Outcome:
        raise NotImplementedError

    def written(self, argv: Sequence[str]) -> dict[str, bytes]:
        """The files a command names with ``-f``/``--file``, as they are after it ran (relative to ``work``)."""
        out = {}
        for flag, value in itertools.pairwise(argv):
            path = Path(value)
            if flag in ("-f", "--file") and path.is_file() and path.is_relative_to(self.work):
                out[str(path.relative_to(self.work))] = path.read_bytes()
        return out

    def close(self) -> None:
        return None


class SimSide(Side):
    """The simulator, in-process."""

    def run(self, argv: Sequence[str]) -> Outcome:
        full = self.argv(argv)
        code, out, err = run_az(full, {"NETGHOST_LAB_STATE": str(self.state.root)})
        return Outcome(code, out, err, self.written(full))


class AzDriver:
    """One long-lived :mod:`az_driver` process: real azure-cli commands in-process, any lab per request."""

    def __init__(self, az: str) -> None:
        python = str(Path(az).resolve().parent / "python")
        self._proc = subprocess.Popen([python, str(DRIVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, env={k: v for k, v in os.environ.items() if k in ("PATH", "HOME")})

    def run(self, argv: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps({"argv": list(argv), "env": env, "cwd": str(cwd)}) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the az driver died")
        answer = json.loads(line)
        return int(answer["code"]), str(answer["stdout"]), str(answer["stderr"])

    def close(self) -> None:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.close()
        self._proc.wait(60)
        self._proc.stdout.close()


class RealSide(Side):
    """The real azure-cli over this lab's ARM endpoint: the in-process ``driver``, or the ``az`` program.

    One is made per test module and :meth:`reset` per run: the resident lab, lab ARM and the az login stay.
    """

    def __init__(self, root: Path, az: str, *, driver: AzDriver | None = None, template: Path | None = None) -> None:
        super().__init__(root, "healthy")
        self.az = az
        self.driver = driver
        self.template = template
        self.resident: Resident = start_resident(self.state.root)
        assert self.resident.running, self.resident.problem
        self.settings = self.resident.control("arm")
        self.env = az_environment(self.settings,
                                  {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")})

    def prepare(self, world: str | Path, faults: Sequence[dict[str, Any]], role: dict[str, Any] | None) -> None:
        """A fresh lab of the run's world and faults, ``role`` enforced (None: none), az signed in to it."""
        self.reset(world, faults)
        install_role(Path(self.settings["arm_dir"]), role)
        az_login(self.az, self.env, self.state.world().spec.subscription.id, template=self.template)

    def run(self, argv: Sequence[str]) -> Outcome:
        full = self.argv(argv)
        if self.driver is None:
            proc = subprocess.run([self.az, *full], env=self.env, capture_output=True, text=True, timeout=300,
                                  check=False, cwd=self.work)
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        else:
            code, out, err = self.driver.run(full, self.env, self.work)
        return Outcome(code, out, err, self.written(full))

    def process(self) -> RealSide:
        """The same lab, each command run as the ``az`` program (no driver)."""
        twin = object.__new__(RealSide)
        twin.__dict__.update(self.__dict__)
        twin.driver = None
        return twin

    def close(self) -> None:
        self.resident.stop()


@dataclass
class Step:
    run: str
    index: int
    argv: list[str]
    sim: Outcome
    real: Outcome
    differ: list[str]


def replay(run: dict[str, Any], root: Path, real: RealSide, *, role: dict[str, Any] | None = None) -> Iterator[Step]:
    """Replay one collected run on a fresh simulator lab (under ``root``) and on ``real`` made fresh for it,
    under ``role`` (None: no role enforced), yielding each call's comparison."""
    world = run["world"] if "/" not in run["world"] and not run["world"].endswith(".yaml") else DATA / run["world"]
    faults = run.get("faults") or []
    sim = SimSide(root / "sim", world, faults)
    real.prepare(world, faults, role)
    for index, call in enumerate(run["calls"]):
        for side in (sim, real):
            side.advance_to(float(call.get("at", 0.0)))
        argv = list(call["argv"])
        a, b = sim.run(argv), real.run(argv)
        yield Step(run["name"], index, argv, a, b, differences(a, b))


def load_runs() -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = json.loads((DATA / "product_argvs.json").read_text())["runs"]
    return runs


__all__ = ["DATA", "SHIPPED_ROLE", "AzDriver", "Outcome", "RealSide", "Step", "differences", "error_class", "load_runs",
           "real_az", "replay"]
