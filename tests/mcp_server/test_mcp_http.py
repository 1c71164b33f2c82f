"""``ghost-agent mcp --http`` on loopback: the SDK's streamable HTTP client, elicitation included."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from netghost.agent.cli import main as ghost_agent
from netghost.governance import read_wal, verify
from tests.mcp_server.helpers import CLIENT, Human, result_of


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(audit: Path, where: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as err:  # the child keeps its own copy of the descriptor
        return subprocess.Popen([sys.executable, "-m", "netghost", "mcp", "--lab", "nsg-deny", "--audit-dir",
                                 str(audit), "--http", where], stdout=subprocess.DEVNULL, stderr=err)


@pytest.mark.parametrize("where", ["0.0.0.0:8765", "10.0.0.4:8765", "[::]:8765", "example.com:80"])
def test_only_loopback_is_served(tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert ghost_agent(["mcp", "--audit-dir", str(tmp_path / "audit"), "--http", where]) == 2
    assert "only loopback addresses are served" in capsys.readouterr().err
    assert not (tmp_path / "audit").exists()  # refused before anything was opened


@pytest.mark.slow
def test_streamable_http_tools_elicitation_and_audit(tmp_path: Path) -> None:
    audit, port = tmp_path / "audit", _free_port()
    target = tmp_path / "old.txt"
    target.write_text("x")
    proc = _serve(audit, f"127.0.0.1:{port}", tmp_path / "err.log")
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "err.log").read_text()
            time.sleep(0.1)

        async def main() -> dict[str, Any]:
            out: dict[str, Any] = {}
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp/") as (read, write, _), \
                    ClientSession(read, write, client_info=CLIENT, elicitation_callback=Human({"old.txt": "approve"})) as c:
                await c.initialize()
                out["safe"] = result_of(await c.call_tool("run_shell_cmd", {"command": "az vm list -o table", "reasoning": "x"}))
                out["risky"] = result_of(await c.call_tool("run_shell_cmd", {"command": f"rm -f {target}", "reasoning": "x"}))
                out["forbidden"] = result_of(await c.call_tool("run_shell_cmd", {"command": "sudo id", "reasoning": "x"}))
            return out

        out = anyio.run(main)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    assert out["safe"]["exit_code"] == 0 and out["risky"]["action"] == "user_approved" and not target.exists()
    assert out["forbidden"]["action"] == "blocked"
    (path,) = audit.glob("shell_audit_*.jsonl")
    assert verify(path).ok
    records = read_wal(path).records
    assert [r["audit_id"] for r in records][-3:] == [out[k]["audit_id"] for k in ("safe", "risky", "forbidden")]
    assert {r["client"]["name"] for r in records} == {CLIENT.name}
