"""DNS parse and matching: the compiled kernel (_dns.pyx), the numpy path and a slow reference agree.

The reference below is the original implementation (``np.isin`` port test, chained ``mix_hash``
keys, one concatenate per batch); the fast paths must give byte-identical messages and summaries.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.forensics.decode import Gather, Packets, decode_batch
from netghost.forensics.dns import _parse as D
from netghost.forensics.read import iter_batches
from netghost.forensics.read._pcap import CaptureInfo
from netghost.forensics.tcp import mix_hash
from tests.forensics.pcapwriter import (
    ACK,
    PSH,
    Capture,
    dns_message,
    ether,
    ipv4_packet,
    ipv6_packet,
    tcp_segment,
    udp_datagram,
)

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted(p for d in ("pcaps", "pairs") for p in (REPO / "tests" / "data" / d).iterdir()
                if p.name.endswith((".pcap", ".pcapng")))
FIELDS = ("row", "is_response", "msg_id", "rcode", "q_off", "key", "ts")


def _reference(buf: np.ndarray, cols: Packets, payoff: np.ndarray, capend: np.ndarray) -> D.DnsMessages:
    """The original vectorised parse (np.isin port test) plus the original chained-hash matching key."""
    port = np.isin(cols.sport, D.DNS_PORTS) | np.isin(cols.dport, D.DNS_PORTS)
    udp = (cols.proto == 17) & port & (cols.paylen >= 4)
    tcp = (cols.proto == 6) & port & (cols.paylen >= 6) & (cols.tcp_flags >= 0)
    idx = np.flatnonzero(udp | tcp)
    if not idx.size:
        return D.DnsMessages()
    g = Gather(buf)
    a = payoff[idx].copy()
    ln = np.minimum(cols.paylen[idx], capend[idx] - a)
    over_tcp = cols.proto[idx] == 6
    mlen = g.u16(a)
    a = np.where(over_tcp, a + 2, a)
    ln = np.where(over_tcp, ln - 2, ln)
    ok = (ln >= 4) & (~over_tcp | (mlen >= 4))
    idx, a, ln = idx[ok], a[ok], ln[ok]
    flags = g.u16(a + 2)
    qd = g.u16(a + 4)
    qlen = np.where((qd > 0) & (ln > 12), np.minimum(ln, 12 + 300) - 12, 0)
    q_off = np.zeros(qlen.shape[0] + 1, np.int64)
    np.cumsum(qlen, out=q_off[1:])
    pos = np.repeat(a + 12 - q_off[:-1], qlen) + np.arange(int(q_off[-1]), dtype=np.int64)
    resp = (flags & 0x8000) != 0
    msg_id = g.u16(a)
    src = (cols.src_hi[idx], cols.src_lo[idx], cols.sport[idx])
    dst = (cols.dst_hi[idx], cols.dst_lo[idx], cols.dport[idx])
    key = np.full(idx.shape[0], np.uint64(53), np.uint64)
    for x, y in zip(src, dst, strict=True):
        key = mix_hash(key, np.where(resp, y, x))
    for x, y in zip(src, dst, strict=True):
        key = mix_hash(key, np.where(resp, x, y))
    key = mix_hash(key, msg_id)
    return D.DnsMessages(row=idx.astype(np.int64), is_response=resp, msg_id=msg_id, rcode=flags & 0x0F,
                         q_blob=bytearray(buf[pos].tobytes()), q_off=q_off, key=key, ts=cols.ts[idx])


def _same(x: D.DnsMessages, y: D.DnsMessages) -> None:
    for f in FIELDS:
        u, v = getattr(x, f), getattr(y, f)
        assert u.dtype == v.dtype, f
        assert np.array_equal(u, v), f
    assert bytes(x.q_blob) == bytes(y.q_blob)


def _batches(path: Path, chunk_bytes: int = 1 << 20):  # type: ignore[no-untyped-def]  # test helper
    rows = 0
    for b in iter_batches(path, CaptureInfo(path=str(path)), chunk_bytes=chunk_bytes):
        cols, payoff, capend = decode_batch(b, rows + 1)
        yield b.buf, cols, payoff, capend
        rows += len(cols)


def _check_all_paths(buf: np.ndarray, cols: Packets, payoff: np.ndarray, capend: np.ndarray) -> D.DnsMessages:
    ref = _reference(buf, cols, payoff, capend)
    _same(D._parse_dns_numpy(buf, cols, payoff, capend), ref)
    _same(D.parse_dns(buf, cols, payoff, capend), ref)  # compiled when built
    # rows=: any superset of the DNS rows (here every 3rd row plus the DNS-port ones) gives the same
    port = np.isin(cols.sport, D.DNS_PORTS) | np.isin(cols.dport, D.DNS_PORTS)
    rows = np.flatnonzero(port | (np.arange(len(cols)) % 3 == 0))
    _same(D._parse_dns_numpy(buf, cols, payoff, capend, rows), ref)
    _same(D.parse_dns(buf, cols, payoff, capend, rows=rows), ref)
    return ref


def _dns_capture() -> Capture:
    """UDP and TCP DNS over IPv4/IPv6, mDNS/LLMNR ports, truncated, headerless and question-less messages."""
    cap = Capture()
    c, s = "10.0.0.5", "10.0.0.53"
    for i, (port, name) in enumerate([(53, "a.example"), (5353, "printer.local"), (5355, "host"), (53, "x" * 63 + ".y")]):
        q = dns_message(100 + i, name)
        cap.add(i * 0.1, ether(ipv4_packet(c, s, 17, udp_datagram(40000 + i, port, q))))
        cap.add(i * 0.1 + 0.01, ether(ipv4_packet(s, c, 17, udp_datagram(port, 40000 + i, dns_message(100 + i, name, True, i)))))
    msg = dns_message(7, "tcp.example", qtype=28)
    cap.add(1.0, ether(ipv4_packet(c, s, 6, tcp_segment(40100, 53, 1, 1, PSH | ACK, data=struct.pack("!H", len(msg)) + msg))))
    cap.add(1.1, ether(ipv4_packet(c, s, 6, tcp_segment(40101, 53, 1, 1, PSH | ACK, data=b"\x00\x02ab"))))  # length < 4
    v6 = ipv6_packet("2001:db8::5", "2001:db8::53", 17, udp_datagram(40200, 53, dns_message(9, "six.example")))
    cap.add(1.2, ether(v6, ethertype=0x86DD))
    cap.add(1.3, ether(ipv4_packet(c, s, 17, udp_datagram(40300, 53, b"\x00\x01\x01\x00\x00\x00"))))  # qdcount 0
    cap.add(1.4, ether(ipv4_packet(c, s, 17, udp_datagram(40301, 53, b"\x00\x01"))))  # shorter than a header
    cap.add(1.5, ether(ipv4_packet(c, s, 17, udp_datagram(40302, 53, dns_message(11, "long." + "z" * 60 + ".example" * 40)))))
    cap.add(1.6, ether(ipv4_packet(c, s, 17, udp_datagram(40303, 80, dns_message(12, "not.dns")))))  # not a DNS port
    return cap


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_fast_paths_match_the_reference_on_the_corpus(path: Path) -> None:
    for batch in _batches(path):
        _check_all_paths(*batch)


def test_fast_paths_match_the_reference_on_edge_cases(tmp_path: Path) -> None:
    path = _dns_capture().write(tmp_path / "d.pcap")
    msgs = [m for batch in _batches(path) for m in [_check_all_paths(*batch)]]
    assert sum(len(m) for m in msgs) == 12  # 8 UDP, TCP, IPv6, qdcount 0, long name (3 too short or not DNS)
    names = {m.question(k)[0] for m in msgs for k in range(len(m))}
    assert {"a.example", "printer.local", "host", "tcp.example", "six.example", ""} <= names


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_fast_paths_match_the_reference_on_random_bytes(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 40))
    body = data.draw(st.binary(min_size=64, max_size=4000))
    buf = np.frombuffer(body + b"\x00" * 16, np.uint8).copy()
    size = len(body)
    ports = st.sampled_from([53, 5353, 5355, 80, -1, 0, 65535])
    payoff = np.array(data.draw(st.lists(st.integers(0, size - 1), min_size=n, max_size=n)), np.int64)
    capend = np.minimum(payoff + np.array(data.draw(st.lists(st.integers(0, 400), min_size=n, max_size=n))), size)
    cols = Packets.empty()
    fields = {f: getattr(cols, f) for f in cols.__dataclass_fields__}
    cols = Packets(**{f: np.zeros(n, v.dtype) for f, v in fields.items()})
    cols.proto[:] = data.draw(st.lists(st.sampled_from([6, 17, 1, -1]), min_size=n, max_size=n))
    cols.sport[:] = data.draw(st.lists(ports, min_size=n, max_size=n))
    cols.dport[:] = data.draw(st.lists(ports, min_size=n, max_size=n))
    cols.paylen[:] = data.draw(st.lists(st.integers(-1, 600), min_size=n, max_size=n))
    cols.tcp_flags[:] = data.draw(st.lists(st.sampled_from([-1, 0x18, 0x10]), min_size=n, max_size=n))
    cols.src_lo[:] = data.draw(st.lists(st.integers(0, 2**64 - 1), min_size=n, max_size=n))
    cols.ts[:] = np.arange(n) * 0.5
    _check_all_paths(buf, cols, payoff, capend)


def test_extend_grows_like_concatenation() -> None:
    rng = np.random.default_rng(3)
    whole = D.DnsMessages()
    parts = []
    base = 0
    for _ in range(40):
        m = int(rng.integers(0, 50))
        blob = bytearray(rng.integers(0, 256, m * 3, dtype=np.uint8).tobytes())
        p = D.DnsMessages(row=np.sort(rng.choice(1000, m, replace=False)).astype(np.int64),
                          is_response=rng.random(m) < 0.5, msg_id=rng.integers(0, 65536, m),
                          rcode=rng.integers(0, 6, m), q_blob=blob, q_off=np.arange(m + 1, dtype=np.int64) * 3,
                          key=rng.integers(0, 2**63, m).astype(np.uint64), ts=rng.random(m))
        parts.append((p, base))
        whole.extend(p, base)
        base += 1000
    for f in ("row", "is_response", "msg_id", "rcode", "key", "ts"):
        want = np.concatenate([getattr(D.DnsMessages(), f)] + [getattr(p, f) + (b if f == "row" else 0) for p, b in parts])
        assert np.array_equal(getattr(whole, f), want), f
    assert np.array_equal(whole.q_off, np.arange(len(whole) + 1) * 3)
    assert bytes(whole.q_blob) == b"".join(bytes(p.q_blob) for p, _ in parts)


def test_extend_without_keys_drops_them_and_analysis_recomputes(tmp_path: Path) -> None:
    path = _dns_capture().write(tmp_path / "d.pcap")
    keyed, bare = D.DnsMessages(), D.DnsMessages()
    rows = 0
    all_cols = []
    for buf, cols, payoff, capend in _batches(path):
        m = D.parse_dns(buf, cols, payoff, capend)
        keyed.extend(m, rows)
        m.key, m.ts = np.zeros(0, np.uint64), np.zeros(0)
        bare.extend(m, rows)
        rows += len(cols)
        all_cols.append(cols)
    cols = Packets.concat(all_cols)
    assert bare.key.shape[0] == 0
    assert D.analyze_dns(keyed, cols) == D.analyze_dns(bare, cols)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=0, max_size=300), st.integers(0, 2**63 - 1), st.booleans())
def test_stable_argsort_matches_numpy(small: list[int], salt: int, collide: bool) -> None:
    key = np.array(small, np.uint64) * np.uint64(salt | 1)
    if collide and key.size:  # equal high bits, different low bits: must fall back, still exact
        key = (key & ~np.uint64(0xFFFF)) | (np.arange(key.size, dtype=np.uint64)[::-1] & np.uint64(0xF))
    assert np.array_equal(D._stable_argsort(key), np.argsort(key, kind="stable"))


def test_unanswered_names_with_a_zero_byte_inside_a_label() -> None:
    """Names are parsed once per distinct bytes up to the terminator; a zero inside a label (legal
    in DNS) must not make two different names share a parse."""
    raws = [b"\x03a\x00b\x03com\x00\x00\x01\x00\x01", b"\x03a\x00c\x03net\x00\x00\x01\x00\x01",
            b"\x04host\x07example\x00\x00\x01\x00\x01", b"\x04host\x07example\x00\x00\x1c\x00\x01", b""]
    n = len(raws)
    cols = Packets.empty()
    cols = Packets(**{f: np.zeros(n, getattr(cols, f).dtype) for f in cols.__dataclass_fields__})
    cols.frame[:] = np.arange(1, n + 1)
    cols.sport[:] = 40000 + np.arange(n)  # one key per query: all unanswered
    cols.dport[:] = 53
    off = np.r_[0, np.cumsum([len(q) for q in raws])].astype(np.int64)
    msgs = D.DnsMessages(row=np.arange(n, dtype=np.int64), is_response=np.zeros(n, bool), msg_id=np.arange(n),
                         rcode=np.zeros(n, np.int64), q_blob=bytearray(b"".join(raws)), q_off=off)
    got = {u["qname"]: u["queries"] for u in D.analyze_dns(msgs, cols)["unanswered_names"]}
    want: dict[str, int] = {}
    for k in range(n):
        want[msgs.question(k)[0]] = want.get(msgs.question(k)[0], 0) + 1
    assert got == want
    assert got == {"a\x00b.com": 1, "a\x00c.net": 1, "host.example": 2, "": 1}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.binary(max_size=40),
    st.lists(st.text("ab.\x00é-", max_size=6).map(lambda t: t.encode()), max_size=5).map(
        lambda labels: b"".join(bytes([len(x)]) + x for x in labels) + b"\x00\x00\x01"),
), min_size=1, max_size=12))
def test_vectorised_names_match_the_label_walk(raws: list[bytes]) -> None:
    off = np.r_[0, np.cumsum([len(q) for q in raws])].astype(np.int64)
    n = len(raws)
    msgs = D.DnsMessages(row=np.arange(n, dtype=np.int64), is_response=np.zeros(n, bool),
                         msg_id=np.zeros(n, np.int64), rcode=np.zeros(n, np.int64),
                         q_blob=bytearray(b"".join(raws)), q_off=off)
    ks = np.arange(n)[::-1]
    assert D.qnames(msgs, ks) == [msgs.question(int(k))[0] for k in ks]
