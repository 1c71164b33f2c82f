"""The compiled TCP kernel gives exactly the rules' outputs (``tcp/_rules.py``) on generated TCP programs.

The rules' home is ``run_rules`` (run here through ``analyze_tcp_sequences``' pure path,
``compiled=False``); the compiled kernel is its C port. Compared: the analysis bitmask, the sub-stream
index, iRTT and ack_rtt of every segment, on Hypothesis-generated segment sequences full of
retransmissions, holes, dup ACKs, zero windows and probes, keep-alives, wraparound, port reuse and
garbage, on dense collisions of small sequence values, past tshark's 1000-segment un-ACKed cap, on a
long flow wrapping the sequence space twice, on a generated mixed capture, and on a 200k-segment
slice of the benchmark capture when present. (The corpus captures: ``test_tcp_compiled.py``.)
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netghost.forensics import analyze_capture
from netghost.forensics.tcp import (
    FLAG_NAMES,
    analyze_tcp_sequences,
    compiled_tcp,
    group_conversations,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
CAPTURES = sorted(p for d in ("pcaps", "pairs") for p in (DATA / d).iterdir() if p.suffix in {".pcap", ".pcapng"})
SMALL = ROOT / "bench" / "_work" / "small.pcap"
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


pytestmark = pytest.mark.skipif(compiled_tcp() is None, reason="compiled TCP kernel not built (no C compiler)")


def _same(ref: tuple[np.ndarray, ...], got: tuple[np.ndarray, ...], keep: np.ndarray) -> list[str]:
    diffs = []
    for name, r, g in zip(("flags", "sub", "irtt", "ack_rtt"), ref, got, strict=True):
        eq = ((np.isnan(r) & np.isnan(g)) | (r == g)) if r.dtype.kind == "f" else r == g
        bad = np.flatnonzero(~eq & keep)
        if bad.size:
            extra = ""
            if name == "flags":
                x = r[bad] ^ g[bad]
                extra = str({f: int(((x >> i) & 1).sum()) for i, f in enumerate(FLAG_NAMES) if ((x >> i) & 1).any()})
            diffs.append(f"{name}: {bad.size} segments differ (first {bad[:5].tolist()}) {extra}")
    return diffs


def _reference(conv: np.ndarray, dirn: np.ndarray, **kw: Any) -> tuple[np.ndarray, ...]:
    """The rules themselves: ``analyze_tcp_sequences``' pure path, which gathers the columns and runs ``run_rules``."""
    return analyze_tcp_sequences(conv, dirn, compiled=False, **kw)


def _check(conv: np.ndarray, dirn: np.ndarray, **kw: Any) -> tuple[np.ndarray, ...]:
    """Assert the compiled kernel equals the rules on every segment; return the compiled outputs."""
    ref = _reference(conv, dirn, **kw)
    kw.pop("order", None)  # the compiled kernel walks capture order
    got = analyze_tcp_sequences(conv, dirn, **kw)
    everywhere = np.ones(conv.shape[0], bool)
    assert not _same(ref, got, everywhere), _same(ref, got, everywhere)
    return got


def _capture_inputs(path: Path, limit: int | None = None) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    an = analyze_capture(path)
    cols, rows = an.cols, an.tcp_rows[:limit]
    conv, dirn, order = group_conversations(cols, rows, 6)
    return conv, dirn, {"seq": cols.seq, "ack": cols.ack, "flags": cols.tcp_flags, "win": cols.win,
                        "seglen": cols.paylen, "ts": cols.ts, "wscale": cols.wscale, "order": order, "rows": rows}


def test_generated_mixed_capture_identical(tmp_path: Path) -> None:
    out = tmp_path / "mixed.pcap"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_big_pcap.py"), "-n", "40000", "-o", str(out),
                    "--seed", "11"], check=True, capture_output=True)
    conv, dirn, kw = _capture_inputs(out)
    flags = _check(conv, dirn, **kw)[0]
    # the generator injects every kind of trouble: the comparison is not vacuous
    for name in ("lost_segment", "duplicate_ack", "retransmission", "zero_window_probe", "keep_alive"):
        assert (flags & (1 << FLAG_NAMES.index(name))).any(), name


