"""What runs on a Dask worker: one capture analysed by the engine, or one pair of capture points compared.

Each task returns a small picklable result: the capture's own output files (the same bytes the
single-capture CLI writes, because both go through ``outputs.write_capture_outputs``), the figures the
fleet ranks on, and the capture's TCP flows (endpoints, first time, TTL each way) for matching flows
across capture points. The Analysis itself never leaves the worker.

A blob is streamed from storage in blocks into a worker-local temporary file (removed afterwards) and
the engine reads that file with its memory budget; the client never holds a capture. A failure of
one capture (not a capture, unreadable, out of memory, a bug) is a result with its error, never an
exception that would stop the fleet; a worker that dies is Dask's to retry.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from netghost.errors import CaptureFormatError
from netghost.forensics import spill
from netghost.forensics.arrays import spans
from netghost.forensics.decode import ep
from netghost.forensics.engine import Analysis, analyze_capture
from netghost.forensics.fleet._sources import Source, open_filesystem
from netghost.forensics.outputs import write_capture_outputs

__all__ = ["CaptureResult", "FlowSeen", "PairResult", "analyse_source", "compare_pair", "local_capture"]

COPY_BLOCK = 4 * 1024 * 1024  # bytes per read from Blob Storage (bounded memory while streaming)
MAX_FLOWS = 5000  # flows kept per capture for cross-point matching (the busiest ones)
_LEAKY = re.compile(r"\(magic [0-9a-fA-F]+\)")


@dataclass(frozen=True)
class FlowSeen:
    """One TCP flow as one capture point saw it (the key names client and server)."""

    key: str  # "tcp CLIENT > SERVER"
    first_ts: float
    packets: int
    ttl_c2s: int  # TTL of the client's first packet here (-1 unknown)
    ttl_s2c: int  # TTL of the server's first packet here (-1 unknown)
    isn: int = -1  # the client's SYN sequence number, when its first packet here is a SYN (-1 otherwise)


@dataclass
class CaptureResult:
    """One capture's outcome (see the module docstring)."""

    id: str
    uri: str
    name: str
    ok: bool
    error: str | None = None
    seconds: float = 0.0
    worker: str = ""
    peak_rss: int = 0
    outputs: dict[str, bytes] = field(default_factory=dict)  # file name → bytes (the capture's own outputs)
    notices: list[str] = field(default_factory=list)
    sem: dict[str, Any] | None = None
    flows: list[FlowSeen] = field(default_factory=list)


@dataclass
class PairResult:
    """Two capture points compared (A upstream of B when the path order is known)."""

    a: str
    b: str
    ok: bool
    error: str | None = None
    comparison: dict[str, Any] | None = None
    top_finding: str | None = None
    outputs: dict[str, bytes] = field(default_factory=dict)


@contextmanager
def local_capture(src: Source) -> Iterator[Path]:
    """A local path to read ``src`` from: the file itself, or a blob streamed to a temporary file
    named like the blob (so its report names the same file), removed on exit.

    Raises:
        OSError: the blob cannot be read or the copy cannot be written.
    """
    if not src.remote:
        yield Path(src.uri)
        return
    fs = open_filesystem(src.account)
    with tempfile.TemporaryDirectory(prefix="netghost-fleet-") as d:
        path = Path(d) / src.name
        with fs.open(src.uri[len("az://"):], "rb", block_size=COPY_BLOCK) as r, path.open("wb") as w:
            shutil.copyfileobj(r, w, COPY_BLOCK)
        yield path


def _flows(a: Analysis) -> list[FlowSeen]:
    """The busiest :data:`MAX_FLOWS` TCP flows with their first TTL each way (column-wise, no per-packet loop)."""
    st = a.streams
    n = len(st)
    if not n:
        return []
    pk = st.pkts_c2s.astype(np.int64) + st.pkts_s2c
    keep = np.sort(np.argsort(-pk, kind="stable")[:MAX_FLOWS])
    c = a.cols
    first = np.full((n, 2), -1, np.int64)
    isn = np.full(n, -1, np.int64)
    # In blocks of rows (in capture order), so the per-row temporaries stay a block long: over a whole
    # 14M-packet capture they were ~600 MB, and a worker with a 1 GB limit was restarted for them.
    for lo, hi in spans(len(a.tcp_rows)):
        rows, sid = a.tcp_rows[lo:hi], np.asarray(a.tcp_stream[lo:hi])
        c2s = (c.src_lo[rows] == st.c_lo[sid]) & (c.src_hi[rows] == st.c_hi[sid]) & (c.sport[rows] == st.c_port[sid])
        for d, m in ((0, c2s), (1, ~c2s)):
            u, idx = np.unique(sid[m], return_index=True)  # first segment of each stream in this direction here
            new = first[u, d] < 0  # ... that no earlier block saw
            u, r = u[new], rows[np.flatnonzero(m)[idx[new]]]
            first[u, d] = c.ttl[r]
            if d == 0:
                syn = (c.tcp_flags[r] & 0x12) == 0x02
                isn[u[syn]] = c.seq[r[syn]]
        spill.release()
    cols = [x[keep].tolist() for x in (st.c_hi, st.c_lo, st.c_port, st.s_hi, st.s_lo, st.s_port, st.first_ts, pk,
                                       first[:, 0], first[:, 1], isn)]  # Python scalars: no numpy item per field
    return [FlowSeen(f"tcp {ep(ch, cl, cp)} > {ep(sh, sl, sp)}", ts, n, t0, t1, i)
            for ch, cl, cp, sh, sl, sp, ts, n, t0, t1, i in zip(*cols, strict=True)]


