"""A lab the real azure-cli drives: lab ARM on a fresh lab state, and a Safe-Exec Shell whose PATH finds the
real ``az`` (``$NETGHOST_REAL_AZ``) before the lab's bin/ (whose probe shims the playbook still uses).

Nothing in the product changes: the orchestrator and the agent build the same argvs, the shell runs
them as processes, and the real az reaches the lab through its standard settings (proxy, CA bundle,
config dir). The lab clock is frozen; the orchestrator's sleeper moves it (no test sleeps).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from netghost.contracts.cabincrew import ApprovalRequest
from netghost.lab import LabState, Resident, create_bin_dir, init_state, start_resident
from netghost.lab.arm import az_environment, az_login, install_role
from netghost.lab.world import CloudFaultSpec
from netghost.orchestrator import CloudOrchestrator
from netghost.shell import HitlDecision, SafeExecShell

from .differential import DATA, LAB_START


@dataclass
class Human:
    """Approves everything, remembering what it was asked."""

    asked: list[str] = field(default_factory=list)

    def __call__(self, request: ApprovalRequest) -> HitlDecision:
        self.asked.append(request.what)
        return HitlDecision.approve()


@dataclass
class RealLab:
    """A lab state served as Azure (``resident`` runs lab ARM) and the real az's PATH and environment."""

    root: Path
    state: LabState
    resident: Resident
    path: str
    env: dict[str, str]
    human: Human = field(default_factory=Human)
    shells: list[SafeExecShell] = field(default_factory=list)

    def shell(self, session: str = "s1") -> SafeExecShell:
        made = SafeExecShell(session, self.human, audit_dir=self.root / "audit", path=self.path, env=self.env,
                             cwd=self.root)
        self.shells.append(made)
        return made

    def orchestrator(self, session: str = "s1", shell: SafeExecShell | None = None, task_dir: str | None = None,
                     **config: Any) -> CloudOrchestrator:
        def sleep(seconds: float) -> None:
            self.state.advance_clock(seconds)

        settings: dict[str, Any] = {"local_capture_dir": str(self.root / "captures"), "sleeper": sleep,
                                    "clock": lambda: self.state.clock().now_dt(),
                                    "console": Console(file=io.StringIO(), width=100)}
        settings.update(config)
        return CloudOrchestrator(shell or self.shell(session), session, task_dir=task_dir or str(self.root / "audit"),
                                 **settings)

    def captures(self) -> list[str]:
        return sorted(rec["name"] for rec in self.state.captures().values())

    def blobs(self) -> list[str]:
        return sorted(b for containers in self.state.storage().values() for blobs in containers.values() for b in blobs)

    def arm_requests(self) -> list[str]:
        """The requests lab ARM served (``METHOD host/path -> status``), from its access log."""
        log = self.state.root / "arm" / "access.log"
        return [line.split(" ", 2)[2] for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []

    def close(self) -> None:
        for shell in self.shells:
            shell.close()
        self.resident.stop()


def real_lab(root: Path, az: str, world: str | Path = "nsg-deny", *, faults: Sequence[dict[str, Any]] = (),
             role: dict[str, Any] | None = None, template: Path | None = None) -> RealLab:
    """A fresh lab state of ``world`` with ``faults`` (and ``role`` enforced) that the real ``az`` reaches."""
    source = DATA / world if str(world).endswith(".yaml") else world
    state = init_state(root / "lab", source, lab_start=LAB_START, scale=0.0)
    for fault in faults:
        state.inject_fault(CloudFaultSpec.model_validate(fault))
    lab_bin = create_bin_dir(state.root)
    resident = start_resident(state.root)
    assert resident.running, resident.problem
    settings = resident.control("arm")
    if role is not None:
        install_role(Path(settings["arm_dir"]), role)
    real_bin = root / "real-bin"
    real_bin.mkdir()
    (real_bin / "az").symlink_to(az)
    env = az_environment(settings)
    az_login(az, {**os.environ, **env}, state.world().spec.subscription.id, template=template)
    # the real az first, then this interpreter's bin (pcap-forensics), then the lab's probe shims
    path = os.pathsep.join([str(real_bin), str(Path(sys.executable).parent), str(lab_bin),
                            os.environ.get("PATH", os.defpath)])
    return RealLab(root, state, resident, path, env)
