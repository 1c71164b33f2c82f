"""The fast building blocks of findings/semantic/ICMP equal the straightforward numpy they replaced.

Each test states the original expression as the reference (np.unique over stacked rows, full
per-segment columns, np.median/np.percentile, the per-row ICMP loop) and compares on random or
corpus inputs, so a speed-up can never change a report.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.forensics.arrays import distinct, median, median_p95, member
from netghost.forensics.decode import V4_MARK, Packets, format_addr
from netghost.forensics.engine import Analysis
from netghost.forensics.findings import Ctx
from netghost.forensics.findings._context import addr, capture_duplicates, group_rows, server_groups
from netghost.forensics.findings._other import _backwards
from netghost.forensics.findings._tcp import _data_segments, syn_failures
from netghost.forensics.icmp import ICMP6_NAMES, ICMP_NAMES, PROTO_NAMES, _addr, analyze_icmp
from netghost.forensics.report._semantic import _value_counts, median_p95_ms
from netghost.forensics.tcp import mix_hash

REPO = Path(__file__).resolve().parents[2]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 2)), min_size=0, max_size=60))
def test_group_rows_matches_unique_rows(rows: list[tuple[int, int, int]]) -> None:
    arr = np.array(rows, np.uint64).reshape(-1, 3)
    o, b = group_rows(arr[:, 0], arr[:, 1], arr[:, 2])
    if not rows:
        assert o.size == 0
        return
    _, inv = np.unique(arr, axis=0, return_inverse=True)
    inv = inv.ravel()
    want = [np.flatnonzero(inv == g) for g in range(int(inv.max()) + 1)]
    got = [o[b[i] : b[i + 1]] for i in range(b.shape[0] - 1)]
    assert [g.tolist() for g in got] == [w.tolist() for w in want]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-1, 5) | st.integers(-(2**31), 2**31 - 1), min_size=0, max_size=50))
def test_value_counts_matches_unique(values: list[int]) -> None:
    """Few distinct values (peeled off by comparison) and many (the rest sorted) count alike."""
    v = np.array(values, np.int32)
    u, k = np.unique(v, return_counts=True)
    assert _value_counts(v) == list(zip(u.tolist(), k.tolist(), strict=True))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 10, allow_nan=False), min_size=1, max_size=80))
def test_median_p95_match_numpy(samples: list[float]) -> None:
    r = np.array(samples)
    ms = r * 1000
    assert median_p95_ms(r.copy()) == (float(np.median(ms)), float(np.percentile(ms, 95)))


def test_median_p95_match_numpy_on_large_samples() -> None:
    rng = np.random.default_rng(5)
    for n in (2, 3, 1000, 1001, 54321):
        r = np.round(rng.exponential(0.02, n), 6)
        assert median_p95_ms(r.copy()) == (float(np.median(r * 1000)), float(np.percentile(r * 1000, 95)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=0, max_size=300))
def test_backwards_matches_diff(steps: list[float]) -> None:
    ts = np.cumsum(np.array(steps, np.float64))
    assert np.array_equal(_backwards(ts), np.flatnonzero(np.diff(ts) < -1.0))


def _dup_reference(a: Analysis) -> np.ndarray:
    """The original capture_duplicates: every segment of a flagged stream hashed and grouped."""
    c = a.cols
    dup = np.zeros(a.tcp_rows.shape[0], bool)
    flagged_stream = a.streams.flagged[a.tcp_stream] > 0 if len(a.streams) else np.zeros(0, bool)
    sel = np.flatnonzero((c.l3[a.tcp_rows] == 4) & (c.ip_id[a.tcp_rows] != 0) & flagged_stream)
    if sel.size < 2:
        return dup
    r = a.tcp_rows[sel]
    h = np.full(r.shape[0], np.uint64(7), np.uint64)
    for col in (c.src_lo[r], c.dst_lo[r], c.sport[r], c.dport[r], c.ip_id[r], c.seq[r], c.ack[r], c.pay_hash[r]):
        h = mix_hash(h, col.astype(np.uint64))
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    d = np.ones(r.shape[0], bool)
    d[first] = False
    d &= (c.ts[r] - c.ts[r[first[inv.ravel()]]]) < 0.001
    dup[sel] = d
    return dup


def test_segment_views_match_full_columns(corpus_analyses: list[Analysis]) -> None:
    for a in corpus_analyses:
        x = Ctx(a)
        c, r = a.cols, a.tcp_rows
        st_ = a.streams
        idx = np.arange(r.shape[0])
        full_fc = (c.src_hi[r] == st_.c_hi[a.tcp_stream]) & (c.src_lo[r] == st_.c_lo[a.tcp_stream]) & (
            c.sport[r] == st_.c_port[a.tcp_stream])
        assert np.array_equal(x.client_side(idx), full_fc)
        fl = c.tcp_flags[r].astype(np.int64)
        assert np.array_equal(x.rst_rows, np.flatnonzero(fl & 0x04))
        pay = c.paylen[r]
        assert x.carrying == int(np.count_nonzero(((fl & 0x02) == 0) & ((pay > 0) | ((fl & 0x01) != 0))))
        assert np.array_equal(x.flagged, np.flatnonzero(a.tcp_flags))
        assert np.array_equal(capture_duplicates(a), _dup_reference(a))
        assert np.array_equal(x.dup, _dup_reference(a))
        for s in range(min(len(st_), 40)):
            assert np.array_equal(np.sort(x.rows_of(s)), np.flatnonzero(a.tcp_stream == s))
        many = np.arange(len(st_))[::3]
        rows, owner = x.rows_of_many(many)
        assert np.array_equal(np.sort(rows), np.flatnonzero(np.isin(a.tcp_stream, many)))
        assert np.array_equal(a.tcp_stream[rows], many[owner])


def test_group_frames_match_one_group_at_a_time(corpus_analyses: list[Analysis]) -> None:
    for a in corpus_analyses:
        x = Ctx(a)
        if not len(a.streams):
            continue
        rng = np.random.default_rng(len(a.streams))
        groups = [rng.choice(len(a.streams), min(len(a.streams), int(rng.integers(1, 70))), replace=False)
                  for _ in range(5)]
        def flag(bit: int, x: Ctx = x) -> Any:
            return lambda rr: (x.seg("fl", rr) & bit) != 0

        for pick in (flag(0x02), flag(0x04 | 0x01), lambda rr: np.ones(rr.shape[0], bool)):
            assert x.frames_of_groups(groups, pick) == [x.frames_of(g, pick) for g in groups]


def test_server_groups_match_unique_rows(corpus_analyses: list[Analysis]) -> None:
    for a in corpus_analyses:
        st_ = a.streams
        streams = np.flatnonzero(st_.syn > 0)
        got = server_groups(a, streams)
        if not streams.size:
            assert got == {}
            continue
        hosts = np.stack([st_.s_hi[streams], st_.s_lo[streams]], axis=1)
        _, first, inv = np.unique(hosts, axis=0, return_index=True, return_inverse=True)
        want = [streams[inv.ravel() == g].tolist() for g in np.argsort(first, kind="stable").tolist()]
        assert list(got.values()) == want


def _icmp_reference(cols: Packets, max_items: int = 20) -> dict[str, Any]:
    """The original per-row ICMP grouping loop."""
    out: dict[str, Any] = {"type_code_counts": {}, "icmpv6_type_code_counts": {}, "errors": []}
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for pr, key, errs in ((1, "type_code_counts", (3, 4, 5, 11, 12)), (58, "icmpv6_type_code_counts", (1, 2, 3, 4))):
        rows = np.flatnonzero((cols.proto == pr) & (cols.icmp_type >= 0))
        if not rows.size:
            continue
        tc = cols.icmp_type[rows].astype(np.int64) * 256 + cols.icmp_code[rows]
        u, c = np.unique(tc, return_counts=True)
        out[key] = {f"{int(x) // 256}/{int(x) % 256}": int(k) for x, k in zip(u, c, strict=True)}
        for r in rows[np.isin(cols.icmp_type[rows], errs)].tolist():
            tck = f"{int(cols.icmp_type[r])}/{int(cols.icmp_code[r])}"
            ip = int(cols.in_proto[r])
            flow = None
            if ip >= 0:
                flow = (f"{PROTO_NAMES.get(ip, str(ip))} {format_addr(cols.in_src_hi[r], cols.in_src_lo[r])}"
                        + (f":{int(cols.in_sport[r])}" if cols.in_sport[r] >= 0 else "")
                        + f" -> {format_addr(cols.in_dst_hi[r], cols.in_dst_lo[r])}"
                        + (f":{int(cols.in_dport[r])}" if cols.in_dport[r] >= 0 else ""))
            g = groups.setdefault((pr, tck, flow), {
                "family": "icmpv6" if pr == 58 else "icmp", "type_code": tck,
                "name": (ICMP6_NAMES if pr == 58 else ICMP_NAMES).get(tck, f"type {tck}"),
                "inner_flow": flow, "count": 0, "mtu": None, "reporters": [], "frames": [], "first_ts": float(cols.ts[r]),
            })
            g["count"] += 1
            if cols.icmp_mtu[r] >= 0:
                g["mtu"] = int(cols.icmp_mtu[r])
            rep = format_addr(cols.src_hi[r], cols.src_lo[r])
            if rep not in g["reporters"] and len(g["reporters"]) < 5:
                g["reporters"].append(rep)
            if len(g["frames"]) < 10:
                g["frames"].append(int(cols.frame[r]))
    out["errors"] = sorted(groups.values(), key=lambda g: -g["count"])[:max_items]
    return out


def test_icmp_summary_matches_the_row_loop(corpus_analyses: list[Analysis]) -> None:
    for a in corpus_analyses:
        assert analyze_icmp(a.cols) == _icmp_reference(a.cols)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_icmp_summary_matches_the_row_loop_on_random_errors(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 40))
    base = Packets.empty()
    cols = Packets(**{f: np.full(n, -1, getattr(base, f).dtype) if getattr(base, f).dtype.kind == "i"
                      else np.zeros(n, getattr(base, f).dtype) for f in base.__dataclass_fields__})
    small = st.sampled_from([0, 1, 2, 2**32 + 1])  # 2**32 + 1 renders like 1 as IPv4: buckets must merge
    hi = st.sampled_from([int(V4_MARK), 1])

    def draw(strategy: st.SearchStrategy[int]) -> list[int]:
        return data.draw(st.lists(strategy, min_size=n, max_size=n))

    cols.proto[:] = draw(st.sampled_from([1, 58, 6]))
    cols.icmp_type[:] = draw(st.sampled_from([-1, 0, 2, 3, 11]))
    cols.icmp_code[:] = draw(st.sampled_from([0, 3, 4]))
    cols.in_proto[:] = draw(st.sampled_from([-1, 6, 17]))
    cols.in_src_hi[:] = draw(hi)
    cols.in_src_lo[:] = draw(small)
    cols.in_dst_hi[:] = draw(hi)
    cols.in_dst_lo[:] = draw(small)
    cols.in_sport[:] = draw(st.sampled_from([-1, 53, 40000]))
    cols.in_dport[:] = draw(st.sampled_from([-1, 53]))
    cols.src_hi[:] = draw(hi)
    cols.src_lo[:] = draw(st.integers(0, 8))
    cols.icmp_mtu[:] = draw(st.sampled_from([-1, 1400, 1280]))
    cols.frame[:] = np.arange(1, n + 1)
    cols.ts[:] = np.arange(n) * 0.1
    assert analyze_icmp(cols, max_items=5) == _icmp_reference(cols, max_items=5)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), st.booleans())
def test_address_text_matches_format_addr(hi: int, lo: int, v4: bool) -> None:
    h = int(V4_MARK) if v4 else hi
    assert addr(np.uint64(h), np.uint64(lo)) == format_addr(h, lo) == _addr(h, lo)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 2**40), max_size=40), st.lists(st.integers(-3, 2**40), max_size=10))
def test_distinct_and_member_match_numpy(xs: list[int], vs: list[int]) -> None:
    x, v = np.array(xs, np.int64), np.array(vs, np.int64)
    assert np.array_equal(distinct(x), np.unique(x))
    assert np.array_equal(member(x, v), np.isin(x, v))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=60))
def test_median_helpers_match_numpy(samples: list[float]) -> None:
    v = np.array(samples)
    assert median(v.copy()) == float(np.median(v))
    assert median_p95(v.copy()) == (float(np.median(v)), float(np.percentile(v, 95)))


def test_report_stages_do_not_import_numpy_ma(tmp_path: Path) -> None:
    """numpy imports numpy.ma (~15-40 ms) on the first np.median / plain np.unique; the report
    stages avoid those calls, so a CLI run that did not need it before them does not pay it."""
    code = (
        "import sys\n"
        "from netghost.forensics import analyze_capture, build_semantic, render_report, render_executive_summary\n"
        "from netghost.forensics.dns import analyze_dns\n"
        "from netghost.forensics.icmp import analyze_icmp\n"
        f"a = analyze_capture({str(REPO / 'tests/data/pcaps/chrissanders_dns_recursivequery_server.pcapng')!r})\n"
        "before = 'numpy.ma' in sys.modules\n"
        "analyze_dns(a.dns_msgs, a.cols); analyze_icmp(a.cols)\n"
        "sem = build_semantic(a, 1); render_report(sem); render_executive_summary(sem)\n"
        "print(before, 'numpy.ma' in sys.modules, sem['summary']['dns']['latency_s'] is not None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout.split()
    if out[0] == "True":
        pytest.skip("numpy.ma already imported before the report stages")
    assert out[1:] == ["False", "True"]


def test_data_segment_bound_never_hides_the_overall_finding(corpus_analyses: list[Analysis]) -> None:
    for a in corpus_analyses:
        x = Ctx(a)
        syn_failures(x)  # marks explained streams, as in build_findings
        c, r = a.cols, a.tcp_rows
        fl = c.tcp_flags[r].astype(np.int64)
        carries = ((fl & 0x02) == 0) & ((c.paylen[r] > 0) | ((fl & 0x01) != 0)) & ~x.dup & ~x.explained[a.tcp_stream]
        exact = int(np.count_nonzero(carries))
        for retransmitted in sorted({0, 1, exact // 60, exact // 50, exact // 49, exact}):
            got = _data_segments(x, retransmitted)
            if got is None:
                assert not (exact >= 50 and retransmitted / exact >= 0.02)
            else:
                assert got == exact
