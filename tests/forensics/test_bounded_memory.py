"""A capture whose analysis needs more RAM than the process may have still finishes, spilled to disk.

The limit is real: the child process runs under ``RLIMIT_DATA`` (Linux counts private anonymous
memory against it, not shared file mappings), low enough that the in-RAM analysis of the capture
dies with MemoryError; with a small ``NETGHOST_PCAP_MEMORY`` budget the same child finishes and
writes the same semantic JSON as an unlimited run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from netghost.forensics import accel, spill

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA semantics are Linux's")

PACKETS = 400_000
FLOWS = 2_000


def write_small_packet_capture(path: Path, packets: int = PACKETS, flows: int = FLOWS) -> int:
    """Many 54-byte TCP ACK/data frames over ``flows`` connections, written with numpy in one go.

    Small frames make the decoded columns large relative to the file: the worst case for memory.
    """
    rec = np.zeros((packets, 16 + 54), np.uint8)
    i = np.arange(packets, dtype=np.int64)
    flow = i % flows
    k = i // flows  # packet number inside its flow
    rec[:, 0:4] = (1_700_000_000 + i // 100_000).astype("<u4").view(np.uint8).reshape(-1, 4)
    rec[:, 4:8] = ((i * 7) % 1_000_000).astype("<u4").view(np.uint8).reshape(-1, 4)
    rec[:, 8:12] = np.array([54], "<u4").view(np.uint8)
    rec[:, 12:16] = np.array([54], "<u4").view(np.uint8)
    f = rec[:, 16:]
    f[:, 0:6] = np.frombuffer(b"\x00\x16\x3e\x44\x55\x66", np.uint8)
    f[:, 6:12] = np.frombuffer(b"\x00\x16\x3e\x11\x22\x33", np.uint8)
    f[:, 12:14] = (0x08, 0x00)
    f[:, 14] = 0x45
    f[:, 16:18] = np.array([40], ">u2").view(np.uint8)
    f[:, 18:20] = (i & 0xFFFF).astype(">u2").view(np.uint8).reshape(-1, 2)
    f[:, 22] = 64
    f[:, 23] = 6
    f[:, 26:30] = (10, 0, 1, 4)
    f[:, 30:34] = np.stack([np.full(packets, 10), np.zeros(packets), (flow >> 8) & 0xFF, flow & 0xFF], 1)
    f[:, 34:36] = (40_000 + flow).astype(">u2").view(np.uint8).reshape(-1, 2)
    f[:, 36:38] = np.array([6379], ">u2").view(np.uint8)
    f[:, 38:42] = (1_000 + k * 100).astype(">u4").view(np.uint8).reshape(-1, 4)
    f[:, 42:46] = (5_000 + k).astype(">u4").view(np.uint8).reshape(-1, 4)
    f[:, 46] = 0x50
    f[:, 47] = 0x10  # ACK
    f[:, 48:50] = np.array([65535], ">u2").view(np.uint8)
    header = np.array([0xA1B2C3D4, 0x00040002, 0, 0, 262144, 1], "<u4").tobytes()
    path.write_bytes(header + rec.tobytes())
    return packets


CHILD = r"""
import resource, sys
limit = int(sys.argv[1])
if limit:
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
from netghost.forensics.cli import main
sys.exit(main([sys.argv[2], "--semantic-dir", sys.argv[3], "--report-dir", sys.argv[3], *sys.argv[4:]]))
"""


def _run(cap: Path, out: Path, limit: int, budget: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETGHOST_PCAP_")}
    if budget is not None:
        env["NETGHOST_PCAP_MEMORY"] = budget
    out.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-c", CHILD, str(limit), str(cap), str(out), *args], env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _data_in_use_after_imports() -> int:
    probe = ("import netghost.forensics.cli, netghost.forensics.engine;"
             "print(open('/proc/self/status').read().split('VmData:')[1].split()[0])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return int(out.stdout) * 1024


@pytest.mark.slow
def test_capture_larger_than_the_memory_limit_is_analysed_by_spilling(tmp_path: Path) -> None:
    if any(accel.compiled(m) is None for m in ("decode._walkdecode", "tcp._compiled")):
        # the pure fallback's numpy decode and vectorised TCP analysis make full-length temporaries
        pytest.skip("the memory bound holds on the compiled path only (extension not built or disabled)")
    cap = tmp_path / "small_frames.pcap"
    write_small_packet_capture(cap)
    free = _run(cap, tmp_path / "free", 0, None)
    assert free.returncode == 0, free.stderr
    truth = json.loads((tmp_path / "free" / "small_frames_semantic.json").read_text())
    assert truth["summary"]["packets"] == PACKETS

    # the whole in-RAM run needs ~120 MB beyond imports here (columns ~200 B/packet, TCP outputs, findings'
    # temporaries); with an 8 MB budget the whole run (analysis, findings, reports) needs ~25 MB beyond
    # imports, the same at 400k, 800k and 1.6M packets (bench/memory_bench.py prints the figures)
    limit = _data_in_use_after_imports() + 32 * 1024 * 1024
    in_ram = _run(cap, tmp_path / "ram", limit, "64G")
    assert in_ram.returncode != 0, "the limit must bind, or this test proves nothing"
    assert "--max-memory" in in_ram.stderr, in_ram.stderr[-2000:]  # the message says what to do

    spilled = _run(cap, tmp_path / "spill", limit, "64G", "--max-memory", "8M")
    assert spilled.returncode == 0, spilled.stderr[-2000:]
    got = json.loads((tmp_path / "spill" / "small_frames_semantic.json").read_text())
    for doc in (got, truth):
        doc.get("capture", {}).pop("path", None)
    assert got == truth


def test_budget_places_arrays_in_ram_then_on_disk() -> None:
    b = spill.MemoryBudget(1000)
    a = b.alloc(100, np.int64)
    assert a.base is None
    s = b.alloc(100, np.int64, zero=True)
    assert (b.in_ram, b.spilled) == (800, 800)
    assert isinstance(s.base, np.memmap) and type(s) is np.ndarray
    assert not s.any()
    s[:] = np.arange(100)
    assert int((s * 2).sum()) == 9900


def test_zero_budget_spills_everything_and_sizes_parse() -> None:
    b = spill.MemoryBudget(0)
    assert isinstance(b.alloc(10, np.float64).base, np.memmap)
    assert b.alloc(0, np.int8).shape == (0,)
    assert spill.parse_size("512M") == 512 << 20
    assert spill.parse_size("2g") == 2 << 30
    assert spill.parse_size("1.5GiB") == 3 << 29
    assert spill.parse_size("4096") == 4096
    with pytest.raises(ValueError, match="not a memory size"):
        spill.parse_size("lots")


HWM_CHILD = r"""
import sys
from pathlib import Path
from netghost.forensics import spill
from netghost.forensics.engine import analyze_capture
from netghost.forensics.report import build_semantic
spill.reset_budget(spill.parse_size(sys.argv[2]))
build_semantic(analyze_capture(sys.argv[1]), Path(sys.argv[1]).stat().st_size)
print(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
"""


def _peak_rss_kb(cap: Path, budget: str) -> int:
    """VmHWM of a child that analyses ``cap`` and builds its semantic document under ``budget``.

    VmHWM counts file-backed resident pages (mapped capture windows, spilled columns) as well as
    anonymous ones: it is what a Dask worker's memory monitor or a container limit sees.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETGHOST_PCAP_")}
    out = subprocess.run([sys.executable, "-c", HWM_CHILD, str(cap), budget], env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    return int(out.stdout.split()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_peak_rss_under_a_budget_barely_grows_with_the_packet_count(tmp_path: Path) -> None:
    """Same flows, 4x the packets, 8 MiB budget: the peak resident set may not follow the capture.

    Before spilled pages were released during the TCP walk, between blocks and after each record
    segment, the 1M-packet run peaked ~100 MiB above the 250k one (177 vs 74 MiB here: the walked
    pages of every spilled column stayed resident); now ~55 MiB, most of it the few columns a
    findings pass gathers at scattered rows (see bench/memory_bench.py for the figures).
    """
    if any(accel.compiled(m) is None for m in ("decode._walkdecode", "tcp._compiled")):
        pytest.skip("the memory bound holds on the compiled path only (extension not built or disabled)")
    small, big = tmp_path / "n.pcap", tmp_path / "4n.pcap"
    write_small_packet_capture(small, 250_000)
    write_small_packet_capture(big, 1_000_000)  # 70 MB: past MMAP_MIN, read as mapped windows
    grown = _peak_rss_kb(big, "8M") - _peak_rss_kb(small, "8M")
    assert grown < 80 * 1024, f"peak RSS grew {grown // 1024} MiB for 750k more packets under an 8 MiB budget"


def test_compiled_tcp_walk_ticks_and_gives_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """The release hook of the compiled TCP walk runs every ``tick_every`` segments and changes nothing."""
    from netghost.forensics.tcp import analyze_tcp
    from netghost.forensics.tcp._rules import compiled_tcp

    if compiled_tcp() is None:
        pytest.skip("compiled TCP kernel not built (or disabled)")
    from netghost.forensics.engine import analyze_capture, tcp_segment_rows

    pcaps = Path(__file__).resolve().parents[1] / "data" / "pcaps"
    a = analyze_capture(pcaps / "chrissanders_ppa1e_ftp-crack.pcap")
    rows = tcp_segment_rows(a.cols)
    plain = analyze_tcp(a.cols, rows)
    calls: list[int] = []
    monkeypatch.setattr(spill, "RELEASE_ROWS", 1000)
    old = spill._BUDGET
    try:
        spill.reset_budget(0)  # everything spilled: the engine passes a release as the tick
        kept = spill.alloc(1, np.int64)  # one live spill mapping, so releaser() is not None
        spill._BUDGET.release = lambda: calls.append(1)  # type: ignore[method-assign,union-attr]
        ticked = analyze_tcp(a.cols, rows)
        del kept
    finally:
        spill._BUDGET = old
    segs = rows.shape[0]
    assert segs > 5000
    assert len(calls) == 2 * ((segs - 1) // 1000)  # the walk and the counting sort, each every 1000 segments
    for x, y in zip(plain, ticked, strict=True):
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, np.asarray(y), equal_nan=True)


def _rss_file_kb() -> int:
    return int(Path("/proc/self/status").read_text().split("RssFile:")[1].split()[0])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_scattered_gather_from_a_spilled_column_keeps_few_pages_resident(monkeypatch: pytest.MonkeyPatch) -> None:
    """20k scattered rows of a 64 MiB spilled column: a plain gather faults most of the column in (the
    kernel maps 64 KiB around each faulted page); ``arrays.take`` gathers in pieces and releases
    between them, so the resident set stays a few pieces' worth, with the same values."""
    from netghost.forensics import arrays

    old = spill._BUDGET
    try:
        b = spill.reset_budget(0)
        col = b.alloc(8 << 20, np.int64)
        for lo in range(0, col.shape[0], 1 << 20):
            col[lo : lo + (1 << 20)] = np.arange(lo, lo + (1 << 20))
            b.release()
        idx = np.sort(np.random.default_rng(7).choice(col.shape[0], 20_000, replace=False))
        base = _rss_file_kb()
        plain = col.take(idx)
        grown_plain = _rss_file_kb() - base
        b.release()
        base = _rss_file_kb()
        got = arrays.take(col, idx)
        grown = _rss_file_kb() - base
        del col
    finally:
        spill._BUDGET = old
    assert np.array_equal(got, plain) and np.array_equal(got, idx)
    assert grown_plain > 32 * 1024, "the plain gather must fault much of the column in, or this proves nothing"
    assert grown < 24 * 1024, f"arrays.take left {grown // 1024} MiB of the spilled column resident"
