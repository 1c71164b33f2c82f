"""Our own libpcap writer and packet encoders (Ethernet, ARP, IPv4, TCP, UDP, ICMP, DNS, NTP).

Why our own: the lab must not depend on scapy/dpkt, and the bytes must be exactly what a NIC
would have put on the wire so the forensics engine (and Wireshark) decode every frame without a
single issue: real IPv4 header checksums, real TCP/UDP checksums over the pseudo-header, TCP
options encoded as Linux sends them (MSS, SACK-permitted, timestamps, NOP, window scale).

Classic pcap (magic ``a1b2c3d4``, v2.4, microsecond timestamps, LINKTYPE_ETHERNET), little endian.
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "AZURE_GW_MAC",
    "PCAP_HEADER",
    "TcpOpts",
    "arp_frame",
    "dns_message",
    "encode_ipv4",
    "ethernet",
    "icmp_echo",
    "icmp_error",
    "ntp_client",
    "tcp_segment",
    "udp_datagram",
    "vm_mac",
    "write_pcap",
]

SNAPLEN = 262144
PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, SNAPLEN, 1)
# Azure's virtual switch answers every ARP with this MAC (the "gateway" of every subnet).
AZURE_GW_MAC = bytes.fromhex("123456789abc")
ETH_IPV4 = 0x0800
ETH_ARP = 0x0806


def vm_mac(key: str) -> bytes:
    """A stable Microsoft-OUI (00:0d:3a) MAC for a NIC, derived from its name."""
    h = 2166136261
    for ch in key.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return bytes.fromhex("000d3a") + h.to_bytes(4, "big")[1:]


def _ip(addr: str) -> bytes:
    return ipaddress.IPv4Address(addr).packed


def checksum(data: bytes) -> int:
    """RFC 1071 one's-complement sum (the IPv4/TCP/UDP/ICMP checksum)."""
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return int(~total & 0xFFFF)


def ethernet(src: bytes, dst: bytes, ethertype: int, payload: bytes) -> bytes:
    return dst + src + struct.pack("!H", ethertype) + payload


def encode_ipv4(src: str, dst: str, proto: int, payload: bytes, *, ident: int, ttl: int, df: bool) -> bytes:
    """An IPv4 header (20 bytes, no options) with a correct header checksum, plus ``payload``."""
    total = 20 + len(payload)
    flags = 0x4000 if df else 0
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, ident & 0xFFFF, flags, ttl, proto, 0, _ip(src), _ip(dst))
    csum = checksum(hdr)
    return hdr[:10] + struct.pack("!H", csum) + hdr[12:] + payload


@dataclass(frozen=True)
class TcpOpts:
    """TCP options; SYN/SYN-ACK carry mss/wscale/sack_perm, every segment carries timestamps."""

    mss: int | None = None
    wscale: int | None = None
    sack_perm: bool = False
    ts: tuple[int, int] | None = None
    sack: tuple[tuple[int, int], ...] = ()

    def encode(self) -> bytes:
        out = b""
        if self.mss is not None:
            out += struct.pack("!BBH", 2, 4, self.mss)
        if self.sack_perm and self.ts is not None:
            out += struct.pack("!BB", 4, 2) + struct.pack("!BBII", 8, 10, *self.ts)
        elif self.ts is not None:
            out += struct.pack("!BBBBII", 1, 1, 8, 10, *self.ts)
        elif self.sack_perm:
            out += struct.pack("!BBBB", 1, 1, 4, 2)
        if self.wscale is not None:
            out += struct.pack("!BBBB", 1, 3, 3, self.wscale)
        if self.sack:
            out += struct.pack("!BBBB", 1, 1, 5, 2 + 8 * len(self.sack))
            for left, right in self.sack:
                out += struct.pack("!II", left & 0xFFFFFFFF, right & 0xFFFFFFFF)
        while len(out) % 4:
            out += b"\x01"
        return out


def tcp_segment(src: str, dst: str, sport: int, dport: int, *, seq: int, ack: int, flags: int, win: int,
                opts: TcpOpts, payload: bytes) -> bytes:
    """A TCP header + payload with the checksum over the IPv4 pseudo-header."""
    options = opts.encode()
    off = (20 + len(options)) // 4
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, off << 4, flags, win, 0, 0)
    seg = hdr + options + payload
    pseudo = _ip(src) + _ip(dst) + struct.pack("!BBH", 0, 6, len(seg))
    csum = checksum(pseudo + seg)
    return seg[:16] + struct.pack("!H", csum) + seg[18:]


def udp_datagram(src: str, dst: str, sport: int, dport: int, payload: bytes) -> bytes:
    length = 8 + len(payload)
    pseudo = _ip(src) + _ip(dst) + struct.pack("!BBH", 0, 17, length)
    csum = checksum(pseudo + struct.pack("!HHHH", sport, dport, length, 0) + payload) or 0xFFFF
    return struct.pack("!HHHH", sport, dport, length, csum) + payload


