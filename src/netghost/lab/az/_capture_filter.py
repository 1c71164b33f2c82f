"""Apply a capture session's limits to the synthesized bytes, as the Network Watcher agent would.

The synthesis seam produces every packet of the VM's traffic; the real agent only keeps what the
session asked for (AZURE.md §2, [SPEC] ``PacketCaptureFilter``):

* ``--filters``: a packet is kept when it matches *any* filter; a filter's ``protocol``
  (``TCP``/``UDP``/``Any``) and each given field must match, ``local*`` meaning the VM's side.
  Values are ``"80"``, ranges ``"80-85"``, lists ``"80;443;"``; addresses likewise
  (``"10.0.0.1-10.0.0.9"``, ``"10.0.0.1;10.0.0.5"``).
* ``--capture-size``: bytes kept per packet (``0`` = all); ``orig_len`` keeps the wire length.
* ``--capture-limit``: total bytes per session; packets past it are not written.

Only classic libpcap input is rewritten (that is what the lab writes); anything else passes through.
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["apply_session_limits"]

_MAGICS = {b"\xd4\xc3\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">", b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\x3c\x4d": ">"}
_PROTOCOLS = {6: "TCP", 17: "UDP"}


def _records(body: bytes, endian: str) -> Iterator[tuple[bytes, bytes]]:
    offset = 24
    while offset + 16 <= len(body):
        header = body[offset:offset + 16]
        incl = struct.unpack(endian + "IIII", header)[2]
        yield header, body[offset + 16: offset + 16 + incl]
        offset += 16 + incl


def _five_tuple(frame: bytes) -> tuple[str, str, str, int | None, int | None] | None:
    """(protocol, src, dst, sport, dport) of an Ethernet/IPv4 frame (802.1Q tolerated), else None."""
    offset = 12
    ethertype = struct.unpack("!H", frame[offset:offset + 2])[0] if len(frame) >= 14 else 0
    if ethertype == 0x8100 and len(frame) >= 18:
        offset += 4
        ethertype = struct.unpack("!H", frame[offset:offset + 2])[0]
    ip = frame[offset + 2:]
    if ethertype != 0x0800 or len(ip) < 20:
        return None
    ihl = (ip[0] & 0x0F) * 4
    proto = _PROTOCOLS.get(ip[9], "OTHER")
    src, dst = str(ipaddress.IPv4Address(ip[12:16])), str(ipaddress.IPv4Address(ip[16:20]))
    sport = dport = None
    if proto in ("TCP", "UDP") and len(ip) >= ihl + 4:
        sport, dport = struct.unpack("!HH", ip[ihl:ihl + 4])
    return proto, src, dst, sport, dport


def _value_matches(spec: str, value: str | int | None) -> bool:
    if value is None:
        return False
    for item in (part.strip() for part in spec.split(";")):
        if not item:
            continue
        low, _, high = item.partition("-")
        if isinstance(value, int):
            if int(low) <= value <= int(high or low):
                return True
        else:
            addr = ipaddress.IPv4Address(value)
            if ipaddress.IPv4Address(low) <= addr <= ipaddress.IPv4Address(high or low):
                return True
    return False


def _filter_matches(flt: Mapping[str, Any], proto: str, local: tuple[str, int | None],
                    remote: tuple[str, int | None]) -> bool:
    wanted = str(flt.get("protocol", "Any")).upper()
    if wanted not in ("ANY", proto):
        return False
    checks = (("localIPAddress", local[0]), ("localPort", local[1]),
              ("remoteIPAddress", remote[0]), ("remotePort", remote[1]))
    return all(_value_matches(str(flt[key]), value) for key, value in checks if flt.get(key))


def _keep(frame: bytes, filters: Sequence[Mapping[str, Any]], vm_ips: set[str]) -> bool:
    if not filters:
        return True
    tup = _five_tuple(frame)
    if tup is None:
        return False
    proto, src, dst, sport, dport = tup
    if src in vm_ips:
        local, remote = (src, sport), (dst, dport)
    else:
        local, remote = (dst, dport), (src, sport)
    return any(_filter_matches(f, proto, local, remote) for f in filters)


def apply_session_limits(body: bytes, *, filters: Sequence[Mapping[str, Any]], capture_size: int,
                         capture_limit: int, vm_ips: set[str]) -> bytes:
    """Keep what the session asked for (see the module docstring); non-pcap input is returned as is."""
    endian = _MAGICS.get(body[:4])
    if endian is None or len(body) < 24 or (not filters and capture_size == 0 and len(body) <= capture_limit):
        return body
    out = [body[:24]]
    total = 24
    for header, data in _records(body, endian):
        if not _keep(data, filters, vm_ips):
            continue
        ts_sec, ts_frac, _incl, orig = struct.unpack(endian + "IIII", header)
        kept = data[:capture_size] if capture_size else data
        record = struct.pack(endian + "IIII", ts_sec, ts_frac, len(kept), orig) + kept
        if total + len(record) > capture_limit:
            break
        out.append(record)
        total += len(record)
    return b"".join(out)
