"""The vectorised findings helpers equal the straightforward per-group / per-address code they replaced.

Each test keeps the original expression as the reference (one ``np.unique`` per server group,
``ipaddress`` text per address, one numpy reduction per group, capture copies found in one piece)
and compares on random or corpus inputs, so a speed-up cannot change a report byte.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.forensics.arrays import _stats_at, distinct, median, median_p95
from netghost.forensics.decode import V4_MARK, addr_text, format_addr
from netghost.forensics.engine import Analysis
from netghost.forensics.findings import MAX_FRAMES, Ctx
from netghost.forensics.findings import _copies as findings_copies
from netghost.forensics.findings._context import addr, ep, server_groups, smallest_texts
from netghost.forensics.findings._other import _time_jumps
from netghost.forensics.findings._tcp import _per_group
from tests.forensics.test_findings_parity import _dup_reference  # the one-piece oracle of capture copies

_WORD = st.one_of(st.just(0), st.just(0), st.just(1), st.just(0xFFFF), st.integers(0, 0xFFFF))


@settings(max_examples=400, deadline=None)
@given(st.lists(_WORD, min_size=8, max_size=8))
def test_address_text_matches_ipaddress(words: list[int]) -> None:
    """Zero runs of every length and place (where ``::`` goes), and IPv4-mapped addresses."""
    v = 0
    for w in words:
        v = (v << 16) | w
    hi, lo = v >> 64, v & (2**64 - 1)
    text = addr_text(hi, lo, int(V4_MARK))
    assert text is None or text == format_addr(hi, lo)
    assert addr(hi, lo) == format_addr(hi, lo)
    mapped = (0xFFFF << 32) | (lo & 0xFFFFFFFF)
    assert addr(0, mapped) == format_addr(0, mapped)
    assert addr_text(int(V4_MARK), lo, int(V4_MARK)) == format_addr(int(V4_MARK), lo)


def _server_groups_reference(a: Any, streams: np.ndarray) -> dict[str, list[int]]:
    """The original server_groups: one np.unique of the ports per group."""
    s_ = a.streams
    groups: dict[str, list[int]] = {}
    if not streams.size:
        return groups
    hosts = np.stack([s_.s_hi[streams], s_.s_lo[streams]], axis=1)
    _, first, inv = np.unique(hosts, axis=0, return_index=True, return_inverse=True)
    for g in np.argsort(first, kind="stable").tolist():
        ss = streams[inv.ravel() == g]
        ports = np.unique(s_.s_port[ss])
        s0 = int(ss[0])
        if ports.shape[0] == 1:
            groups[ep(s_.s_hi[s0], s_.s_lo[s0], ports[0])] = ss.tolist()
        else:
            shown = ", ".join(str(int(p)) for p in ports[:6]) + (f" (+{ports.shape[0] - 6} more)" if ports.shape[0] > 6 else "")
            groups[f"{addr(s_.s_hi[s0], s_.s_lo[s0])} ports {shown}"] = ss.tolist()
    return groups


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 9)), min_size=0, max_size=80), st.randoms())
def test_server_groups_keys_match_reference(rows: list[tuple[int, int]], rnd: Any) -> None:
    """Keys (``host:port`` or ``host ports a, b (+n more)``) and members, in first-appearance order."""
    n = len(rows)
    hosts = np.array([h for h, _ in rows], np.uint64)
    fake = SimpleNamespace(streams=SimpleNamespace(
        s_hi=np.where(hosts == 3, np.uint64(0x20010DB8 << 32), np.uint64(V4_MARK)),
        s_lo=hosts + np.uint64(0x0A000001), s_port=np.array([p * 1000 + 7 for _, p in rows], np.int64)))
    streams = np.array(sorted(rnd.sample(range(n), rnd.randint(0, n))), np.int64) if n else np.zeros(0, np.int64)
    got = server_groups(fake, streams)  # type: ignore[arg-type]
    want = _server_groups_reference(fake, streams)
    assert list(got.items()) == list(want.items())


def test_server_groups_on_the_corpus(corpus_analyses: list[Analysis]) -> None:
    for a in corpus_analyses:
        for streams in (np.flatnonzero(a.streams.syn > 0), np.arange(len(a.streams))):
            assert list(server_groups(a, streams).items()) == list(_server_groups_reference(a, streams).items())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 29), min_size=1, max_size=12), max_size=8))
def test_per_group_sums_match_numpy(groups: list[list[int]]) -> None:
    rng = np.random.default_rng(len(groups))
    fake = SimpleNamespace(syn=rng.integers(0, 5, 30), first_ts=rng.random(30) * 1e9)
    named = {f"g{i}": g for i, g in enumerate(groups)}
    attempts, first, members, bounds = _per_group(fake, named)
    assert attempts == [int(fake.syn[np.asarray(g)].sum()) for g in groups]
    assert first == [float(fake.first_ts[np.asarray(g)].min()) for g in groups]
    assert [members[bounds[i] : bounds[i + 1]].tolist() for i in range(len(groups))] == groups


def test_frames_of_groups_take_lists_in_any_order(corpus_analyses: list[Analysis]) -> None:
    for a in corpus_analyses:
        n = len(a.streams)
        if not n:
            continue
        x = Ctx(a)
        rng = np.random.default_rng(n)
        groups = [rng.permutation(n)[: rng.integers(1, min(n, 120) + 1)].tolist() for _ in range(4)]

        def pick(r: np.ndarray, x: Ctx = x) -> Any:
            return (x.seg("fl", r) & 0x02) != 0

        assert x.frames_of_groups(groups, pick) == [x.frames_of(np.asarray(g), pick) for g in groups]


def test_capture_duplicates_in_small_chunks(corpus_analyses: list[Analysis], monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-shot path's chunked candidate pass (chunks of 7 segments here) finds the same copies."""
    monkeypatch.setattr(findings_copies, "CHUNK", 7)
    seen = 0
    for a in corpus_analyses:
        want = _dup_reference(a)
        seen += int(want.sum())
        assert np.array_equal(findings_copies.capture_duplicates(a), want)
    assert seen  # the corpus holds a capture with copies


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-5, 5), max_size=30))
def test_distinct_matches_unique(xs: list[int]) -> None:
    v = np.array(xs, np.int64)
    assert np.array_equal(distinct(v), np.unique(v))


