"""The fleet section the orchestrator adds to a scale-set task's lead executive summary."""

from __future__ import annotations

import json
from pathlib import Path

from netghost.orchestrator._fleet_summary import FLEET_SECTION, add_fleet_section, fleet_lines

DOC = {
    "fleet": {"captures": 4, "analysed": 3, "failed": 1, "packets": 9000},
    "captures": [
        {"id": "vmss_2", "trouble_score": 7.5, "top_findings": [{"severity": "high", "kind": "rst", "title": "RST storm from 10.1.0.6"}]},
        {"id": "vmss_0", "trouble_score": 0, "top_findings": []},
        {"id": "vmss_1", "trouble_score": 0, "top_findings": []},
    ],
    "outliers": {"rst_packets": {"median": 0, "mad": 0, "captures": 3, "outliers": [{"id": "vmss_2", "value": 412, "z": 99}]}},
    "failed": [{"id": "vmss_3", "source": "x", "error": "not a capture file"}],
}  # fmt: skip


def test_the_lines_name_the_troubled_instance_its_outlier_figure_and_the_failure() -> None:
    lines = fleet_lines(DOC)
    assert lines[0] == "- 4 instance captures, 3 analysed, 1 failed."
    assert "Most trouble: vmss_2 (score 7.5): RST storm from 10.1.0.6." in lines[1]
    assert "vmss_2 on rst_packets (412 vs median 0)" in lines[2]
    assert lines[3] == "- Not analysed: vmss_3: not a capture file"


def test_a_quiet_fleet_says_so() -> None:
    quiet = {"fleet": {"captures": 3, "analysed": 3, "failed": 0},
             "captures": [{"id": f"v{i}", "trouble_score": 0} for i in range(3)], "outliers": {}, "failed": []}
    assert fleet_lines(quiet)[1:] == ["- No instance shows trouble.", "- No instance stands out from the others on any figure."]


def _fleet_dir(tmp_path: Path) -> Path:
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "fleet_semantic.json").write_text(json.dumps(DOC), encoding="utf-8")
    (fleet / "fleet_report.md").write_text("# Fleet forensic report\n", encoding="utf-8")
    return fleet


def test_the_section_is_appended_once_and_names_the_report(tmp_path: Path) -> None:
    fleet = _fleet_dir(tmp_path)
    summary = tmp_path / "t_0_executive_summary.md"
    summary.write_text("# Executive summary\n\n- one finding\n", encoding="utf-8")
    assert add_fleet_section(summary, fleet) == str(fleet / "fleet_report.md")
    assert add_fleet_section(summary, fleet) == str(fleet / "fleet_report.md")  # a resumed task: not twice
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# Executive summary\n\n- one finding\n\n" + FLEET_SECTION)
    assert text.count(FLEET_SECTION) == 1 and f"- Fleet report: {fleet / 'fleet_report.md'}" in text
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == [summary.name]  # no staging file left


def test_no_fleet_document_leaves_the_summary_alone(tmp_path: Path) -> None:
    summary = tmp_path / "s.md"
    summary.write_text("# S\n", encoding="utf-8")
    assert add_fleet_section(summary, tmp_path / "missing") is None
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "fleet_semantic.json").write_text("{torn", encoding="utf-8")
    assert add_fleet_section(summary, tmp_path / "bad") is None
    assert summary.read_text(encoding="utf-8") == "# S\n"
