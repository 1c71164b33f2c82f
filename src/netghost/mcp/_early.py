"""Answer a stdio client's ``initialize`` before the SDK and the governed tools have loaded.

Why: importing the ``mcp`` SDK (its pydantic types), the shell and the orchestrator takes seconds on a
small machine, and an MCP client waits for ``initialize`` before anything else; some give up after a few
seconds. The answer to ``initialize`` is fixed (our name, version, instructions and capabilities; the
protocol version the client asked for when we support it, else our latest), so it is written by hand from
the first line of stdin while the SDK loads in a thread. The SDK then gets the same ``initialize`` replayed,
so its session holds the client's parameters (name, version, elicitation) exactly as if it had answered,
and its own answer to that request is dropped (:class:`ReplayedInitialize`); a difference between the two
answers is reported on stderr (a test keeps them equal: :data:`PROTOCOL_VERSIONS` and
:data:`CAPABILITIES` follow the SDK's).

Only a well-formed ``initialize`` is answered early; anything else (another method, bad JSON, missing
``clientInfo``) is handed to the SDK untouched, which answers it as it always would.

When the client closes stdin, the SDK (1.30) cancels every request still in flight: a client that pipes
``initialize``, ``tools/list`` and then closes its end (a script, a test, ``echo ... | ghost-agent mcp``)
lost the answers the server had not written yet, depending on which ran first. So the end of stdin is held
back from the SDK until every request read has been answered (or :data:`DRAIN_SECONDS` have passed, or the
server asked the client something it can no longer answer).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

__all__ = ["CAPABILITIES", "DRAIN_SECONDS", "INSTRUCTIONS", "PROTOCOL_VERSIONS", "SERVER_NAME", "FirstLine",
           "ReplayedInitialize", "initialize_result", "read_first_line", "write_line"]

SERVER_NAME = "ghost-agent"

INSTRUCTIONS = (
    "Network Ghost Agent's governed tools for Azure network forensics. Every command goes through the "
    "Safe-Exec Shell: SAFE runs, RISKY asks the human through an elicitation (denied when the client "
    "cannot ask one), FORBIDDEN never runs. Every call is audited in a hash-chained log with this "
    "client's name. Finished forensic reports and RCAs are listed as resources."
)
"""What the server tells the client it is for (the ``initialize`` answer's ``instructions``)."""

PROTOCOL_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol versions the SDK supports (``mcp.shared.version.SUPPORTED_PROTOCOL_VERSIONS``), latest last."""

CAPABILITIES: dict[str, Any] = {"experimental": {}, "resources": {"subscribe": False, "listChanged": False},
                                "tools": {"listChanged": False}}
"""What the server's handlers make the SDK declare (tools, resources; no prompts, no subscriptions)."""

DRAIN_SECONDS = 120.0
"""How long the end of stdin waits for the answers to the requests already read (a capture's poll burst is
under a minute; a client that closed stdin cannot answer an approval, so that ends the wait at once)."""


def _messages(text: str | bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of one line (a batch is a list), or none when it is not JSON."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return []
    items = data if isinstance(data, list) else [data]
    return [m for m in items if isinstance(m, dict)]


def _request_id(message: dict[str, Any]) -> Any:
    """The id of a request (a message with a method and an id), else None."""
    ident = message.get("id")
    return ident if "method" in message and isinstance(ident, (int, str)) and not isinstance(ident, bool) else None


@dataclass
class FirstLine:
    """The client's first line: its bytes (replayed to the SDK) and, when it is an initialize, its request."""

    raw: bytes
    request: dict[str, Any] | None = None


def read_first_line(stream: BinaryIO) -> FirstLine:
    """Read the first line of ``stream``; ``request`` is set only for a well-formed ``initialize`` request."""
    raw = stream.readline()
    try:
        message = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return FirstLine(raw)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return FirstLine(raw)
    ident, params = message.get("id"), message.get("params")
    if isinstance(ident, bool) or not isinstance(ident, (int, str)) or not isinstance(params, dict):
        return FirstLine(raw)
    info = params.get("clientInfo")
    if not (isinstance(params.get("protocolVersion"), str) and isinstance(params.get("capabilities"), dict)
            and isinstance(info, dict) and isinstance(info.get("name"), str)
            and isinstance(info.get("version"), str)):
        return FirstLine(raw)
    return FirstLine(raw, message)


def initialize_result(request: dict[str, Any], *, name: str, version: str, instructions: str) -> dict[str, Any]:
    """The JSON-RPC response the SDK sends to ``request`` (same fields, same order, no ``None`` fields)."""
    asked = request["params"]["protocolVersion"]
    result = {"protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1],
              "capabilities": CAPABILITIES, "serverInfo": {"name": name, "version": version},
              "instructions": instructions}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def write_line(stream: BinaryIO, message: dict[str, Any]) -> None:
    """One JSON-RPC message on ``stream``, compact, as the SDK writes them."""
    stream.write((json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8"))
    stream.flush()


@dataclass
class ReplayedInitialize:
    """The SDK's stdio streams around the early answer: the first line replayed in, its answer dropped out, and
    the end of stdin held back until the requests read have been answered.

    ``stdin`` and ``stdout`` are what the SDK's ``stdio_server`` iterates and writes (anyio async files);
    ``sent`` is the answer already written (None: nothing was answered early, nothing is dropped).
    """

    first: FirstLine
    stdin: Any
    stdout: Any
    sent: dict[str, Any] | None = None
    drain_seconds: float = DRAIN_SECONDS
    _dropped: bool = field(default=False, init=False)
    _pending: set[Any] = field(default_factory=set, init=False)
    _asked: set[Any] = field(default_factory=set, init=False)  # the server's questions the client has not answered

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    def _read(self, line: str) -> str:
        for message in _messages(line):
            ident = _request_id(message)
            if ident is not None:
                self._pending.add(ident)
            elif "method" not in message:
                self._asked.discard(message.get("id"))  # the client's answer to the server's question
        return line

    async def _lines(self) -> AsyncIterator[str]:
        if self.first.raw:
            yield self._read(self.first.raw.decode("utf-8", errors="replace"))
        else:
            return  # the client closed stdin before saying anything
        async for line in self.stdin:
            yield self._read(line)
        await self._drain()

    async def _drain(self) -> None:
        """Wait (bounded) until every request read has its answer written: the SDK cancels the rest at EOF."""
        import anyio  # noqa: PLC0415  loaded by the SDK by now; this module stays light for the early answer

        deadline = time.monotonic() + self.drain_seconds
        while self._pending and not self._asked and time.monotonic() < deadline:
            await anyio.sleep(0.01)

    def _written(self, text: str) -> None:
        for message in _messages(text):
            ident = _request_id(message)
            if ident is not None:
                self._asked.add(ident)  # an elicitation: after EOF its answer can no longer come
            elif "method" not in message:
                self._pending.discard(message.get("id"))

    async def write(self, text: str) -> None:
        """Write the SDK's line, except its answer to the replayed ``initialize``."""
        self._written(text)
        if self.sent is not None and not self._dropped:
            try:
                message = json.loads(text)
            except ValueError:
                message = None
            if isinstance(message, dict) and "method" not in message and message.get("id") == self.sent["id"]:
                self._dropped = True
                if message != self.sent:
                    print("ghost-agent mcp: the early initialize answer differs from the SDK's: "
                          + json.dumps(message, ensure_ascii=False), file=sys.stderr)
                return
        await self.stdout.write(text)

    async def flush(self) -> None:
        """Flush the real stdout."""
        await self.stdout.flush()
