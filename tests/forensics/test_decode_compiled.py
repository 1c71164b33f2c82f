"""The compiled reader/decoder (``_walkdecode.pyx``) against the pure path, on hand-made and mutated captures.

The pure path (struct walks + the numpy decoder) is the reference. Each test runs the same input through
both (``NETGHOST_NO_COMPILED=1`` selects the pure one) and requires identical batches, warnings and
columns. Tests needing the extension skip when it is not built.
"""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netghost.errors import CaptureFormatError
from netghost.forensics.capture import PAD, CaptureInfo, RawBatch
from netghost.forensics.decode import walkdecode_module as kernel
from netghost.forensics.engine import ALL_COLUMNS
from netghost.forensics.engine import analyze_capture as _analyze_all
from netghost.forensics.read import iter_batches
from tests.forensics.pcapwriter import ACK, SYN, ether, ipv4_packet, tcp_segment, udp_datagram

PCAPS = Path(__file__).resolve().parents[1] / "data" / "pcaps"
needs_compiled = pytest.mark.skipif(kernel() is None, reason="compiled extension not built")

def analyze_capture(path: Any, **kw: Any) -> Any:
    """The engine's analysis with every column decoded (optional ones included): these tests compare all."""
    return _analyze_all(path, columns=ALL_COLUMNS, **kw)


def _reader(path: Path, pure: bool, monkeypatch: pytest.MonkeyPatch, chunk: int = 1 << 20) -> Any:
    """Everything the reader yields (batch arrays + buffer bytes) and its facts, on one path."""
    if pure:
        monkeypatch.setenv("NETGHOST_NO_COMPILED", "1")
    try:
        info = CaptureInfo(path=str(path))
        try:
            out: list[Any] = [
                (b.off.tolist(), b.caplen.tolist(), b.wirelen.tolist(), b.ts.tolist(), b.linktype.tolist(),
                 b.off.dtype.str, b.ts.dtype.str, b.linktype.dtype.str, _used_bytes(b))
                for b in iter_batches(path, info, chunk_bytes=chunk)
            ]
        except CaptureFormatError as exc:
            return ("error", str(exc))
        return out, info
    finally:
        monkeypatch.delenv("NETGHOST_NO_COMPILED", raising=False)


def _used_bytes(b: RawBatch) -> bytes:
    """The buffer up to the last record's end plus the zero padding (past that a chunk buffer is scratch)."""
    return bytes(b.buf[: int((b.off + b.caplen).max()) + PAD]) if len(b) else b""


def _columns_equal(a: Any, b: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(a.cols)
            if getattr(a.cols, f.name).dtype != getattr(b.cols, f.name).dtype
            or not np.array_equal(getattr(a.cols, f.name), getattr(b.cols, f.name))]


def _block(btype: int, body: bytes, e: str = "<") -> bytes:
    body += b"\x00" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack(e + "II", btype, n) + body + struct.pack(e + "I", n)


def _frame(k: int) -> bytes:
    if k % 2:
        return ether(ipv4_packet("10.0.0.1", "10.0.0.2", 17, udp_datagram(5000 + k, 53, b"\x12\x34\x01\x00" + b"\x00" * 8)))
    return ether(ipv4_packet("10.0.0.1", "10.0.0.2", 6, tcp_segment(40000, 80, 1000 + k, 1, SYN if k == 0 else ACK)))