@pytest.mark.skipif(not SMALL.exists(), reason="bench/_work/small.pcap not generated (bench/gen_big_pcap.py)")
def test_bench_slice_identical() -> None:
    conv, dirn, kw = _capture_inputs(SMALL, 200_000)
    _check(conv, dirn, **kw)


# ---------------------------------------------------------------------------------------------------
# Hypothesis: a small TCP "program" per conversation, interpreted into segments
# ---------------------------------------------------------------------------------------------------

# common events several times, garbage (seq jumps, wild ACKs, new ISNs) rarely
KINDS = ("data",) * 6 + ("ack",) * 3 + ("lose", "lose", "retx", "fastretx", "fastretx", "swap", "dupack", "dupack",
         "zerowin", "zwp", "zwp", "winupd", "keepalive", "fill", "fill", "fin", "rst", "spurious") * 12 + (
         "rst0", "syn_again", "synack_new", "jump", "wild_ack", "back_time")
STEPS = (0.0002, 0.0005, 0.001, 0.002, 0.004, 0.015, 0.03, 0.3)
M = 0xFFFFFFFF

GARBAGE = ("data", "ack", "lose", "retx", "dupack", "zwp", "fin", "rst", "rst0", "syn_again", "synack_new", "jump",
           "wild_ack", "wild_ack", "back_time", "spurious", "keepalive", "fill")

isn = st.one_of(st.integers(0, M), st.integers(M - 4000, M), st.integers(0, 3000), st.integers(2**31 - 3000, 2**31 + 3000))
step = st.tuples(st.sampled_from(KINDS), st.booleans(), st.integers(0, 2**16), st.integers(0, M))
conversation = st.tuples(isn, isn, st.integers(-1, 9), st.integers(-1, 9), st.booleans(), st.lists(step, max_size=50))
garbage_step = st.tuples(st.sampled_from(GARBAGE), st.booleans(), st.integers(0, 2**16),
                         st.one_of(st.integers(0, M), st.integers(2**30 - 50, 2**31 + 50), st.integers(M - 2**31, M)))
garbage_conversation = st.tuples(isn, isn, st.integers(-1, 14), st.integers(-1, 14), st.booleans(),
                                 st.lists(garbage_step, max_size=30))


