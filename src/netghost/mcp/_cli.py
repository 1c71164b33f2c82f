"""``ghost-agent mcp [--lab WORLD] [--audit-dir DIR] [--http HOST:PORT]``: serve the governed tools.

stdio by default (what MCP clients launch: ``{"command": "ghost-agent", "args": ["mcp"]}``); ``--http``
serves streamable HTTP on a loopback address instead. Nothing is printed on stdout (it is the stdio
transport); notices go to stderr. ``--lab`` is prepared by the caller (``netghost.agent.cli``, the only
entry allowed to import the lab), which hands it over as ``args.mcp_lab_setup``.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any

from netghost import __version__
from netghost.errors import NetGhostError
from netghost.mcp._early import INSTRUCTIONS, SERVER_NAME, initialize_result, read_first_line, write_line
from netghost.mcp._settings import DEFAULT_APPROVAL_TIMEOUT_S, McpSettings

__all__ = ["add_arguments", "parse_http", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the server's options."""
    parser.add_argument("--lab", dest="mcp_lab", metavar="WORLD",
                        help="serve a fresh offline lab world (a shipped name or a YAML path) under DIR/lab")
    parser.add_argument("--audit-dir", dest="mcp_audit_dir", metavar="DIR", default="./audit",
                        help="audit logs, task registry, captures and reports (default: ./audit)")
    parser.add_argument("--http", dest="mcp_http", metavar="HOST:PORT",
                        help="serve streamable HTTP on a loopback address instead of stdio")
    parser.add_argument("--budget", dest="mcp_budget", action="append", default=[], metavar="NAME=VALUE",
                        help="raise (or lower) a session budget, e.g. --budget concurrent_captures=8 (repeatable; "
                             "also $NETGHOST_BUDGETS)")
    parser.add_argument("--approval-timeout", dest="mcp_approval_timeout", type=float,
                        default=DEFAULT_APPROVAL_TIMEOUT_S, metavar="S",
                        help="seconds the human has to answer an approval before it is denied (default 300)")
    parser.add_argument("--scope", dest="mcp_scope", action="append", default=[], metavar="HOST|CIDR",
                        help="a host name (with the names below it) or an address range that probes may reach "
                             "automatically, on top of the private address space (repeatable)")


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as (host, port).

    Raises:
        NetGhostError: no port, or a port outside 1-65535.
    """
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise NetGhostError(f"--http {value}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    return host, int(port)


def settings_from(args: argparse.Namespace) -> McpSettings:
    """The server's settings from the parsed options (and the lab the caller prepared).

    Raises:
        NetGhostError: a ``--budget`` (or ``$NETGHOST_BUDGETS``) item is malformed.
    """
    from netghost.orchestrator import Budgets  # noqa: PLC0415  the orchestrator loads only when the server runs
    from netghost.shell import EgressScope  # noqa: PLC0415  likewise the shell

    lab = getattr(args, "mcp_lab_setup", None)
    scope = lab.scope if lab is not None and lab.scope is not None else EgressScope()
    if getattr(args, "mcp_scope", None):
        scope = scope.with_text(" ".join(args.mcp_scope))
    return McpSettings(
        audit_dir=Path(args.mcp_audit_dir).resolve(),
        path=lab.path if lab else None,
        env=lab.env if lab else None,
        orchestrator=dict(lab.orchestrator) if lab else {},
        lab=lab.name if lab else None,
        approval_timeout_s=args.mcp_approval_timeout,
        scope=scope,
        confinement=getattr(lab, "confinement", None),
        budgets=Budgets.load(os.environ, getattr(args, "mcp_budget", [])),
    )


def run(args: argparse.Namespace) -> int:
    """Serve until the client goes away (stdio) or Ctrl-C (HTTP); the exit code."""
    try:
        http = parse_http(args.mcp_http) if args.mcp_http else None
    except NetGhostError as exc:
        print(f"ghost-agent mcp: {exc}", file=sys.stderr)
        return 2
    if http is None:
        return _run_stdio(args)
    import anyio  # noqa: PLC0415  the SDK loads only when the server runs

    from netghost.mcp._server import build_server, check_loopback, serve_http  # noqa: PLC0415

    try:
        check_loopback(http[0])
        app = build_server(settings_from(args))
    except NetGhostError as exc:
        print(f"ghost-agent mcp: {exc}", file=sys.stderr)
        return 2
    try:
        anyio.run(serve_http, app, *http)
    except KeyboardInterrupt:
        return 130
    return 0


def _run_stdio(args: argparse.Namespace) -> int:
    """stdio: ``initialize`` is answered from the first line while the SDK, the tools and a ``--lab`` world load
    in a thread (:mod:`netghost.mcp._early`); then the SDK serves the rest of the session."""
    built: dict[str, Any] = {}

    def build() -> None:
        try:
            prepare = getattr(args, "mcp_lab_prepare", None)
            if prepare is not None and getattr(args, "mcp_lab_setup", None) is None:
                args.mcp_lab_setup = prepare()  # the caller closes it (netghost.agent.cli)
            from netghost.mcp._server import build_server  # noqa: PLC0415  the SDK loads only when the server runs

            built["app"] = build_server(settings_from(args))
        except NetGhostError as exc:
            built["error"] = exc
        except BaseException as exc:  # re-raised in the main thread
            built["crash"] = exc

    loader = threading.Thread(target=build, name="mcp-load", daemon=True)
    loader.start()
    first = read_first_line(sys.stdin.buffer)
    sent = None
    if first.request is not None:
        sent = initialize_result(first.request, name=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS)
        write_line(sys.stdout.buffer, sent)
    loader.join()
    if "error" in built:
        print(f"ghost-agent mcp: {built['error']}", file=sys.stderr)
        return 2
    if "crash" in built:
        raise built["crash"]
    import anyio  # noqa: PLC0415

    from netghost.mcp._server import serve_stdio  # noqa: PLC0415

    try:
        anyio.run(serve_stdio, built["app"], first, sent)
    except KeyboardInterrupt:
        return 130
    return 0
