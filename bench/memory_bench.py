"""Peak anonymous memory of a whole ``pcap-forensics`` run, for growing captures, with and without a budget.

Why: "a capture larger than memory is analysed in bounded memory". The figure that matters is the
process's private anonymous memory (what RLIMIT_DATA and the OOM killer count): with a budget
(``--max-memory`` / ``NETGHOST_PCAP_MEMORY``) it must stay near budget + a fixed working set however
many packets the capture has; without one it grows with the capture. Each run is a fresh child
process measured with ``tracemalloc`` (numpy reports its buffers to it; file-backed spill mappings
are not anonymous and are not counted), split by stage: analysis, semantic build, reports. It also prints the child's peak
resident set (``VmHWM``), which does count file-backed pages (mapped capture windows, spilled columns):
what a Dask worker's memory monitor or a container limit sees; under a budget it too should stay near
budget + a fixed working set.

Usage: ``python bench/memory_bench.py [--packets 400000,800000,1600000] [--budget 16M]``.
Prints figures only (no asserts).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time, tracemalloc
from pathlib import Path
from netghost.forensics import spill
from netghost.forensics.engine import analyze_capture
from netghost.forensics.report import render_executive_summary, render_report
from netghost.forensics.report import build_semantic
cap, budget = sys.argv[1], sys.argv[2]
if budget != "none":
    spill.reset_budget(spill.parse_size(budget))
else:
    spill.reset_budget(1 << 50)
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
t0 = time.process_time()
a = analyze_capture(cap)
held, p_an = tracemalloc.get_traced_memory()
tracemalloc.reset_peak()
sem = build_semantic(a, Path(cap).stat().st_size)
_, p_sem = tracemalloc.get_traced_memory()
tracemalloc.reset_peak()
text = json.dumps(sem, indent=1) + render_report(sem) + render_executive_summary(sem)
_, p_rep = tracemalloc.get_traced_memory()
cpu = time.process_time() - t0
hwm = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(json.dumps({"hwm": hwm, "held": held - base, "analysis": p_an - base, "semantic": p_sem - base, "reports": p_rep - base,
                  "cpu": cpu, "in_ram": spill.budget().in_ram, "spilled": spill.budget().spilled}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packets", default="400000,800000,1600000", help="comma list of capture sizes (packets)")
    ap.add_argument("--budget", default="16M", help="memory budget of the budgeted runs (default 16M)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "forensics"))
    from test_bounded_memory import write_small_packet_capture

    env = {k: v for k, v in os.environ.items() if not k.startswith("NETGHOST_PCAP_")}
    mb = 1 << 20
    print(f"{'packets':>9} {'budget':>6} | peak MB (tracemalloc, above start): {'analysis':>8} {'semantic':>8} "
          f"{'reports':>7} | held after analysis | spilled MB | peak RSS MB (VmHWM) | CPU s")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(v) for v in args.packets.split(",")]:
            cap = Path(tmp) / f"cap_{n}.pcap"
            write_small_packet_capture(cap, n)
            for budget in ("none", args.budget):
                out = subprocess.run([sys.executable, "-c", CHILD, str(cap), budget], env=env, capture_output=True,
                                     text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                print(f"{n:>9} {budget:>6} | {'':>35} {r['analysis'] / mb:>8.1f} {r['semantic'] / mb:>8.1f} "
                      f"{r['reports'] / mb:>7.1f} | {r['held'] / mb:>19.1f} | {r['spilled'] / mb:>10.1f} | {r['hwm'] / mb:>18.1f} | "
                      f"{r['cpu']:.2f}")
            cap.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
