"""The MCP client a shell serves is named in every audit record it writes (and only then)."""

from __future__ import annotations

from pathlib import Path

from netghost.governance import read_wal
from netghost.shell import HitlDecision, SafeExecShell

CLIENT = {"via": "mcp", "name": "probe-client", "version": "0.9"}


def _deny(_request: object) -> HitlDecision:
    return HitlDecision.deny("test")


def test_every_record_names_the_client(tmp_path: Path) -> None:
    with SafeExecShell("ghost_20260101_000000", _deny, audit_dir=tmp_path, client=CLIENT) as shell:
        shell.execute({"command": "sudo ls", "reasoning": "forbidden"})
        shell.execute({"command": "rm notes.txt", "reasoning": "risky, denied"})
        path = shell.audit_path
    records = read_wal(path).records
    assert [r["action"] for r in records] == ["blocked", "user_denied"]
    assert [r["client"] for r in records] == [CLIENT, CLIENT]


def test_no_client_key_for_the_agents_own_shell(tmp_path: Path) -> None:
    with SafeExecShell("ghost_20260101_000001", _deny, audit_dir=tmp_path) as shell:
        shell.execute({"command": "sudo ls", "reasoning": "forbidden"})
        path = shell.audit_path
    assert "client" not in read_wal(path).records[0]
