#!/usr/bin/env python3
"""Benchmark of the full pcap-forensics run on a >= 2,000,000-packet capture.

Builds (once, cached in bench/_work/, git-ignored) a synthetic capture with mixed TCP flows and
faults using bench/gen_big_pcap.py, then runs the real CLI (``python -m netghost.forensics``: decode
+ flows + TCP analysis + DNS/ICMP + findings + all outputs written) in a child process and prints:

* packets and file size, and whether the compiled (Cython) extensions are built and active
  (the package is byte-compiled first, as an install does),
* wall and CPU seconds (user+sys of the child from wait4; the machine may be shared) and packets/s,
  for the compiled path (median of --runs warm runs) and the pure path (``NETGHOST_NO_COMPILED=1``),
* peak RSS of the child and its ratio to the file size,
* the ratio vs ``tshark -n -q -z expert`` on the same file when tshark is installed (else says so),
* with --stages: one in-process run with the CPU seconds of each stage of the pipeline.

The capture is first evicted from the page cache (see ``evict``; ``--keep-cache`` skips it), so the
untimed warm-up run reads it from disk and every timed run finds it cached the same way.

Usage: python bench/pcap_bench.py [--packets N] [--runs R] [--no-tshark] [--no-pure] [--stages] [--keep-cache]
Never run from the unit tests (it takes tens of seconds and ~1.5 GB of disk).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
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
    """Run a child to completion; wall seconds, CPU seconds and peak RSS (MB) from wait4.

    The child's output goes to temporary files, not pipes: ``tshark -z expert`` prints more than a pipe
    buffer holds, and a pipe nobody reads until wait4 returns would block it forever.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _pid, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        n_out = len(out.read())
        if proc.returncode != 0:
            raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {err.read().decode(errors='replace').strip()[:500]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "user": ru.ru_utime, "sys": ru.ru_stime,
            "rss_mb": ru.ru_maxrss / 1024, "stdout": n_out}


STAGES_CHILD = r"""
import os, resource, sys
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def sys_cpu():
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime
rows = []
last = [cpu()]
def mark(label):
    now = cpu(); rows.append((label, now - last[0])); last[0] = now
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np
mark("import numpy")
import netghost.forensics.cli  # noqa: F401  everything the CLI imports
import netghost.forensics.engine as E
from netghost.forensics import accel
from netghost.forensics.report import _markdown as report
from netghost.forensics.report import _semantic as semantic
mark("import netghost.forensics")
inner = {}
def wrap(mod, name, label=None):
    fn = getattr(mod, name)
    def timed(*a, **k):
        t = cpu(); out = fn(*a, **k); key = label or name; inner[key] = inner.get(key, 0.0) + cpu() - t; return out
    setattr(mod, name, timed)
# compiled path: walk_decode (fused pcap walk + decode into the column store, DNS included),
# decode_into (pcapng, DNS included), dns_of_segment (parse_dns on the kernel's DNS-port candidates,
# nested in the two); pure path: decode_batch (numpy), parse_dns per batch and the store's append
compiled_path = accel.compiled("decode._walkdecode") is not None
NESTED = {"dns_of_segment"}
for name in ("walk_decode", "decode_into", "dns_of_segment") if compiled_path else ("decode_batch", "parse_dns"):
    wrap(E, name)
for name in ("analyze_tcp", "analyze_dns", "analyze_icmp"):
    wrap(E, name)
wrap(E.ColumnStore, "append", "column store append (pure path)")
path = sys.argv[1]
s0 = sys_cpu()
a = E.analyze_capture(path)
t = cpu() - last[0]
mark("analyze_capture")
for k, v in sorted(inner.items(), key=lambda kv: kv[0] in NESTED):  # nested (DNS) lines after their parents
    rows.append(("  " + ("  (of which) " if k in NESTED else "") + k, v))
rows.append(("  reader (mmap/read, windows) + rest", t - sum(v for k, v in inner.items() if k not in NESTED)))
rows.append(("  (of analyze_capture: system time)", sys_cpu() - s0))
sem = semantic.build_semantic(a, os.path.getsize(path))
mark("build_semantic (incl. findings)")
report.render_report(sem); report.render_executive_summary(sem)
import json; json.dumps(sem)
mark("reports rendered + JSON dumped")
print(f"  path: {'compiled' if accel.compiled('decode._walkdecode') is not None else 'pure (numpy)'}")
for label, v in rows:
    print(f"  {label:<42} {v:6.2f} s CPU")
print(f"  {'total':<42} {cpu():6.2f} s CPU (interpreter start excluded)")
"""


def stage_breakdown(cap: Path, env: dict[str, str], label: str) -> None:
    """One in-process run with per-phase CPU seconds (getrusage), to show where time goes."""
    print(f"stage breakdown ({label}; one run, CPU seconds):")
    res = subprocess.run([sys.executable, "-c", STAGES_CHILD, str(cap)], env=env,
                         capture_output=True, text=True, check=False)
    print(res.stdout.rstrip() or f"  failed: {res.stderr.strip()[-500:]}")


