"""Fixtures for the lab tests: a fresh lab state per test and an in-process ``az``."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from netghost.lab.az import run_az
from netghost.lab.state import LabState, init_state

AZURE_DATA = Path(__file__).resolve().parent.parent / "data" / "azure"
CONFORMANCE_WORLD = AZURE_DATA / "conformance_world.yaml"


@dataclass
class AzResult:
    code: int
    out: str
    err: str


@dataclass
class Lab:
    """A lab state in tmp_path plus an in-process ``az`` bound to it."""

    state: LabState
    env: dict[str, str]

    def az(self, command: str | list[str]) -> AzResult:
        argv = shlex.split(command) if isinstance(command, str) else command
        if argv and argv[0] == "az":
            argv = argv[1:]
        code, out, err = run_az(argv, self.env)
        return AzResult(code, out, err)


@pytest.fixture
def make_lab(tmp_path: Path) -> Callable[..., Lab]:
    """Build a lab from a scenario name or path; ``scale`` sets NETGHOST_LAB_CLOCK_SCALE."""
    counter = iter(range(1000))

    def build(scenario: str | Path = CONFORMANCE_WORLD, scale: float = 1.0) -> Lab:
        root = tmp_path / f"lab{next(counter)}"
        state = init_state(root, scenario, scale=scale)
        env = {"NETGHOST_LAB_STATE": str(root), "NETGHOST_LAB_CLOCK_SCALE": str(scale), "HOME": str(tmp_path)}
        return Lab(state, env)

    return build


@pytest.fixture
def lab(make_lab: Callable[..., Lab]) -> Lab:
    return make_lab()
