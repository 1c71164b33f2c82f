"""What a scale-set task's fleet report says, written where the agent reads first.

The agent reads one executive summary per task (the lead instance's). Without a pointer there, the
fleet report, the only document that compares the instances with each other, was evidence nobody
read. The summary gains a short section with the fleet verdict and the report's path, taken from the
fleet semantic JSON (its published schema, ``fleet.schema.json``) rather than from the Markdown.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["FLEET_SECTION", "add_fleet_section", "fleet_lines"]

FLEET_SECTION = "## Fleet: every instance compared"
_MAX_OUTLIERS = 6


def fleet_lines(semantic: dict[str, Any]) -> list[str]:
    """The fleet verdict in a few bullet lines: counts, the most troubled capture, the outliers."""
    fleet = semantic.get("fleet", {})
    lines = [f"- {fleet.get('captures', 0)} instance captures, {fleet.get('analysed', 0)} analysed, "
             f"{fleet.get('failed', 0)} failed."]
    captures = semantic.get("captures") or []
    if captures and float(captures[0].get("trouble_score", 0)) > 0:
        top = captures[0]
        findings = top.get("top_findings") or []
        why = findings[0]["title"] if findings else "figures unlike the others"
        lines.append(f"- Most trouble: {top.get('id')} (score {top.get('trouble_score')}): {why}.")
    elif captures:
        lines.append("- No instance shows trouble.")
    outliers = [(name, o) for name, entry in (semantic.get("outliers") or {}).items() for o in entry.get("outliers", [])]
    if outliers:
        lines.append("- Unlike the others (median/MAD): " + "; ".join(
            f"{o.get('id')} on {name} ({o.get('value')} vs median {semantic['outliers'][name].get('median')})"
            for name, o in outliers[:_MAX_OUTLIERS]) + ".")
    elif len(captures) >= 3:
        lines.append("- No instance stands out from the others on any figure.")
    for failed in (semantic.get("failed") or [])[:3]:
        lines.append(f"- Not analysed: {failed.get('id')}: {failed.get('error')}")
    return lines


def add_fleet_section(summary: Path, fleet_dir: Path) -> str | None:
    """Append the fleet section to ``summary`` (an executive summary file); return the fleet report's
    path, or None when there is no readable fleet document or no summary to extend."""
    report = fleet_dir / "fleet_report.md"
    try:
        semantic = json.loads((fleet_dir / "fleet_semantic.json").read_text(encoding="utf-8"))
        text = summary.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    if not report.is_file() or FLEET_SECTION in text:
        return str(report) if report.is_file() else None
    section = [FLEET_SECTION, "", *fleet_lines(semantic), f"- Fleet report: {report}", ""]
    staged = summary.with_name(summary.name + ".fleet.tmp")  # a crash never leaves a torn summary
    staged.write_text(text.rstrip("\n") + "\n\n" + "\n".join(section), encoding="utf-8")
    os.replace(staged, summary)
    return str(report)
