"""The MCP server through the SDK's own client, in memory: tools, the gate, elicitation, the audit."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from netghost.agent.cli import main as ghost_agent
from netghost.contracts import TOOL_DECLARATIONS
from netghost.governance import read_wal, verify
from netghost.mcp import build_server
from tests.mcp_server.helpers import CLIENT, Human, in_memory, lab_settings, result_of

SEED_TOOLS = ("run_shell_cmd", "capture_traffic", "check_task", "cancel_task", "cleanup_task")


def _records(app_dir: Path, sid: str) -> list[dict]:
    path = app_dir / f"shell_audit_{sid}.jsonl"
    assert verify(path).ok
    return read_wal(path).records


def test_lists_the_seed_tools_with_their_descriptions_and_schemas(tmp_path: Path) -> None:
    app = build_server(lab_settings(tmp_path, scan_azure_orphans=False))

    async def main() -> list:
        async with in_memory(app, Human()) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in anyio.run(main)}
    assert list(tools) == [*SEED_TOOLS, "list_tasks"]
    for decl in TOOL_DECLARATIONS:
        if decl["name"] in tools:
            tool, params = tools[decl["name"]], decl["parameters_json_schema"]
            assert tool.description == decl["description"]
            assert tool.inputSchema["required"] == params["required"]
            assert set(tool.inputSchema["properties"]) == set(params["properties"]) - {"hypotheses", "active_hypothesis_ids"}
            assert tool.inputSchema["additionalProperties"] is False
    assert app.session_ids() == []  # listing tools opens no shell: nothing is audited before a call


def test_safe_risky_approved_and_denied_forbidden_all_audited_with_the_client(tmp_path: Path) -> None:
    app = build_server(lab_settings(tmp_path, scan_azure_orphans=False))
    keep, drop = tmp_path / "keep.txt", tmp_path / "drop.txt"
    keep.write_text("x")
    drop.write_text("x")
    human = Human({"drop.txt": "approve", "keep.txt": "deny"})

    async def main() -> dict[str, dict]:
        out = {}
        async with in_memory(app, human) as client:
            call = client.call_tool
            out["safe"] = result_of(await call("run_shell_cmd", {"command": "az vm list -o table", "reasoning": "inventory"}))
            out["approved"] = result_of(await call("run_shell_cmd", {"command": f"rm -f {drop}", "reasoning": "tidy"}))
            out["denied"] = result_of(await call("run_shell_cmd", {"command": f"rm -f {keep}", "reasoning": "tidy"}))
            out["forbidden"] = result_of(await call("run_shell_cmd", {"command": "sudo ls", "reasoning": "root"}))
            out["tasks"] = result_of(await call("list_tasks", {}))
            bad = await call("run_shell_cmd", {"command": "ls", "reasoning": "x", "hypotheses": []})
            assert bad.isError and "Additional properties" in bad.content[0].text  # the SDK checks the schema
        return out

    out = anyio.run(main)
    assert app.sessions == {}  # the session's shell and orchestrator closed with it
    assert (out["safe"]["classification"], out["safe"]["action"], out["safe"]["exit_code"]) == ("SAFE", "auto_approved", 0)
    assert "web-vm-01" in out["safe"]["output"]
    assert out["approved"]["action"] == "user_approved" and not drop.exists()
    assert out["denied"]["action"] == "user_denied" and keep.exists()
    assert out["denied"]["denial_reason"] == "deny by test"
    assert out["forbidden"]["classification"] == "FORBIDDEN" and out["forbidden"]["action"] == "blocked"
    assert out["tasks"]["tasks"] == []  # no capture yet in this session
    assert len(human.seen) == 2 and all("Plan-token: sha256:" in m for m in human.seen)
    (sid,) = app.session_ids()
    records = _records(tmp_path, sid)
    assert [r["audit_id"] for r in records][-4:] == [out[k]["audit_id"] for k in ("safe", "approved", "denied", "forbidden")]
    assert {r["client"]["name"] for r in records} == {CLIENT.name}
    assert {r["client"]["version"] for r in records} == {CLIENT.version}
    # the session's HTML report, written from its trail alone (an MCP session has no session file or journal)
    assert ghost_agent(["report", sid, "--audit-dir", str(tmp_path)]) == 0
    page = (tmp_path / f"ghost_rca_{sid}.html").read_text()
    assert "No conclusion was recorded" in page and page.count(f"<td>{CLIENT.name} {CLIENT.version}</td>") == len(records)
    assert all(f'<section class="record" id="{r["audit_id"]}">' in page for r in records)


def test_risky_is_denied_for_a_client_that_cannot_elicit(tmp_path: Path) -> None:
    app = build_server(lab_settings(tmp_path, scan_azure_orphans=False))
    target = tmp_path / "keep.txt"
    target.write_text("x")

    async def main() -> dict:
        async with in_memory(app, None) as client:
            return result_of(await client.call_tool("run_shell_cmd", {"command": f"rm -f {target}", "reasoning": "tidy"}))

    out = anyio.run(main)
    app.close()
    assert out["status"] == "denied" and target.exists()
    assert "did not declare the elicitation capability" in out["denial_reason"]
    assert f"{CLIENT.name} {CLIENT.version}" in out["denial_reason"]


@pytest.mark.parametrize("answer", ["decline", "cancel"])
def test_anything_but_an_explicit_approve_is_a_denial(tmp_path: Path, answer: str) -> None:
    from mcp import types

    app = build_server(lab_settings(tmp_path, scan_azure_orphans=False))
    target = tmp_path / "keep.txt"
    target.write_text("x")

    async def elicit(_ctx: object, _params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action=answer, content={"decision": "approve"})  # content ignored unless accepted

    async def main() -> dict:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(app.server, client_info=CLIENT,
                                                              elicitation_callback=elicit) as client:
            return result_of(await client.call_tool("run_shell_cmd", {"command": f"rm -f {target}", "reasoning": "x"}))

    out = anyio.run(main)
    app.close()
    assert out["action"] == "user_denied" and target.exists()


def test_resources_list_only_finished_reports_and_refuse_other_uris(tmp_path: Path) -> None:
    app = build_server(lab_settings(tmp_path, scan_azure_orphans=False))
    (tmp_path / "ghost_rca_ghost_20260101_000000.md").write_text("# RCA\n")

    async def main() -> tuple[list, str, str]:
        async with in_memory(app, Human()) as client:
            listed = (await client.list_resources()).resources
            text = (await client.read_resource(listed[0].uri)).contents[0].text
            try:
                await client.read_resource("ghost://rca/../../etc/passwd")
            except Exception as exc:  # the SDK raises McpError for the server's refusal
                refused = str(exc)
            else:
                refused = ""
            return listed, text, refused

    listed, text, refused = anyio.run(main)
    app.close()
    assert [str(r.uri) for r in listed] == ["ghost://rca/ghost_rca_ghost_20260101_000000.md"]
    assert text == "# RCA\n" and "unknown resource" in refused


def test_the_lab_is_sealed_over_mcp_and_every_decision_names_who_made_it(tmp_path: Path) -> None:
    """``--lab`` over MCP: a program the lab does not simulate is asked of the human behind the client even when
    it is SAFE (the message says it would run for real), refused for a client that cannot ask, and each
    record names who decided: the client's elicitation, the SAFE tier, the closed gate."""
    app = build_server(lab_settings(tmp_path, scan_azure_orphans=False))
    human = Human({"ip addr show": "approve"})

    async def asked() -> dict[str, dict]:
        async with in_memory(app, human) as client:
            call = client.call_tool
            return {"lab": result_of(await call("run_shell_cmd", {"command": "az vm list -o table", "reasoning": "x"})),
                    "real": result_of(await call("run_shell_cmd", {"command": "ip addr show", "reasoning": "x"}))}

    async def nobody() -> dict:
        async with in_memory(app, None) as client:
            return result_of(await client.call_tool("run_shell_cmd", {"command": "ip addr show", "reasoning": "x"}))

    out = anyio.run(asked)
    assert out["lab"]["action"] == "auto_approved" and out["lab"]["decided_by"]["name"] == "safe_tier"
    assert out["real"]["classification"] == "SAFE" and out["real"]["action"] == "user_approved"
    assert out["real"]["decided_by"] == {"kind": "mcp_elicitation", "name": f"{CLIENT.name} {CLIENT.version}",
                                         "detail": None}
    (message,) = human.seen
    assert "ip addr show" in message and "REAL:" in message and "would run for real" in message
    refused = anyio.run(nobody)
    assert (refused["action"], refused["exit_code"]) == ("user_denied", None)
    assert refused["decided_by"]["kind"] == "policy" and refused["decided_by"]["name"] == "closed_gate"
    records = [r for sid in app.session_ids() for r in _records(tmp_path, sid)]
    real = [r for r in records if r["command"] == "ip addr show"]
    assert [r["confinement"]["simulated"] for r in real] == [False, False]


def test_a_clients_declared_name_is_redacted_wherever_it_is_recorded_or_shown(tmp_path: Path) -> None:
    """The client's name and version are its own text: a credential in them reaches no audit record,
    no decider and no refusal text the model reads."""
    from mcp import types
    from mcp.shared.memory import create_connected_server_and_client_session

    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJnaG9zdCJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
    app = build_server(lab_settings(tmp_path, scan_azure_orphans=False))
    target = tmp_path / "keep.txt"
    target.write_text("x")

    async def main() -> dict:
        async with create_connected_server_and_client_session(
                app.server, client_info=types.Implementation(name=f"agent Bearer {jwt}", version=jwt)) as client:
            return result_of(await client.call_tool("run_shell_cmd", {"command": f"rm -f {target}", "reasoning": "x"}))

    out = anyio.run(main)
    app.close()
    assert out["status"] == "denied" and target.exists()
    (audit,) = tmp_path.glob("shell_audit_*.jsonl")
    assert verify(audit).ok
    assert jwt not in audit.read_text(encoding="utf-8") and jwt not in str(out)
    assert "REDACTED" in str(read_wal(audit).records[-1]["client"])
