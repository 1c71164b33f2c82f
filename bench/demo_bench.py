"""Wall time of ``ghost-agent demo --yes --scenario W`` for every shipped world, as a new user runs it.

Each run is a fresh process (interpreter start, lab set-up, the agent's whole investigation, the RCA and,
for capture worlds, the synthesized capture and its forensic reports), timed from outside. Prints each
world's minimum and median over ``--runs`` runs and the slowest world against the 30 s target, then
checks every RCA's cited audit ids exist and every chain verifies (a fast demo that lies is no demo).

Run: ``.venv/bin/python bench/demo_bench.py [--runs 2] [WORLD ...]`` (runs land in ``bench/_work/demo/``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from netghost.governance import read_wal, verify
from netghost.lab import scenario_names

WORK = Path(__file__).resolve().parent / "_work" / "demo"
TARGET_S = 30.0


def _one(world: str, audit: Path) -> float:
    shutil.rmtree(audit, ignore_errors=True)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "netghost", "demo", "--yes", "--scenario", world,
                           "--audit-dir", str(audit)], capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{world}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return wall


def _check(world: str, audit: Path) -> None:
    (rca,) = audit.glob("ghost_rca_*.md")
    ids = {str(r["audit_id"]) for chain in audit.glob("shell_audit_*.jsonl") for r in read_wal(chain).records}
    cited = set(re.findall(r"ghost_\d{8}_\d{6}_\d{3}", rca.read_text(encoding="utf-8")))
    missing = cited - ids
    broken = [p.name for p in audit.glob("*.jsonl") if p.name.startswith(("shell_audit_", "ghost_turns_"))
              and not verify(p).ok]
    if not cited or missing or broken:
        raise SystemExit(f"{world}: cited ids missing {sorted(missing)}, broken chains {broken}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("worlds", nargs="*")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    worlds = args.worlds or scenario_names()
    rows = []
    print(f"{'world':32} {'min s':>7} {'median s':>9}")
    for world in worlds:
        walls = [_one(world, WORK / world) for _ in range(args.runs)]
        _check(world, WORK / world)
        rows.append((world, min(walls), statistics.median(walls)))
        print(f"{world:32} {min(walls):7.1f} {statistics.median(walls):9.1f}", flush=True)
    slowest = max(rows, key=lambda r: r[2])
    print(f"\nslowest: {slowest[0]} {slowest[2]:.1f} s median = {slowest[2] / TARGET_S:.2f} x the {TARGET_S:.0f} s "
          f"target; median over worlds {statistics.median(r[2] for r in rows):.1f} s")
    return 0 if slowest[2] <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