@settings(max_examples=60, deadline=None)
@given(st.integers(1000, 5000), st.integers(0, 2**32 - 1), st.sampled_from(["plain", "zeros", "neg0", "inf", "negative"]))
def test_median_p95_on_the_int64_view_matches_numpy(n: int, seed: int, kind: str) -> None:
    """Large non-negative samples are partitioned as int64 bit patterns (median first, then the upper half)."""
    rng = np.random.default_rng(seed)
    v = rng.lognormal(size=n) * 0.01
    if kind == "zeros":
        v[rng.random(n) < 0.3] = 0.0
    elif kind == "neg0":
        v[rng.integers(0, n)] = -0.0
    elif kind == "inf":
        v[rng.integers(0, n, 3)] = np.inf
    elif kind == "negative":
        v[rng.integers(0, n, 3)] = -1.5
    med, p95 = median_p95(v.copy(), 1000.0)
    assert med == float(np.median(v * 1000.0))
    want = float(np.percentile(v * 1000.0, 95))
    assert p95 == want or (np.isnan(p95) and np.isnan(want))
    assert median(v.copy()) == float(np.median(v))


_V4_OR_V6 = st.one_of(
    st.tuples(st.just(int(V4_MARK)), st.integers(0, 2**32 - 1)),
    st.tuples(st.just(int(V4_MARK)), st.sampled_from([0, 1, 9, 10, 99, 100, 255, 256, 0x0A000001, 0x01020304, 2**32 + 5])),
    st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1)),
    st.tuples(st.just(0), st.integers(0, 2**32 - 1).map(lambda v: (0xFFFF << 32) | v)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_V4_OR_V6, min_size=1, max_size=12), max_size=6), st.integers(1, 4))
def test_smallest_texts_match_sorting_every_text(groups: list[list[tuple[int, int]]], k: int) -> None:
    """IPv4 text order from octet ranks (9 < 10 numerically, "10" < "9" as text), IPv6 and mapped mixed in."""
    flat = [a for g in groups for a in g]
    hi = np.array([h for h, _ in flat], np.uint64)
    lo = np.array([lo for _, lo in flat], np.uint64)
    bounds = np.cumsum([0, *[len(g) for g in groups]]).tolist()
    want = [sorted({format_addr(h, lo_) for h, lo_ in g})[:k] for g in groups]
    assert smallest_texts(hi, lo, bounds, k) == want


def _time_jumps_reference(ts: np.ndarray) -> tuple[np.ndarray, float, int]:
    """The plain chunked fold: every chunk's smallest step folded with ``min``."""
    step, last = 1 << 16, ts.shape[0] - 1
    low, count, back = np.inf, 0, []
    for lo in range(0, max(last, 0), step):
        d = ts[lo + 1 : min(lo + step, last) + 1] - ts[lo : min(lo + step, last)]
        low = min(low, float(d.min()))
        b = np.flatnonzero(d < -1.0)
        count += b.shape[0]
        back += (b + lo).tolist()
    return np.asarray(back[:MAX_FRAMES], np.int64), low if count else 0.0, count


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 199_999), st.sampled_from([-5.0, -1.5, -1.0, -0.5, np.nan])), max_size=6))
def test_time_jumps_with_mostly_monotonic_chunks(edits: list[tuple[int, float]]) -> None:
    """Chunks without a step back are skipped by one comparison; jumps, small steps back and NaN are not."""
    ts = np.arange(200_000) * 0.001
    for i, step in edits:
        ts[i:] += 0.0 if np.isnan(step) else step
        if np.isnan(step):
            ts[i] = np.nan
    with np.errstate(invalid="ignore"):
        first, low, count = _time_jumps(ts)
        want_first, want_low, want_count = _time_jumps_reference(ts)
        back = np.flatnonzero(np.diff(ts) < -1.0)
    assert np.array_equal(first, want_first) and np.array_equal(first, back[:MAX_FRAMES])
    assert count == want_count == back.shape[0]
    assert low == want_low or (np.isnan(low) and np.isnan(want_low))
    for n in range(4):
        assert _time_jumps(np.arange(float(n)))[1:] == (0.0, 0)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 3000), st.integers(0, 2**32 - 1), st.lists(st.integers(0, 10**6), min_size=1, max_size=5),
       st.booleans(), st.booleans())
def test_order_statistics_match_a_full_partition(n: int, seed: int, raw_ks: list[int], ties: bool, nan: bool) -> None:
    """Single-kth selections (plus a max for the rank below) leave the values np.partition would."""
    rng = np.random.default_rng(seed)
    v = rng.lognormal(size=n)
    if ties:
        v = np.round(v, 1)
    if nan:
        v[rng.integers(0, n, 2)] = np.nan
    ks = sorted({k % n for k in raw_ks} | {(raw_ks[0] + 1) % n})
    want = v.copy()
    want.partition(ks)
    got = _stats_at(v.copy(), ks)
    assert np.array_equal(np.array(got), want[ks], equal_nan=True)
