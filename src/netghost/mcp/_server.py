"""The MCP server (official ``mcp`` SDK 1.x, low-level ``Server``): tools, resources, transports.

Why the low-level server rather than FastMCP: the tools' input schemas must be the seed's declarations
exactly (FastMCP derives schemas from Python signatures), and the SDK validates every call against
them before it reaches us. Why SDK 1.x: a RISKY command is decided *inside* the shell's gate, mid-call,
and 1.x sends that mid-call ``elicitation/create`` on stdio, in memory and over streamable HTTP alike;
2.x does so only for clients in its legacy mode (DEPENDENCIES.md (d)).

Each MCP session (one for stdio; one per ``Mcp-Session-Id`` over HTTP) gets its own
:class:`GovernedSession`, built at its first tool call and closed when the session ends (the server's
per-session lifespan). A tool call runs in a worker thread that the
event loop waits for even when the call is cancelled (``anyio.to_thread.run_sync`` does not abandon its
thread), so a client that disconnects mid-call still gets its command's audit record written: the
command finishes (or its elicitation fails and it is denied) and the record lands before the session
closes.

What leaves the server is hostile text too (command output, the model-written RCA, tool errors that
quote their input): every tool result and every resource read passes the redactor on its way out,
whatever redacted it before.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import sys
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.session import ServerSession
from pydantic import AnyUrl

from netghost import __version__
from netghost.errors import NetGhostError
from netghost.mcp._approval import CallContext, ElicitingApprover
from netghost.mcp._early import INSTRUCTIONS, SERVER_NAME, FirstLine, ReplayedInitialize
from netghost.mcp._governed import GovernedSession
from netghost.mcp._reports import list_reports, read_report
from netghost.mcp._settings import McpSettings
from netghost.mcp._tools import tool_schemas
from netghost.redact import redact, redact_value

__all__ = ["GhostMcpServer", "build_server", "check_loopback", "serve_http", "serve_stdio"]



def _client_of(session: ServerSession) -> dict[str, str]:
    """Who the client says it is. Its declared name and version are the client's own text: they are
    redacted and bounded here, once, before they reach audit records (``decided_by``), refusal lines, task
    records and the error text the model reads."""
    params = session.client_params
    info = params.clientInfo if params is not None else None

    def declared(value: str | None) -> str:
        return redact(value or "").text[:200] or "unknown"

    return {"via": "mcp", "name": declared(info.name if info else None),
            "version": declared(info.version if info else None)}


def _can_elicit(session: ServerSession) -> bool:
    params = session.client_params
    caps = params.capabilities.elicitation if params is not None else None
    # an empty capability means form mode (the spec's backward-compatible default)
    return caps is not None and (caps.form is not None or caps.url is None)


class GhostMcpServer:
    """The low-level ``Server`` and the governed sessions it has opened (close them with :meth:`close`)."""

    def __init__(self, settings: McpSettings) -> None:
        self.settings = settings
        self.server: Server[Any, Any] = Server(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS,
                                               lifespan=self._per_session)
        self.sessions: dict[str, GovernedSession] = {}
        self.opened: list[str] = []
        self._opening = asyncio.Lock()
        self._tools = [types.Tool(name=t["name"], description=t["description"], inputSchema=t["input_schema"])
                       for t in tool_schemas()]
        self._register()

    @contextlib.asynccontextmanager
    async def _per_session(self, _server: Server[Any, Any]) -> AsyncIterator[dict[str, GovernedSession]]:
        """The SDK enters this once per MCP session (``Server.run``) and leaves it after the session's last
        handler returned, so every in-flight call's audit record is written before the shell is closed."""
        slot: dict[str, GovernedSession] = {}
        try:
            yield slot
        finally:
            gov = slot.pop("governed", None)
            if gov is not None:
                self.sessions.pop(gov.session_id, None)
                gov.close()

    async def governed(self, session: ServerSession, slot: dict[str, GovernedSession]) -> GovernedSession:
        """This MCP session's shell and orchestrator (built on first use, in a worker thread)."""
        async with self._opening:
            gov = slot.get("governed")
            if gov is None:
                approver = ElicitingApprover(self.settings.approval_timeout_s)
                gov = await anyio.to_thread.run_sync(GovernedSession, self.settings, _client_of(session), approver)
                slot["governed"] = gov
                self.sessions[gov.session_id] = gov
                self.opened.append(gov.session_id)
            return gov

    def session_ids(self) -> list[str]:
        """The audit session id of every MCP session opened so far (closed ones too), in order."""
        return list(self.opened)

    def close(self) -> None:
        """Close the orchestrator and shell of every session still open (each closes with its session)."""
        while self.sessions:
            _, gov = self.sessions.popitem()
            gov.close()

    def _register(self) -> None:
        server = self.server

        @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
        async def list_tools() -> list[types.Tool]:
            return list(self._tools)

        @server.call_tool()  # type: ignore[untyped-decorator]
        async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            ctx = server.request_context
            session = ctx.session
            gov = await self.governed(session, ctx.lifespan_context)
            client = f"{gov.client['name']} {gov.client['version']}"
            elicit = None
            if _can_elicit(session):
                async def elicit(message: str, schema: dict[str, Any]) -> types.ElicitResult:
                    return await session.elicit_form(message, schema, related_request_id=ctx.request_id)
            call = CallContext(asyncio.get_running_loop(), elicit, client)
            result: dict[str, Any] = await anyio.to_thread.run_sync(gov.call, name, arguments, call)
            return dict(redact_value(result))  # every string a tool result carries, again, as it leaves

        @server.list_resources()  # type: ignore[no-untyped-call, untyped-decorator]
        async def list_resources() -> list[types.Resource]:
            reports = list_reports(self.settings.audit_dir, await self._session_id())
            return [types.Resource(uri=AnyUrl(r.uri), name=r.path.name, title=r.title, mimeType=r.mime_type)
                    for r in reports]

        @server.read_resource()  # type: ignore[no-untyped-call, untyped-decorator]
        async def read_resource(uri: AnyUrl) -> list[ReadResourceContents]:
            report = read_report(self.settings.audit_dir, await self._session_id(), str(uri))
            if report is None:
                raise ValueError(f"unknown resource {uri}: list_resources names the finished reports")
            text = report.path.read_text(encoding="utf-8")
            return [ReadResourceContents(redact(text).text, report.mime_type)]

    async def _session_id(self) -> str:
        ctx = self.server.request_context
        return (await self.governed(ctx.session, ctx.lifespan_context)).session_id


