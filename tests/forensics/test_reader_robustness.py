"""Reader formats and hostile inputs: every variant decodes the same; broken files never raise tracebacks."""

from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netghost.errors import CaptureFormatError
from netghost.forensics.engine import ALL_COLUMNS
from netghost.forensics.engine import analyze_capture as _analyze_all
from netghost.forensics.read import iter_batches
from netghost.forensics.read._pcap import CaptureInfo
from tests.forensics.pcapwriter import (
    ACK,
    SYN,
    Capture,
    ether,
    ipv4_packet,
    ipv6_packet,
    tcp_segment,
    udp_datagram,
)

PCAPS = Path(__file__).resolve().parents[1] / "data" / "pcaps"

def analyze_capture(path: Any, **kw: Any) -> Any:
    """The engine's analysis with every column decoded (optional ones included): these tests compare all."""
    return _analyze_all(path, columns=ALL_COLUMNS, **kw)


def _sample() -> Capture:
    cap = Capture()
    cap.tcp(1.000001, "10.0.0.1", "10.0.0.2", 1234, 80, 100, 0, SYN, options=b"\x02\x04\x05\xb4\x03\x03\x07\x00")
    cap.tcp(1.000501, "10.0.0.2", "10.0.0.1", 80, 1234, 900, 101, SYN | ACK)
    cap.tcp(1.001001, "10.0.0.1", "10.0.0.2", 1234, 80, 101, 901, ACK, b"hello")
    cap.add(1.002, ether(ipv6_packet("2001:db8::1", "2001:db8::2", 17, udp_datagram(5000, 53, b"\x00\x01\x01\x00")), 0x86DD))
    cap.add(1.003, ether(ipv4_packet("10.0.0.1", "10.0.0.2", 6, tcp_segment(1234, 80, 106, 901, ACK)), vlans=(7, 9)))
    return cap


@pytest.mark.parametrize("kind", ["pcap", "pcap-be", "pcap-ns", "pcapng", "pcapng2", "pcap.gz", "pcapng.gz"])
def test_every_container_decodes_identically(tmp_path: Path, kind: str) -> None:
    a = analyze_capture(_sample().write(tmp_path / f"x.{kind}", kind))
    assert a.packets == 5
    assert a.cols.l3.tolist() == [4, 4, 4, 6, 4]
    assert a.cols.vlan.tolist() == [False, False, False, False, True]
    assert a.cols.paylen.tolist() == [0, 0, 5, 4, 0]
    assert a.cols.mss[0] == 1460 and a.cols.wscale[0] == 7
    assert np.allclose(a.cols.ts, [1.000001, 1.000501, 1.001001, 1.002, 1.003], atol=1e-6)
    assert len(a.streams) == 1
    assert a.decode_issues == {}


def test_wrong_magic_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "notes.pcap"
    bad.write_text("this is not a capture at all")
    with pytest.raises(CaptureFormatError, match="not a pcap or pcapng"):
        analyze_capture(bad)
    with pytest.raises(CaptureFormatError, match="no such file"):
        analyze_capture(tmp_path / "missing.pcap")
    with pytest.raises(CaptureFormatError, match="directory"):
        analyze_capture(tmp_path)
    tiny = tmp_path / "tiny.pcap"
    tiny.write_bytes(b"\xd4\xc3")
    with pytest.raises(CaptureFormatError):
        analyze_capture(tiny)


def test_truncated_capture_is_analysed_up_to_the_cut(tmp_path: Path) -> None:
    data = _sample().pcap()
    p = tmp_path / "cut.pcap"
    p.write_bytes(data[:-7])
    a = analyze_capture(p)
    assert a.packets == 4
    assert a.info.truncated
    assert "cut short" in a.info.warnings[0]


def test_header_only_capture_is_empty_not_an_error(tmp_path: Path) -> None:
    p = tmp_path / "empty.pcap"
    p.write_bytes(Capture().pcap())
    a = analyze_capture(p)
    assert a.packets == 0
    assert len(a.streams) == 0


