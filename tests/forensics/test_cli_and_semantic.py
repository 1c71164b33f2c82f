"""CLI contract (outputs, exit codes, one-line errors) and the semantic JSON schema."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import netghost.forensics as fx
from netghost.forensics import analyze_capture, build_semantic, load_schema
from netghost.forensics.cli import main
from netghost.forensics.report import MAX_SUMMARY_LINES
from tests.forensics.pcapwriter import SYN, Capture

REPO = Path(__file__).resolve().parents[2]
PCAPS = REPO / "tests" / "data" / "pcaps"


def test_public_names_are_complete_and_sorted() -> None:
    # ruff RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical
    assert fx.__all__ == sorted(fx.__all__, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))
    for name in fx.__all__:
        assert hasattr(fx, name)


@pytest.mark.parametrize("name", sorted(p.name for p in PCAPS.iterdir() if not p.name.endswith((".json", ".md"))))
def test_semantic_validates_against_shipped_schema(name: str) -> None:
    sem = json.loads(json.dumps(build_semantic(analyze_capture(PCAPS / name))))
    jsonschema.validate(sem, load_schema())
    assert len(json.dumps(sem)) < 40_000  # compact enough for an LLM context


def test_schema_rejects_unknown_fields() -> None:
    sem = json.loads(json.dumps(build_semantic(analyze_capture(PCAPS / "zeek_smtp.pcap"))))
    sem["summary"]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(sem, load_schema())


def test_cli_writes_three_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main([str(PCAPS / "zeek_smtp.pcap"), "--semantic-dir", str(tmp_path / "s"), "--report-dir", str(tmp_path / "r")])
    assert rc == 0
    sem = json.loads((tmp_path / "s" / "zeek_smtp_semantic.json").read_text())
    assert sem["summary"]["icmp"] == {"3/4": 4}
    report = (tmp_path / "r" / "zeek_smtp_forensic_report.md").read_text()
    assert report.index("## Executive Summary") < report.index("## Findings") < report.index("## Worst flows")
    assert "## DNS" in report and "## ICMP" in report
    assert "PMTU black hole" in report
    summary = (tmp_path / "r" / "zeek_smtp_executive_summary.md").read_text()
    assert len(summary.splitlines()) <= MAX_SUMMARY_LINES
    assert "Most likely issue" in summary
    assert "wrote" in capsys.readouterr().out


def test_cli_json_only(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main([str(PCAPS / "chrissanders_tcp_dupack.pcapng"), "--format", "json", "--semantic-dir", str(out),
                 "--report-dir", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["chrissanders_tcp_dupack_semantic.json"]


def test_cli_unknown_format_fails_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(PCAPS / "zeek_smtp.pcap"), "--report-dir", str(tmp_path), "--format", "pdf"]) == 2
    err = capsys.readouterr().err
    assert "unknown --format pdf" in err
    assert len(err.strip().splitlines()) == 1


def test_compare_with_missing_second_capture_is_one_line_exit_2(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("netghost.forensics.compare._report")
    rc = main([str(PCAPS / "zeek_smtp.pcap"), "--compare", str(tmp_path / "other.pcap"), "--report-dir", str(tmp_path)])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pcap-forensics: error:") and len(err.splitlines()) == 1


def test_compare_mode_is_routed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("netghost.forensics.compare._report")
    a = PCAPS / "chrissanders_ip_ttl_source.pcapng"
    b = PCAPS / "chrissanders_ip_ttl_dest.pcapng"
    assert main([str(a), "--compare", str(b), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path)]) == 0
    assert (tmp_path / "chrissanders_ip_ttl_source_vs_chrissanders_ip_ttl_dest_semantic.json").exists()
    assert " vs " in capsys.readouterr().out


def test_narrative_without_key_leaves_report_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("netghost.forensics.report._narrative")
    plain, story = tmp_path / "plain", tmp_path / "story"
    assert main([str(PCAPS / "zeek_smtp.pcap"), "--semantic-dir", str(plain), "--report-dir", str(plain)]) == 0
    assert main([str(PCAPS / "zeek_smtp.pcap"), "--narrative", "--semantic-dir", str(story),
                 "--report-dir", str(story)]) == 0
    assert "pcap-forensics:" in capsys.readouterr().err  # the narrative notice (no key configured)
    for name in ("zeek_smtp_forensic_report.md", "zeek_smtp_executive_summary.md", "zeek_smtp_semantic.json"):
        assert (plain / name).read_text() == (story / name).read_text()


def test_single_capture_html_report(tmp_path: Path) -> None:
    pytest.importorskip("netghost.forensics.report._html")
    pytest.importorskip("matplotlib")
    assert main([str(PCAPS / "zeek_smtp.pcap"), "--format", "md,html", "--report-dir", str(tmp_path)]) == 0
    html = (tmp_path / "zeek_smtp_forensic_report.html").read_text()
    assert "<html" in html.lower() and "PMTU black hole" in html


def test_cli_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nope.pcap")]) == 2
    assert "no such file" in capsys.readouterr().err
    txt = tmp_path / "a.cap"
    txt.write_text("hello world, not a capture")
    assert main([str(txt)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pcap-forensics: error:") and len(err.strip().splitlines()) == 1


def test_empty_capture_says_no_traffic(tmp_path: Path) -> None:
    p = tmp_path / "empty.pcap"
    p.write_bytes(Capture().pcap())
    assert main([str(p), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path)]) == 0
    assert "No traffic captured" in (tmp_path / "empty_executive_summary.md").read_text()
    assert "No traffic captured" in (tmp_path / "empty_forensic_report.md").read_text()
    jsonschema.validate(json.loads((tmp_path / "empty_semantic.json").read_text()), load_schema())


def test_timestamps_past_the_calendar_still_give_a_report(tmp_path: Path) -> None:
    """pcapng holds 64-bit timestamps: a corrupt one can lie past year 9999, which datetime refuses."""
    cap = Capture()
    far = 3.0e11  # about year 11476
    cap.tcp(far, "10.0.0.1", "10.0.0.2", 40000, 6379, 1000, 0, SYN)
    cap.tcp(far + 1.0, "10.0.0.1", "10.0.0.2", 40000, 6379, 1000, 0, SYN)
    p = cap.write(tmp_path / "far.pcapng", "pcapng")
    assert main([str(p), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path)]) == 0
    report = (tmp_path / "far_forensic_report.md").read_text()
    assert f"{far!r} s since the epoch (not a calendar date)" in report
    assert json.loads((tmp_path / "far_semantic.json").read_text())["summary"]["packets"] == 2


def test_truncated_capture_warns_and_succeeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cap = Capture()
    for k in range(4):
        cap.tcp(float(k), "10.0.0.1", "10.0.0.2", 1000 + k, 80, 1, 0, SYN)
    p = tmp_path / "cut.pcap"
    p.write_bytes(cap.pcap()[:-10])
    assert main([str(p), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path)]) == 0
    assert "warning: capture cut short" in capsys.readouterr().err
    sem = json.loads((tmp_path / "cut_semantic.json").read_text())
    assert sem["capture"]["truncated"] and sem["summary"]["packets"] == 3


def test_shim_and_module_entry_points(tmp_path: Path) -> None:
    for argv in ([sys.executable, str(REPO / "pcap_forensics.py")], [sys.executable, "-m", "netghost.forensics"]):
        done = subprocess.run([*argv, str(PCAPS / "chrissanders_tcp_refuseconnection.pcapng"), "--semantic-dir",
                               str(tmp_path), "--report-dir", str(tmp_path)], capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 0, done.stderr
        assert "nothing listening" in done.stdout


class _TtyStringIO(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_goes_to_stderr_only_on_a_tty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from netghost.forensics import cli

    monkeypatch.setattr(cli, "PROGRESS_MIN_BYTES", 0)
    fake_err = _TtyStringIO()
    monkeypatch.setattr(sys, "stderr", fake_err)
    assert main([str(PCAPS / "zeek_smtp.pcap"), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "analysing" not in out  # stdout stays clean for the seeds' parser
    assert "zeek_smtp.pcap: 125 packets" in out


def test_unexpected_errors_become_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from netghost.forensics import cli

    def boom(_path: Path) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(cli, "_analyze", boom)
    assert main([str(PCAPS / "zeek_smtp.pcap"), "--report-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"pcap-forensics: error: internal error analysing {PCAPS / 'zeek_smtp.pcap'}: RuntimeError: simulated bug"


def test_report_separates_syn_retries_from_the_data_retransmission_rate(tmp_path: Path) -> None:
    cap = Capture()
    for dt in (0.0, 1.0, 3.0):
        cap.tcp(dt, "10.0.1.5", "10.0.2.4", 40000, 6379, 1, 0, SYN)
    sem = build_semantic(analyze_capture(cap.write(tmp_path / "s.pcap")))
    row = next(line for line in fx.render_report(sem).splitlines() if line.startswith("| tcp/0 "))
    assert "| 2 (0.0%) |" in row
    assert sem["findings"][0]["kind"] == "syn_no_answer"
