"""Per-call cost of a lab ``az`` call: the resident lab against the old process-per-call path, same run.

A typical read (``az network nic show -g prod-rg -n web-vm-01VMNic -o json``) is run ``--calls`` times through
the lab's ``bin/az`` launcher as a subprocess (what the Safe-Exec Shell starts), once with the lab state's
resident lab serving it and once with none (the launcher's fallback: ``python -m netghost.lab.az`` loads the
simulator and the world every call). Prints both medians, the ratio, the 50 ms target, and that both
paths printed the same bytes.

Run: ``.venv/bin/python bench/lab_call_bench.py [--calls 100] [--old-calls 100]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from netghost.lab import create_bin_dir, init_state, start_resident

TARGET_MS = 50.0
ARGV = ["network", "nic", "show", "-g", "prod-rg", "-n", "web-vm-01VMNic", "-o", "json"]


def _median_ms(az: Path, calls: int) -> tuple[float, bytes]:
    times = []
    out = b""
    for _ in range(calls):
        started = time.perf_counter()
        proc = subprocess.run([str(az), *ARGV], capture_output=True, check=False, stdin=subprocess.DEVNULL)
        times.append((time.perf_counter() - started) * 1000)
        if proc.returncode != 0:
            raise SystemExit(f"az exited {proc.returncode}: {proc.stderr.decode(errors='replace')}")
        out = proc.stdout
    return statistics.median(times), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--old-calls", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="netghost-lab-bench-") as tmp:
        state = init_state(Path(tmp) / "lab", "nsg-deny")
        az = create_bin_dir(state.root) / "az"
        old_ms, old_out = _median_ms(az, args.old_calls)
        with start_resident(state.root) as resident:
            if not resident.running:
                raise SystemExit(f"the resident lab did not start: {resident.problem}")
            _median_ms(az, 3)  # warm: the first call parses the world
            new_ms, new_out = _median_ms(az, args.calls)
    print(f"az {' '.join(ARGV)}")
    print(f"  process per call (old): median {old_ms:7.1f} ms over {args.old_calls} calls")
    print(f"  resident lab      (new): median {new_ms:7.1f} ms over {args.calls} calls")
    print(f"  ratio old/new: {old_ms / new_ms:.1f}x   target <= {TARGET_MS:.0f} ms: "
          f"{'met' if new_ms <= TARGET_MS else 'MISSED'}   same output: {'yes' if old_out == new_out else 'NO'}")
    return 0 if new_ms <= TARGET_MS and old_out == new_out else 1


if __name__ == "__main__":
    sys.exit(main())
