"""A child process for the crash tests: one orchestrator request against a lab world, SIGKILLed mid-way.

``python -m tests.orchestrator._crash_child ROOT REQUEST_JSON KILL_ON WHEN`` runs the request with the
in-process lab shell; when a command containing KILL_ON is about to run (WHEN=before: the scripted human
is being asked / the command has not run) or has just run (WHEN=after: Azure did it, the orchestrator
has not heard), or when the orchestrator sleeps between polls (KILL_ON=sleep), the process SIGKILLs
itself: no finally block, no flush, exactly what a crash leaves. Time is the lab's persisted clock, so
parent and child agree; sleeping advances it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from netghost.lab.state import LabState
from netghost.orchestrator import CloudOrchestrator

from .conftest import Hitl, InProcessShell, _quiet


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class KillingShell(InProcessShell):
    kill_on: str = ""
    when: str = "before"

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        hit = self.kill_on and self.kill_on in request["command"]
        if hit and self.when == "before":
            _die()
        response = super().execute(request)
        if hit:
            _die()
        return response


def main(argv: list[str]) -> int:
    root, request, kill_on, when = Path(argv[0]), json.loads(argv[1]), argv[2], argv[3]
    state = LabState(root / "lab")
    shell = KillingShell({"NETGHOST_LAB_STATE": str(state.root)}, Hitl())
    shell.kill_on, shell.when = ("" if kill_on == "sleep" else kill_on), when

    def sleep(seconds: float) -> None:
        state.advance_clock(seconds)
        if kill_on == "sleep":
            _die()

    orch = CloudOrchestrator(shell, "crashed", task_dir=str(root / "audit"), local_capture_dir=str(root / "captures"),
                             clock=lambda: state.clock().now_dt(), sleeper=sleep, console=_quiet(),
                             scan_azure_orphans=False)
    print(json.dumps(orch.orchestrate(request)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
