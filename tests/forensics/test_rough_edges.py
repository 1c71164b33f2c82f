"""Rough edges a new user hit: a cut .gz, x.pcap next to x.pcapng, the DNS line with no responses,
non-ASCII DNS names, errors naming the folder, --max-memory 0, a third host in --compare, torn outputs
from concurrent runs, and one warning per undefined-interface block."""

from __future__ import annotations

import gzip
import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from netghost.forensics import analyze_capture
from netghost.forensics.cli import main
from netghost.forensics.compare import compare_captures
from tests.forensics.pcapwriter import ACK, PSH, SYN, Capture, ether, ipv4_packet, udp_datagram

REPO = Path(__file__).resolve().parents[2]
PCAPS = REPO / "tests" / "data" / "pcaps"


def _whole_records(pcap: bytes) -> int:
    n, pos = 0, 24
    while pos + 16 <= len(pcap):
        incl = struct.unpack_from("<I", pcap, pos + 8)[0]
        if pos + 16 + incl > len(pcap):
            break
        n, pos = n + 1, pos + 16 + incl
    return n


def test_a_cut_gzip_capture_is_analysed_as_far_as_it_decompresses(tmp_path: Path) -> None:
    raw = (PCAPS / "zeek_smtp.pcap").read_bytes()
    cut = gzip.compress(raw)[:5000]
    p = tmp_path / "cut.pcap.gz"
    p.write_bytes(cut)
    expected = _whole_records(zlib.decompressobj(wbits=31).decompress(cut))
    assert expected > 20
    a = analyze_capture(p)
    assert a.packets == expected and a.info.truncated
    assert any("compressed stream ends early" in w for w in a.info.warnings)
    # the whole file still reads whole, and two gzip members read one after the other
    p.write_bytes(gzip.compress(raw))
    assert analyze_capture(p).packets == analyze_capture(PCAPS / "zeek_smtp.pcap").packets


def test_x_pcap_and_x_pcapng_in_one_folder_keep_both_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    c = Capture()
    c.tcp(1.0, "10.0.0.1", "10.0.0.2", 40000, 80, 100, 0, SYN)
    c.write(tmp_path / "x.pcap")
    c.tcp(1.1, "10.0.0.1", "10.0.0.2", 40001, 80, 200, 0, SYN)
    c.write(tmp_path / "x.pcapng", "pcapng")
    out = tmp_path / "out"
    for name in ("x.pcap", "x.pcapng", "x.pcap"):  # re-running the first keeps its own name
        assert main([str(tmp_path / name), "--semantic-dir", str(out), "--report-dir", str(out)]) == 0
    files = json.loads((out / "x_semantic.json").read_text())["capture"]["file"], \
        json.loads((out / "x_pcapng_semantic.json").read_text())["capture"]["file"]
    assert files == ("x.pcap", "x.pcapng")
    assert (out / "x_pcapng_forensic_report.md").read_text().count("x.pcapng") >= 1
    assert "outputs named x_pcapng_*" in capsys.readouterr().err
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left behind


def _dns_query(name_labels: list[bytes], qid: int) -> bytes:
    q = b"".join(bytes([len(lab)]) + lab for lab in name_labels) + b"\x00" + struct.pack("!HH", 1, 1)
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + q


def test_dns_without_responses_reads_plainly_and_non_ascii_names_show_as_text(tmp_path: Path) -> None:
    c = Capture()
    for i in range(2):
        msg = _dns_query(["café".encode(), b"example"], 0x1000 + i)
        c.add(1.0 + i, ether(ipv4_packet("10.0.0.4", "10.0.0.53", 17, udp_datagram(5353 + i, 53, msg))))
    cap = c.write(tmp_path / "dns.pcap")
    assert main([str(cap), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path)]) == 0
    report = (tmp_path / "dns_forensic_report.md").read_text(encoding="utf-8")
    assert "- DNS: 2 queries, no responses, 2 unanswered." in report
    assert "responses no responses" not in report
    sem = json.loads((tmp_path / "dns_semantic.json").read_text(encoding="utf-8"))
    assert [u["qname"] for u in sem["dns"]["unanswered"]] == ["café.example"]
    assert "\\x" not in report


