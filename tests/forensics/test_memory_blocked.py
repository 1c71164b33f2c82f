"""The blocked (bounded-memory) paths of the findings and the semantic build give the one-shot results.

Past the memory budget, passes over per-segment index sets run in blocks of ``findings_num.BLOCK``
rows and long results are spill-allocated (file-backed). Tiny blocks and a zero budget drive every
one of those paths on small captures: the semantic document of every corpus capture must not
change, and every synthetic-fault test must still find its fault with the same evidence.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from netghost.forensics import arrays as findings_num
from netghost.forensics import spill
from netghost.forensics.engine import analyze_capture
from netghost.forensics.findings import MAX_FRAMES, Ctx
from netghost.forensics.findings import _context as findings_base
from netghost.forensics.findings import _copies as findings_copies
from netghost.forensics.findings._other import _time_jumps
from netghost.forensics.report import _semantic as semantic
from tests.forensics import test_findings_synthetic as synthetic

DATA = Path(__file__).resolve().parents[1] / "data"
CAPTURES = sorted(p for p in (DATA / "pcaps").glob("*.pcap*") if not p.name.endswith(".json"))
SYNTHETIC = sorted(n for n, f in vars(synthetic).items() if n.startswith("test_") and inspect.isfunction(f))


def _blocked(monkeypatch: pytest.MonkeyPatch, rows: int = 3) -> None:
    """Blocks of ``rows`` rows and a zero memory budget (everything long spills to temp files)."""
    for mod in (findings_num, findings_base, findings_copies, semantic):
        monkeypatch.setattr(mod, "BLOCK", rows)
    monkeypatch.setattr(spill, "_BUDGET", spill.MemoryBudget(0))


def _spilled(v: Any) -> bool:
    while v is not None:
        if isinstance(v, np.memmap):
            return True
        v = v.base
    return False


def _doc(a: Any) -> str:
    return json.dumps(semantic.build_semantic(a, 1), sort_keys=True)


@pytest.mark.parametrize("cap", CAPTURES, ids=[p.name for p in CAPTURES])
def test_blocked_semantic_equals_one_shot_on_the_corpus(cap: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill, "_BUDGET", spill.MemoryBudget(1 << 40))
    a = analyze_capture(cap)
    want = _doc(a)
    _blocked(monkeypatch)
    assert _doc(a) == want


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_faults_are_found_on_the_blocked_path(name: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _blocked(monkeypatch)
    getattr(synthetic, name)(tmp_path)


def test_helpers_match_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    _blocked(monkeypatch, rows=7)
    rng = np.random.default_rng(5)
    v = rng.integers(-3, 50, 1000)
    idx = np.sort(rng.choice(1000, 400, replace=False))
    assert np.array_equal(findings_num.nonzero_blocks(1000, lambda lo, hi: v[lo:hi] > 20), np.flatnonzero(v > 20))
    got = findings_num.select(idx, lambda r: v[r] % 3 == 0)
    assert np.array_equal(got, idx[v[idx] % 3 == 0])
    assert _spilled(got)  # long result: spilled under a zero budget
    assert np.array_equal(findings_num.gather(v, idx, np.int16), v[idx].astype(np.int16))
    assert np.array_equal(findings_num.count_by(lambda r: v[r] + 3, idx, 60), np.bincount(v[idx] + 3, minlength=60))
    probe = np.arange(-2, 1003)
    assert np.array_equal(findings_num.in_sorted(idx, probe), np.isin(probe, idx))
    assert not findings_num.in_sorted(idx[:0], probe).any()
    acc = findings_num.Collect(100, np.int64)
    acc.add(np.arange(3))
    assert np.array_equal(acc.result(), np.arange(3))


def test_rows_of_many_in_pieces_is_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    a = analyze_capture(CAPTURES[0].parent / "chrissanders_tcp_retransmissions.pcapng")
    x = Ctx(a)
    streams = np.arange(len(a.streams))[::-1].copy()
    rows, owner = x.rows_of_many(streams)
    _blocked(monkeypatch, rows=4)
    pieces = list(Ctx(a).iter_rows_of_many(streams))
    assert len(pieces) > 1 and all(p[0].shape[0] <= 4 for p in pieces)
    assert np.array_equal(np.concatenate([p[0] for p in pieces]), rows)
    assert np.array_equal(np.concatenate([p[1] for p in pieces]), owner)


def test_capture_duplicates_split_by_digest_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cap = synthetic.Capture()
    for i in range(60):  # copies in several streams, some within 1 ms (capture-made), some later (resent)
        seg = synthetic.ether(synthetic.ipv4_packet(synthetic.C, synthetic.S, 6, synthetic.tcp_segment(
            40000 + i % 3, 443, 1000 + 100 * i, 5001, synthetic.ACK, data=b"d" * 100), ident=100 + i))
        cap.add(0.1 + i * 0.01, seg)
        cap.add(0.1 + i * 0.01 + (0.00002 if i % 4 else 0.005), seg)
    a = analyze_capture(cap.write(tmp_path / "dup.pcap"))
    want = findings_copies.capture_duplicates(a)
    assert 0 < int(want.sum()) < want.shape[0]
    _blocked(monkeypatch, rows=5)
    got = findings_copies.capture_duplicates(a)
    assert np.array_equal(got, want)


def test_time_jumps_match_numpy() -> None:
    rng = np.random.default_rng(2)
    ts = np.cumsum(rng.choice([0.5, -2.0, 0.1], 300_000, p=[0.6, 0.1, 0.3]))
    d = np.diff(ts)
    first, low, count = _time_jumps(ts)
    assert np.array_equal(first, np.flatnonzero(d < -1.0)[:MAX_FRAMES])
    assert (low, count) == (float(d.min()), int(np.count_nonzero(d < -1.0)))
    assert _time_jumps(np.arange(5.0))[1:] == (0.0, 0)


def test_max_memory_sets_the_budget_and_rejects_nonsense(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from netghost.forensics.cli import main

    monkeypatch.setattr(spill, "_BUDGET", None)
    cap = CAPTURES[0]
    assert main([str(cap), "--semantic-dir", str(tmp_path), "--report-dir", str(tmp_path), "--max-memory", "3M"]) == 0
    assert spill.budget().limit == 3 << 20
    with pytest.raises(SystemExit) as exc:
        main([str(cap), "--max-memory", "lots"])
    assert exc.value.code == 2
    assert "not a memory size" in capsys.readouterr().err
