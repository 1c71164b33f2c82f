"""One MCP session's governed tools: its own SafeExecShell and CloudOrchestrator, nothing else.

Every tool call of the session goes through them exactly as the agent's calls do (same classification,
gate, audit WAL, redaction, task registry), with the MCP client's declared name and version recorded in
every shell audit record. They are built at the session's first tool call, once the client has said who
it is, and closed with the session.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

from pydantic import ValidationError
from rich.console import Console

from netghost.mcp._approval import CallContext, ElicitingApprover
from netghost.mcp._settings import McpSettings
from netghost.mcp._tools import ARG_MODELS
from netghost.orchestrator import CloudOrchestrator
from netghost.safetext import guard_console
from netghost.shell import SafeExecShell

__all__ = ["GovernedSession", "new_session_id"]


def new_session_id(settings: McpSettings, now: Callable[[], datetime] | None = None) -> str:
    """``{prefix}_YYYYmmdd_HHMMSS`` not used yet in the audit dir (two sessions in one second wait)."""
    clock = now or (lambda: datetime.now(UTC))
    while True:
        sid = f"{settings.session_prefix}_{clock():%Y%m%d_%H%M%S}"
        if not (settings.audit_dir / f"shell_audit_{sid}.jsonl").exists():
            return sid
        time.sleep(0.25)


def _to_stderr(line: str) -> None:
    """A refused provisional audit record, told to whoever runs the server (stdout is the transport)."""
    print(line, file=sys.stderr, flush=True)


class GovernedSession:
    """The shell and orchestrator of one MCP session.

    Args:
        settings: the server's settings.
        client: ``{"via": "mcp", "name", "version"}`` as the client declared it.
        approver: the session's HITL callback (the elicitation bridge).
        session_id: the audit session id (a new one when None).
    """

    def __init__(self, settings: McpSettings, client: Mapping[str, str], approver: ElicitingApprover,
                 session_id: str | None = None) -> None:
        settings.audit_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.session_id = session_id or new_session_id(settings)
        self.client = dict(client)
        self.approver = approver
        self.lock = threading.Lock()  # one call at a time per session (seed 000: one orchestrator thread)
        self.shell = SafeExecShell(self.session_id, approver, audit_dir=settings.audit_dir, path=settings.path,
                                   env=settings.env, cwd=settings.audit_dir,
                                   approval_timeout_s=settings.approval_timeout_s, client=self.client,
                                   confinement=settings.confinement, on_notice=_to_stderr)
        config = dict(settings.orchestrator)
        config.setdefault("local_capture_dir", str(settings.audit_dir / "captures"))
        if settings.budgets is not None:
            config["budgets"] = settings.budgets
        try:  # stdout is the stdio transport: the orchestrator's console goes to stderr
            self.orchestrator = CloudOrchestrator(self.shell, self.session_id, task_dir=str(settings.audit_dir),
                                                  console=guard_console(Console(file=sys.stderr, highlight=False)),
                                                  **config)
        except BaseException:
            self.shell.close()
            raise

    def call(self, name: str, arguments: Mapping[str, Any], context: CallContext | None = None) -> dict[str, Any]:
        """Validate ``arguments`` against the tool's contract and dispatch; the tool's result document.

        A call is never retried or rewritten here; an argument the contract refuses is answered as
        ``{"status": "error", "error": "invalid_arguments"}`` without reaching the shell. ``context`` is
        where a RISKY step of this call asks its human (None: nobody, so it is denied).
        """
        with self.lock:
            self.approver.current = context
            try:
                return self._dispatch(name, arguments)
            finally:
                self.approver.current = None

    def _dispatch(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if name == "list_tasks":
            return self.orchestrator.orchestrate({"intent": "list_tasks"})
        model = ARG_MODELS.get(name)
        if model is None:
            return {"status": "error", "error": "unknown_tool", "tool": name}
        try:
            args = model.model_validate(dict(arguments))
        except ValidationError as exc:
            return {"status": "error", "error": "invalid_arguments", "tool": name,
                    "message": str(exc.errors(include_url=False, include_context=False))}
        request = cast(Any, args).to_request()  # every ARG_MODELS model has to_request()
        if name == "run_shell_cmd":
            return self.shell.execute(request.model_dump())
        return self.orchestrator.orchestrate(request.model_dump(mode="json", exclude_none=True))

    def close(self) -> None:
        """Close the orchestrator, then release the shell's audit file."""
        try:
            self.orchestrator.close()
        finally:
            self.shell.close()
