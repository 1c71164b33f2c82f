"""Synthesized-capture throughput: packets/s and MB/s per shipped scenario and capture point.

Run: ``python bench/lab_synth_bench.py [--window 60]`` (about 10 s at the default window). The
synthesizer is pure Python (a per-connection TCP simulator plus struct encoding), so this is the
figure that bounds how long a lab capture takes to "finish" once the clock says it stopped.
"""

from __future__ import annotations

import argparse
import struct
import time

from netghost.lab.synth import synthesize_capture
from netghost.lab.world import load_world, scenario_names

T0 = 1_795_000_000.0


def _count(data: bytes) -> int:
    n, pos = 0, 24
    while pos < len(data):
        pos += 16 + struct.unpack_from("<I", data, pos + 8)[0]
        n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--window", type=float, default=60.0, help="capture window in lab seconds")
    args = parser.parse_args()
    total_pkts, total_s = 0, 0.0
    print(f"{'scenario':30} {'vm':15} {'packets':>8} {'MB':>7} {'seconds':>8} {'pkts/s':>9}")
    for name in scenario_names():
        world = load_world(name)
        for vm in ("web-vm-01", "redis-primary"):
            if world.vm(vm) is None:
                continue
            t = time.perf_counter()
            data = synthesize_capture(world, vm, T0, T0 + args.window)
            dt = time.perf_counter() - t
            n = _count(data)
            total_pkts += n
            total_s += dt
            print(f"{name:30} {vm:15} {n:8d} {len(data) / 1e6:7.2f} {dt:8.3f} {n / dt:9.0f}")
    print(f"{'total':46} {total_pkts:8d} {'':7} {total_s:8.3f} {total_pkts / total_s:9.0f}")


if __name__ == "__main__":
    main()
