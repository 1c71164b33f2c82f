"""The capture preflight's independent reads run together through the real shell; each check hits the cache.

Same checks, same order, same stop reasons: only where the answer comes from changes (audited with
``cached_from`` naming the prefetch record). A shell that does not batch reads gets the plain sequence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netghost.governance.wal import read_wal
from netghost.shell import ReadCache
from tests.orchestrator.conftest import make_lab, request


def _records(lab: Any) -> list[dict[str, Any]]:
    return read_wal(lab.root / "audit" / "shell_audit_s1.jsonl").records


def test_the_preflight_reads_are_prefetched_together_and_the_checks_served_from_the_cache(
        tmp_path: Path, real_shell_factory: Any) -> None:
    lab = make_lab(tmp_path)
    orch = lab.orchestrator(shell=real_shell_factory(lab), scan_azure_orphans=False)
    first = orch.orchestrate(request())
    assert first["state"] == "PROVISIONING", first
    records = _records(lab)
    by_id = {r["audit_id"]: r for r in records}
    served = [r for r in records if r.get("cached_from")]
    kinds = {r["command"].split(" --")[0].split(" -g")[0] for r in served}
    assert {"az vm extension list", "az network watcher list", "az network nic list-effective-nsg",
            "az storage account show -n forensicssa"} <= kinds, kinds
    for r in served:  # each names the prefetch record of the same command, which ran before it
        source = by_id[r["cached_from"]]
        assert source["command"] == r["command"] and source.get("cached_from") is None
        assert source["seq"] < r["seq"] and source["classification"] == r["classification"] == "SAFE"
    assert not any("container exists" in r["command"] for r in served)  # a moment's state: asked every time
    task = orch.orchestrate({"intent": "check_task", "task_id": first["task_id"]})
    assert task["task_id"] == first["task_id"]
    orch.close()


def test_a_shell_that_does_not_batch_reads_gets_the_plain_sequence(tmp_path: Path, real_shell_factory: Any) -> None:
    lab = make_lab(tmp_path)
    shell = real_shell_factory(lab)
    shell.read_cache = ReadCache(ttl_s=0)
    orch = lab.orchestrator(shell=shell, scan_azure_orphans=False)
    assert orch.orchestrate(request())["state"] == "PROVISIONING"
    commands = [r["command"].split(" --")[0].split(" -g")[0] for r in _records(lab)]
    assert commands[:6] == ["az vm show", "az vm extension list", "az network watcher list",
                            "az network nic list-effective-nsg", "az storage account show -n forensicssa",
                            "az storage container exists"], commands
    assert not any(r.get("cached_from") for r in _records(lab))
    orch.close()