def evict(cap: Path) -> str:
    """Drop the capture's clean pages from the page cache before the (untimed) warm-up run.

    Why: how a file sits in the page cache depends on who read or wrote it last (the generator's
    buffered writes, a copy tool, an earlier run), and mapping it costs a fault per 64 KiB in 4 KiB
    pages but one per 2 MiB in huge pages (~0.15 s CPU on this file). On kernels and file systems with
    large page-cache folios (Linux 6.18 and ext4 here), a read from disk (the engine's, tshark's or
    cat's) caches the file in 2 MiB folios, while e.g. ``cp`` leaves it in small ones. Evicting first
    makes every timed run (and tshark's) see the cache as a first read of the capture leaves it, the
    same on every bench run; ``--keep-cache`` times the cache as found.
    """
    if not hasattr(os, "posix_fadvise"):
        return "kept as found (no posix_fadvise here)"
    fd = os.open(cap, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return "capture evicted; the untimed warm-up run reads it from disk, the timed runs find it cached"


CACHE_CHILD = r"""
import mmap, resource, sys
import numpy as np
with open(sys.argv[1], "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    pages = np.frombuffer(mm, np.uint8)[::4096]
    int(pages.sum())  # touch one byte per 4 KiB
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    del pages
"""


def cache_state(cap: Path) -> str:
    """How the cached capture maps: the minor faults of touching every 4 KiB of a fresh mapping.

    Why print it: mapping costs the analysis ~0.1-0.2 CPU s per 1.5 GB when the page cache holds the
    file in 4 KiB pages (one fault per 64 KiB) and almost nothing in 2 MiB folios (one per 2 MiB), so
    the figures below depend on it; kernels and file systems without large page-cache folios give
    the former whatever the engine asks for. Probed in a child: mapping the whole file here would
    raise this process's RSS high-water mark, which every later child's ``ru_maxrss`` inherits.
    """
    res = subprocess.run([sys.executable, "-c", CACHE_CHILD, str(cap)], capture_output=True, text=True, check=False)
    if res.returncode != 0 or not res.stdout.strip().isdigit():
        return f"probe failed: {res.stderr.strip()[-200:]}"
    faults = int(res.stdout)
    per = cap.stat().st_size / max(faults, 1) / 1024
    kind = "mostly 2 MiB folios" if per >= 1024 else "small folios (mapping it costs ~0.1-0.2 CPU s per run)"
    return f"mapping the cached capture took {faults:,} faults ({per:,.0f} KiB each): {kind}"


def startup_cost(argv: list[str], env: dict[str, str]) -> float:
    """Median CPU seconds of the same command on a header-only capture: what every run pays whatever
    the capture's size (interpreter start, numpy and package imports, outputs written)."""
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.pcap"
        empty.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        cmd = [*argv[:3], str(empty), "--semantic-dir", tmp, "--report-dir", tmp]
        cpu = sorted(measure(cmd, env)["cpu"] for _ in range(3))
    return cpu[1]


def compiled_status(env: dict[str, str]) -> str:
    """Which compiled extensions a child process would load (built .so present and importable)."""
    probe = ("from netghost.forensics import accel; "
             "print(', '.join(n for n in ('decode._walkdecode', 'tcp._compiled', 'dns._compiled') if accel.compiled(n) is not None) or 'none')")
    res = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False)
    return res.stdout.strip() or f"probe failed: {res.stderr.strip()[-200:]}"


def _line(label: str, packets: int, size_mb: float, r: dict[str, float]) -> str:
    return (f"{label:<34} wall {r['wall']:6.2f} s = {packets / r['wall']:>10,.0f} pkt/s | CPU {r['cpu']:6.2f} s "
            f"(user {r['user']:.2f}, sys {r['sys']:.2f}) = {packets / r['cpu']:>10,.0f} pkt/s/core | "
            f"peak RSS {r['rss_mb']:,.0f} MB = {r['rss_mb'] / size_mb:.2f}x file")


def _parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packets", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3, help="timed warm runs of the compiled path (median reported)")
    ap.add_argument("--no-tshark", action="store_true")
    ap.add_argument("--no-pure", "--no-numpy-only", action="store_true", help="skip the NETGHOST_NO_COMPILED=1 run")
    ap.add_argument("--keep-cache", action="store_true",
                    help="time the capture as it already sits in the page cache (default: evict it first, see evict())")
    ap.add_argument("--stages", action="store_true", help="also print a per-stage CPU breakdown (both paths; compiled only with --no-pure)")
    return ap.parse_args()