def test_absurd_caplen_stops_with_a_warning(tmp_path: Path) -> None:
    data = bytearray(_sample().pcap(snaplen=0xFFFFFFFF))
    rec2 = 24 + 16 + len(_sample().frames[0][1])
    struct.pack_into("<I", data, rec2 + 8, 0x7FFFFFFF)
    p = tmp_path / "absurd.pcap"
    p.write_bytes(bytes(data))
    a = analyze_capture(p)
    assert a.packets == 1
    assert a.info.truncated
    assert "exceeds" in a.info.warnings[0]


def test_zero_length_record_is_counted_as_issue(tmp_path: Path) -> None:
    cap = _sample()
    cap.add(2.0, b"")
    a = analyze_capture(cap.write(tmp_path / "z.pcap"))
    assert a.packets == 6
    assert a.decode_issues == {"empty_record": 1}
    assert a.decode_issue_frames["empty_record"] == [6]


def test_garbage_frames_are_issues_not_crashes(tmp_path: Path) -> None:
    cap = _sample()
    cap.add(2.0, ether(b"\x45\x00\x00"))  # IPv4 cut inside its header
    cap.add(2.1, ether(b"\x75" + b"\x00" * 30))  # version 7
    cap.add(2.2, ether(ipv4_packet("1.1.1.1", "2.2.2.2", 6, b"\x00" * 10)))  # TCP header cut
    a = analyze_capture(cap.write(tmp_path / "g.pcap"))
    assert a.decode_issues == {"truncated_ip_header": 1, "bad_ip_version": 1, "truncated_tcp_header": 1}


def test_garbage_mid_file_pcapng(tmp_path: Path) -> None:
    data = bytearray(_sample().pcapng())
    last = len(data) - struct.unpack_from("<I", data, len(data) - 4)[0]
    struct.pack_into("<I", data, last + 4, 0x7FFFFFF0)  # the last block's length is garbage
    p = tmp_path / "g.pcapng"
    p.write_bytes(bytes(data))
    a = analyze_capture(p)
    assert a.packets == 4
    assert a.info.truncated
    assert "corrupt block" in a.info.warnings[0]


def test_chunked_reading_gives_the_same_columns(tmp_path: Path) -> None:
    path = PCAPS / "zeek_smtp.pcap"
    whole = analyze_capture(path)
    info = CaptureInfo(path=str(path))
    batches = list(iter_batches(path, info, chunk_bytes=4096))
    assert len(batches) > 5
    chunked = analyze_capture(path, chunk_bytes=4096)
    assert np.array_equal(whole.tcp_flags, chunked.tcp_flags)
    assert np.array_equal(whole.cols.seq, chunked.cols.seq)


FUZZ_FILES = ["zeek_smtp.pcap", "chrissanders_tcp_dupack.pcapng", "suricata_http-gap-simple.pcap", "zeek_nflog-http.pcap"]


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    which=st.sampled_from(FUZZ_FILES),
    edits=st.lists(st.tuples(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=255)),
                   max_size=12),
    cut=st.one_of(st.none(), st.integers(min_value=0, max_value=10**6)),
)
def test_mutated_corpus_never_raises_anything_but_capture_errors(tmp_path: Path, which: str,
                                                                 edits: list[tuple[int, int]], cut: int | None) -> None:
    data = bytearray((PCAPS / which).read_bytes())
    for pos, val in edits:
        data[pos % len(data)] = val
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    p = tmp_path / "m.bin"
    p.write_bytes(bytes(data))
    try:
        a = analyze_capture(p)
    except CaptureFormatError:
        return
    from netghost.forensics.report import build_semantic

    sem = build_semantic(a)
    assert sem["summary"]["packets"] == a.packets


def _compiled_available() -> bool:
    from netghost.forensics.decode import walkdecode_module as kernel

    return kernel() is not None


