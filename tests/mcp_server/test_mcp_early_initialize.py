"""``initialize`` is answered before the SDK loads, and the answer is the one the SDK would have sent."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS

from netghost import __version__
from netghost.mcp import McpSettings, build_server
from netghost.mcp._early import (
    CAPABILITIES,
    INSTRUCTIONS,
    PROTOCOL_VERSIONS,
    SERVER_NAME,
    FirstLine,
    ReplayedInitialize,
    initialize_result,
    read_first_line,
)


def _initialize(version: str = "2025-06-18", ident: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {"elicitation": {}},
                       "clientInfo": {"name": "probe", "version": "1.0"}}}


def test_the_hand_written_answer_follows_the_sdk(tmp_path: Path) -> None:
    assert list(PROTOCOL_VERSIONS) == SUPPORTED_PROTOCOL_VERSIONS
    app = build_server(McpSettings(audit_dir=tmp_path))
    try:
        options = app.server.create_initialization_options()
        assert options.capabilities.model_dump(by_alias=True, exclude_none=True) == CAPABILITIES
        assert (options.server_name, options.server_version, options.instructions) == (SERVER_NAME, __version__,
                                                                                      INSTRUCTIONS)
    finally:
        app.close()


def test_an_unknown_protocol_version_gets_the_latest() -> None:
    answer = initialize_result(_initialize("1999-01-01", "a"), name="n", version="v", instructions="i")
    assert answer["id"] == "a" and answer["result"]["protocolVersion"] == PROTOCOL_VERSIONS[-1]
    assert initialize_result(_initialize("2024-11-05"), name="n", version="v",
                             instructions="i")["result"]["protocolVersion"] == "2024-11-05"


def test_only_a_well_formed_initialize_is_answered_early() -> None:
    good = json.dumps(_initialize()).encode() + b"\n"
    assert read_first_line(io.BytesIO(good + b"next\n")).request == _initialize()
    broken = [b"not json\n", b"[]\n", json.dumps({**_initialize(), "method": "ping"}).encode() + b"\n",
              json.dumps({**_initialize(), "id": True}).encode() + b"\n",
              json.dumps({**_initialize(), "params": {"protocolVersion": "2025-06-18"}}).encode() + b"\n", b""]
    for line in broken:
        first = read_first_line(io.BytesIO(line))
        assert first.request is None and first.raw == line


class _Out:
    def __init__(self) -> None:
        self.lines: list[str] = []

    async def write(self, text: str) -> None:
        self.lines.append(text)

    async def flush(self) -> None:
        return None


class _In:
    def __init__(self, lines: list[str]) -> None:
        self._lines = lines

    def __aiter__(self) -> Any:
        return self._gen()

    async def _gen(self) -> Any:
        for line in self._lines:
            yield line


def test_the_first_line_is_replayed_and_only_the_sdks_answer_to_it_is_dropped() -> None:
    request = _initialize(ident=7)
    sent = initialize_result(request, name=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS)
    out = _Out()
    streams = ReplayedInitialize(FirstLine(json.dumps(request).encode() + b"\n", request), _In(["second\n"]), out,
                                 sent)

    async def run() -> list[str]:
        seen = [line async for line in streams]
        await streams.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}) + "\n")
        await streams.write(json.dumps(sent) + "\n")  # the SDK's answer: dropped
        await streams.write(json.dumps({"jsonrpc": "2.0", "id": 7, "result": {}}) + "\n")  # a later id 7: kept
        return seen

    seen = anyio.run(run)
    assert seen == [json.dumps(request) + "\n", "second\n"]
    assert [json.loads(line).get("id") for line in out.lines] == [None, 7]


@pytest.mark.xfail(reason="known defect, open: on the merged tree the piped tools/list after the early initialize "
                          "answer is not answered before stdin closes (the early answer and the egress-scope "
                          "start-up have not been reconciled)", strict=False)
def test_the_real_server_answers_initialize_once_and_then_serves(tmp_path: Path) -> None:
    """The default path users get: ``ghost-agent mcp`` in a fresh process, raw JSON-RPC on its stdio."""
    messages = [_initialize(), {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    proc = subprocess.run([sys.executable, "-m", "netghost", "mcp", "--audit-dir", str(tmp_path / "audit")],
                          input="".join(json.dumps(m) + "\n" for m in messages), capture_output=True, text=True,
                          timeout=300, check=False)
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a.get("id") for a in answers if "id" in a] == [1, 2], proc.stdout
    assert answers[0]["result"]["serverInfo"] == {"name": "ghost-agent", "version": __version__}
    assert "run_shell_cmd" in [t["name"] for t in answers[-1]["result"]["tools"]]
    assert "differs" not in proc.stderr, proc.stderr


def test_a_first_line_that_is_not_initialize_is_left_to_the_sdk(tmp_path: Path) -> None:
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]
    proc = subprocess.run([sys.executable, "-m", "netghost", "mcp", "--audit-dir", str(tmp_path / "audit")],
                          input="".join(json.dumps(m) + "\n" for m in messages), capture_output=True, text=True,
                          timeout=300, check=False)
    assert "protocolVersion" not in proc.stdout  # nothing was answered by hand