def _tricky_pcapng() -> bytes:
    """Two sections (little then big endian), SPB/PB/EPB, if_tsresol 2^-10 and if_tsoffset, bad blocks."""
    le, be = "<", ">"
    out = [_block(0x0A0D0D0A, struct.pack(le + "IHHq", 0x1A2B3C4D, 1, 0, -1), le)]
    out.append(_block(3, struct.pack(le + "I", len(_frame(9))) + _frame(9), le))  # SPB before any IDB: skipped
    out.append(_block(1, struct.pack(le + "HHI", 1, 0, 65535) + b"\x00" * 4, le))  # iface 0: Ethernet, µs
    tsres = struct.pack(le + "HHB3x", 9, 1, 0x8A) + struct.pack(le + "HHq", 14, 8, 1_600_000_000)
    out.append(_block(1, struct.pack(le + "HHI", 1, 0, 65535) + tsres + b"\x00" * 4, le))  # iface 1: 2^-10 s + offset
    for k in range(6):
        fr = _frame(k)
        iface = k % 2
        units = 1_000_000 * 5 + k if iface == 0 else 1024 * 7 + k
        out.append(_block(6, struct.pack(le + "IIIII", iface, units >> 32, units & 0xFFFFFFFF, len(fr), len(fr)) + fr, le))
    out.append(_block(3, struct.pack(le + "I", len(_frame(6))) + _frame(6), le))  # SPB: previous packet's time
    fr = _frame(7)
    out.append(_block(2, struct.pack(le + "HHIIII", 1, 0, 0, 2048, len(fr), len(fr)) + fr, le))  # obsolete PB
    out.append(_block(6, struct.pack(le + "IIIII", 5, 0, 1, len(fr), len(fr)) + fr, le))  # no interface 5: skipped
    out.append(_block(6, struct.pack(le + "IIIII", 0, 0, 1, 4000, 4000) + fr, le))  # data overruns its block
    out.append(_block(0xBAD, b"custom block", le))  # unknown type: ignored
    out.append(_block(0x0A0D0D0A, struct.pack(be + "IHHq", 0x1A2B3C4D, 1, 0, -1), be))  # big-endian section
    out.append(_block(1, struct.pack(be + "HHI", 101, 0, 65535) + b"\x00" * 4, be))  # raw IP
    raw = ipv4_packet("10.0.0.3", "10.0.0.4", 6, tcp_segment(1, 2, 3, 4, ACK))
    out.append(_block(6, struct.pack(be + "IIIII", 0, 0, 3_000_000, len(raw), len(raw)) + raw, be))
    out.append(_block(3, struct.pack(be + "I", len(raw) + 50) + raw, be))  # SPB claiming more than it holds
    return b"".join(out)


@needs_compiled
def test_tricky_pcapng_same_on_both_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "tricky.pcapng"
    p.write_bytes(_tricky_pcapng())
    fast, fast_info = _reader(p, False, monkeypatch)
    slow, slow_info = _reader(p, True, monkeypatch)
    assert fast == slow
    assert fast_info == slow_info
    _off, caps, wires, ts, lts, *_ = fast[0]
    assert len(caps) == 10
    assert lts == [1] * 8 + [101, 101]
    assert ts[0] == pytest.approx(5.0)
    assert ts[1] == pytest.approx(7 + 1 / 1024 + 1_600_000_000)  # 2^-10 resolution plus if_tsoffset
    assert ts[6] == ts[5]  # SPB takes the previous packet's time
    assert ts[7] == pytest.approx(2048 / 1024 + 1_600_000_000)
    assert ts[8] == pytest.approx(3.0)
    assert caps[9] == len(ipv4_packet("10.0.0.3", "10.0.0.4", 6, tcp_segment(1, 2, 3, 4, ACK)))
    assert wires[9] == caps[9] + 50
    warn = "\n".join(fast_info.warnings)
    assert warn.count("skipped malformed pcapng block") == 3
    a = analyze_capture(p)
    monkeypatch.setenv("NETGHOST_NO_COMPILED", "1")
    b = analyze_capture(p)
    assert _columns_equal(a, b) == []
    assert a.packets == 10


@needs_compiled
@pytest.mark.parametrize("chunk", [64, 300, 1 << 20])
def test_pcapng_chunks_same_on_both_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    p = tmp_path / "t.pcapng"
    p.write_bytes(_tricky_pcapng())
    assert _reader(p, False, monkeypatch, chunk) == _reader(p, True, monkeypatch, chunk)


