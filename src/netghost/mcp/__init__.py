"""The MCP server: the agent's governed tools offered to any MCP client (``ghost-agent mcp``).

It lists ``run_shell_cmd``, ``capture_traffic``, ``check_task``, ``cancel_task``, ``cleanup_task`` and
``list_tasks`` with the seeds' descriptions and schemas, and serves every call through one Safe-Exec
Shell and one Cloud Orchestrator per MCP session, so a client reached over MCP gets no path around
classification, the human gate (MCP elicitation; fail closed without it) or the audit chain, which
names the client in every record. Finished reports are MCP resources.

This face is lazy (PEP 562): the SDK takes over a second to import, and ``ghost-agent`` imports this
package to build its parser, so only :func:`add_arguments`, :func:`run` and :class:`McpSettings` load
eagerly; the server names load the SDK on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from netghost._lazy import lazy_face
from netghost.mcp._cli import add_arguments, run
from netghost.mcp._settings import McpSettings

if TYPE_CHECKING:
    from netghost.mcp._server import GhostMcpServer, build_server, serve_http, serve_stdio

__all__ = ["GhostMcpServer", "McpSettings", "add_arguments", "build_server", "run", "serve_http", "serve_stdio"]

_LAZY = dict.fromkeys(("GhostMcpServer", "build_server", "serve_http", "serve_stdio"), "_server")

__getattr__, __dir__ = lazy_face(__name__, _LAZY, __all__)
