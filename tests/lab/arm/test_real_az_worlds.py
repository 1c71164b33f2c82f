"""Three shipped worlds investigated end to end by the agent (``--brain playbook``) with the real azure-cli
2.91 doing every az call over lab ARM: the control plane (``nsg-deny``), private DNS
(``dns-private-zone-not-linked``) and a capture world (``service-down``: create, poll, download, forensics,
cleanup), under the least-privilege role the README ships. The lab is prepared as ``ghost-agent --lab`` prepares it (its resident lab also serves the probe
shims the playbook runs); only the shell's PATH changes, to find the real ``az`` first. The diagnosis
must score as it does on the simulator.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from netghost.agent._run import Options, run_agent
from netghost.agent._scoring import score_diagnosis
from netghost.agent.demo import prepare_lab, world_symptom
from netghost.agent.eval import _trail
from netghost.governance import read_wal
from netghost.lab import answer_for, load_world, start_resident
from netghost.lab.arm import az_environment, az_login, install_role
from netghost.shell import LabConfinement

from .differential import SHIPPED_ROLE, real_az

AZ = real_az()
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(AZ is None, reason="azure-cli (`az`) is not installed and NETGHOST_REAL_AZ is unset")]
WORLDS = ["nsg-deny", "dns-private-zone-not-linked", "service-down"]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert AZ is not None and Path(AZ).is_file(), f"NETGHOST_REAL_AZ={AZ} is not a file"
    return tmp_path_factory.mktemp("az-profile")


@pytest.mark.parametrize("world", WORLDS)
def test_playbook_investigation_with_the_real_az_over_lab_arm(world: str, tmp_path: Path, template: Path) -> None:
    assert AZ is not None
    audit = tmp_path / "audit"
    setup = prepare_lab(world, audit)
    try:
        settings = start_resident(audit / "lab").control("arm")  # the session's resident lab serves lab ARM too
        install_role(Path(settings["arm_dir"]), json.loads(SHIPPED_ROLE.read_text()))  # least privilege
        env = az_environment(settings)
        az_login(AZ, {**os.environ, **env}, load_world(world).spec.subscription.id, template=template)
        real_bin = tmp_path / "real-bin"
        real_bin.mkdir()
        (real_bin / "az").symlink_to(AZ)
        for launcher in (audit / "lab" / "bin").iterdir():  # the lab's probe shims beside the real az
            if launcher.name != "az":
                (real_bin / launcher.name).symlink_to(launcher)
        # the sealed lab, sealed on this bin/: here the real azure-cli is what the lab simulates (it reaches
        # nothing but lab ARM on loopback), so --yes may approve it as it approves the simulator
        confinement = LabConfinement(f"lab:{world}", bin_dir=real_bin, root=audit, captures=audit / "captures",
                                     private=[audit / "lab"])
        lab = dataclasses.replace(setup, path=os.pathsep.join([str(real_bin), setup.path]), env={**setup.env, **env},
                                  confinement=confinement)
        assert shutil.which("az", path=lab.path) == str(real_bin / "az")
        code = run_agent(Options(audit_dir=audit, brain="playbook", intent=world_symptom(load_world(world)), yes=True,
                                 lab=lab), stdin=io.StringIO(""), console=Console(file=io.StringIO(), width=120))
    finally:
        setup.close()
    assert code == 0
    trail = _trail(audit)
    score = score_diagnosis((trail["completion"] or {}).get("diagnosis"), answer_for(world))
    assert (score.rca_f1, score.detection) == (1.0, True), trail["completion"]
    shell_records = [r for chain in audit.glob("shell_audit_*.jsonl") for r in read_wal(chain).records]
    az_calls = [r for r in shell_records if str(r.get("command", "")).startswith("az ")]
    assert az_calls and all(r["status"] == "completed" and r["exit_code"] == 0 for r in az_calls), \
        [(r["command"], r["stderr"]) for r in az_calls if r["exit_code"] != 0]
    served = (audit / "lab" / "arm" / "access.log").read_text(encoding="utf-8")
    assert served.count("GET 169.254.169.254/metadata/identity/oauth2/token -> 200") >= len(az_calls)
