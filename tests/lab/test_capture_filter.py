"""Session limits (--filters, --capture-size, --capture-limit) applied to the synthesized bytes."""

from __future__ import annotations

import ipaddress
import json
import struct
from collections.abc import Callable
from pathlib import Path

from netghost.lab.az._capture_filter import apply_session_limits
from netghost.lab.az._capture_store import EMPTY_PCAP

from .conftest import Lab


def _frame(src: str, dst: str, proto: int, sport: int, dport: int, *, payload: int = 100) -> bytes:
    l4 = struct.pack("!HH", sport, dport) + b"\x00" * (16 if proto == 6 else 4) + b"x" * payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0, 64, proto, 0,
                     ipaddress.IPv4Address(src).packed, ipaddress.IPv4Address(dst).packed)
    return b"\x00\x0d\x3a\x00\x00\x01" + b"\x12\x34\x56\x78\x9a\xbc" + b"\x08\x00" + ip + l4


def _pcap(frames: list[bytes]) -> bytes:
    body = EMPTY_PCAP
    for i, frame in enumerate(frames):
        body += struct.pack("<IIII", 1000 + i, 0, len(frame), len(frame)) + frame
    return body


def _records(body: bytes) -> list[tuple[int, int, bytes]]:
    out, offset = [], 24
    while offset < len(body):
        _s, _f, incl, orig = struct.unpack("<IIII", body[offset:offset + 16])
        out.append((incl, orig, body[offset + 16: offset + 16 + incl]))
        offset += 16 + incl
    return out


FRAMES = [
    _frame("10.1.1.4", "10.1.2.4", 6, 50000, 6379),   # web -> redis
    _frame("10.1.2.4", "10.1.1.4", 6, 6379, 50000),   # redis -> web
    _frame("10.1.1.4", "168.63.129.16", 17, 40000, 53),  # DNS
    _frame("203.0.113.10", "10.1.1.4", 6, 61000, 443),  # Internet client
]


def test_no_limits_pass_through() -> None:
    body = _pcap(FRAMES)
    assert apply_session_limits(body, filters=[], capture_size=0, capture_limit=1 << 30, vm_ips={"10.1.1.4"}) == body
    assert apply_session_limits(b"not a pcap", filters=[{"protocol": "TCP"}], capture_size=10, capture_limit=5,
                                vm_ips=set()) == b"not a pcap"


def test_filters_use_local_and_remote_from_the_vm_side() -> None:
    body = _pcap(FRAMES)
    kept = _records(apply_session_limits(body, filters=[{"protocol": "TCP", "remotePort": "6379"}], capture_size=0,
                                         capture_limit=1 << 30, vm_ips={"10.1.1.4"}))
    assert len(kept) == 2  # both directions of the redis conversation
    udp = _records(apply_session_limits(body, filters=[{"protocol": "UDP"}, {"localPort": "440-450"}],
                                        capture_size=0, capture_limit=1 << 30, vm_ips={"10.1.1.4"}))
    assert len(udp) == 2  # the DNS query and the HTTPS client (OR of filters)
    ranged = _records(apply_session_limits(body, filters=[{"remoteIPAddress": "203.0.113.1-203.0.113.50;"}],
                                           capture_size=0, capture_limit=1 << 30, vm_ips={"10.1.1.4"}))
    assert len(ranged) == 1


def test_capture_size_truncates_and_limit_stops() -> None:
    body = _pcap(FRAMES)
    cut = _records(apply_session_limits(body, filters=[], capture_size=54, capture_limit=1 << 30, vm_ips=set()))
    assert all(incl == 54 and orig > 54 for incl, orig, _ in cut)
    limited = apply_session_limits(body, filters=[], capture_size=0, capture_limit=24 + 2 * 16 + 2 * len(FRAMES[0]),
                                   vm_ips=set())
    assert len(_records(limited)) == 2


def test_session_filters_reach_the_blob(make_lab: Callable[..., Lab], tmp_path: Path) -> None:
    lab = make_lab("healthy")
    filters = json.dumps([{"protocol": "TCP", "remotePort": "6379"}])
    created = lab.az(["network", "watcher", "packet-capture", "create", "-g", "prod-rg", "-n", "ghost_f", "--vm",
                      "web-vm-01", "--storage-account", "forensicssa", "--storage-path",
                      "https://forensicssa.blob.core.windows.net/captures/ghost_f.cap", "--time-limit", "20",
                      "--capture-size", "80", "--filters", filters])
    assert created.code == 0, created.err
    assert json.loads(created.out)["filters"] == [{"protocol": "TCP", "remotePort": "6379"}]
    lab.state.advance_clock(25)
    target = tmp_path / "f.cap"
    assert lab.az(f"storage blob download --account-name forensicssa -c captures -n ghost_f.cap -f {target} "
                  "--auth-mode login -o none").code == 0
    body = target.read_bytes()
    records = _records(body)
    if body != EMPTY_PCAP:  # with the synthesis module present the redis conversation is there
        assert records
    for incl, orig, frame in records:
        assert incl <= 80 and orig >= incl
        ip = frame[14:]
        ihl = (ip[0] & 0x0F) * 4
        sport, dport = struct.unpack("!HH", ip[ihl:ihl + 4])
        assert ip[9] == 6 and 6379 in (sport, dport)
