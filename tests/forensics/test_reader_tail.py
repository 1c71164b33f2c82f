"""Regression: the last record of a big (mmap-read) pcap must decode like any other record.

The mmap reader hands the decoder views of the file; the decoder clips every read to ``len - 9`` so
garbage can never index out of bounds. A view of the file's final window has no padding after it, so a
TCP header lying in the file's last 9 bytes was read at clipped positions and reported as
``bad_tcp_header_length``. The final window is now copied with zero padding, like the stream reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from netghost.forensics.decode import walkdecode_module as kernel
from netghost.forensics.engine import ALL_COLUMNS
from netghost.forensics.engine import analyze_capture as _analyze_all
from netghost.forensics.read import _pcap as reader
from tests.forensics.pcapwriter import ACK, SYN, Capture


def analyze_capture(path: Any, **kw: Any) -> Any:
    """The engine's analysis with every column decoded (optional ones included): these tests compare all."""
    return _analyze_all(path, columns=ALL_COLUMNS, **kw)


def _capture(tail_flags: int) -> Capture:
    cap = Capture()
    t = 1_700_000_000.0
    cap.tcp(t, "10.0.0.1", "10.0.0.2", 40000, 80, 1000, 0, SYN)
    cap.tcp(t + 0.001, "10.0.0.2", "10.0.0.1", 80, 40000, 5000, 1001, SYN | ACK)
    for k in range(50):
        cap.tcp(t + 0.002 + k * 1e-4, "10.0.0.1", "10.0.0.2", 40000, 80, 1001 + 10 * k, 5001, ACK, data=b"x" * 10)
    # last frame: a bare 20-byte TCP header (ack 0) is the file's last 20 bytes; its data-offset byte
    # sits 8 bytes before the end of the file
    cap.tcp(t + 0.01, "10.0.0.1", "10.0.0.2", 40001, 80, 77, 0, tail_flags)
    return cap


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("tail_flags", [SYN, ACK])
def test_last_tcp_header_in_file_tail(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, compiled: bool,
                                      tail_flags: int) -> None:
    if compiled and kernel() is None:
        pytest.skip("compiled extension not built (or NETGHOST_NO_COMPILED=1): the fused decoder is not used")
    if not compiled:
        monkeypatch.setenv("NETGHOST_NO_COMPILED", "1")
    p = _capture(tail_flags).write(tmp_path / "tail.pcap")
    monkeypatch.setattr(reader, "MMAP_MIN", 10**12)
    streamed = analyze_capture(p, chunk_bytes=1_000)
    monkeypatch.setattr(reader, "MMAP_MIN", 0)
    for chunk in (1_000, 300, 10**6):  # several windows, and the whole file as one (final) window
        mapped = analyze_capture(p, chunk_bytes=chunk)
        assert mapped.packets == streamed.packets == 53
        assert mapped.decode_issues == {}, (chunk, mapped.decode_issues)
        last = mapped.cols.take(np.array([52]))
        assert int(last.tcp_hlen[0]) == 20
        assert int(last.tcp_flags[0]) == tail_flags
        assert int(last.seq[0]) == 77 and int(last.ack[0]) == 0
        assert int(last.sport[0]) == 40001 and int(last.dport[0]) == 80
        for name in ("tcp_flags", "seq", "ack", "tcp_hlen", "paylen", "issue", "sport", "dport"):
            assert np.array_equal(getattr(mapped.cols, name), getattr(streamed.cols, name)), (chunk, name)
        assert np.array_equal(mapped.tcp_flags, streamed.tcp_flags)


@pytest.mark.parametrize("compiled", [False, True])
def test_big_mmap_file_tail_window(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, compiled: bool) -> None:
    """A file larger than one record limit: the mmap reader walks all but the last PAD bytes as views and
    copies only the rest (with zero padding); the last records decode like the stream reader's."""
    if compiled and kernel() is None:
        pytest.skip("compiled extension not built")
    if not compiled:
        monkeypatch.setenv("NETGHOST_NO_COMPILED", "1")
    cap = _capture(ACK)
    t = 1_700_000_100.0
    for k in range(3000):  # ~0.5 MB before the tail frame
        cap.tcp(t + k * 1e-4, "10.0.0.3", "10.0.0.4", 40002, 443, 1 + 100 * k, 1, ACK, data=b"y" * 100)
    cap.tcp(t + 1, "10.0.0.1", "10.0.0.2", 40001, 80, 78, 0, SYN)
    p = cap.write(tmp_path / "big_tail.pcap")
    monkeypatch.setattr(reader, "MMAP_MIN", 10**12)
    streamed = analyze_capture(p, chunk_bytes=300_000)
    monkeypatch.setattr(reader, "MMAP_MIN", 0)
    for chunk in (300_000, 10**7):
        mapped = analyze_capture(p, chunk_bytes=chunk)
        assert mapped.packets == streamed.packets == 3054
        assert mapped.decode_issues == {}
        assert int(mapped.cols.seq[-1]) == 78 and int(mapped.cols.tcp_flags[-1]) == SYN
        for name in ("tcp_flags", "seq", "ack", "tcp_hlen", "paylen", "issue", "ts", "pay_hash"):
            assert np.array_equal(getattr(mapped.cols, name), getattr(streamed.cols, name)), (chunk, name)
