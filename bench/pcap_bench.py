#!/usr/bin/env python3
"""Benchmark of the full pcap-forensics run on a >= 2,000,000-packet capture.

Builds (once, cached in bench/_work/, git-ignored) a synthetic capture with mixed TCP flows and
faults using bench/gen_big_pcap.py, then runs the real CLI (``python -m netghost.forensics``: decode
+ flows + TCP analysis + DNS/ICMP + findings + all outputs written) in a child process and prints:

* packets and file size,
* wall and CPU seconds (user+sys of the child from wait4; the machine may be shared) and packets/s,
  with numba's on-disk cache cold (a fresh NUMBA_CACHE_DIR: compile time counts) and warm, and
  numpy-only (``NETGHOST_NO_NUMBA=1``),
* peak RSS of the child and its ratio to the file size,
* the ratio vs ``tshark -n -q -z expert`` on the same file when tshark is installed (else says so).

Usage: python bench/pcap_bench.py [--packets N] [--runs R] [--no-tshark] [--no-numpy-only] [--stages]
Never run from the unit tests (it takes tens of seconds and ~1.5 GB of disk).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work"
REPO = HERE.parent


def build_capture(packets: int) -> Path:
    """Generate the benchmark capture unless a cached one with the same packet count exists."""
    WORK.mkdir(exist_ok=True)
    out = WORK / f"bench_{packets}.pcap"
    if out.exists() and out.with_suffix(".pcap.truth.json").exists():
        return out
    print(f"generating {out} ({packets:,} packets) ...", flush=True)
    subprocess.run([sys.executable, str(HERE / "gen_big_pcap.py"), "-n", str(packets), "-o", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    return out


def measure(argv: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run a child to completion; wall seconds, CPU seconds and peak RSS (MB) from wait4."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _pid, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {err.strip()[:500]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "user": ru.ru_utime, "sys": ru.ru_stime,
            "rss_mb": ru.ru_maxrss / 1024, "stdout": len(out)}


STAGES_CHILD = r"""
import resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
rows = []
last = [cpu()]
def mark(label):
    now = cpu(); rows.append((label, now - last[0])); last[0] = now
import numpy as np
mark("import numpy")
import netghost.forensics.cli  # noqa: F401  everything the CLI imports
import netghost.forensics.engine as E
from netghost.forensics import accel, reader, report, semantic
mark("import netghost.forensics")
jit = accel.jit_or_none(reader._walk_kernel)
if jit is not None:
    dummy = np.zeros(64, np.uint8)
    dummy.flags.writeable = False  # the mmap windows' (read-only) signature
    jit(dummy, 64, False, 16, np.empty((5, 8), np.int64))
mark("numba import + first dispatch" if jit is not None else "numba: not used")
inner = {}
def wrap(name):
    fn = getattr(E, name)
    def timed(*a, **k):
        t = cpu(); out = fn(*a, **k); inner[name] = inner.get(name, 0.0) + cpu() - t; return out
    setattr(E, name, timed)
for name in ("decode_batch", "parse_dns", "group_conversations", "analyze_tcp_sequences", "build_streams",
             "analyze_dns", "analyze_icmp"):
    wrap(name)
append = E._ColumnTable.append
def timed_append(self, *a):
    t = cpu(); append(self, *a); inner["column table append"] = inner.get("column table append", 0.0) + cpu() - t
E._ColumnTable.append = timed_append
path = sys.argv[1]
a = E.analyze_capture(path)
t = cpu() - last[0]
mark("analyze_capture")
for k, v in inner.items():
    rows.append(("  " + k, v))
rows.append(("  reader (record walk, mmap) + rest", t - sum(inner.values())))
sem = semantic.build_semantic(a, __import__("os").path.getsize(path))
mark("build_semantic (incl. findings)")
report.render_report(sem); report.render_executive_summary(sem)
import json; json.dumps(sem)
mark("reports rendered + JSON dumped")
for label, v in rows:
    print(f"  {label:<42} {v:6.2f} s CPU")
