"""Crash safety: a SIGKILLed writer never loses an acknowledged record, and a torn write is harmless.

The crash test runs a real child process that appends with fsync and prints each ``seq`` only after
``append`` returned (the acknowledgement). It is killed at random moments, 50 times, on the same
file: each restart also exercises the writer's torn-tail truncation. Some records are large so that
a kill can land in the middle of a ``write`` and leave a genuinely torn line.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.governance.plan_token import canonical_json
from netghost.governance.wal import WalWriter, read_wal, verify

from .helpers import write_wal

_CHILD = r"""
import random, sys
from netghost.governance.wal import WalWriter
rng = random.Random(int(sys.argv[2]))
w = WalWriter(sys.argv[1], fsync=True)
print("ready", w.next_seq, flush=True)
while True:
    size = rng.choice((10, 100, 1000, 64_000))
    rec = w.append({"kind": "crash", "pad": "x" * size})
    sys.stdout.write(f"{rec['seq']}\n")
    sys.stdout.flush()
"""


@pytest.mark.slow
def test_sigkill_50_times_never_loses_an_acknowledged_record(tmp_path: Path) -> None:
    path = tmp_path / "crash" / "wal.jsonl"
    rng = random.Random(20261122)
    acknowledged: set[int] = set()
    torn_seen = 0
    for round_no in range(50):
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(path), str(round_no)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        ready = child.stdout.readline().split()
        assert ready[0] == "ready", ready
        # A restarted writer resumes right after the last durable record.
        assert int(ready[1]) >= max(acknowledged, default=0) + 1
        for _ in range(rng.randrange(0, 6)):
            line = child.stdout.readline()
            if line:
                acknowledged.add(int(line))
        time.sleep(rng.uniform(0, 0.004))  # a random moment, usually mid-append
        os.kill(child.pid, signal.SIGKILL)
        rest = child.stdout.read()  # acks printed before the kill are still in the pipe
        child.stdout.close()
        child.wait(timeout=10)
        assert child.returncode == -signal.SIGKILL
        acknowledged.update(int(x) for x in rest.split())

        stored = {r["seq"] for r in read_wal(path).records}
        assert acknowledged <= stored, f"round {round_no}: lost {sorted(acknowledged - stored)}"
        report = verify(path)
        assert report.ok, report.breaks
        assert {b.kind for b in report.breaks} <= {"torn_tail"}
        torn_seen += report.torn_tail
    assert len(acknowledged) > 25
    print(f"torn tails seen after {torn_seen} of 50 kills")
    # After the last crash the next writer cleans up any torn tail and the chain is whole.
    with WalWriter(path, fsync=False) as w:
        w.append({"kind": "after"})
    final = verify(path)
    assert final.ok and final.breaks == []


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=6),
    payload=st.text(max_size=40),
    cut=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
)
def test_torn_write_never_loses_an_acknowledged_record(
    tmp_path_factory: pytest.TempPathFactory, n: int, payload: str, cut: float
) -> None:
    """Whatever prefix of the next line a crash leaves, every earlier record survives intact."""
    path = tmp_path_factory.mktemp("torn") / "w.jsonl"
    acked = write_wal(path, n)
    # The line the crashed writer was in the middle of writing:
    pending = {"kind": "t", "msg": payload, "seq": n + 1, "ts": "2026-11-22T06:00:00.000000Z",
               "prev_sha256": acked[-1]["sha256"] if acked else None, "sha256": "sha256:" + "0" * 64}
    line = (canonical_json(pending) + "\n").encode()
    torn = line[: int(cut * len(line))]  # strictly shorter than the full line
    with path.open("ab") as fh:
        fh.write(torn)
    assert read_wal(path).records == acked
    report = verify(path)
    assert report.ok and report.records == n
    with WalWriter(path, fsync=False) as w:
        assert w.next_seq == n + 1
        nxt = w.append({"kind": "t", "msg": "resumed"})
    assert nxt["prev_sha256"] == (acked[-1]["sha256"] if acked else None)
    after = verify(path)
    assert after.ok and after.breaks == [] and read_wal(path).records[:n] == acked


@pytest.mark.parametrize("when", ["after_the_write", "mid_write"])
def test_an_interrupt_inside_append_never_forks_the_chain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          when: str) -> None:
    """Ctrl-C's KeyboardInterrupt can land while a record is being written (after ``os.write`` returned, in
    the fsync; or with half the line out). The writer's state follows the file: a whole line counts, a torn
    one is cut off, and the next append takes the next seq, so the chain verifies (no seq appears twice)."""
    path = tmp_path / "log.jsonl"
    w = WalWriter(path, fsync=True)
    w.append({"kind": "before"})
    real_write, real_fsync = os.write, os.fsync

    def half_then_interrupt(fd: int, data: bytes | memoryview) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise KeyboardInterrupt

    def interrupt(fd: int) -> None:
        real_fsync(fd)
        raise KeyboardInterrupt

    with monkeypatch.context() as mp, pytest.raises(KeyboardInterrupt):
        if when == "mid_write":
            mp.setattr(os, "write", half_then_interrupt)
        else:
            mp.setattr(os, "fsync", interrupt)
        w.append({"kind": "interrupted"})
    w.append({"kind": "after"})
    w.close()
    kinds = [r["kind"] for r in read_wal(path).records]
    assert kinds == (["before", "interrupted", "after"] if when == "after_the_write" else ["before", "after"])
    assert [r["seq"] for r in read_wal(path).records] == list(range(1, len(kinds) + 1))
    assert verify(path).ok
