"""Ctrl-C at any write of a shell call: every audit id still names exactly one record, and the log reopens.

Ctrl-C's KeyboardInterrupt can land in any ``os.write`` or ``os.fsync`` of a call: the in-flight note, the
record's line (whole, or half of it out), the checkpoint after it. Whatever the point, the audit trail
must stay one record per audit id (readers look records up by id: a second record under the same id
would hide the first), the chain must verify, every call must be recorded exactly once (its real record
or the "outcome unknown" one recovery appends), and the next shell on the same session (``--resume``)
must open the log, which it refused when the checkpoint had been skipped.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from netghost.governance.wal import read_wal, verify
from netghost.shell import HitlDecision, SafeExecShell
from tests.shell.shell_helpers import Recorder, table_classify

SID = "ghost_20260101_000000"
REAL_WRITE, REAL_FSYNC = os.write, os.fsync

Call = Callable[[SafeExecShell], Any]
CALLS: dict[str, tuple[Call, list[str], list[Any]]] = {  # name -> (the call, its commands, the human's answers)
    "safe": (lambda s: s.execute({"command": "echo one", "reasoning": "r"}), ["echo one"], []),
    "approved": (lambda s: s.execute({"command": "touch marker", "reasoning": "r"}), ["touch marker"],
                 [HitlDecision.approve()]),
    "batch": (lambda s: s.execute_many([{"command": f"echo {w}", "reasoning": "r"} for w in ("a", "b", "c")]),
              ["echo a", "echo b", "echo c"], []),
}


def _shell(tmp_path: Path, answers: list[Any]) -> SafeExecShell:
    return SafeExecShell(SID, Recorder(list(answers)), audit_dir=tmp_path / "audit",  # type: ignore[arg-type]
                         classifier=table_classify, cwd=tmp_path)


def _interrupting(where: str, at: int) -> tuple[Callable[..., Any], dict[str, int]]:
    """A stand-in for ``os.write``/``os.fsync`` that raises KeyboardInterrupt at its ``at``-th call (0: never):
    after the real call, or (``half_write``) with half of the bytes out."""
    seen = {"calls": 0}

    def fake(fd: int, data: Any = None) -> Any:
        seen["calls"] += 1
        hit = seen["calls"] == at
        if where == "fsync":
            REAL_FSYNC(fd)
            if hit:
                raise KeyboardInterrupt
            return None
        if hit and where == "half_write" and len(data) > 1:
            REAL_WRITE(fd, bytes(data[: len(data) // 2]))
            raise KeyboardInterrupt
        written = REAL_WRITE(fd, data)
        if hit:
            raise KeyboardInterrupt
        return written

    return fake, seen


def _run(tmp_path: Path, name: str, where: str, at: int, monkeypatch: pytest.MonkeyPatch) -> tuple[bool, int]:
    """Run call ``name`` with an interrupt at the ``at``-th write or fsync; (was it interrupted, calls seen)."""
    call, _, answers = CALLS[name]
    fake, seen = _interrupting(where, at)
    shell = _shell(tmp_path, answers)
    try:
        with monkeypatch.context() as mp:
            mp.setattr(os, "fsync" if where == "fsync" else "write", fake)
            call(shell)
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    finally:
        shell.close()
    return interrupted, seen["calls"]


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("where", ["write", "half_write", "fsync"])
def test_an_interrupt_at_any_write_leaves_one_record_per_audit_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   name: str, where: str) -> None:
    _, total = _run(tmp_path / "count", name, where, 0, monkeypatch)  # how many writes (fsyncs) the call makes
    assert total >= 2, total
    for at in range(1, total + 1):
        root = tmp_path / f"at{at}"
        interrupted, _ = _run(root, name, where, at, monkeypatch)
        assert interrupted, (where, at)
        with _shell(root, []) as again:  # the resumed session opens the log (it used to refuse it) ...
            again.execute({"command": "echo after", "reasoning": "r"})
        path = again.audit_path
        records = read_wal(path).records
        ids = Counter(r["audit_id"] for r in records)
        assert [i for i, n in ids.items() if n > 1] == [], (where, at, [(r["audit_id"], r["status"]) for r in records])
        assert [r["seq"] for r in records] == list(range(1, len(records) + 1)), (where, at)
        assert all(r["audit_id"] == f"{SID}_{r['seq']:03d}" for r in records), (where, at)
        assert verify(path).ok, (where, at)
        commands = Counter(r["command"] for r in records)
        for command in CALLS[name][1]:  # every call recorded once: its record, or recovery's "outcome unknown"
            assert commands[command] == 1, (where, at, command, commands)
        assert records[-1]["command"] == "echo after" and records[-1]["status"] == "completed", (where, at)
