"""Finished reports offered as MCP resources: what a client reads once a capture or an RCA is done.

The listing is computed from the session's task registry (each completed task's forensic report,
executive summary, semantic JSON and HTML report, where the engine wrote them) and the RCA files in the
audit directory (Markdown and HTML). A resource is read only if it is in the current listing, by its
URI, so a client cannot name an arbitrary path (``ghost://report/../../etc/passwd`` is simply unknown).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from netghost.governance import replay_latest

__all__ = ["Report", "list_reports", "read_report"]

_KINDS = (
    ("_forensic_report.md", "forensic report", "text/markdown"),
    ("_executive_summary.md", "executive summary", "text/markdown"),
    ("_semantic.json", "semantic summary", "application/json"),
    ("_forensic_report.html", "forensic report (HTML, charts)", "text/html"),
)


@dataclass(frozen=True)
class Report:
    """One finished report: its resource URI, file, title and MIME type."""

    uri: str
    path: Path
    title: str
    mime_type: str


def _task_reports(task_id: str, report_path: str) -> list[Report]:
    base = report_path.removesuffix("_forensic_report.md")
    out = []
    for suffix, what, mime in _KINDS:
        path = Path(base + suffix)
        if path.is_file():
            out.append(Report(f"ghost://report/{task_id}/{path.name}", path, f"{task_id}: {what}", mime))
    return out


def list_reports(audit_dir: Path, session_id: str) -> list[Report]:
    """The finished reports of ``session_id``'s tasks, then every RCA in ``audit_dir``."""
    out: list[Report] = []
    registry = audit_dir / f"orchestrator_tasks_{session_id}.jsonl"
    tasks = replay_latest(registry, "task_id") if registry.exists() else {}
    for task_id, task in sorted(tasks.items()):
        report = task.get("report_path")
        if report and task.get("state") in ("COMPLETED", "DONE"):
            out += _task_reports(task_id, str(report))
    for path in sorted(audit_dir.glob("ghost_rca_*")):
        if path.suffix in (".md", ".html") and path.is_file():
            mime = "text/html" if path.suffix == ".html" else "text/markdown"
            out.append(Report(f"ghost://rca/{path.name}", path, f"RCA {path.stem.removeprefix('ghost_rca_')}", mime))
    return out


def read_report(audit_dir: Path, session_id: str, uri: str) -> Report | None:
    """The listed report with this URI, or None (unknown URIs are never mapped to paths)."""
    return next((r for r in list_reports(audit_dir, session_id) if r.uri == uri), None)
