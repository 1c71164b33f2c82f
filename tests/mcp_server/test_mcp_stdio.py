"""``ghost-agent mcp --lab`` as a real subprocess, driven over stdio by the SDK's own client."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from netghost.governance import read_wal, verify
from tests.mcp_server.helpers import CLIENT, Human, result_of


def _params(audit_dir: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "netghost", "mcp", "--lab", "nsg-deny", "--audit-dir", str(audit_dir)])


def _only_records(audit_dir: Path) -> list[dict[str, Any]]:
    (path,) = audit_dir.glob("shell_audit_*.jsonl")
    assert verify(path).ok
    return read_wal(path).records


@pytest.mark.slow
def test_stdio_tools_gate_and_audit(tmp_path: Path) -> None:
    audit = tmp_path / "audit"
    target = tmp_path / "old.txt"
    target.write_text("x")
    human = Human({"old.txt": "approve"})

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with stdio_client(_params(audit)) as (read, write), \
                ClientSession(read, write, client_info=CLIENT, elicitation_callback=human) as client:
            await client.initialize()
            out["tools"] = [t.name for t in (await client.list_tools()).tools]
            out["safe"] = result_of(await client.call_tool("run_shell_cmd", {"command": "az vm list -o table", "reasoning": "inventory"}))
            out["risky"] = result_of(await client.call_tool("run_shell_cmd", {"command": f"rm -f {target}", "reasoning": "tidy"}))
            out["forbidden"] = result_of(await client.call_tool("run_shell_cmd", {"command": "bash -c id", "reasoning": "x"}))
        return out

    out = anyio.run(main)
    assert out["tools"] == ["run_shell_cmd", "capture_traffic", "check_task", "cancel_task", "cleanup_task", "list_tasks"]
    assert out["safe"]["action"] == "auto_approved" and out["safe"]["exit_code"] == 0
    assert out["risky"]["action"] == "user_approved" and not target.exists()
    assert out["forbidden"]["action"] == "blocked"
    records = _only_records(audit)  # the orchestrator's start-up orphan scan is audited too
    assert [r["audit_id"] for r in records][-3:] == [out[k]["audit_id"] for k in ("safe", "risky", "forbidden")]
    assert all(r["client"] == {"via": "mcp", "name": CLIENT.name, "version": CLIENT.version} for r in records)


@pytest.mark.slow
def test_a_client_that_disconnects_mid_call_still_gets_its_command_audited(tmp_path: Path) -> None:
    audit = tmp_path / "audit"
    target = tmp_path / "keep.txt"
    target.write_text("x")
    asked = anyio.Event()

    async def never_answers(_ctx: object, _params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def main() -> None:
        async with stdio_client(_params(audit)) as (read, write), \
                ClientSession(read, write, client_info=CLIENT, elicitation_callback=never_answers) as client:
            await client.initialize()
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "run_shell_cmd", {"command": f"rm -f {target}", "reasoning": "x"})
                with anyio.fail_after(60):
                    await asked.wait()
                tg.cancel_scope.cancel()  # the client goes away with the call in flight

    anyio.run(main)
    last = _only_records(audit)[-1]
    assert last["command"] == f"rm -f {target}" and target.exists()
    assert (last["status"], last["action"]) == ("denied", "user_denied")
    assert "elicitation failed" in last["denial_reason"]
