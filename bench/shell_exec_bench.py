"""Overhead of SafeExecShell.execute() over a bare subprocess.run(["true"]).

Prints medians/p90/p99 for: the bare subprocess.run; execute() on a SAFE command (``true`` relaxed to SAFE
by an organisation policy, the documented way to allow a named command); execute() on a RISKY command
approved by a callback; and the in-process pieces (redact + truncate of typical output, the WAL
append with and without fsync), and the runner with and without the Linux subreaper launcher. Run: ``.venv/bin/python bench/shell_exec_bench.py [--n 300]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from netghost.governance.wal import WalWriter
from netghost.redact import redact
from netghost.shell import HitlDecision, SafeExecShell, classify, load_org_policy
from netghost.shell.exec import _run as run_mod
from netghost.shell.truncate import truncate

POLICY = """
[[rule]]
id = "bench-true"
prefix = ["true", "bench"]
decision = "SAFE"
justification = "Benchmark: `true` ignores its arguments, does nothing and reads nothing."
match = ["true bench"]
not_match = ["true other"]
"""


def _time(fn: Callable[[], object], n: int) -> list[float]:
    for _ in range(max(3, n // 20)):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def _interleaved(cases: list[tuple[str, Callable[[], object]]], n: int) -> list[tuple[str, list[float]]]:
    """Time the cases round-robin so that a busy neighbour slows all of them alike."""
    for _, fn in cases:
        for _ in range(max(3, n // 20)):
            fn()
    times: dict[str, list[float]] = {name: [] for name, _ in cases}
    for _ in range(n):
        for name, fn in cases:
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1e3)
    return list(times.items())


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _row(name: str, ms: list[float]) -> dict[str, float | str]:
    return {
        "name": name,
        "p50_ms": round(statistics.median(ms), 3),
        "p90_ms": round(_pct(ms, 0.9), 3),
        "p99_ms": round(_pct(ms, 0.99), 3),
        "mean_ms": round(statistics.fmean(ms), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    n = args.n
    rows: list[dict[str, float | str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        policy_path = Path(tmp) / "policy.toml"
        policy_path.write_text(POLICY)
        policy = load_org_policy(policy_path)
        assert classify("true bench", policy).verdict == "SAFE"

        safe = SafeExecShell("bench_safe", lambda r: HitlDecision.deny(), audit_dir=tmp, policy=policy)
        risky = SafeExecShell("bench_risky", lambda r: HitlDecision.approve(), audit_dir=tmp)
        blocked = SafeExecShell("bench_forbidden", lambda r: HitlDecision.deny(), audit_dir=tmp)
        cases: list[tuple[str, Callable[[], object]]] = [
            ("bare subprocess.run(['true'])", lambda: subprocess.run(["true"], check=False)),
            (
                "  same, capture_output + new session",
                lambda: subprocess.run(["true"], check=False, capture_output=True, start_new_session=True),
            ),
            (
                "execute('true bench') SAFE via org policy",
                lambda: safe.execute({"command": "true bench", "reasoning": "bench"}),
            ),
            (
                "execute('true') RISKY, callback approves",
                lambda: risky.execute({"command": "true", "reasoning": "bench"}),
            ),
            (
                "execute('sudo true') FORBIDDEN (no process)",
                lambda: blocked.execute({"command": "sudo true", "reasoning": "bench"}),
            ),
        ]
        rows.extend(_row(name, ms) for name, ms in _interleaved(cases, n))
        for shell in (safe, risky, blocked):
            shell.close()

        # The subreaper launcher (Linux) is the price of killing setsid() daemons: one small Python start.
        env = run_mod.scrub_env()
        with_reaper = run_mod.USE_REAPER

        def run_true(reaper: bool) -> object:
            run_mod.USE_REAPER = reaper
            return run_mod.run_argv(["true"], timeout_s=10, env=env)

        reaper_cases: list[tuple[str, Callable[[], object]]] = [
            ("run_argv(['true']) without the reaper launcher", lambda: run_true(False)),
            ("run_argv(['true']) with the reaper launcher", lambda: run_true(with_reaper)),
        ]
        rows.extend(_row(name, ms) for name, ms in _interleaved(reaper_cases, max(10, n // 5)))
        run_mod.USE_REAPER = with_reaper

        sample = json.dumps(
            [
                {
                    "name": f"rule-{i}",
                    "access": "Allow",
                    "priority": 100 + i,
                    "etag": 'W/"77074d1f-d0cc-461c-b6f5-a3dd5f2ef9e2"',
                }
                for i in range(40)
            ],
            indent=2,
        )
        rows.append(
            _row(
                f"redact+truncate {len(sample)} B nsg-rule JSON",
                _time(lambda: truncate(redact(sample).text), n),
            )
        )
        corpus = Path(__file__).resolve().parent.parent / "tests" / "data" / "shell" / "secrets_dev.jsonl"
        dense = "\n".join(json.loads(line)["text"] for line in corpus.read_text().splitlines())
        rows.append(
            _row(
                f"redact {len(dense)} B secrets corpus (127 hits)",
                _time(lambda: redact(dense), max(5, n // 20)),
            )
        )
        rec = {"kind": "bench", "output": "x" * 200}
        with WalWriter(Path(tmp) / "fsync.jsonl") as w:
            rows.append(_row("WalWriter.append (fsync)", _time(lambda: w.append(rec), n)))
        with WalWriter(Path(tmp) / "nofsync.jsonl", fsync=False) as w:
            rows.append(_row("WalWriter.append (no fsync)", _time(lambda: w.append(rec), n)))

    bare = float(rows[0]["p50_ms"])
    piped = float(rows[1]["p50_ms"])
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"SafeExecShell.execute() overhead (n={n} per row, the first five interleaved; medians compared)")
    print(f"{'case':50} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'vs bare':>9} {'vs piped':>9}")
    for row in rows:
        is_exec = str(row["name"]).startswith("execute('true")
        over = f"+{float(row['p50_ms']) - bare:.2f}" if is_exec else ""
        over_piped = f"+{float(row['p50_ms']) - piped:.2f}" if is_exec else ""
        print(
            f"{row['name']:50} {row['p50_ms']:>8} {row['p90_ms']:>8} {row['p99_ms']:>8} {over:>9} {over_piped:>9}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
