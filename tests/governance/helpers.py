"""Shared test helpers for the governance tests: a deterministic clock and WAL builders."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from netghost.governance.wal import WalWriter


class FakeClock:
    """A clock that advances one millisecond per call (tests never sleep)."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 11, 22, 6, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


def write_wal(path: Path, n: int) -> list[dict[str, object]]:
    """Write ``n`` small records (no fsync: these files are throwaway) and return them as stored."""
    with WalWriter(path, fsync=False, clock=FakeClock()) as w:
        return [w.append({"kind": "t", "i": i, "msg": f"record number {i}"}) for i in range(n)]
