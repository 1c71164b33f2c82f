"""A lab world served by the MCP server, and the scripted human behind a client's elicitation."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import ClientSession, types
from mcp.shared.memory import create_connected_server_and_client_session

from netghost.agent.demo import prepare_lab
from netghost.mcp import GhostMcpServer, McpSettings, build_server

CLIENT = types.Implementation(name="probe-agent", version="3.1.4")


def lab_settings(audit_dir: Path, world: str = "nsg-deny", **orchestrator: Any) -> McpSettings:
    """Settings for a fresh lab world under ``audit_dir`` (what ``ghost-agent mcp --lab`` builds)."""
    lab = prepare_lab(world, audit_dir)
    return McpSettings(audit_dir=audit_dir, path=lab.path, env=lab.env,
                       orchestrator={**lab.orchestrator, **orchestrator}, lab=world, approval_timeout_s=30,
                       confinement=lab.confinement)


@dataclass
class Human:
    """Answers elicitations by a substring of the message: ``approve`` or ``deny``; records what it saw."""

    answers: dict[str, str] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)

    async def __call__(self, _context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.seen.append(params.message)
        for needle, decision in self.answers.items():
            if needle in params.message:
                return types.ElicitResult(action="accept", content={"decision": decision, "reason": f"{decision} by test"})
        return types.ElicitResult(action="decline")


@asynccontextmanager
async def in_memory(app: GhostMcpServer, human: Human | None) -> Iterator[ClientSession]:  # type: ignore[misc]
    """An SDK client connected in memory; ``human=None`` declares no elicitation capability."""
    async with create_connected_server_and_client_session(
        app.server, client_info=CLIENT, elicitation_callback=human,
    ) as session:
        yield session


def result_of(res: types.CallToolResult) -> dict[str, Any]:
    """The tool's result document (structured content)."""
    assert not res.isError, res.content
    assert res.structuredContent is not None
    return res.structuredContent


__all__ = ["CLIENT", "Human", "build_server", "in_memory", "lab_settings", "result_of"]
