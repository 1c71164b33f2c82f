"""Where the outputs go: ``--out DIR`` is honoured for one capture and a comparison as for a fleet, options
that do not apply are refused with one line, and a fleet SOURCE that does not exist is an error like an
empty one (exit 2, one line naming what to give), never a report of "1 failed"."""

from __future__ import annotations

from pathlib import Path

import pytest

from netghost.forensics.cli import main

PCAPS = Path(__file__).resolve().parents[1] / "data" / "pcaps"
SMTP = PCAPS / "zeek_smtp.pcap"


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("pcap-forensics: error: ") and len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    return err


def test_out_puts_every_output_of_one_capture_in_that_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    out = tmp_path / "reports" / "smtp"
    assert main([str(SMTP), "--out", str(out), "--format", "md,json,html"]) == 0
    names = {p.name for p in out.iterdir()}
    assert names == {"zeek_smtp_semantic.json", "zeek_smtp_forensic_report.md", "zeek_smtp_executive_summary.md",
                     "zeek_smtp_forensic_report.html"}
    assert list(cwd.iterdir()) == []  # nothing left in the current folder
    assert capsys.readouterr().out.count(f"wrote {out}/") == 4


def test_out_holds_a_comparison_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = PCAPS / "chrissanders_ip_ttl_source.pcapng", PCAPS / "chrissanders_ip_ttl_dest.pcapng"
    assert main([str(a), "--compare", str(b), "--out", str(tmp_path / "cmp")]) == 0
    assert (tmp_path / "cmp" / "chrissanders_ip_ttl_source_vs_chrissanders_ip_ttl_dest_semantic.json").is_file()
    assert (tmp_path / "cmp" / "chrissanders_ip_ttl_source_vs_chrissanders_ip_ttl_dest_forensic_report.md").is_file()


@pytest.mark.parametrize(("extra", "says"), [
    (["--out", "x", "--report-dir", "y"], "not both"),
    (["--out", "x", "--semantic-dir", "y"], "not both"),
    (["--workers", "2"], "--workers only applies with --fleet"),
    (["--scheduler", "tcp://127.0.0.1:8786", "--workers", "2"], "--scheduler and --workers only apply with --fleet"),
])
def test_options_that_cannot_apply_are_refused_in_one_line(extra: list[str], says: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert main([str(SMTP), *extra]) == 2
    assert says in _one_error(capsys)
    assert list(cwd.iterdir()) == []  # nothing written


def test_fleet_refuses_the_single_capture_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--fleet", str(PCAPS), "--report-dir", str(tmp_path)]) == 2
    assert "--out DIR" in _one_error(capsys)


@pytest.mark.parametrize("source", ["no-such-folder", "no-such.pcap", "empty"])
def test_a_fleet_of_a_missing_or_empty_folder_is_an_error_with_the_next_step(
        source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    out = tmp_path / "fleet"
    assert main(["--fleet", str(tmp_path / source), "--out", str(out)]) == 2
    err = _one_error(capsys)
    assert str(tmp_path / source) in err and "give capture files, folders of captures" in err
    assert not out.exists()  # no report of "1 failed"
