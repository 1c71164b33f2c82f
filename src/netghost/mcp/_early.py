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
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

__all__ = ["CAPABILITIES", "INSTRUCTIONS", "PROTOCOL_VERSIONS", "SERVER_NAME", "FirstLine", "ReplayedInitialize",
           "initialize_result", "read_first_line", "write_line"]

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
    """The SDK's stdio streams around the early answer: the first line replayed in, its answer dropped out.

    ``stdin`` and ``stdout`` are what the SDK's ``stdio_server`` iterates and writes (anyio async files);
    ``sent`` is the answer already written (None: nothing was answered early, nothing is dropped).
    """

    first: FirstLine
    stdin: Any
    stdout: Any
    sent: dict[str, Any] | None = None
    _dropped: bool = field(default=False, init=False)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        if self.first.raw:
            yield self.first.raw.decode("utf-8", errors="replace")
        else:
            return  # the client closed stdin before saying anything
        async for line in self.stdin:
            yield line

    async def write(self, text: str) -> None:
        """Write the SDK's line, except its answer to the replayed ``initialize``."""
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
