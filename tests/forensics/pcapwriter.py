"""A tiny capture writer for synthetic-truth tests: frames are built with struct, faults are explicit.

Frame numbers in the tests are 1-based positions in the ``Capture.frames`` list, exactly what the
engine (and Wireshark) report, so a test can say "the RST is frame 7" and check the evidence.
"""

from __future__ import annotations

import gzip
import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
ETH_SRC = b"\x00\x16\x3e\x11\x22\x33"
ETH_DST = b"\x00\x16\x3e\x44\x55\x66"


def ip4(a: str) -> bytes:
    return socket.inet_aton(a)


def ipv4_packet(src: str, dst: str, proto: int, payload: bytes, ttl: int = 64, ident: int = 1,  # noqa: PLR0917  header fields in wire order
                flags_frag: int = 0x4000) -> bytes:
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, flags_frag, ttl, proto, 0, ip4(src), ip4(dst))
    return hdr + payload


def ipv6_packet(src: str, dst: str, nh: int, payload: bytes, hop: int = 64) -> bytes:
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), nh, hop, socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + payload


def tcp_segment(sport: int, dport: int, seq: int, ack: int, flags: int, win: int = 65535, data: bytes = b"",  # noqa: PLR0917  header fields in wire order
                options: bytes = b"") -> bytes:
    hl = 20 + len(options)
    return struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, (hl // 4) << 4, flags,
                       win, 0, 0) + options + data


def udp_datagram(sport: int, dport: int, data: bytes) -> bytes:
    return struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data


def dns_message(qid: int, name: str, response: bool = False, rcode: int = 0, qtype: int = 1) -> bytes:
    flags = (0x8180 if response else 0x0100) | rcode
    q = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\x00" + struct.pack("!HH", qtype, 1)
    return struct.pack("!HHHHHH", qid, flags, 1, 0, 0, 0) + q


def icmp_message(typ: int, code: int, rest: int, quoted: bytes) -> bytes:
    return struct.pack("!BBHI", typ, code, 0, rest) + quoted


def ether(l3: bytes, ethertype: int = 0x0800, vlans: tuple[int, ...] = ()) -> bytes:
    tags = b"".join(struct.pack("!HH", 0x8100, v) for v in vlans)
    return ETH_DST + ETH_SRC + tags + struct.pack("!H", ethertype) + l3


@dataclass
class Capture:
    """Frames with timestamps; write as pcap (either byte order, µs or ns), pcapng or gzip."""

    frames: list[tuple[float, bytes]] = field(default_factory=list)
    linktype: int = 1

    def add(self, ts: float, frame: bytes) -> int:
        """Append a frame; returns its 1-based frame number."""
        self.frames.append((ts, frame))
        return len(self.frames)

    def tcp(self, ts: float, src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int,  # noqa: PLR0917  header fields in wire order
            data: bytes = b"", win: int = 65535, ttl: int = 64, options: bytes = b"") -> int:
        seg = tcp_segment(sport, dport, seq, ack, flags, win, data, options)
        return self.add(ts, ether(ipv4_packet(src, dst, 6, seg, ttl=ttl)))

    def pcap(self, big_endian: bool = False, nanos: bool = False, snaplen: int = 262144) -> bytes:
        e = ">" if big_endian else "<"
        magic = 0xA1B23C4D if nanos else 0xA1B2C3D4
        out = [struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, snaplen, self.linktype)]
        for ts, fr in self.frames:
            sec = int(ts)
            frac = round((ts - sec) * (1e9 if nanos else 1e6))
            out.append(struct.pack(e + "IIII", sec, frac, len(fr), len(fr)) + fr)
        return b"".join(out)

    def pcapng(self, interfaces: int = 1) -> bytes:
        def block(btype: int, body: bytes) -> bytes:
            body += b"\x00" * (-len(body) % 4)
            n = 12 + len(body)
            return struct.pack("<II", btype, n) + body + struct.pack("<I", n)

        out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))]
        for k in range(interfaces):
            # interface k uses microseconds (k even) or nanoseconds via if_tsresol=9 (k odd)
            opts = struct.pack("<HHB3x", 9, 1, 9) if k % 2 else b""
            out.append(block(1, struct.pack("<HHI", self.linktype, 0, 262144) + opts + b"\x00" * 4))
        for i, (ts, fr) in enumerate(self.frames):
            iface = i % interfaces
            units = round(ts * (1e9 if iface % 2 else 1e6))
            out.append(block(6, struct.pack("<IIIII", iface, units >> 32, units & 0xFFFFFFFF, len(fr), len(fr)) + fr))
        return b"".join(out)

    def write(self, path: Path, kind: str = "pcap") -> Path:
        data = {"pcap": self.pcap, "pcap-be": lambda: self.pcap(True), "pcap-ns": lambda: self.pcap(nanos=True),
                "pcapng": self.pcapng, "pcapng2": lambda: self.pcapng(2)}[kind.replace(".gz", "")]()
        if kind.endswith(".gz"):
            data = gzip.compress(data)
        path.write_bytes(data)
        return path
