"""The "Where everything is" block every investigation ends with: RCA, session, audit chains, forensic outputs.

Why in the run and not only in the demo: a resumed run, a stopped one and ``ghost-agent --lab`` end with
files the engineer must find as much as the demo does; each path is printed on its own line (copyable),
each chained log with its record count and whether its chain verifies.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from netghost.contracts import SessionState
from netghost.governance import read_wal, verify

__all__ = ["print_locations"]


def print_locations(console: Console, audit_dir: Path, state: SessionState) -> None:
    """Where everything the session wrote is, each existing path on its own line."""
    sid = state.session_id
    console.rule("[bold]Where everything is")
    rca = state.rca_report_path
    rows: list[tuple[str, str | None, str]] = [
        ("RCA (Markdown)", rca, ""), ("RCA (HTML)", str(Path(rca).with_suffix(".html")) if rca else None, ""),
        ("Session", str(audit_dir / "ghost_session.json"), "")]
    for label, name in (("Shell audit", f"shell_audit_{sid}.jsonl"), ("Conversation", f"ghost_turns_{sid}.jsonl"),
                        ("Task registry", f"orchestrator_tasks_{sid}.jsonl")):
        path = audit_dir / name
        if path.exists():
            report = verify(path)
            rows.append((label, str(path), f"  ({report.records} records, chain {'intact' if report.ok else 'BROKEN'})"))
    registry = audit_dir / f"orchestrator_tasks_{sid}.jsonl"
    reports: dict[str, None] = {}
    for record in read_wal(registry).records if registry.exists() else []:
        for key in ("report_path", "semantic_json_path"):
            if record.get(key):
                reports[str(record[key])] = None
    for report_path in reports:
        summary = report_path.replace("_forensic_report.md", "_executive_summary.md")
        html = report_path.replace("_forensic_report.md", "_forensic_report.html")
        rows += [("Forensic output", p, "") for p in (report_path, summary, html)]
        fleet = Path(report_path).parent / "fleet"  # a scale set's capture: the report ranking its instances
        rows += [("Fleet report", str(fleet / name), "") for name in ("fleet_report.md", "fleet_report.html")]
    shown: set[str] = set()
    for label, value, extra in rows:
        if value and value not in shown and Path(value).exists():
            shown.add(value)
            console.print(f"{label + ':':<17} {value}{extra}", soft_wrap=True, markup=False)
