"""Engine-side shortcuts: the chunked TCP row scan, the per-stream block starts in ``tcp_order`` and the
optional columns left out of a default analysis.

Both are shortcuts for something the consumers could compute themselves (``np.flatnonzero`` over two
masks; the stream id of every segment gathered through the permutation); the tests require the same
values on real captures, on both paths where they apply.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from netghost.forensics import analyze_capture, engine
from netghost.forensics.decode import OPTIONAL_COLUMNS, AbsentColumn, ColumnStore, packets_spec
from netghost.forensics.decode._absent import ColumnNotDecodedError
from netghost.forensics.engine import ALL_COLUMNS
from netghost.forensics.report._history import _segments_of
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


@pytest.mark.parametrize("pure", [False, True])
def test_optional_columns_left_out_unless_asked(pure: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if pure:
        monkeypatch.setenv("NETGHOST_NO_COMPILED", "1")
    path = PCAPS / "chrissanders_tcp_retransmissions.pcapng"
    lean = analyze_capture(path)
    full = analyze_capture(path, columns=ALL_COLUMNS)
    for name in OPTIONAL_COLUMNS:
        col = getattr(lean.cols, name)
        assert isinstance(col, AbsentColumn)
        with pytest.raises(ColumnNotDecodedError, match=name):
            col[0]
        with pytest.raises(ColumnNotDecodedError):
            np.asarray(col)
        assert isinstance(lean.cols.take(np.arange(3)).__dict__[name], AbsentColumn)
        assert isinstance(getattr(full.cols, name), np.ndarray)
    for f in dataclasses.fields(full.cols):
        if f.name not in OPTIONAL_COLUMNS:
            assert np.array_equal(getattr(lean.cols, f.name), getattr(full.cols, f.name)), f.name
    assert np.array_equal(lean.tcp_flags, full.tcp_flags)
    # one optional column asked: only that one is decoded
    one = analyze_capture(path, columns=["tsecr"])
    assert np.array_equal(one.cols.tsecr, full.cols.tsecr)
    assert isinstance(one.cols.caplen, AbsentColumn)


def test_only_optional_columns_may_be_left_out() -> None:
    with pytest.raises(ValueError, match="may be left out"):
        ColumnStore(0, packets_spec(), frozenset({"seq"}))


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_history_slices_the_shown_streams_like_the_full_scan(path: Path) -> None:
    a = analyze_capture(path)
    n = len(a.streams)
    rng = np.random.default_rng(7)
    for streams in ([], list(range(n)), rng.integers(0, max(n, 1), size=min(n, 5)).tolist() if n else []):
        want = np.flatnonzero(np.isin(a.tcp_stream, streams))
        assert _segments_of(a, streams).tolist() == want.tolist()
