"""Unit tests of the RCA (seed 001 §7) and of the startup's orphan report (seed 001 §3 steps 5-8).

The RCA reads real hash-chained logs written here with the governance WAL writer, and a table shell
answers its ``cat`` of the executive summary; the startup talks to a table orchestrator.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rich.console import Console

from netghost.agent._console import GhostConsole
from netghost.agent._rca import NOT_IN_TRAIL, chain_paths, rca_path, write_rca
from netghost.agent._session import new_session
from netghost.agent._startup import BUCKETS, classify_orphans, report_orphans
from netghost.contracts import CompleteInvestigationArgs, Hypothesis, HypothesisState
from netghost.governance import WalWriter, verify
from tests.agent.fakes import NOW

SID = "ghost_20250115_143022"
REPORT = "/tmp/caps/ghost_vm_1/ghost_vm_1_forensic_report.md"
SUMMARY = "/tmp/caps/ghost_vm_1/ghost_vm_1_executive_summary.md"


def _aid(seq: int) -> str:
    return f"{SID}_{seq:03d}"


def _shell_record(seq: int, command: str, env: str, *, exit_code: int | None = 0, status: str = "completed",
                  action: str = "auto_approved", cls: str = "SAFE", output: str = "") -> dict[str, Any]:
    return {"audit_id": _aid(seq), "command": command, "environment": env, "status": status,
            "exit_code": exit_code, "classification": cls, "action": action, "output": output}


def _logs(audit: Path) -> None:
    paths = chain_paths(audit, SID)
    shell = WalWriter(paths["shell"])
    for r in (_shell_record(1, "ping -c 4 10.1.2.4", "local", exit_code=1),
              _shell_record(2, "az network nsg rule list --nsg-name nsg-data -g prod-rg", "azure",
                            output='[{"name": "AllowRedis", "access": "Allow"}]'),
              _shell_record(3, "az network route-table route update -n r1", "azure", exit_code=None,
                            status="denied", action="user_denied", cls="RISKY")):
        shell.append(r)
    shell.close()
    registry = WalWriter(paths["orchestrator"])
    registry.append({"task_id": "ghost_vm_1", "state": "WAITING", "target": "web-vm-01"})
    registry.append({"task_id": "ghost_vm_1", "state": "COMPLETED", "target": "web-vm-01", "report_path": REPORT,
                     "local_pcap_path": "/tmp/caps/ghost_vm_1/ghost_vm_1.cap",
                     "artifact_hashes": {"/tmp/caps/ghost_vm_1/ghost_vm_1.cap": "ab" * 32}})
    registry.close()


class CatShell:
    """Answers ``cat PATH`` from a table: a string is the file's text, None a human's denial, absent exit 1."""

    def __init__(self, files: Mapping[str, str | None]) -> None:
        self.files = dict(files)
        self.commands: list[str] = []

    def execute(self, request: Mapping[str, Any]) -> dict[str, Any]:
        command = str(request["command"])
        self.commands.append(command)
        path = command.removeprefix("cat ")
        seq = 900 + len(self.commands)
        if path in self.files and self.files[path] is None:
            return {"status": "denied", "action": "user_denied", "audit_id": _aid(seq), "exit_code": None}
        if path in self.files:
            return {"status": "completed", "exit_code": 0, "output": self.files[path], "audit_id": _aid(seq)}
        return {"status": "completed", "exit_code": 1, "output": "", "audit_id": _aid(seq)}


def _state(audit: Path) -> Any:
    state = new_session(SID, model="gemini-2.5-flash", audit_dir=audit, now=NOW)
    state.turn_count = 7
    state.hypothesis_log = [
        Hypothesis(id="h1", description="NSG blocks 6379", state=HypothesisState.CONFIRMED, denial_count=0,
                   resolving_audit_id=_aid(2)),
        Hypothesis(id="h2", description="UDR to a dead NVA", state=HypothesisState.UNVERIFIABLE, denial_count=3,
                   resolving_audit_id=_aid(77)),
    ]
    return state


def _completion(summary: str = "") -> CompleteInvestigationArgs:
    return CompleteInvestigationArgs(confidence="medium", root_cause_summary=summary or f"See {_aid(2)}.",
                                     confirmed_hypotheses=["h1"], unverifiable_hypotheses=["h2"],
                                     recommended_actions=[f"Remove the rule found in {_aid(2)}."])


def test_the_rca_has_all_phases_context_tags_and_both_advisories(tmp_path: Path) -> None:
    _logs(tmp_path)
    shell = CatShell({SUMMARY: None})  # the human denies the summary's cat
    rca = write_rca(tmp_path, _state(tmp_path), _completion(), shell, now=lambda: NOW)
    assert shell.commands == [f"cat {SUMMARY}"]  # phase 4 reads the summary through the shell, no fallback
    assert rca.path == rca_path(tmp_path, SID) and rca.path.read_text() == rca.text
    text = rca.text
    order = ["# Root Cause Analysis — " + SID, "_Confidence: medium_", "## The Answer", "## Investigation Summary",
             "## Recommended Actions", "## Hypotheses Log", "## Capture Evidence", "## Integrity Statement",
             "## Command Evidence"]  # the answer first, the long command table last
    assert [text.index(h) for h in order] == sorted(text.index(h) for h in order)
    # the model's command sits in a code span (nothing in it is live); the tags are escaped brackets
    assert (f"| {_aid(1)} | \\[LOCAL\\] | `ping -c 4 10.1.2.4` | SAFE | auto_approved | 1 | failed \\(exit 1\\) |"
            in text)
    assert f"| {_aid(2)} | \\[CLOUD\\] |" in text and f"| {_aid(3)} | \\[CLOUD\\] |" in text and "| denied |" in text
    assert "NOTE ON LOCAL EVIDENCE" in text
    assert "Advisory: local probe failure detected alongside an Azure 'Allow' NSG rule." in text  # pattern A
    assert (f"Advisory: forensic report for task ghost_vm_1 unavailable — cat was denied by the engineer. "
            f"The full report is at `{REPORT}` for offline review.") in text  # pattern B
    assert "Report content unavailable (cat denied by engineer)." in text
    assert "| ghost_vm_1 | web-vm-01 | COMPLETED |" in text and "ab" * 32 in text  # last record wins; hashes
    assert "| h2 | UDR to a dead NVA | UNVERIFIABLE | 3 |" in text and "Unverifiable (repeated denials): h2." in text
    assert f"- Remove the rule found in {_aid(2)}\\." in text


def test_an_audit_id_not_in_the_trail_is_marked(tmp_path: Path) -> None:
    _logs(tmp_path)
    rca = write_rca(tmp_path, _state(tmp_path), _completion(f"Both {_aid(2)} and {_aid(55)} show it."),
                    CatShell({SUMMARY: "ok"}), now=lambda: NOW)
    assert f"Both {_aid(2)} and {_aid(55)}{NOT_IN_TRAIL} show it\\." in rca.text
    assert "unknown_citation" in rca.text and rca.claims is not None and rca.claims.confidence == "low"
    assert f"| h2 | UDR to a dead NVA | UNVERIFIABLE | 3 | {_aid(77)}{NOT_IN_TRAIL} |" in rca.text
    assert f"| h1 | NSG blocks 6379 | CONFIRMED | 0 | {_aid(2)} |" in rca.text


def test_without_a_summary_file_the_report_section_is_read(tmp_path: Path) -> None:
    _logs(tmp_path)
    report = "# Report\n## Executive Summary\nSYNs to 6379 unanswered.\n## Flows\nlots\n"
    shell = CatShell({REPORT: report})
    rca = write_rca(tmp_path, _state(tmp_path), _completion(), shell, now=lambda: NOW)
    assert shell.commands == [f"cat {SUMMARY}", f"cat {REPORT}"]
    assert "\nSYNs to 6379 unanswered.\n```" in rca.text and "lots" not in rca.text  # fenced: the engine's text
    assert "Advisory: forensic report" not in rca.text


def test_the_integrity_statement_is_checked_against_governance_verify(tmp_path: Path) -> None:
    _logs(tmp_path)
    rca = write_rca(tmp_path, _state(tmp_path), _completion(), CatShell({SUMMARY: "ok"}), now=lambda: NOW)
    for name, label in (("shell", "Shell audit"), ("orchestrator", "Task registry")):
        path = chain_paths(tmp_path, SID)[name]
        report = verify(path)
        assert report.ok and rca.chains[name]["records"] == report.records
        assert f"- {label}: `{path}` — {report.records} records, chain intact, head {report.head_sha256}" in rca.text
    assert "turns" not in rca.chains  # no journal was written: nothing is claimed for it


def test_a_failed_write_keeps_the_text(tmp_path: Path) -> None:
    _logs(tmp_path)
    rca_path(tmp_path, SID).mkdir()  # the report's path is taken
    rca = write_rca(tmp_path, _state(tmp_path), _completion(), CatShell({SUMMARY: "ok"}), now=lambda: NOW)
    assert rca.path is None and rca.write_error and "## Integrity Statement" in rca.text


# ---- startup ---------------------------------------------------------------------------------------

LISTING = {
    "tasks": [{"task_id": "t_partial_only_in_tasks", "state": "DONE", "cleanup_status": "partial"},
              {"task_id": "t_fine", "state": "DONE", "cleanup_status": "completed"}],
    "orphans": [
        {"kind": "abandoned_task", "task_id": "t_abandoned", "state": "WAITING"},
        {"kind": "needs_cleanup", "task_id": "t_needs", "state": "COMPLETED", "cleanup_status": "pending"},
        {"kind": "needs_cleanup", "task_id": "t_partial", "state": "DONE", "cleanup_status": "partial"},
        {"kind": "untracked_azure", "name": "ghost_stray_capture", "resource_type": "packet_capture"},
        {"kind": "stale_local_file", "path": "/tmp/caps/ghost_old.cap", "age_days": 12},
        {"kind": "something_else", "name": "ignored"},
    ],
}


class ListingOrchestrator:
    def __init__(self, listing: Mapping[str, Any], partial: frozenset[str] = frozenset()) -> None:
        self.listing = listing
        self.partial = partial
        self.requests: list[dict[str, Any]] = []

    def orchestrate(self, request: Mapping[str, Any]) -> dict[str, Any]:
        self.requests.append(dict(request))
        if request["intent"] == "list_tasks":
            return dict(self.listing)
        status = "partial" if request.get("task_id") in self.partial else "completed"
        return {"status": "cleanup_completed", "cleanup_status": status}


def _ui(answers: str, *, interactive: bool = True) -> tuple[GhostConsole, io.StringIO]:
    out = io.StringIO()
    return GhostConsole(Console(file=out, width=120, color_system=None), io.StringIO(answers),
                        interactive=interactive), out


def test_the_five_orphan_buckets() -> None:
    buckets = classify_orphans(LISTING)
    assert tuple(buckets) == BUCKETS
    names = {b: [o.get("task_id") or o.get("name") or o.get("path") for o in v] for b, v in buckets.items()}
    assert names == {"abandoned_tasks": ["t_abandoned"], "needs_cleanup": ["t_needs"],
                     "partially_cleaned": ["t_partial", "t_partial_only_in_tasks"],  # the CLI's own scan too
                     "untracked_azure": ["ghost_stray_capture"], "stale_local_files": ["/tmp/caps/ghost_old.cap"]}


def test_no_orphans_prints_ok_and_asks_nothing(tmp_path: Path) -> None:
    ui, out = _ui("")
    orch = ListingOrchestrator({"tasks": [], "orphans": []})
    report_orphans(ui, orch, new_session(SID, model="m", audit_dir=tmp_path, now=NOW))
    assert out.getvalue().splitlines() == ["  [OK] No orphaned tasks found.", "  [OK] No stale local files found."]
    assert orch.requests == [{"intent": "list_tasks"}]


def test_clean_up_now_cleans_every_bucket_in_order_and_notes_partial_ones(tmp_path: Path) -> None:
    ui, out = _ui("c\n")
    orch = ListingOrchestrator(LISTING, partial=frozenset({"t_partial"}))
    state = new_session(SID, model="m", audit_dir=tmp_path, now=NOW)
    report_orphans(ui, orch, state)
    cleaned = [r["task_id"] for r in orch.requests[1:]]
    assert cleaned == ["t_abandoned", "t_needs", "t_partial", "t_partial_only_in_tasks", "ghost_stray_capture",
                       "/tmp/caps/ghost_old.cap"]
    assert all(r["intent"] == "cleanup_task" for r in orch.requests[1:])
    assert state.manual_cleanup_pending == ["t_partial"]
    text = out.getvalue()
    assert "[C]lean up now  [S]kip  [R]eview each one" in text
    assert "  [WARN] Task t_partial: partial cleanup — some resources require manual deletion." in text


def test_skip_and_review(tmp_path: Path) -> None:
    ui, _ = _ui("s\n")
    orch = ListingOrchestrator(LISTING)
    report_orphans(ui, orch, new_session(SID, model="m", audit_dir=tmp_path, now=NOW))
    assert orch.requests == [{"intent": "list_tasks"}]
    ui, _ = _ui("r\ny\nn\nn\nn\nn\ny\n")
    orch = ListingOrchestrator(LISTING)
    report_orphans(ui, orch, new_session(SID, model="m", audit_dir=tmp_path, now=NOW))
    assert [r["task_id"] for r in orch.requests[1:]] == ["t_abandoned", "/tmp/caps/ghost_old.cap"]
    ui, _ = _ui("", interactive=False)  # nobody to ask: skipped, offered again next time
    orch = ListingOrchestrator(LISTING)
    report_orphans(ui, orch, new_session(SID, model="m", audit_dir=tmp_path, now=NOW))
    assert orch.requests == [{"intent": "list_tasks"}]


def test_rca_capture_evidence_names_azures_stop_reason() -> None:
    """A capture Azure stopped early (bytes limit, VM stopped) says so in the RCA; the time limit does not alarm."""
    from netghost.agent._rca import _captures_section

    tasks = {"ghost_a": {"target": "web-vm-01", "state": "COMPLETED", "stop_reason": "BytesExceeded"},
             "ghost_b": {"target": "redis-primary", "state": "COMPLETED", "stop_reason": "TimeExceeded"}}
    inp = SimpleNamespace(tasks=tasks, summaries={}, records=[])

    text = "\n".join(_captures_section(inp))  # type: ignore[arg-type]
    assert "Capture ghost_a: Azure stopReason BytesExceeded — it ended before its time limit" in text
    assert "Capture ghost_b: Azure stopReason TimeExceeded." in text
