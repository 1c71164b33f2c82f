"""Where an MCP client's probes may go unasked (issue 28): its lab world's network, or `--scope` entries."""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio

from netghost.agent.demo import prepare_lab
from netghost.mcp import build_server
from netghost.mcp._cli import add_arguments, settings_from
from tests.mcp_server.helpers import Human, in_memory, result_of


def _args(audit: Path, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(["--audit-dir", str(audit), *extra])


def test_scope_entries_widen_the_default(tmp_path: Path) -> None:
    settings = settings_from(_args(tmp_path, "--scope", "api.contoso.com", "--scope", "20.40.0.0/16"))
    assert settings.scope is not None
    assert settings.scope.name_in_scope("api.contoso.com") and not settings.scope.name_in_scope("contoso.com")
    assert any(str(n) == "20.40.0.0/16" for n in settings.scope.networks)
    assert settings_from(_args(tmp_path)).scope == type(settings.scope)()


def test_a_lab_worlds_network_is_its_scope_and_the_sessions_shell_uses_it(tmp_path: Path) -> None:
    args = _args(tmp_path / "audit", "--lab", "dns-nxdomain")
    args.mcp_lab_setup = prepare_lab("dns-nxdomain", tmp_path / "audit")  # what the CLI entry prepares
    settings = settings_from(args)
    assert settings.scope is not None and settings.scope.name_in_scope("billing-db.corp.contoso.internal")
    settings.orchestrator["scan_azure_orphans"] = False
    app = build_server(settings)

    async def main() -> tuple[dict, dict]:
        async with in_memory(app, Human()) as client:
            named = result_of(await client.call_tool("run_shell_cmd", {"command": "dig +short billing-db.corp.contoso.internal",
                                                                       "reasoning": "the world's name"}))
            other = result_of(await client.call_tool("run_shell_cmd", {"command": "dig +short attacker.example",
                                                                       "reasoning": "nobody named it"}))
        return named, other

    named, other = anyio.run(main)
    assert named["classification"] == "SAFE"
    assert (other["classification"], other["action"]) == ("RISKY", "user_denied")
