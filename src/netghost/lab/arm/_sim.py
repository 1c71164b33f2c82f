"""Lab ARM's one source of answers: the ``az`` simulator, run in-process against the lab state.

Every REST request is answered by the simulator command that reads or changes the same thing
(``GET .../networkInterfaces/nic1`` is ``az network nic show -g RG -n nic1``), so lab ARM and the
simulator share one model, one set of cloud faults, one lock, one clock: they cannot disagree about
the world, only about shapes, and the differential test checks those. A failure comes back as the
:class:`~netghost.lab.arm._rest.ArmFailure` ARM would have sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from netghost.errors import ArmFailure
from netghost.lab.arm._rest import arm_failure
from netghost.lab.az import run_az
from netghost.lab.state import STATE_ENV, LabState
from netghost.lab.world import World

__all__ = ["Simulator"]


class Simulator:
    """The simulator of one lab state, called with az argvs (without the leading ``az``)."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.state = LabState(state_dir)

    def world(self) -> World:
        """The lab's world as it is now (re-read when its file changed: faults may edit it)."""
        return LabState(self.state_dir).world()

    def run(self, argv: Sequence[str], *, auth_mode: str | None = None) -> Any:
        """The JSON result of ``az ARGV -o json`` (None when it prints nothing).

        Raises:
            ArmFailure: the command failed; the failure ARM (or Blob) would have answered.
        """
        code, out, err = self._call([*argv, "-o", "json"], auth_mode)
        if code != 0:
            raise arm_failure(code, err)
        return json.loads(out) if out.strip() else None

    def raw(self, argv: Sequence[str], *, auth_mode: str | None = None) -> bytes:
        """The raw stdout of a command that prints bytes (``storage blob download`` without ``--file``).

        Raises:
            ArmFailure: the command failed.
        """
        code, out, err = self._call(list(argv), auth_mode)
        if code != 0:
            raise arm_failure(code, err)
        return out.encode("utf-8", "surrogateescape")

    def _call(self, argv: list[str], auth_mode: str | None) -> tuple[int, str, str]:
        env = {STATE_ENV: str(self.state_dir)}
        if auth_mode:
            env["AZURE_STORAGE_AUTH_MODE"] = auth_mode
        return run_az(argv, env)

    def failure(self, status: int, code: str, message: str) -> ArmFailure:
        return ArmFailure(status, code, message)
