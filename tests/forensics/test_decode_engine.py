"""Engine-side derived arrays: the chunked TCP row scan and the per-stream block starts in ``tcp_order``.

Both are shortcuts for something the consumers could compute themselves (``np.flatnonzero`` over two
masks; the stream id of every segment gathered through the permutation); the tests require the same
values on real captures, on both paths where they apply.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from netghost.forensics import analyze_capture, engine
from netghost.forensics.tcp import compiled_tcp

PCAPS = Path(__file__).resolve().parents[1] / "data" / "pcaps"
CAPTURES = sorted(p for p in PCAPS.iterdir() if p.suffix in {".pcap", ".pcapng", ".gz"})[:12]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
@pytest.mark.parametrize("chunk", [7, 1 << 18])
def test_tcp_segment_rows_equal_the_mask_scan(path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "TCP_ROWS_CHUNK", chunk)
    a = analyze_capture(path)
    c = a.cols
    want = np.flatnonzero((c.proto == 6) & (c.tcp_flags >= 0))
    got = engine.tcp_segment_rows(c)
    assert got.dtype == np.int64
    assert got.tolist() == want.tolist()
    assert a.tcp_rows.tolist() == want.tolist()


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_stream_starts_match_the_blocks_of_tcp_order(path: Path) -> None:
    a = analyze_capture(path)
    if compiled_tcp() is None:
        assert a.tcp_stream_start is None
        return
    start = a.tcp_stream_start
    assert start is not None and a.tcp_order is not None
    assert start.shape[0] == len(a.streams)
    size = a.streams.pkts_c2s + a.streams.pkts_s2c
    assert int(size.sum()) == a.tcp_rows.shape[0]
    by_pos = a.tcp_stream[a.tcp_order]
    for s in range(len(a.streams)):
        block = by_pos[start[s] : start[s] + size[s]]
        assert block.tolist() == [s] * int(size[s])


def test_stream_starts_absent_on_the_pure_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NETGHOST_NO_COMPILED", "1")
    a = analyze_capture(CAPTURES[0])
    assert a.tcp_stream_start is None