def time_compiled(argv: list[str], env: dict[str, str], *, runs: int, packets: int) -> dict[str, float]:
    """The median of ``runs`` timed warm runs, printed with every run and the fixed cost of a run."""
    timed = sorted((measure(argv, env) for _ in range(max(runs, 1))), key=lambda r: r["cpu"])
    print("  runs wall: " + ", ".join(f"{r['wall']:.2f}" for r in timed) + " s; CPU: "
          + ", ".join(f"{r['cpu']:.2f}" for r in timed) + " s")
    fixed = startup_cost(argv, env)
    med = timed[len(timed) // 2]
    print(f"  fixed cost of a run (interpreter, imports, outputs written; header-only capture, median of 3): "
          f"CPU {fixed:.2f} s -> the per-packet work alone runs at {packets / max(med['cpu'] - fixed, 1e-9):,.0f} "
          "pkt/s per CPU second (the goal below counts the whole run)")
    return med


def print_goals(packets: int, size_mb: float, best: dict[str, float]) -> None:
    """Whether the run meets the throughput and memory goals."""
    print(f"goal >= 1,500,000 pkt/s on one core: {'met' if packets / best['cpu'] >= 1.5e6 else 'NOT met'} "
          f"(compiled {packets / best['cpu']:,.0f} pkt/s per CPU second, {packets / best['wall']:,.0f} by wall clock)")
    print(f"goal peak RSS <= 2x file size: {'met' if best['rss_mb'] <= 2 * size_mb else 'NOT met'} "
          f"({best['rss_mb'] / size_mb:.2f}x)")


def compare_tshark(cap: Path, packets: int, size_mb: float, best: dict[str, float], *, skip: bool) -> None:
    """The ratio vs ``tshark -n -q -z expert`` on the same file, when tshark is installed."""
    tshark = shutil.which("tshark")
    if skip:
        print("tshark: skipped (--no-tshark)")
    elif not tshark:
        print("tshark: not installed here, ratio vs `tshark -n -q -z expert` not measured "
              "(PCAP-NOTES.md §7 measured ~120,000 packets/s and ~1.5 GB RSS on this file shape)")
    else:
        t = measure([tshark, "-n", "-r", str(cap), "-q", "-z", "expert"])
        print(_line("tshark -n -q -z expert", packets, size_mb, t))
        print(f"pcap-forensics vs tshark: {t['wall'] / best['wall']:.1f}x by wall, {t['cpu'] / best['cpu']:.1f}x "
              "by CPU (goal >= 10x)")


def main() -> int:
    args = _parse_args()
    cap = build_capture(args.packets)
    size = cap.stat().st_size
    size_mb = size / (1024 * 1024)  # same unit as ru_maxrss / 1024
    outdir = WORK / "out"
    argv = [sys.executable, "-m", "netghost.forensics", str(cap), "--semantic-dir", str(outdir),
            "--report-dir", str(outdir)]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    env.pop("NETGHOST_NO_COMPILED", None)
    pure_env = dict(env, NETGHOST_NO_COMPILED="1")
    # An install byte-compiles the package; with PYTHONDONTWRITEBYTECODE set (as in the dev shells) an
    # editable checkout would recompile ~30 modules from source on every run (~0.13 s CPU), so do it once.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "src" / "netghost")], check=False,
                   stdout=subprocess.DEVNULL)
    active = compiled_status(env)
    n = args.packets
    print(f"capture: {cap.name}: {n:,} packets, {size:,} bytes ({size_mb:,.0f} MiB); compiled extensions active: "
          f"{active}; CPU = user+sys of the child (the machine may be shared)")
    if not args.keep_cache:
        print(f"page cache: {evict(cap)}")
    measure(argv, env)  # warm-up: page cache
    print(f"page cache: {cache_state(cap)}")
    label = "compiled" if active not in {"none", ""} else "compiled NOT built (pure)"
    results = {f"{label} (median of {max(args.runs, 1)})": time_compiled(argv, env, runs=args.runs, packets=n)}
    if not args.no_pure:
        results["pure (NETGHOST_NO_COMPILED=1)"] = measure(argv, pure_env)
    for lab, r in results.items():
        print(_line(lab, n, size_mb, r))
    sem = json.loads((outdir / f"{cap.stem}_semantic.json").read_text())
    assert sem["summary"]["packets"] == n, sem["summary"]["packets"]
    best = next(iter(results.values()))
    print_goals(n, size_mb, best)
    compare_tshark(cap, n, size_mb, best, skip=args.no_tshark)
    if args.stages:
        stage_breakdown(cap, env, "compiled path")
        if not args.no_pure:
            stage_breakdown(cap, pure_env, "pure path, NETGHOST_NO_COMPILED=1")
    print("truth (by construction): " + (cap.with_suffix(".pcap.truth.json")).read_text()[:300].replace("\n", " "))
    print("ours: " + json.dumps(sem["summary"]["tcp_analysis"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