def test_compiled_and_pure_paths_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled kernels must not change a single column or flag: compare both paths on corpus files."""
    import dataclasses

    if not _compiled_available():
        pytest.skip("compiled extension not built (or NETGHOST_NO_COMPILED=1): only the pure path exists")
    for name in ("zeek_tcp_ssh-dups.pcap", "ndpi_KakaoTalk_chat.pcap", "suricata_tcp-fastopen-10-syn-data-ignore.pcap",
                 "chrissanders_tcp_dupack.pcapng", "zeek_nflog-http.pcap"):
        fast = analyze_capture(PCAPS / name)
        monkeypatch.setenv("NETGHOST_NO_COMPILED", "1")
        slow = analyze_capture(PCAPS / name)
        monkeypatch.delenv("NETGHOST_NO_COMPILED")
        for f in dataclasses.fields(fast.cols):
            a, b = getattr(fast.cols, f.name), getattr(slow.cols, f.name)
            assert a.dtype == b.dtype and np.array_equal(a, b), (name, f.name)
        assert fast.info == slow.info
        assert np.array_equal(fast.tcp_flags, slow.tcp_flags)
        assert np.array_equal(fast.tcp_stream, slow.tcp_stream)
        assert np.array_equal(fast.tcp_ack_rtt, slow.tcp_ack_rtt, equal_nan=True)
        assert fast.dns == slow.dns
        assert np.array_equal(fast.dns_msgs.row, slow.dns_msgs.row)


def test_mmap_window_path_matches_stream_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Big files take the mmap path; force it on small ones (whole, cut short, corrupt) and compare."""
    from netghost.forensics.read import _pcap as reader

    src = (PCAPS / "chrissanders_ppa1e_ftp-crack.pcap").read_bytes()
    variants = {"whole": src, "cut": src[:-100]}
    bad = bytearray(src)
    struct.pack_into("<I", bad, 24 + 8, 0x7FFFFFFF)  # first record's caplen is absurd
    variants["corrupt"] = bytes(bad)
    for label, data in variants.items():
        p = tmp_path / f"{label}.pcap"
        p.write_bytes(data)
        monkeypatch.setattr(reader, "MMAP_MIN", 10**12)
        streamed = analyze_capture(p, chunk_bytes=300_000)
        monkeypatch.setattr(reader, "MMAP_MIN", 0)
        # walked pages are released in whole huge pages (none on a file this small) or, here, in 4 KiB ones
        for align in (reader.RELEASE_ALIGN, mmap.PAGESIZE):
            monkeypatch.setattr(reader, "RELEASE_ALIGN", align)
            mapped = analyze_capture(p, chunk_bytes=300_000)
            assert mapped.packets == streamed.packets, label
            assert mapped.info.truncated == streamed.info.truncated, label
            assert np.array_equal(mapped.tcp_flags, streamed.tcp_flags), label
            assert np.array_equal(mapped.cols.ts, streamed.cols.ts), label
    assert analyze_capture(tmp_path / "whole.pcap").packets == 19730


def test_huge_page_hint_is_advisory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A kernel or file system refusing ``MADV_HUGEPAGE`` on the mapping changes nothing."""
    from netghost.forensics.read import _pcap as reader

    src = PCAPS / "chrissanders_ppa1e_ftp-crack.pcap"
    if not hasattr(mmap, "MADV_HUGEPAGE"):
        pytest.skip("no MADV_HUGEPAGE on this platform: the hint is never given")

    class Refusing:
        """Stands in for a mapping whose madvise fails (EINVAL, as without file-backed huge pages)."""

        def __init__(self) -> None:
            self.advice: list[int] = []

        def madvise(self, advice: int, *_args: int) -> None:
            self.advice.append(advice)
            raise OSError(22, "Invalid argument")

    refusing = Refusing()
    reader._advise_huge(refusing)  # type: ignore[arg-type]  # the error is swallowed
    assert refusing.advice == [mmap.MADV_HUGEPAGE]
    monkeypatch.setattr(reader, "MMAP_MIN", 0)
    baseline = analyze_capture(src, chunk_bytes=300_000)
    monkeypatch.setattr(mmap, "MADV_HUGEPAGE", -1, raising=False)  # an advice the kernel rejects
    hinted = analyze_capture(src, chunk_bytes=300_000)
    assert hinted.packets == baseline.packets == 19730
    assert np.array_equal(hinted.tcp_flags, baseline.tcp_flags)


def _both_decoders(data: bytes, tmp_path: Path) -> list[str]:
    """Fields where the compiled decoder (fused walk+decode and batch decode) differs from numpy's."""
    import dataclasses

    from netghost.forensics import decode, engine
    from netghost.forensics.capture import RawBatch
    from netghost.forensics.decode import ColumnStore, packets_spec
    from netghost.forensics.decode import walkdecode_module as kernel
    from netghost.forensics.read import iter_windows, read_all

    p = tmp_path / "d.bin"
    p.write_bytes(data)
    try:
        batches, _ = read_all(p)
    except CaptureFormatError:
        return []
    bad: list[str] = []
    refs = []
    for b in batches:
        ref, ref_pay, ref_end = decode.decode_batch(b, 1, compiled=False)
        fast, fast_pay, fast_end = decode.decode_batch(b, 1)
        refs.append(ref)
        bad += [f.name for f in dataclasses.fields(ref)
                if getattr(ref, f.name).dtype != getattr(fast, f.name).dtype
                or not np.array_equal(getattr(ref, f.name), getattr(fast, f.name))]
        if not np.array_equal(ref_pay, fast_pay) or not np.array_equal(ref_end, fast_end):
            bad.append("payoff/capend")
    # the engine's fused pass (pcap windows walked and decoded straight into the store)
    mod = kernel()
    assert mod is not None
    store = ColumnStore(len(data), packets_spec())
    scr = engine._Scratch()
    msgs = engine.DnsMessages()
    for item in iter_windows(p):
        if isinstance(item, RawBatch):
            engine.decode_into(mod, item, store, scr, 0, msgs)
        else:
            engine.walk_decode(mod, item, store, scr, msgs)
    whole = store.finish()
    ref_all = decode.Packets.concat(refs) if refs else decode.Packets.empty()
    for f in dataclasses.fields(ref_all):
        x, y = getattr(ref_all, f.name), getattr(whole, f.name)
        if f.name == "frame":
            continue  # per-batch references restart at 1
        if x.dtype != y.dtype or not np.array_equal(x, y):
            bad.append("fused:" + f.name)
    return bad


