"""No read twice: the shell's read cache answers a SAFE stable az read again within its TTL, audited as such.

The fake ``az`` on PATH stamps every run, so "served from the cache" means the program did not run again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from netghost.governance import verify
from netghost.governance.wal import read_wal
from netghost.shell import HitlDecision, ReadCache, SafeExecShell
from tests.shell.shell_helpers import Recorder, call_events, fake_az


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _runs(log: Path) -> list[str]:
    return [line.split()[1] for line in log.read_text(encoding="utf-8").splitlines() if line.startswith("start")]


def _req(command: str) -> dict[str, str]:
    return {"command": command, "reasoning": "r"}


@pytest.fixture
def env(tmp_path: Path) -> tuple[str, Path]:
    return fake_az(tmp_path)


def test_a_repeated_read_is_served_from_the_cache_with_its_source_audit_id(tmp_path: Path,
                                                                          env: tuple[str, Path]) -> None:
    path, log = env
    with SafeExecShell("rc", Recorder(), audit_dir=tmp_path / "audit", path=path, cwd=tmp_path) as shell:
        first = shell.execute(_req("az vm show -g rg -n web-vm-01"))
        second = shell.execute(_req("az vm show -g rg -n web-vm-01"))
        records = read_wal(shell.audit_path).records
    assert _runs(log) == ["web-vm-01"]  # ran once
    assert second["cached_from"] == first["audit_id"] == "rc_001" and second["audit_id"] == "rc_002"
    assert "cached_from" not in first
    assert second["output"] == first["output"] and second["classification"] == first["classification"] == "SAFE"
    assert [r.get("cached_from") for r in records] == [None, "rc_001"]
    assert records[1]["command"] == records[0]["command"] and records[1]["tier"] == records[0]["tier"]
    assert verify(shell.audit_path).ok


def test_the_default_cache_keeps_an_answer_sixty_seconds(tmp_path: Path, env: tuple[str, Path]) -> None:
    path, _ = env
    with SafeExecShell("rd", Recorder(), audit_dir=tmp_path / "audit", path=path, cwd=tmp_path) as shell:
        assert shell.read_cache.ttl_s == ReadCache.DEFAULT_TTL_S == 60.0


def test_an_answer_older_than_the_ttl_is_read_again(tmp_path: Path, env: tuple[str, Path]) -> None:
    path, log = env
    clock = Clock()
    with SafeExecShell("rt", Recorder(), audit_dir=tmp_path / "audit", path=path, cwd=tmp_path,
                       read_cache=ReadCache(ttl_s=60, clock=clock)) as shell:
        shell.execute(_req("az network watcher list"))
        clock.now += 59.9
        hit = shell.execute(_req("az network watcher list"))
        clock.now += 0.2  # 60.1 s after the read that is cached
        again = shell.execute(_req("az network watcher list"))
        clock.now += 10
        third = shell.execute(_req("az network watcher list"))
    assert hit["cached_from"] == "rt_001"
    assert "cached_from" not in again
    assert third["cached_from"] == "rt_003"  # the fresh answer is the new source
    assert len(_runs(log)) == 2


@pytest.mark.parametrize("command", [
    "az network watcher packet-capture show-status -l eastus -n ghost_cap",
    "az network watcher packet-capture show -l eastus -n ghost_cap",
    "az storage blob list --account-name sa -c captures --auth-mode login",
    "az vm get-instance-view -g rg -n web-vm-01",
    "az network watcher list --help",
])
def test_moment_state_reads_are_never_served_from_the_cache(tmp_path: Path, env: tuple[str, Path],
                                                            command: str) -> None:
    path, log = env
    with SafeExecShell("rv", Recorder(), audit_dir=tmp_path / "audit", path=path, cwd=tmp_path) as shell:
        a = shell.execute(_req(command))
        b = shell.execute(_req(command))
    assert a["classification"] == b["classification"] == "SAFE"
    assert "cached_from" not in b
    assert len(_runs(log)) == 2


def test_an_approved_command_empties_the_cache(tmp_path: Path, env: tuple[str, Path]) -> None:
    path, log = env
    human = Recorder([HitlDecision.approve()])
    with SafeExecShell("rx", human, audit_dir=tmp_path / "audit", path=path, cwd=tmp_path) as shell:
        shell.execute(_req("az network nsg show -g rg -n nsg1"))
        shell.execute(_req("az network nsg rule delete -g rg --nsg-name nsg1 -n deny"))
        after = shell.execute(_req("az network nsg show -g rg -n nsg1"))
    assert "cached_from" not in after
    assert _runs(log) == ["nsg1", "deny", "nsg1"]


def test_a_batch_serves_what_it_can_and_runs_the_rest_in_order(tmp_path: Path, env: tuple[str, Path]) -> None:
    path, log = env
    with SafeExecShell("rb", Recorder(), audit_dir=tmp_path / "audit", path=path, cwd=tmp_path) as shell:
        shell.execute(_req("az vm show -g rg -n vm1"))
        batch = shell.execute_many([_req("az vm show -g rg -n vm1"), _req("az vm show -g rg -n vm2"),
                                    _req("az vm show -g rg -n vm3")])
        records = read_wal(shell.audit_path).records
    assert [r.get("cached_from") for r in batch] == ["rb_001", None, None]
    assert [r["audit_id"] for r in records] == ["rb_001", "rb_002", "rb_003", "rb_004"]
    assert sorted(_runs(log)) == ["vm1", "vm2", "vm3"]
    assert "vm1" in call_events(log)
    assert verify(shell.audit_path).ok


def test_another_working_directory_or_environment_is_another_key() -> None:
    base = ReadCache.key(["az", "vm", "list"], "/a", {"PATH": "/bin", "AZURE_CONFIG_DIR": "/x"})
    assert base == ReadCache.key(("az", "vm", "list"), "/a", {"AZURE_CONFIG_DIR": "/x", "PATH": "/bin"})
    assert base != ReadCache.key(["az", "vm", "list"], "/b", {"PATH": "/bin", "AZURE_CONFIG_DIR": "/x"})
    assert base != ReadCache.key(["az", "vm", "list"], "/a", {"PATH": "/bin", "AZURE_CONFIG_DIR": "/y"})
    assert base != ReadCache.key(["az", "vm", "list", "-o", "json"], "/a", {"PATH": "/bin", "AZURE_CONFIG_DIR": "/x"})


def test_only_a_successful_answer_is_kept_and_a_zero_ttl_keeps_nothing() -> None:
    cache = ReadCache(ttl_s=60, clock=Clock())
    cache.put("k1", "s_001", {"status": "completed", "exit_code": 3, "output": "no"})
    cache.put("k2", "s_002", {"status": "error", "exit_code": None, "output": ""})
    cache.put("k3", "s_003", {"status": "completed", "exit_code": 0, "output": "yes"})
    assert cache.get("k1") is None and cache.get("k2") is None
    hit = cache.get("k3")
    assert hit is not None and hit.source == "s_003" and hit.fields["output"] == "yes"
    off = ReadCache(ttl_s=0)
    off.put("k", "s_001", {"status": "completed", "exit_code": 0})
    assert off.get("k") is None