def build_server(settings: McpSettings) -> GhostMcpServer:
    """A server for ``settings``; run it with :func:`serve_stdio` or :func:`serve_http`, or connect an
    in-memory client to its ``.server`` (tests)."""
    return GhostMcpServer(settings)


async def serve_stdio(app: GhostMcpServer, first: FirstLine | None = None, sent: dict[str, Any] | None = None) -> None:
    """Serve one session over stdin/stdout until the client closes them; then close the session.

    ``first`` is the client's first line when it was read before the server was built (``sent``: the answer
    already written to its ``initialize``, see :mod:`netghost.mcp._early`): it is replayed to the SDK and
    the SDK's own answer to it is dropped.
    """
    from io import TextIOWrapper  # noqa: PLC0415

    from mcp.server.stdio import stdio_server  # noqa: PLC0415  only the stdio transport needs it

    try:
        if first is None:
            async with stdio_server() as (read, write):
                await app.server.run(read, write, app.server.create_initialization_options())
            return
        stdin = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        stdout = anyio.wrap_file(TextIOWrapper(sys.stdout.buffer, encoding="utf-8"))
        streams = ReplayedInitialize(first, stdin, stdout, sent)
        replayed = cast("anyio.AsyncFile[str]", streams)  # duck-typed: iterated as stdin, written as stdout
        async with stdio_server(replayed, replayed) as (read, write):
            await app.server.run(read, write, app.server.create_initialization_options())
    finally:
        app.close()


def check_loopback(host: str) -> str:
    """``host`` if it is a loopback address or ``localhost``.

    Raises:
        NetGhostError: any other host: the governed tools are not offered to the network.
    """
    if host == "localhost":
        return host
    try:
        if ipaddress.ip_address(host.strip("[]")).is_loopback:
            return host
    except ValueError:
        pass
    raise NetGhostError(f"--http {host}: only loopback addresses are served (127.0.0.1, ::1, localhost)")


async def serve_http(app: GhostMcpServer, host: str, port: int) -> None:
    """Serve streamable HTTP on ``http://host:port/mcp`` (loopback only), one governed session per MCP session.

    Raises:
        NetGhostError: ``host`` is not loopback.
    """
    import uvicorn  # noqa: PLC0415  the HTTP transport's dependencies load only when asked for
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager  # noqa: PLC0415
    from mcp.server.transport_security import TransportSecuritySettings  # noqa: PLC0415
    from starlette.applications import Starlette  # noqa: PLC0415
    from starlette.routing import Mount  # noqa: PLC0415

    check_loopback(host)
    security = TransportSecuritySettings(  # DNS-rebinding protection: a web page cannot reach the tools
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    manager = StreamableHTTPSessionManager(app.server, security_settings=security)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    web = Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)
    config = uvicorn.Config(web, host=host.strip("[]"), port=port, log_level="warning", lifespan="on")
    print(f"ghost-agent mcp: streamable HTTP on http://{host}:{port}/mcp/", file=sys.stderr, flush=True)
    try:
        await uvicorn.Server(config).serve()
    finally:
        app.close()