@needs_compiled
def test_every_corpus_capture_reads_and_decodes_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    for p in sorted(PCAPS.iterdir()):
        if p.name.endswith((".json", ".md")):
            continue
        assert _reader(p, False, monkeypatch) == _reader(p, True, monkeypatch), p.name
        a = analyze_capture(p)
        monkeypatch.setenv("NETGHOST_NO_COMPILED", "1")
        b = analyze_capture(p)
        monkeypatch.delenv("NETGHOST_NO_COMPILED")
        assert _columns_equal(a, b) == [], p.name
        assert a.info == b.info, p.name
        assert np.array_equal(a.dns_msgs.row, b.dns_msgs.row) and a.dns == b.dns, p.name


@needs_compiled
@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["tricky", "chrissanders_tcp_dupack.pcapng", "zeek_smtp.pcap", "zeek_nflog-http.pcap"]),
       edits=st.lists(st.tuples(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=255)),
                      min_size=1, max_size=30),
       cut=st.one_of(st.none(), st.integers(min_value=0, max_value=10**6)))
def test_mutated_captures_read_and_decode_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str,
                                                   edits: list[tuple[int, int]], cut: int | None) -> None:
    data = bytearray(_tricky_pcapng() if which == "tricky" else (PCAPS / which).read_bytes())
    for pos, val in edits:
        data[pos % len(data)] = val
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    p = tmp_path / "m.bin"
    p.write_bytes(bytes(data))
    fast = _reader(p, False, monkeypatch, 4096)
    assert fast == _reader(p, True, monkeypatch, 4096)
    if fast[0] == "error":
        return
    a = analyze_capture(p, chunk_bytes=4096)
    monkeypatch.setenv("NETGHOST_NO_COMPILED", "1")
    b = analyze_capture(p, chunk_bytes=4096)
    assert _columns_equal(a, b) == []
    assert a.info == b.info


@needs_compiled
@pytest.mark.parametrize("name", ["ndpi_bad-dns-traffic.pcap", "ndpi_1kxun.pcap", "zeek_pcapng-multi-interface.pcapng"])
def test_store_growth_mid_window_keeps_rows_and_dns(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A tiny first capacity makes the fused pass run out of room inside windows again and again: the
    store grows by copying, the walk resumes where it stopped and DNS candidates keep accumulating."""
    from netghost.forensics.decode import _columns as decode_jit

    ref = analyze_capture(PCAPS / name)
    monkeypatch.setattr(decode_jit, "MIN_CAP", 7)
    for chunk in (5_000, 1 << 20):
        got = analyze_capture(PCAPS / name, chunk_bytes=chunk)
        assert _columns_equal(ref, got) == [], chunk
        assert np.array_equal(ref.dns_msgs.row, got.dns_msgs.row) and ref.dns == got.dns, chunk
        assert np.array_equal(ref.tcp_flags, got.tcp_flags)


@needs_compiled
@pytest.mark.parametrize("kind", ["pcap", "pcap-be", "pcap-ns"])
def test_mmap_windows_in_every_byte_order_and_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         kind: str) -> None:
    """Big-endian and nanosecond pcaps through the mmap windows equal the stream reader and the pure path."""
    from netghost.forensics.read import _pcap as reader
    from tests.forensics.pcapwriter import Capture

    cap = Capture()
    for k in range(2500):
        cap.add(1_700_000_000 + k * 0.000123, _frame(k))
    p = cap.write(tmp_path / f"x.{kind}", kind)
    monkeypatch.setattr(reader, "MMAP_MIN", 10**12)
    streamed = analyze_capture(p, chunk_bytes=300_000)
    monkeypatch.setattr(reader, "MMAP_MIN", 0)
    mapped = analyze_capture(p, chunk_bytes=300_000)
    monkeypatch.setenv("NETGHOST_NO_COMPILED", "1")
    pure = analyze_capture(p, chunk_bytes=300_000)
    assert mapped.packets == streamed.packets == pure.packets == 2500
    assert _columns_equal(mapped, streamed) == [] and _columns_equal(mapped, pure) == []
    assert mapped.info == pure.info
    assert mapped.cols.ts[1] == pytest.approx(1_700_000_000.000123, abs=1e-6)
    assert len(mapped.dns_msgs.row) == 1250
