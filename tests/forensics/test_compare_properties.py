"""Property: whatever subset of A's packets is missing at B, every missing frame is reported exactly once.

B is A without a random subset, with client→server packets later and server→client packets earlier
(B next to the server), re-sorted by time, with a random clock offset. Hypothesis picks the subset.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netghost.forensics.compare import compare_captures
from tests.forensics.pcapwriter import ACK, PSH, SYN, Capture, ether, ipv4_packet, tcp_segment, udp_datagram

N = 40


def _packets() -> list[tuple[float, bool, bytes]]:
    """(time, client→server?, frame) of a TCP exchange and some DNS, every packet distinct."""
    out: list[tuple[float, bool, bytes]] = []
    c, s = "10.0.0.5", "10.9.0.7"
    seq_c, seq_s = 100, 5000
    out.append((0.0, True, ether(ipv4_packet(c, s, 6, tcp_segment(40000, 443, seq_c, 0, SYN), ident=1))))
    out.append((0.02, False, ether(ipv4_packet(s, c, 6, tcp_segment(443, 40000, seq_s, seq_c + 1, SYN | ACK), ident=900))))
    seq_c, seq_s = seq_c + 1, seq_s + 1
    for k in range(N // 2 - 2):
        t = 0.05 + k * 0.03
        if k % 3 == 2:  # DNS query / answer pair, unrelated to the TCP flow
            out.append((t, True, ether(ipv4_packet(c, "10.9.0.53", 17, udp_datagram(50000 + k, 53, b"q%03d" % k), ident=2000 + k))))
            out.append((t + 0.01, False, ether(ipv4_packet("10.9.0.53", c, 17, udp_datagram(53, 50000 + k, b"a%03d" % k), ident=3000 + k))))
            continue
        out.append((t, True, ether(ipv4_packet(c, s, 6, tcp_segment(40000, 443, seq_c, seq_s, PSH | ACK, data=b"r" * 10), ident=10 + k))))
        seq_c += 10
        out.append((t + 0.02, False, ether(ipv4_packet(s, c, 6, tcp_segment(443, 40000, seq_s, seq_c, PSH | ACK, data=b"s" * 20), ident=1000 + k))))
        seq_s += 20
    return out


PACKETS = _packets()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drop=st.sets(st.integers(0, len(PACKETS) - 1), max_size=12), offset=st.floats(-100.0, 100.0),
       delay=st.floats(0.001, 0.009))
def test_every_missing_frame_reported_once(drop: set[int], offset: float, delay: float) -> None:
    a, b = Capture(), Capture()
    shifted = []
    for i, (t, c2s, fr) in enumerate(PACKETS):
        a.add(1_600_000_000.0 + t, fr)
        if i not in drop:
            shifted.append((1_600_000_000.0 + offset + t + (delay if c2s else -delay), i, fr))
    for tb, _, fr in sorted(shifted):
        b.add(tb, fr)
    with tempfile.TemporaryDirectory() as d:
        comp = compare_captures(a.write(Path(d) / "a.pcap"), b.write(Path(d) / "b.pcap"))
    at_a = [comp["lost"]["a_to_b"], comp["injected"]["at_a"], comp["blocked"]["at_b"], comp["unmatched"]["a"]]
    frames = [f for cat in at_a for f in cat["frames"]]
    assert sorted(frames) == sorted(i + 1 for i in drop)  # A frames are 1-based positions
    assert sum(cat["count"] for cat in at_a) == len(drop)
    at_b = [comp["lost"]["b_to_a"], comp["injected"]["at_b"], comp["blocked"]["at_a"], comp["unmatched"]["b"]]
    assert all(cat["count"] == 0 for cat in at_b)
    assert comp["matched_packets"] == len(PACKETS) - len(drop)
    if comp["matched_packets"] and comp["clock_offset_ms"] is not None:
        assert abs(comp["clock_offset_ms"] - offset * 1000) < 0.01