"""


def stage_breakdown(cap: Path, env: dict[str, str]) -> None:
    """One in-process run with per-phase CPU seconds (getrusage), to show where time goes."""
    print("stage breakdown (one run, CPU seconds, numba warm):")
    res = subprocess.run([sys.executable, "-c", STAGES_CHILD, str(cap)], env=dict(env, NUMPY_MADVISE_HUGEPAGE="0"),
                         capture_output=True, text=True, check=False)
    print(res.stdout.rstrip() or f"  failed: {res.stderr.strip()[-500:]}")


def _line(label: str, packets: int, size_mb: float, r: dict[str, float]) -> str:
    return (f"{label:<34} wall {r['wall']:6.2f} s = {packets / r['wall']:>10,.0f} pkt/s | CPU {r['cpu']:6.2f} s "
            f"(user {r['user']:.2f}, sys {r['sys']:.2f}) = {packets / r['cpu']:>10,.0f} pkt/s/core | "
            f"peak RSS {r['rss_mb']:,.0f} MB = {r['rss_mb'] / size_mb:.2f}x file")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packets", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3, help="timed warm runs (median reported) after one warm-up")
    ap.add_argument("--no-tshark", action="store_true")
    ap.add_argument("--no-numpy-only", action="store_true", help="skip the (slow) NETGHOST_NO_NUMBA=1 run")
    ap.add_argument("--stages", action="store_true", help="also print a per-phase CPU breakdown")
    args = ap.parse_args()

    cap = build_capture(args.packets)
    size = cap.stat().st_size
    size_mb = size / (1024 * 1024)  # same unit as ru_maxrss / 1024
    outdir = WORK / "out"
    argv = [sys.executable, "-m", "netghost.forensics", str(cap), "--semantic-dir", str(outdir),
            "--report-dir", str(outdir)]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    env.pop("NETGHOST_NO_NUMBA", None)
    try:
        import numba

        accel = f"numba {numba.__version__}"
    except ImportError:
        accel = None
    n = args.packets
    print(f"capture: {cap.name}: {n:,} packets, {size:,} bytes ({size_mb:,.0f} MiB); "
          f"numba: {accel or 'not installed'}; CPU = user+sys of the child (the machine may be shared)")
    measure(argv, env)  # warm-up: page cache (+ numba's on-disk cache)
    results: dict[str, dict[str, float]] = {}
    if accel:
        with tempfile.TemporaryDirectory(prefix="netghost-numba-cold-") as cold_dir:
            results["numba, cold cache (compiles)"] = measure(argv, dict(env, NUMBA_CACHE_DIR=cold_dir))
        runs = sorted((measure(argv, env) for _ in range(max(args.runs, 1))), key=lambda r: r["cpu"])
        results[f"numba, warm cache (median of {len(runs)})"] = runs[len(runs) // 2]
        print("  warm runs wall: " + ", ".join(f"{r['wall']:.2f}" for r in runs) + " s; CPU: "
              + ", ".join(f"{r['cpu']:.2f}" for r in runs) + " s")
    if not args.no_numpy_only or not accel:
        results["numpy only (NETGHOST_NO_NUMBA=1)"] = measure(argv, dict(env, NETGHOST_NO_NUMBA="1"))
    for label, r in results.items():
        print(_line(label, n, size_mb, r))
    sem = json.loads((outdir / f"{cap.stem}_semantic.json").read_text())
    assert sem["summary"]["packets"] == n, sem["summary"]["packets"]
    best = min(results.values(), key=lambda r: r["cpu"])
    print(f"goal >= 1,500,000 pkt/s on one core: {'met' if n / best['cpu'] >= 1.5e6 else 'NOT met'} "
          f"(best {n / best['cpu']:,.0f} pkt/s per CPU second, {n / best['wall']:,.0f} by wall clock)")
    print(f"goal peak RSS <= 2x file size: {'met' if best['rss_mb'] <= 2 * size_mb else 'NOT met'} "
          f"({best['rss_mb'] / size_mb:.2f}x)")
    tshark = shutil.which("tshark")
    if args.no_tshark:
        print("tshark: skipped (--no-tshark)")
    elif not tshark:
        print("tshark: not installed here, ratio vs `tshark -n -q -z expert` not measured "
              "(PCAP-NOTES.md §7 measured ~120,000 packets/s and ~1.5 GB RSS on this file shape)")
    else:
        t = measure([tshark, "-n", "-r", str(cap), "-q", "-z", "expert"])
        print(_line("tshark -n -q -z expert", n, size_mb, t))
        print(f"pcap-forensics vs tshark: {t['wall'] / best['wall']:.1f}x by wall, {t['cpu'] / best['cpu']:.1f}x "
              "by CPU (goal >= 10x)")
    if args.stages:
        stage_breakdown(cap, env)
    print("truth (by construction): " + (cap.with_suffix(".pcap.truth.json")).read_text()[:300].replace("\n", " "))
    print("ours: " + json.dumps(sem["summary"]["tcp_analysis"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
