"""The decoded-packet table: one numpy column per header field, one row per captured frame.

Why a module of its own: every stage after the decode (TCP, DNS, ICMP, findings, compare) reads this
table, while only the decoders write it; keeping the type apart from the decoders lets both decode
paths (compiled and numpy) build it without importing each other.

Addresses are two uint64 columns (``*_hi``, ``*_lo``); IPv4 uses ``hi == V4_MARK`` so the two
families never collide in a flow key. A packet that does not decode is never silently dropped: it
gets an ``issue`` code (see :data:`ISSUES`) and is counted by reason in the semantic output.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from netghost.forensics.decode._absent import AbsentColumn

__all__ = ["COLUMN_DTYPES", "IPV6_EXT", "ISSUES", "V4_MARK", "Packets", "format_addr", "issue_code"]

# Every Packets column and its dtype, in field order (the compiled kernel's COLUMNS must equal this).
COLUMN_DTYPES: dict[str, str] = {
    "frame": "int64", "ts": "float64", "caplen": "int64", "wirelen": "int64", "linktype": "int32",
    "ethertype": "int32", "vlan": "bool", "l3": "int8", "src_hi": "uint64", "src_lo": "uint64", "dst_hi": "uint64",
    "dst_lo": "uint64", "ttl": "int16", "ip_id": "int32", "dscp": "int16", "ip_frag": "bool", "proto": "int16",
    "sport": "int32", "dport": "int32", "seq": "int64", "ack": "int64", "tcp_flags": "int16", "win": "int32",
    "tcp_hlen": "int16", "paylen": "int32", "pay_hash": "uint64", "icmp_type": "int16", "icmp_code": "int16",
    "icmp_mtu": "int32", "in_proto": "int16", "in_src_hi": "uint64", "in_src_lo": "uint64", "in_dst_hi": "uint64",
    "in_dst_lo": "uint64", "in_sport": "int32", "in_dport": "int32", "mss": "int32", "wscale": "int16",
    "sack_perm": "bool", "tsval": "int64", "tsecr": "int64", "issue": "int8",
}

V4_MARK = np.uint64(0xFFFF_FFFF_FFFF_FFFF)

ISSUES = (
    "",
    "empty_record",
    "truncated_link_header",
    "unsupported_linktype",
    "truncated_ip_header",
    "bad_ip_version",
    "bad_ip_header_length",
    "truncated_tcp_header",
    "bad_tcp_header_length",
    "truncated_udp_header",
    "truncated_icmp_header",
    "malformed_nflog",
)
_ISSUE = {name: i for i, name in enumerate(ISSUES)}
IPV6_EXT = (0, 43, 44, 51, 60)


@dataclass
class Packets:
    """Decoded columns, one row per captured frame (frame numbers are 1-based, as in Wireshark).

    Integer columns use -1 for "absent". A column the analysis did not decode (see
    ``OPTIONAL_COLUMNS``) is an ``AbsentColumn`` that raises when used. ``seq``/``ack`` are raw 32-bit values held in int64.
    ``l4_off``/``pay_off`` are batch-relative and only meaningful while the batch buffer lives.
    """

    frame: np.ndarray
    ts: np.ndarray
    caplen: np.ndarray
    wirelen: np.ndarray
    linktype: np.ndarray
    ethertype: np.ndarray
    vlan: np.ndarray
    l3: np.ndarray
    src_hi: np.ndarray
    src_lo: np.ndarray
    dst_hi: np.ndarray
    dst_lo: np.ndarray
    ttl: np.ndarray
    ip_id: np.ndarray
    dscp: np.ndarray
    ip_frag: np.ndarray
    proto: np.ndarray
    sport: np.ndarray
    dport: np.ndarray
    seq: np.ndarray
    ack: np.ndarray
    tcp_flags: np.ndarray
    win: np.ndarray
    tcp_hlen: np.ndarray
    paylen: np.ndarray
    pay_hash: np.ndarray
    icmp_type: np.ndarray
    icmp_code: np.ndarray
    icmp_mtu: np.ndarray
    in_proto: np.ndarray
    in_src_hi: np.ndarray
    in_src_lo: np.ndarray
    in_dst_hi: np.ndarray
    in_dst_lo: np.ndarray
    in_sport: np.ndarray
    in_dport: np.ndarray
    mss: np.ndarray
    wscale: np.ndarray
    sack_perm: np.ndarray
    tsval: np.ndarray
    tsecr: np.ndarray
    issue: np.ndarray

    def __len__(self) -> int:
        return int(self.frame.shape[0])

    @classmethod
    def concat(cls, parts: list[Packets]) -> Packets:
        """Join per-batch columns into one table (empty list → zero rows)."""
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]
        out: dict[str, Any] = {}  # arrays, or AbsentColumn placeholders
        for f in fields(cls):
            first = getattr(parts[0], f.name)
            out[f.name] = first if isinstance(first, AbsentColumn) else np.concatenate([getattr(p, f.name) for p in parts])
            for p in parts:  # release each part's column as soon as it is copied: peak ≈ total + 1 column
                setattr(p, f.name, None)
        return cls(**out)

    @classmethod
    def empty(cls) -> Packets:
        """A table with zero rows (used for empty captures)."""
        return cls(**{name: np.zeros(0, dtype) for name, dtype in COLUMN_DTYPES.items()})

    def take(self, idx: np.ndarray) -> Packets:
        """Row subset (boolean mask or index array), e.g. one flow's packets for a chart."""
        cols: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out: dict[str, Any] = {k: v if isinstance(v, AbsentColumn) else v[idx] for k, v in cols.items()}
        return Packets(**out)


def format_addr(hi: int, lo: int) -> str:
    """Render an address held as (hi, lo) uint64 halves."""
    import ipaddress  # noqa: PLC0415  only reports render addresses (saves its import for library users)

    if int(hi) == int(V4_MARK):
        return str(ipaddress.IPv4Address(int(lo) & 0xFFFFFFFF))
    return str(ipaddress.IPv6Address((int(hi) << 64) | int(lo)))


def issue_code(name: str) -> int:
    """The ``issue`` column value of a decode problem named in :data:`ISSUES`."""
    return _ISSUE[name]
