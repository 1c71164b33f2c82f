"""Robustness of the CLI's error path: a non-capture file is refused without echoing its contents."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from netghost.errors import CaptureFormatError
from netghost.forensics import analyze_capture
from netghost.forensics.cli import _fail, main
from tests.forensics.pcapwriter import SYN, Capture

SECRET = b"SECRET-TOKEN=hunter2-do-not-print\n"


def _leaks(text: str) -> list[str]:
    """Every spelling of the file's first bytes that must never reach stderr."""
    return [s for s in ("SECR", "53454352", "52434553", "hunter2", "SECRET") if s.lower() in text.lower()]


def test_library_error_names_the_problem_not_the_bytes(tmp_path: Path) -> None:
    bad = tmp_path / "id_rsa.pcap"
    bad.write_bytes(SECRET)
    with pytest.raises(CaptureFormatError) as exc:
        analyze_capture(bad)
    msg = str(exc.value)
    assert "not a pcap/pcapng capture (unrecognised magic)" in msg
    assert _leaks(msg.replace(str(tmp_path), "")) == []


def test_cli_refuses_non_capture_with_exit_2_and_no_contents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.cap"
    bad.write_bytes(SECRET)
    rc = main([str(bad), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and "unrecognised magic" in err
    assert _leaks(err.replace(str(tmp_path), "")) == []
    assert not list(tmp_path.glob("*_semantic.json"))


def test_compare_mode_refusal_does_not_leak_either(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = Capture()
    good.tcp(0.0, "10.0.0.1", "10.0.0.2", 40000, 80, 1, 0, SYN)
    a = good.write(tmp_path / "a.pcap")
    bad = tmp_path / "b.pcap"
    bad.write_bytes(SECRET)
    rc = main([str(a), "--compare", str(bad), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert _leaks(err.replace(str(tmp_path), "")) == []


def test_cli_scrubs_a_byte_dump_from_any_lower_layer(capsys: pytest.CaptureFixture[str]) -> None:
    assert _fail("x.pcap: not a pcap or pcapng capture (magic 53454352)") == 2
    err = capsys.readouterr().err
    assert "53454352" not in err and "(unrecognised magic)" in err


def test_real_process_one_line_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "x.pcapng"
    bad.write_bytes(SECRET)
    proc = subprocess.run([sys.executable, "-m", "netghost.forensics", str(bad), "--semantic-dir", str(tmp_path),
                           "--report-dir", str(tmp_path)], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert _leaks(proc.stderr.replace(str(tmp_path), "")) == []


@pytest.mark.parametrize("where", ["header", "middle", "tail"])
def test_corrupt_gzip_stream_is_a_warning_or_a_clean_error(tmp_path: Path, where: str) -> None:
    """Damaged deflate data raises zlib.error inside gzip: it must end the data with a warning (or, before
    the capture header, a CaptureFormatError), never escape as a traceback."""
    import gzip

    cap = Capture()
    for k in range(400):
        cap.tcp(1.0 + k * 0.001, "10.0.0.1", "10.0.0.2", 40000, 80, 1 + 100 * k, 0, SYN, data=bytes(range(100)) * 3)
    raw = cap.pcap()
    data = bytearray(gzip.compress(raw, compresslevel=1))
    at = {"header": 20, "middle": len(data) // 2, "tail": len(data) - 40}[where]
    for i in range(at, at + 24):
        data[i] ^= 0x5A
    p = tmp_path / f"bad_{where}.pcap.gz"
    p.write_bytes(bytes(data))
    try:
        a = analyze_capture(p)
    except CaptureFormatError as exc:
        assert where == "header"
        assert "corrupt" in str(exc) or "not a" in str(exc)
        return
    assert a.info.compressed
    assert a.info.truncated and any("corrupt" in w for w in a.info.warnings)
    assert a.packets < 400


def test_capture_format_error_carries_the_path_and_offset(tmp_path: Path) -> None:
    """The error names the file (and where reading failed) as fields, not only in its message."""
    bad = tmp_path / "notes.txt"
    bad.write_bytes(b"this is not a capture, just some text")
    with pytest.raises(CaptureFormatError) as info:
        analyze_capture(bad)
    assert Path(info.value.path) == bad
    assert info.value.offset == 0
    missing = tmp_path / "gone.pcap"
    with pytest.raises(CaptureFormatError) as info:
        analyze_capture(missing)
    assert Path(info.value.path) == missing
