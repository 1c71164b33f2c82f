"""Task ids from any target: bounded, safe as a directory, file, blob and Azure capture name, distinct for
distinct targets; a plain VM name keeps its readable id; a full ARM id is read as the VM it names."""

from __future__ import annotations

import re
import tempfile

from hypothesis import given
from hypothesis import strategies as st

from netghost.contracts import CaptureTrafficParameters, CaptureTrafficRequest
from netghost.governance import create_workspace
from netghost.orchestrator._naming import MAX_TASK_ID, resolve_target, task_id_base

STAMP = "20250115T143200"
AZURE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,78}[A-Za-z0-9_]$")
ARM = ("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/{rg}/providers/Microsoft.Compute/"
       "{kind}/{name}")


def test_a_plain_vm_name_keeps_its_readable_id() -> None:
    assert task_id_base("ghost", "web-vm-01", STAMP) == "ghost_web-vm-01_20250115T143200"


def test_a_full_arm_id_gets_its_name_and_a_hash() -> None:
    one = task_id_base("ghost", ARM.format(rg="prod-rg", kind="virtualMachines", name="web-vm-01"), STAMP)
    two = task_id_base("ghost", ARM.format(rg="other-rg", kind="virtualMachines", name="web-vm-01"), STAMP)
    assert re.fullmatch(r"ghost_web-vm-01-[0-9a-f]{8}_20250115T143200", one)
    assert one != two  # the same name in two resource groups: two tasks


@given(st.text(st.characters(exclude_categories=()), min_size=1, max_size=400),
       st.text(st.sampled_from("_-.a/ é"), max_size=12) | st.text(max_size=40))
def test_any_target_and_prefix_give_a_safe_bounded_id(target: str, prefix: str) -> None:
    task_id = task_id_base(prefix, target, STAMP)
    assert len(task_id) <= MAX_TASK_ID - 6  # room for the orchestrator's "-N" on a same-second twin
    assert AZURE_NAME.match(task_id) and AZURE_NAME.match(task_id + "-12"), task_id
    assert task_id_base(prefix, target + "x", STAMP) != task_id


@given(st.text(st.characters(exclude_categories=()), min_size=1, max_size=300))
def test_the_workspace_accepts_every_id(target: str) -> None:
    """A fresh directory per example (pytest's tmp_path is one per test)."""
    with tempfile.TemporaryDirectory() as root:
        workspace = create_workspace(root, task_id_base("ghost", target, STAMP))
        assert workspace.artifacts_dir.is_dir()


def _request(rg: str = "wrong-rg") -> CaptureTrafficRequest:
    return CaptureTrafficRequest(intent="capture_traffic", target="x", parameters=CaptureTrafficParameters(
        resource_group=rg, storage_account="forensicssa"))


def test_an_arm_vm_or_scale_set_id_is_read_as_its_name_in_its_resource_group() -> None:
    for kind in ("virtualMachines", "virtualMachineScaleSets", "VIRTUALMACHINES"):
        req, target = resolve_target(_request(), ARM.format(rg="prod-rg", kind=kind, name="web-vm-01") + "/")
        assert (target, req.parameters.resource_group) == ("web-vm-01", "prod-rg")


def test_anything_else_is_left_as_it_is() -> None:
    for target in ("web-vm-01", "/subscriptions/x/resourceGroups/r/providers/Microsoft.Network/networkInterfaces/n",
                   ARM.format(rg="r", kind="virtualMachineScaleSets", name="ss") + "/virtualMachines/3"):
        req, out = resolve_target(_request(), target)
        assert out == target and req.parameters.resource_group == "wrong-rg"
