"""The differential test's machinery: replay argvs through the simulator and the real az over lab ARM.

Each world gets two fresh lab states made alike (same world, same frozen clock): the simulator answers
from one in-process (``run_az``), the real azure-cli answers from the other through its resident lab's
ARM endpoint (a long-lived :mod:`az_driver` process, or the ``az`` program itself). Before each call both
clocks move to the lab time the call was made at in the collected run, so a capture has stopped in both
when the collected run saw it stopped. Files a call writes (``storage blob download -f``) go to a
directory per side and are compared too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netghost.lab.arm import az_environment, az_login
from netghost.lab.az import run_az
from netghost.lab.resident import Resident, start_resident
from netghost.lab.state import LabState, init_state

DATA = Path(__file__).resolve().parents[2] / "data" / "lab_arm"
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


def parsed(stdout: str) -> Any:
    try:
        return json.loads(stdout) if stdout.strip() else None
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


def _files(work: Path) -> dict[str, bytes]:
    return {str(p.relative_to(work)): p.read_bytes() for p in sorted(work.rglob("*")) if p.is_file()}


class Side:
    """One lab state and a way to run az argvs against it."""

    def __init__(self, root: Path, world: str | Path) -> None:
        self.root = root
        self.work = root / "work"
        self.work.mkdir(parents=True)
        self.state = init_state(root / "lab", world, lab_start=LAB_START, scale=FROZEN)

    def advance_to(self, at: float) -> None:
        now = self.state.clock().now() - LAB_START
        if at > now:
            self.state.advance_clock(at - now)

    def argv(self, argv: Sequence[str]) -> list[str]:
        return [a.replace("{WORK}", str(self.work)) for a in argv]

    def run(self, argv: Sequence[str]) -> Outcome:
        raise NotImplementedError

    def close(self) -> None:
        return None


class SimSide(Side):
    """The simulator, in-process."""

    def run(self, argv: Sequence[str]) -> Outcome:
        before = _files(self.work)
        code, out, err = run_az(self.argv(argv), {"NETGHOST_LAB_STATE": str(self.state.root)})
        return Outcome(code, out, err, {k: v for k, v in _files(self.work).items() if before.get(k) != v})


class RealSide(Side):
    """The real azure-cli over this lab's ARM endpoint: the in-process driver, or the ``az`` program."""

    def __init__(self, root: Path, world: str | Path, az: str, *, process: bool = False) -> None:
        super().__init__(root, world)
        self.az = az
        self.process = process
        self.resident: Resident = start_resident(self.state.root)
        assert self.resident.running, self.resident.problem
        settings = self.resident.control("arm")
        self.env = az_environment(settings, {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")})
        az_login(az, self.env, self.state.world().spec.subscription.id)
        self._driver: subprocess.Popen[str] | None = None

    def _driver_proc(self) -> subprocess.Popen[str]:
        if self._driver is None:
            python = str(Path(self.az).resolve().parent / "python")
            self._driver = subprocess.Popen([python, str(DRIVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            text=True, env=self.env, cwd=self.work)
        return self._driver

    def run(self, argv: Sequence[str]) -> Outcome:
        before = _files(self.work)
        if self.process:
            proc = subprocess.run([self.az, *self.argv(argv)], env=self.env, capture_output=True, text=True,
                                  timeout=300, check=False, cwd=self.work)
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        else:
            driver = self._driver_proc()
            assert driver.stdin is not None and driver.stdout is not None
            driver.stdin.write(json.dumps({"argv": self.argv(argv)}) + "\n")
            driver.stdin.flush()
            answer = json.loads(driver.stdout.readline())
            code, out, err = answer["code"], answer["stdout"], answer["stderr"]
        return Outcome(code, out, err, {k: v for k, v in _files(self.work).items() if before.get(k) != v})

    def close(self) -> None:
        if self._driver is not None:
            assert self._driver.stdin is not None
            self._driver.stdin.close()
            self._driver.wait(30)
            self._driver = None
        self.resident.stop()


@dataclass
class Step:
    world: str
    index: int
    argv: list[str]
    sim: Outcome
    real: Outcome
    differ: list[str]


def replay(world: str | Path, calls: Sequence[dict[str, Any]], root: Path, az: str,
           *, process: bool = False) -> Iterator[Step]:
    """Run ``calls`` on both sides of ``world`` (under ``root``), yielding each step's comparison."""
    sim = SimSide(root / "sim", world)
    real = RealSide(root / "real", world, az, process=process)
    try:
        for index, call in enumerate(calls):
            for side in (sim, real):
                side.advance_to(float(call.get("at", 0.0)))
            argv = list(call["argv"])
            a, b = sim.run(argv), real.run(argv)
            yield Step(str(world), index, argv, a, b, differences(a, b))
    finally:
        real.close()


def load_calls() -> dict[str, list[dict[str, Any]]]:
    worlds: dict[str, list[dict[str, Any]]] = json.loads((DATA / "product_argvs.json").read_text())["worlds"]
    return worlds


__all__ = ["DATA", "LabState", "Outcome", "Step", "differences", "error_class", "load_calls", "real_az", "replay"]
