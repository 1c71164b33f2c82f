"""A full lab capture driven only through MCP ends in the same task states and reports as through the CLI."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from netghost.governance import read_wal
from netghost.lab import load_world
from netghost.mcp import build_server
from tests.agent.lab_capture import investigate
from tests.mcp_server.helpers import Human, in_memory, lab_settings, result_of

WORLD = "nsg-deny"
TERMINAL = {"task_completed", "task_failed", "task_timed_out", "task_cancelled"}
_NUMBERS = re.compile(r"\d+(\.\d+)?")


def _shape(text: str) -> list[str]:
    """A Markdown report's headings and bullet/table-row lead words, numbers taken out: the lab synthesises
    each capture afresh on its own clock, so counts and times differ by run, the report's shape must not."""
    return [_NUMBERS.sub("N", ln.split(":")[0]) for ln in text.splitlines() if ln.startswith(("#", "- **", "**"))]


def _kinds(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["id"], f["severity"], _NUMBERS.sub("N", f["title"]).split("(")[0]) for f in doc["findings"]]


def _states(registry: Path) -> list[str]:
    """The task's lifecycle, one entry per state it went through: how many records a state wrote (a poll
    per WAITING record) depends on when the lab's capture stopped, not on the path that ran it."""
    return [state for state, _ in itertools.groupby(r["state"] for r in read_wal(registry).records)]


def _flow() -> tuple[str, str, str]:
    spec = load_world(WORLD).spec
    flow = {f.name: f for f in spec.traffic}[spec.fault.flow]
    vm = next(v for v in spec.vms if v.name == flow.client)
    return vm.name, vm.resource_group, spec.storage_accounts[0].name


def _through_mcp(audit: Path) -> tuple[str, dict[str, Any], dict[str, str]]:
    app = build_server(lab_settings(audit, WORLD, scan_azure_orphans=False))  # the CLI side scans; states alike
    vm, rg, account = _flow()

    async def main() -> tuple[dict[str, Any], dict[str, str]]:
        async with in_memory(app, Human({"": "approve"})) as client:  # a human who approves every step
            call = client.call_tool
            res = result_of(await call("capture_traffic", {"target": vm, "resource_group": rg, "storage_account": account,
                                                           "duration_seconds": 60, "investigation_context": "parity"}))
            for _ in range(20):
                if res.get("status") in TERMINAL:
                    break
                res = result_of(await call("check_task", {"task_id": res["task_id"]}))
            listed = (await client.list_resources()).resources
            texts = {r.name.split("_", 3)[-1]: (await client.read_resource(r.uri)).contents[0].text for r in listed}
            return res, texts

    done, texts = anyio.run(main)
    (sid,) = app.session_ids()
    app.close()
    return sid, done, texts


@pytest.mark.slow
def test_a_capture_through_mcp_matches_one_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mcp_audit, cli_audit = tmp_path / "mcp", tmp_path / "cli"
    sid, done, texts = _through_mcp(mcp_audit)
    cli_sid = investigate(WORLD, cli_audit, monkeypatch)

    assert done["status"] == "task_completed", done
    ours_states = _states(mcp_audit / f"orchestrator_tasks_{sid}.jsonl")
    cli_states = _states(cli_audit / f"orchestrator_tasks_{cli_sid}.jsonl")
    # the same lifecycle; the CLI's session then ended, and its end cleaned the capture up
    assert cli_states[:len(ours_states)] == ours_states
    assert set(cli_states[len(ours_states):]) == {"CLEANING_UP", "DONE"} and cli_states[-1] == "DONE"
    (cli_task,) = {r["task_id"]: r for r in read_wal(cli_audit / f"orchestrator_tasks_{cli_sid}.jsonl").records}.values()
    cli_dir = Path(cli_task["report_path"]).parent
    assert set(texts) >= {"forensic_report.md", "executive_summary.md", "semantic.json"}
    for name in ("forensic_report.md", "executive_summary.md"):
        (cli_file,) = cli_dir.glob(f"*_{name}")
        assert _shape(texts[name]) == _shape(cli_file.read_text(encoding="utf-8")), name
    (cli_json,) = cli_dir.glob("*_semantic.json")
    ours, theirs = json.loads(texts["semantic.json"]), json.loads(cli_json.read_text(encoding="utf-8"))
    assert _kinds(ours) == _kinds(theirs) and _kinds(ours)  # the same diagnosis, finding by finding
    assert set(ours["summary"]) == set(theirs["summary"])
    records = read_wal(mcp_audit / f"shell_audit_{sid}.jsonl").records
    assert {r["client"]["name"] for r in records} == {"probe-agent"}  # the capture's every az call, too
    assert sum(r["action"] == "user_approved" for r in records) == 2  # create and download, asked over MCP