def _where() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _peak_rss() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux reports KiB


def _error_text(exc: BaseException, local: Path | None, src: Source) -> str:
    msg = str(exc) if isinstance(exc, CaptureFormatError) else f"{type(exc).__name__}: {exc}"
    if isinstance(exc, OSError) and not isinstance(exc, CaptureFormatError):
        msg = f"{exc.strerror or exc}"
    if local is not None and str(local) != src.uri:
        msg = msg.replace(str(local), src.uri)
    return _LEAKY.sub("(unrecognised magic)", msg)


def _read_outputs(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def worker_budget(max_memory: int | None) -> int | None:
    """The engine's memory budget on this worker: ``max_memory`` when given, else ``NETGHOST_PCAP_MEMORY``
    when set, else a quarter of the Dask worker's memory limit (None off a worker or with no limit).

    Why a quarter: the budget bounds the per-packet arrays; the per-flow state (it grows with the
    conversations: ~330 MB for the 431k of a 10 GB, 14M-packet capture), the mapped capture windows, the
    reports and the interpreter need the rest, and Dask's monitor restarts a worker at 95% of its limit.
    Without this the engine's default (half the machine's RAM) could exceed the limit Dask gives each
    worker (the machine's RAM divided among them), and the worker would be restarted mid-capture.
    """
    if max_memory is not None or os.environ.get("NETGHOST_PCAP_MEMORY", "").strip():
        return max_memory
    try:
        from distributed import get_worker  # noqa: PLC0415  only on a worker

        limit = get_worker().memory_manager.memory_limit
    except (ImportError, ValueError, AttributeError):
        return None
    return int(limit) // 4 if limit else None


def analyse_source(src: Source, formats: tuple[str, ...] = ("md", "json"), max_memory: int | None = None) -> CaptureResult:
    """Analyse one capture on this worker (see the module docstring); never raises for a bad capture."""
    budget = worker_budget(max_memory)
    if budget is not None:
        spill.reset_budget(budget)
    t0 = time.perf_counter()
    res = CaptureResult(id=src.id, uri=src.uri, name=src.name, ok=False, worker=_where())
    local: Path | None = None
    try:
        with local_capture(src) as path, tempfile.TemporaryDirectory(prefix="netghost-out-") as out:
            local = path
            analysis = analyze_capture(path)
            written = write_capture_outputs(path, analysis, semantic_dir=Path(out), report_dir=Path(out),
                                            formats={*formats, "json"})
            res.flows = _flows(analysis)
            del analysis
            res.outputs = _read_outputs(Path(out))
            if "json" not in formats:
                res.outputs = {k: v for k, v in res.outputs.items() if not k.endswith("_semantic.json")}
            res.sem, res.notices, res.ok = written.sem, written.notices, True
    except (CaptureFormatError, OSError, MemoryError) as exc:
        res.error = _error_text(exc, local, src)
    except Exception as exc:  # the fleet's boundary: one capture's bug must not stop the others (reported)
        res.error = f"internal error: {_error_text(exc, local, src)}"
    res.seconds = round(time.perf_counter() - t0, 3)
    res.peak_rss = _peak_rss()
    return res


def compare_pair(a: Source, b: Source, formats: tuple[str, ...] = ("md", "json"),
                 max_memory: int | None = None) -> PairResult:
    """Compare two capture points with the engine's two-point comparison (A upstream); never raises."""
    from netghost.forensics.compare import write_compare_outputs  # noqa: PLC0415  only pairs need it

    res = PairResult(a=a.id, b=b.id, ok=False)
    budget = worker_budget(max_memory)
    if budget is not None:
        spill.reset_budget(budget)
    try:
        with local_capture(a) as pa, local_capture(b) as pb, tempfile.TemporaryDirectory(prefix="netghost-out-") as out:
            written = write_compare_outputs(pa, pb, semantic_dir=out, report_dir=out,
                                            formats={f for f in formats if f in ("md", "json")})
            comp = written.doc["comparison"]
            res.comparison = {k: comp[k] for k in ("matched_packets", "match_rate", "flows", "clock_offset_ms",
                                                   "delay_ms", "lost", "injected", "blocked", "modified")}
            res.top_finding = written.doc["findings"][0]["title"] if written.doc["findings"] else None
            res.outputs = _read_outputs(Path(out))
            res.ok = True
    except (CaptureFormatError, OSError, MemoryError) as exc:
        res.error = _error_text(exc, None, a)
    except Exception as exc:  # the fleet's boundary (see analyse_source)
        res.error = f"internal error: {type(exc).__name__}: {exc}"
    return res