def test_output_errors_name_the_folder_and_max_memory_zero_is_refused(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the report folder should be")
    rc = main([str(PCAPS / "zeek_smtp.pcap"), "--report-dir", str(blocker), "--semantic-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and str(blocker) in err
    with pytest.raises(SystemExit) as exc:
        main([str(PCAPS / "zeek_smtp.pcap"), "--max-memory", "0"])
    assert exc.value.code == 2 and "must be more than 0" in capsys.readouterr().err


def _conn(c: Capture, t: float, cli: tuple[str, int], srv: tuple[str, int], *, answered: bool = True,
          shift: float = 0.0) -> None:
    """One HTTP-like connection; ``shift`` is added to client → server packets and taken from server →
    client ones (the other point, nearer the server, sees the client's packets later, the server's earlier)."""
    (ca, cp), (sa, sp) = cli, srv
    c.tcp(t + shift, ca, sa, cp, sp, 1000, 0, SYN)
    if not answered:
        c.tcp(t + 1 + shift, ca, sa, cp, sp, 1000, 0, SYN)
        return
    c.tcp(t + 0.010 - shift, sa, ca, sp, cp, 5000, 1001, SYN | ACK)
    c.tcp(t + 0.020 + shift, ca, sa, cp, sp, 1001, 5001, ACK)
    c.tcp(t + 0.030 + shift, ca, sa, cp, sp, 1001, 5001, PSH | ACK, data=b"GET / HTTP/1.1\r\n\r\n")
    c.tcp(t + 0.040 - shift, sa, ca, sp, cp, 5001, 1019, ACK)


def test_compare_counts_no_loss_for_a_third_host_seen_at_one_point_only(tmp_path: Path) -> None:
    """Point A on the client, point B on instance 1 of a two-instance tier: the client's traffic to
    instance 2 never passes B, so it is not lost between the points; a connection to instance 1 whose
    SYNs never reach B is."""
    client, inst1, inst2 = ("10.0.0.4", 40000), ("10.0.1.5", 80), ("10.0.1.6", 80)
    a, b = Capture(), Capture()
    for k in range(3):  # served by instance 1: seen at both points, 1 ms apart
        _conn(a, 10.0 + k, (client[0], client[1] + k), inst1)
        _conn(b, 10.0 + k, (client[0], client[1] + k), inst1, shift=0.001)
    for k in range(4):  # served by instance 2: at A only
        _conn(a, 20.0 + k, (client[0], 41000 + k), inst2)
    _conn(a, 30.0, (client[0], 42000), inst1, answered=False)  # dropped between the points
    b.tcp(31.0, inst1[0], client[0], 80, 43000, 1, 0, ACK)  # keep B's capture window open past A's last SYN
    comp = compare_captures(a.write(tmp_path / "a.pcap"), b.write(tmp_path / "b.pcap"))
    assert comp["lost"]["a_to_b"]["count"] == 2  # the two SYNs to instance 1, not instance 2's 20 packets
    assert {e["to"] for e in comp["lost"]["a_to_b"]["by_flow"]} == {"10.0.1.5:80"}
    assert comp["injected"]["at_a"]["count"] == 0
    assert comp["unmatched"]["a"]["count"] == 20


def test_a_write_that_fails_midway_leaves_the_previous_document_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Outputs are written to a temporary file and renamed: a run that dies before the rename (disk
    full, killed, a concurrent run) never leaves a torn semantic JSON behind."""
    args = [str(PCAPS / "chrissanders_synscan.pcapng"), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path)]
    assert main(args) == 0
    before = (tmp_path / "chrissanders_synscan_semantic.json").read_bytes()

    def full_disk(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device", dst)

    monkeypatch.setattr("netghost.forensics.outputs.os.replace", full_disk)
    assert main(args) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert (tmp_path / "chrissanders_synscan_semantic.json").read_bytes() == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def _pcapng_with_undefined_interface(blocks: int) -> bytes:
    def block(btype: int, body: bytes) -> bytes:
        body += b"\x00" * (-len(body) % 4)
        return struct.pack("<II", btype, 12 + len(body)) + body + struct.pack("<I", 12 + len(body))

    fr = ether(ipv4_packet("10.0.0.1", "10.0.0.2", 17, udp_datagram(1, 2, b"x")))
    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)), block(1, struct.pack("<HHI", 1, 0, 65535))]
    out.append(block(6, struct.pack("<IIIII", 0, 0, 1, len(fr), len(fr)) + fr))
    out += [block(6, struct.pack("<IIIII", 3, 0, 2 + i, len(fr), len(fr)) + fr) for i in range(blocks)]
    return b"".join(out)


def test_repeated_undefined_interface_blocks_give_one_counted_warning(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "ifaces.pcapng"
    p.write_bytes(_pcapng_with_undefined_interface(2000))
    a = analyze_capture(p)
    assert a.packets == 1
    [w] = [w for w in a.info.warnings if "malformed pcapng" in w]
    assert w.startswith("skipped 2,000 malformed pcapng blocks of type 6 (it names interface 3, which no interface "
                        "block defined), the first at byte ")
    assert main([str(p), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().err.count("malformed pcapng") == 1
    p.write_bytes(_pcapng_with_undefined_interface(1))
    [w] = [w for w in analyze_capture(p).info.warnings if "malformed pcapng" in w]
    assert w.startswith("skipped malformed pcapng block type 6 at byte ")


def test_a_big_capture_is_mapped_a_window_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mapped part of a capture counts in RSS and in the address space (a worker's memory limit):
    at most two windows are mapped at once, never the whole file, and the results are the same."""
    import gc
    import mmap as mmap_mod
    import weakref

    from netghost.forensics.read import _pcap as reader

    live: dict[int, int] = {}
    peak = [0]

    class Tracked(mmap_mod.mmap):
        def __init__(self, fileno: int, length: int, *args: object, **kw: object) -> None:
            st = os.fstat(fileno)
            if st.st_ino != cap.stat().st_ino:  # another mapping (a spilled array): not the capture's
                return
            live[id(self)] = length or st.st_size  # 0 maps the whole file
            peak[0] = max(peak[0], sum(live.values()))
            weakref.finalize(self, live.pop, id(self), None)

    cap = PCAPS / "chrissanders_ppa1e_ftp-crack.pcap"
    monkeypatch.setattr(reader, "MMAP_MIN", 10**12)
    streamed = analyze_capture(cap, chunk_bytes=300_000)
    monkeypatch.setattr(reader, "MMAP_MIN", 0)
    monkeypatch.setattr(reader, "RELEASE_ALIGN", mmap_mod.PAGESIZE)
    monkeypatch.setattr(reader.mmap, "mmap", Tracked)
    gc.collect()
    mapped = analyze_capture(cap, chunk_bytes=300_000)
    size = cap.stat().st_size
    assert 0 < peak[0] <= 2 * (300_000 + 128 + mmap_mod.PAGESIZE) < size
    assert mapped.packets == streamed.packets == 19730
    assert np.array_equal(mapped.tcp_flags, streamed.tcp_flags)


def _resident_kb(addr: int) -> int:
    """Rss of the mapping holding ``addr``, from /proc/self/smaps."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(" ", 1)[0]
        if "-" in head and ":" not in head:
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= addr < hi
        elif inside and line.startswith("Rss:"):
            return int(line.split()[1])
    raise AssertionError("mapping not found")


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux /proc")
def test_spilled_pages_leave_the_resident_set_and_keep_their_contents() -> None:
    """A spilled array's written pages would count in RSS (a worker's memory monitor) until released."""
    from netghost.forensics import spill

    b = spill.MemoryBudget(0)
    arr = b.alloc(8 << 20, np.uint8)
    arr[:] = 7
    assert _resident_kb(arr.ctypes.data) >= 8 << 10
    b.release()
    assert _resident_kb(arr.ctypes.data) == 0
    assert int(arr[::4096].sum()) == 7 * (8 << 20) // 4096  # read back from the page cache / file