class _Conv:
    """Interprets one conversation's program into (dir, seq, ack, flags, win, len, ts, wscale) rows."""

    def __init__(self, c_isn: int, s_isn: int, ws0: int, ws1: int, handshake: bool, t0: float) -> None:  # noqa: PLR0917  one program tuple
        self.rows: list[tuple[int, int, int, int, int, int, float, int]] = []
        self.t = t0
        self.snd = [c_isn, s_isn]
        self.got = [s_isn, c_isn]  # what each side has received in order (its ACK number)
        self.win = [65535, 29200]
        self.ws = [ws0, ws1]
        self.hist: list[list[tuple[int, int]]] = [[], []]
        self.last = [(0, 0), (0, 0)]  # (ack, window) of each side's last segment
        if handshake:
            self.emit(0, c_isn, 0, SYN, 64240, 0, ws0)
            self.emit(1, s_isn, c_isn + 1, SYN | ACK, 65160, 0, ws1)
            self.snd = [c_isn + 1, s_isn + 1]
            self.got = [s_isn + 1, c_isn + 1]
            self.emit(0, self.snd[0], self.got[0], ACK, 502, 0)

    def emit(self, d: int, seq: int, ack: int, fl: int, win: int, ln: int, ws: int = -1) -> None:  # noqa: PLR0917  header fields in wire order
        self.last[d] = (ack & M, win & 0xFFFF)
        self.rows.append((d, seq & M, ack & M, fl, win & 0xFFFF, ln, self.t, ws))

    def data(self, x: int, ln: int, *, lose: bool = False) -> None:
        if not lose:
            self.emit(x, self.snd[x], self.got[x], ACK | PSH, self.win[x], ln)
            if self.got[1 - x] == self.snd[x]:
                self.got[1 - x] = (self.snd[x] + ln) & M
        self.hist[x].append((self.snd[x], ln))
        self.snd[x] = (self.snd[x] + ln) & M

    def ack(self, y: int, win: int | None = None) -> None:
        if win is not None:
            self.win[y] = win
        self.emit(y, self.snd[y], self.got[y], ACK, self.win[y], 0)

    def run(self, kind: str, x: int, p: int, q: int) -> None:
        """One program step: advance the clock, then the action ``kind`` by side ``x`` (``y`` is the peer);
        ``p`` and ``q`` are the step's free integers (timing, lengths, sequence values)."""
        self.t += -0.01 if kind == "back_time" else STEPS[p % len(STEPS)]
        ln = (1, 100, 1448, 536, 1, 2)[q % 6]
        action = _ACTIONS.get(kind)  # "back_time" only moves the clock
        if action is not None:
            action(self, x, 1 - x, p, q, ln)

    # one method per action kind, all called as (x, y, p, q, ln); see _ACTIONS below
    def _data(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.data(x, ln)

    def _lose(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.data(x, ln, lose=True)

    def _ack(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.ack(y)

    def _fastretx(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        hole = [h for h in self.hist[x] if h[0] == self.got[y]]
        if hole:
            self.emit(x, hole[0][0], self.got[x], ACK, self.win[x], hole[0][1])
            self.got[y] = self.snd[x]

    def _resend(self, x: int, y: int, seg: tuple[int, int]) -> None:
        s, n = seg
        self.emit(x, s, self.got[x], ACK, self.win[x], n)
        if self.got[y] == s:
            self.got[y] = self.snd[x]

    def _retx(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        if self.hist[x]:
            self._resend(x, y, self.hist[x][q % len(self.hist[x])])

    def _spurious(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        if self.hist[x]:
            self._resend(x, y, self.hist[x][0])

    def _swap(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        a, b = self.snd[x], (self.snd[x] + ln) & M
        self.emit(x, b, self.got[x], ACK, self.win[x], ln)
        self.t += 0.0003
        self.emit(x, a, self.got[x], ACK, self.win[x], ln)
        self.snd[x] = (b + ln) & M
        if self.got[y] == a:
            self.got[y] = self.snd[x]

    def _dupack(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        for _ in range(1 + q % 4):
            self.ack(y)
            self.t += STEPS[p % 3]

    def _zerowin(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.ack(y, 0)

    def _zwp(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        if q % 3:
            self.ack(y, 0)
        for _ in range(1 + p % 3):
            self.t += 0.001
            self.emit(x, self.snd[x], self.got[x], ACK, self.win[x], 1)
            self.t += 0.001
            self.ack(y)

    def _winupd(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.ack(y, 1 + q % 65535)

    def _keepalive(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.emit(x, self.snd[x] - 1, self.got[x], ACK, self.win[x], q % 2)
        self.t += 0.001
        self.ack(y)

    def _fill(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        la, lw = self.last[y]
        sh = max(self.ws[y], 0) if min(self.ws) >= 0 and q % 2 else 0
        room = (la + (lw << sh) - self.snd[x]) & M
        if 0 < room <= 64000:
            self.data(x, room)

    def _fin(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.emit(x, self.snd[x], self.got[x], FIN | ACK, self.win[x], 0)
        self.snd[x] = (self.snd[x] + 1) & M

    def _rst(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.emit(x, self.snd[x], self.got[x], RST | ACK, 0, 0)

    def _rst0(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.emit(x, 0, 0, RST, 0, 0)

    def _syn_again(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        new = q if p % 2 else (self.snd[0] - 1)
        self.emit(0, new, 0, SYN, 64240, 0, self.ws[0])
        if p % 3:
            self.snd[0] = (new + 1) & M
            self.got[1] = self.snd[0]

    def _synack_new(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.emit(1, q, self.snd[0], SYN | ACK, 65160, 0, self.ws[1])
        self.snd[1] = (q + 1) & M
        self.got[0] = self.snd[1]

    def _jump(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.snd[x] = q

    def _wild_ack(self, x: int, y: int, p: int, q: int, ln: int) -> None:
        self.emit(y, self.snd[y], q, ACK, self.win[y], 0)


_ACTIONS: dict[str, Callable[[_Conv, int, int, int, int, int], None]] = {
    "data": _Conv._data, "lose": _Conv._lose, "ack": _Conv._ack, "fastretx": _Conv._fastretx, "retx": _Conv._retx,
    "spurious": _Conv._spurious, "swap": _Conv._swap, "dupack": _Conv._dupack, "zerowin": _Conv._zerowin,
    "zwp": _Conv._zwp, "winupd": _Conv._winupd, "keepalive": _Conv._keepalive, "fill": _Conv._fill,
    "fin": _Conv._fin, "rst": _Conv._rst, "rst0": _Conv._rst0, "syn_again": _Conv._syn_again,
    "synack_new": _Conv._synack_new, "jump": _Conv._jump, "wild_ack": _Conv._wild_ack,
}


def _segments(convs: list[Any], seed: int) -> tuple[np.ndarray, ...]:
    per = []
    for k, (c_isn, s_isn, ws0, ws1, hs, prog) in enumerate(convs):
        cv = _Conv(c_isn, s_isn, ws0, ws1, hs, 1000.0 + k * 0.01)
        for kind, side, p, q in prog:
            cv.run(kind, int(side), p, q)
        per.append(cv.rows)
    # interleave conversations at random, keeping each one's capture order
    labels = [k for k, rows in enumerate(per) for _ in rows]
    random.Random(seed).shuffle(labels)
    queues = [iter(rows) for rows in per]
    out = [(k, next(queues[k])) for k in labels]
    cols = list(zip(*[(k, *r) for k, r in out], strict=True)) if out else [()] * 9
    conv, dirn, seq, ack, fl, win, ln, ts, ws = (np.asarray(c) for c in cols)
    return (conv.astype(np.int64), dirn.astype(np.int64), seq.astype(np.int64), ack.astype(np.int64),
            fl.astype(np.int64), win.astype(np.int64), ln.astype(np.int64), ts.astype(np.float64), ws.astype(np.int64))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(conversation, min_size=1, max_size=4), st.integers(0, 2**16))
def test_generated_sequences_identical(convs: list[Any], seed: int) -> None:
    conv, dirn, seq, ack, fl, win, ln, ts, ws = _segments(convs, seed)
    if not conv.size:
        return
    _check(conv, dirn, seq=seq, ack=ack, flags=fl, win=win, seglen=ln, ts=ts, wscale=ws)


def test_long_flow_across_wraparounds() -> None:
    """A 6 GB bulk transfer (60 kB segments, seq wrapping past 2**32 twice, a hole and its
    retransmission every 5,000 segments, an ACK every second segment): one lost segment per hole."""
    n_data = 100_000
    isn, ln = 0xFFFF0000, 60_000
    rows: list[tuple[int, int, int, int, int, int, float]] = [
        (0, isn, 0, SYN, 65535, 0, 0.0), (1, 7, isn + 1, SYN | ACK, 65535, 0, 0.001), (0, isn + 1, 8, ACK, 65535, 0, 0.002)]
    t, acked, hole = 0.002, isn + 1, -1
    for k in range(n_data):
        seq = isn + 1 + k * ln
        t += 0.0001
        if k % 5000 == 2500:
            hole = seq  # lost: not captured now, retransmitted after the dup ACKs
        else:
            rows.append((0, seq, 8, ACK, 65535, ln, t))
        if hole < 0:
            acked = seq + ln
        if k % 2 or hole >= 0:
            rows.append((1, 8, acked, ACK, 65535, 0, t + 0.00001))
        if hole >= 0 and k % 5000 == 2503:
            rows.append((0, hole, 8, ACK, 65535, ln, t + 0.00002))
            hole, acked = -1, seq + ln
            rows.append((1, 8, acked, ACK, 65535, 0, t + 0.00003))
    d, seq_, ack_, fl, win, seglen, ts = (np.asarray(c) for c in zip(*rows, strict=True))
    conv = np.zeros(d.shape[0], np.int64)
    flags = _check(conv, d.astype(np.int64), seq=seq_.astype(np.int64) & M, ack=ack_.astype(np.int64) & M,
                   flags=fl.astype(np.int64), win=win.astype(np.int64), seglen=seglen.astype(np.int64),
                   ts=ts.astype(np.float64), wscale=np.full(d.shape[0], -1, np.int64))[0]
    assert ((flags & (1 << FLAG_NAMES.index("lost_segment"))) != 0).sum() == n_data // 5000


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(garbage_conversation, min_size=1, max_size=3), st.integers(0, 2**16))
def test_garbage_sequences_identical(convs: list[Any], seed: int) -> None:
    """Seq jumps, ACKs ~2**31 away, new ISNs, RSTs with seq 0: the modular comparisons agree."""
    conv, dirn, seq, ack, fl, win, ln, ts, ws = _segments(convs, seed)
    if conv.size:
        _check(conv, dirn, seq=seq, ack=ack, flags=fl, win=win, seglen=ln, ts=ts, wscale=ws)


def test_unacked_cap() -> None:
    """tshark lists at most 1000 unacked segments per direction; past that SYN/FIN no longer count
    a byte and no RTT is taken; a second, ordinary conversation beside it is unaffected."""
    rows = [(0, 0, 100, 0, SYN, 0), (0, 1, 500, 101, SYN | ACK, 0), (0, 0, 101, 501, ACK, 0)]
    rows += [(0, 0, 101 + 10 * k, 501, ACK, 10) for k in range(1200)]
    rows += [(0, 0, 12101, 501, FIN | ACK, 0), (0, 1, 501, 12102, ACK, 0)]
    rows += [(1, 0, 9, 0, SYN, 0), (1, 1, 90, 10, SYN | ACK, 0), (1, 0, 10, 91, ACK, 0), (1, 0, 10, 91, ACK, 5),
             (1, 1, 91, 15, ACK, 0)]
    c, d, sq, ak, fl, ln = (np.asarray(x, np.int64) for x in zip(*rows, strict=True))
    ts = np.arange(c.shape[0], dtype=np.float64) * 0.001
    _, _, _, rtt = _check(c, d, seq=sq, ack=ak, flags=fl, win=np.full(c.shape[0], 65535), seglen=ln, ts=ts,
                          wscale=np.full(c.shape[0], -1))
    assert np.isnan(rtt[c == 0][-1])  # the final ACK's segment (FIN) was never listed: no ack_rtt
    assert not np.isnan(rtt[c == 1][-1])


dense_segment = st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 7), st.integers(0, 7),
                          st.sampled_from((ACK, ACK, ACK | PSH, SYN, SYN | ACK, FIN | ACK, RST, RST | ACK, FIN)),
                          st.sampled_from((0, 1, 2, 5)), st.sampled_from((0, 0, 1, 2, 3)),
                          st.sampled_from((0.0, 0.001, 0.005, 0.03, -0.002)), st.integers(-1, 2))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(dense_segment, min_size=1, max_size=60), st.sampled_from((0, 100, M - 4, 2**31 - 3)))
def test_dense_small_values_identical(segs: list[Any], base: int) -> None:
    """Sequence numbers from a handful of values around a base (0, a wrap, the half-space edge) and
    random flags: every equality-driven rule (keep-alive, dup ACK, window update, probes) collides."""
    segs = sorted(segs, key=lambda r: r[0])  # conversations contiguous, order inside kept
    c, d, sq, ak, fl, win, ln, dt, ws = (np.asarray(x) for x in zip(*segs, strict=True))
    _check(c.astype(np.int64), d.astype(np.int64), seq=(sq + base) % 2**32, ack=(ak + base) % 2**32,
           flags=fl.astype(np.int64), win=win.astype(np.int64), seglen=ln.astype(np.int64),
           ts=np.cumsum(dt) + 5.0, wscale=ws.astype(np.int64))
