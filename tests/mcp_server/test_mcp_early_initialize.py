"""``initialize`` is answered before the SDK loads, and the answer is the one the SDK would have sent."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
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
                                 sent, drain_seconds=0)  # answered after the iteration here: no wait for them

    async def run() -> list[str]:
        seen = [line async for line in streams]
        await streams.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}) + "\n")
        await streams.write(json.dumps(sent) + "\n")  # the SDK's answer: dropped
        await streams.write(json.dumps({"jsonrpc": "2.0", "id": 7, "result": {}}) + "\n")  # a later id 7: kept
        return seen

    seen = anyio.run(run)
    assert seen == [json.dumps(request) + "\n", "second\n"]
    assert [json.loads(line).get("id") for line in out.lines] == [None, 7]


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


def _stdin_end_after(streams: ReplayedInitialize, answer: list[str]) -> list[str]:
    """Iterate ``streams`` as the SDK does while a handler writes ``answer`` a few scheduler turns later; the
    order in which the end of stdin and the answers happened."""
    events: list[str] = []

    async def handler() -> None:
        for _ in range(20):
            await anyio.sleep(0)
        for line in answer:
            await streams.write(line)
            events.append("answered")

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(handler)
            async for _ in streams:
                pass
            events.append("eof")
            tg.cancel_scope.cancel()  # what the SDK does to the handlers still running at the end of stdin

    anyio.run(run)
    return events


def test_the_end_of_stdin_waits_for_the_answers_to_the_requests_read() -> None:
    """The SDK cancels in-flight requests when stdin ends: a piped tools/list must be answered first."""
    request = _initialize()
    sent = initialize_result(request, name=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS)
    listed = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + "\n"
    streams = ReplayedInitialize(FirstLine(json.dumps(request).encode() + b"\n", request), _In([listed]), _Out(), sent)
    answers = [json.dumps(sent) + "\n", json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}) + "\n"]
    assert _stdin_end_after(streams, answers) == ["answered", "answered", "eof"]


def test_a_question_the_client_can_no_longer_answer_ends_the_wait() -> None:
    """An elicitation written while a request is in flight: the client closed stdin, its answer cannot come."""
    call = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {}}) + "\n"
    streams = ReplayedInitialize(FirstLine(call.encode()), _In([]), _Out(), None, drain_seconds=3600)
    ask = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {}}) + "\n"
    assert _stdin_end_after(streams, [ask]) == ["answered", "eof"]


def test_the_wait_is_bounded() -> None:
    call = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {}}) + "\n"
    streams = ReplayedInitialize(FirstLine(call.encode()), _In([]), _Out(), None, drain_seconds=0.05)
    assert _stdin_end_after(streams, []) == ["eof"]


_SLOW_SERVER = """
import sys
import anyio
from mcp.server.lowlevel import server as lowlevel
original = lowlevel.Server._handle_request
async def slow(self, *args, **kwargs):
    await anyio.sleep(0.5)  # a loaded machine: no request is answered before stdin has ended
    return await original(self, *args, **kwargs)
lowlevel.Server._handle_request = slow
from netghost.agent.cli import main
sys.exit(main(["mcp", "--audit-dir", sys.argv[1]]))
"""


def test_a_piped_request_is_answered_even_when_its_handler_is_slower_than_the_end_of_stdin(tmp_path: Path) -> None:
    """The race made certain: every handler of the real server waits half a second, so stdin has ended before
    tools/list is answered (the SDK cancelled it then, and the client got initialize's answer alone)."""
    script = tmp_path / "slow_server.py"
    script.write_text(_SLOW_SERVER)
    messages = [_initialize(), {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "audit")],
                          input="".join(json.dumps(m) + "\n" for m in messages), capture_output=True, text=True,
                          timeout=300, check=False)
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a.get("id") for a in answers if "id" in a] == [1, 2], (proc.stdout, proc.stderr)
    assert "run_shell_cmd" in [t["name"] for t in answers[-1]["result"]["tools"]]


def test_a_first_line_that_is_not_initialize_is_left_to_the_sdk(tmp_path: Path) -> None:
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]
    proc = subprocess.run([sys.executable, "-m", "netghost", "mcp", "--audit-dir", str(tmp_path / "audit")],
                          input="".join(json.dumps(m) + "\n" for m in messages), capture_output=True, text=True,
                          timeout=300, check=False)
    assert "protocolVersion" not in proc.stdout  # nothing was answered by hand
