"""How long an MCP client waits for ``initialize`` from ``ghost-agent mcp`` over stdio (goal: at most 2 s).

Spawns the real command N times, writes one ``initialize`` request and times the first line of the answer
(process start, argument parsing and the early answer of ``netghost.mcp._early``); then the time until
``tools/list`` answers too (the SDK and the governed tools loaded).

Run: ``.venv/bin/python bench/mcp_initialize_bench.py [--runs N] [--lab WORLD]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time


def _one(lab: str | None) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "netghost", "mcp", "--audit-dir", f"{tmp}/audit"] + (["--lab", lab] if lab else [])
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
        proc.stdin.write((json.dumps(init) + "\n").encode())
        proc.stdin.flush()
        proc.stdout.readline()
        initialized = time.monotonic() - start
        for message in ({"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}):
            proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        proc.stdout.readline()
        listed = time.monotonic() - start
        proc.stdin.close()
        proc.wait(timeout=60)
        return initialized, listed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lab", default=None)
    args = parser.parse_args()
    runs = [_one(args.lab) for _ in range(args.runs)]
    for name, values in (("initialize", [r[0] for r in runs]), ("tools/list", [r[1] for r in runs])):
        print(f"{name:<11} median {statistics.median(values):.2f} s  max {max(values):.2f} s  ({args.runs} runs)")
    return 0 if statistics.median(r[0] for r in runs) <= 2.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