def test_compiled_decoder_equals_numpy_decoder_on_corpus(tmp_path: Path) -> None:
    if not _compiled_available():
        pytest.skip("compiled extension not built (or NETGHOST_NO_COMPILED=1)")
    for p in sorted(PCAPS.iterdir()):
        if not p.name.endswith((".json", ".md")):
            assert _both_decoders(p.read_bytes(), tmp_path) == [], p.name


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(FUZZ_FILES),
       edits=st.lists(st.tuples(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=255)),
                      min_size=1, max_size=40))
def test_compiled_decoder_equals_numpy_decoder_on_mutations(tmp_path: Path, which: str,
                                                           edits: list[tuple[int, int]]) -> None:
    if not _compiled_available():
        pytest.skip("compiled extension not built (or NETGHOST_NO_COMPILED=1)")
    data = bytearray((PCAPS / which).read_bytes())
    for pos, val in edits:
        data[24 + pos % (len(data) - 24)] = val  # keep the file header, mutate records
    assert _both_decoders(bytes(data), tmp_path) == []


def test_issue_codes_shared_by_split_modules_agree() -> None:
    from netghost.forensics import decode
    from netghost.forensics.decode import _l4 as decode_l4

    assert decode.ISSUES[decode_l4.TRUNCATED_ICMP] == "truncated_icmp_header"
    assert decode_l4.V4_MARK == decode.V4_MARK


def test_tcp_timestamps_on_every_segment_and_mss_only_on_syn(tmp_path: Path) -> None:
    ts_opt = b"\x01\x01\x08\x0a" + struct.pack("!II", 123456, 654321)
    cap = Capture()
    cap.tcp(1.0, "10.0.0.1", "10.0.0.2", 1234, 80, 100, 0, SYN, options=b"\x02\x04\x05\xb4" + ts_opt)
    cap.tcp(1.1, "10.0.0.1", "10.0.0.2", 1234, 80, 101, 1, ACK, b"x", options=b"\x02\x04\x05\xb4" + ts_opt)
    cap.tcp(1.2, "10.0.0.1", "10.0.0.2", 1234, 80, 102, 1, ACK, b"y")
    a = analyze_capture(cap.write(tmp_path / "ts.pcap"))
    assert a.cols.tsval.tolist() == [123456, 123456, -1]
    assert a.cols.tsecr.tolist() == [654321, 654321, -1]
    assert a.cols.mss.tolist() == [1460, -1, -1]  # MSS means something only on a SYN