def icmp_echo(kind: int, ident: int, seq: int, payload: bytes) -> bytes:
    """ICMP echo request (8) or reply (0)."""
    body = struct.pack("!BBHHH", kind, 0, 0, ident, seq) + payload
    return body[:2] + struct.pack("!H", checksum(body)) + body[4:]


def icmp_error(kind: int, code: int, original_ip: bytes, mtu: int = 0) -> bytes:
    """An ICMP error (3/x unreachable, 11/0 time exceeded) quoting the original IP header + 8 bytes."""
    rest = struct.pack("!HH", 0, mtu) if kind == 3 and code == 4 else b"\0" * 4
    ihl = (original_ip[0] & 0x0F) * 4
    body = struct.pack("!BBH", kind, code, 0) + rest + original_ip[:ihl + 8]
    return body[:2] + struct.pack("!H", checksum(body)) + body[4:]


def arp_frame(op: int, src_mac: bytes, src_ip: str, dst_mac: bytes, dst_ip: str) -> bytes:
    """ARP request (1) or reply (2), broadcast for requests, padded to the 60-byte Ethernet minimum."""
    body = struct.pack("!HHBBH6s4s6s4s", 1, ETH_IPV4, 6, 4, op, src_mac, _ip(src_ip),
                       dst_mac if op == 2 else b"\0" * 6, _ip(dst_ip))
    frame = ethernet(src_mac, dst_mac if op == 2 else b"\xff" * 6, ETH_ARP, body)
    return frame + b"\0" * (60 - len(frame))


def _qname(name: str) -> bytes:
    out = b""
    for label in name.rstrip(".").split("."):
        raw = label.encode("ascii")
        out += bytes([len(raw)]) + raw
    return out + b"\0"


def dns_message(ident: int, name: str, qtype: int, *, response: bool, rcode: int = 0,
                answers: Iterable[tuple[int, str, int]] = ()) -> bytes:
    """A DNS query or response for one question; answers are (type, value, ttl), A or CNAME.

    Answers chain by name: a CNAME's target becomes the owner of the following records, and
    owner names use compression pointers to the question (offset 12) as real servers do.
    """
    answers = list(answers)
    flags = (0x8180 | rcode) if response else 0x0100
    msg = struct.pack("!HHHHHH", ident, flags, 1, len(answers), 0, 0) + _qname(name) + struct.pack("!HH", qtype, 1)
    owner = b"\xc0\x0c"
    for rtype, value, ttl in answers:
        if rtype == 1:
            rdata = _ip(value)
            msg += owner + struct.pack("!HHIH", 1, 1, ttl, 4) + rdata
        else:
            target_off = len(msg) + 12
            rdata = _qname(value)
            msg += owner + struct.pack("!HHIH", 5, 1, ttl, len(rdata)) + rdata
            owner = struct.pack("!H", 0xC000 | target_off)
    return msg


def ntp_client(transmit_ts: float, *, response: bool) -> bytes:
    """A 48-byte NTPv4 client request (mode 3) or server reply (mode 4, stratum 2)."""
    secs = int(transmit_ts) + 2208988800
    frac = int((transmit_ts % 1) * 2**32) & 0xFFFFFFFF
    if not response:
        return struct.pack("!BBbb", 0x23, 0, 0, 0x20) + b"\0" * 36 + struct.pack("!II", secs, frac)
    ref = struct.pack("!II", secs - 30, frac)
    now = struct.pack("!II", secs, frac)
    return struct.pack("!BBbbII4s", 0x24, 2, 6, -23, 0x2C, 0x5A, b"\xa8\x3d\xd7\x4a") + ref + now + now + now


def write_pcap(records: Iterable[tuple[float, bytes]], *, snaplen: int = 0, max_bytes: int = 0) -> bytes:
    """A whole classic pcap file: global header then one record per (timestamp, frame).

    Records are written in the order given; callers sort by time. Timestamps are rounded to
    whole microseconds (the format's resolution).

    Args:
        records: (timestamp, frame) pairs.
        snaplen: keep only the first ``snaplen`` bytes of each frame (0 = all), as Network
            Watcher's ``--bytes-to-capture-per-packet`` does; the record keeps the wire length.
        max_bytes: stop before the file would exceed this size (0 = no limit), as
            ``--total-bytes-per-session`` does.
    """
    header = PCAP_HEADER if not snaplen else PCAP_HEADER[:16] + struct.pack("<I", snaplen) + PCAP_HEADER[20:]
    parts = [header]
    size = len(header)
    for ts, frame in records:
        kept = frame[:snaplen] if snaplen else frame
        if max_bytes and size + 16 + len(kept) > max_bytes:
            break
        us = round(ts * 1_000_000)
        parts.append(struct.pack("<IIII", us // 1_000_000, us % 1_000_000, len(kept), len(frame)))
        parts.append(kept)
        size += 16 + len(kept)
    return b"".join(parts)
