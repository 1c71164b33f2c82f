"""WAL throughput: appends/s with and without fsync, and verify rate in records/s.

Run: ``python bench/wal_bench.py`` (about 10 s). Figures depend on the disk: fsync dominates
durable appends, canonical-JSON + SHA-256 dominate the rest. Records resemble shell audit
records (~600 bytes). Every append also seals the record (HMAC-SHA256) and rewrites the log's
signed checkpoint; the bench uses a throwaway audit key in its temp dir, not the installation's.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from netghost.governance.wal import WalWriter, read_wal, verify

RECORD = {
    "v": 1,
    "kind": "shell_command",
    "session_id": "bench",
    "command": "az network nsg rule list -g rg-prod --nsg-name nsg-web -o table",
    "reasoning": "check whether the NSG blocks 443 from the app gateway subnet",
    "classification": "SAFE",
    "tier": 2,
    "environment": "azure",
    "action": "auto_approved",
    "status": "completed",
    "exit_code": 0,
    "output": "Name  Priority  Access  Direction\n" + "allow-443  100  Allow  Inbound\n" * 6,
    "duration_ms": 412.5,
}


def _appends(path: Path, n: int, *, fsync: bool, budget_s: float) -> tuple[int, float]:
    with WalWriter(path, fsync=fsync, key=path.parent / "key" / "audit.key") as w:
        start = time.perf_counter()
        done = 0
        while done < n and time.perf_counter() - start < budget_s:
            w.append(dict(RECORD, i=done))
            done += 1
        return done, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fsync-records", type=int, default=2000)
    parser.add_argument("--records", type=int, default=50000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        n, secs = _appends(root / "fsync.jsonl", args.fsync_records, fsync=True, budget_s=5.0)
        print(f"append with fsync:    {n / secs:10,.0f} appends/s  ({n} records in {secs:.2f} s)")
        n, secs = _appends(root / "nofsync.jsonl", args.records, fsync=False, budget_s=5.0)
        print(f"append without fsync: {n / secs:10,.0f} appends/s  ({n} records in {secs:.2f} s)")
        path = root / "nofsync.jsonl"
        size = path.stat().st_size
        start = time.perf_counter()
        report = verify(path, key=root / "key" / "audit.key")
        secs = time.perf_counter() - start
        assert report.ok and report.records == n
        print(f"verify:               {n / secs:10,.0f} records/s  ({size / secs / 1e6:.1f} MB/s, {n} records)")
        start = time.perf_counter()
        read = read_wal(path)
        secs = time.perf_counter() - start
        print(f"read_wal:             {len(read.records) / secs:10,.0f} records/s")
        start = time.perf_counter()
        with WalWriter(path, fsync=False, key=root / "key" / "audit.key") as w:
            resumed = w.next_seq
        print(f"resume (open+lock+tail scan): {(time.perf_counter() - start) * 1000:.2f} ms at seq {resumed}")


if __name__ == "__main__":
    main()
