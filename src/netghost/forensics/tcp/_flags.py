"""The names and bits of tshark's TCP analysis flags, and the TCP header constants the rules use.

Why a module of its own: the rules (``_rules.py``), the compiled kernel's Python side, the stream
table, the findings and the reports all speak of the same 15 flags; they import the bits from here
instead of from the rules, so nothing that only reads flags pulls in the rule machine.
"""

from __future__ import annotations

__all__ = [
    "ACK",
    "ACKLOST",
    "DUPACK",
    "FAST",
    "FIN",
    "FLAG_BITS",
    "FLAG_NAMES",
    "HALF",
    "KA",
    "KAACK",
    "LOST",
    "M32",
    "OOO",
    "RETR",
    "REUSED",
    "RST",
    "SPUR",
    "SYN",
    "UNACKED_MAX",
    "WFULL",
    "WUPD",
    "ZW",
    "ZWP",
    "ZWPACK",
]

FLAG_NAMES = (
    "retransmission",
    "fast_retransmission",
    "spurious_retransmission",
    "out_of_order",
    "lost_segment",
    "ack_lost_segment",
    "duplicate_ack",
    "zero_window",
    "zero_window_probe",
    "zero_window_probe_ack",
    "window_full",
    "window_update",
    "keep_alive",
    "keep_alive_ack",
    "reused_ports",
)
FLAG_BITS = {name: 1 << i for i, name in enumerate(FLAG_NAMES)}
RETR, FAST, SPUR, OOO, LOST, ACKLOST, DUPACK, ZW, ZWP, ZWPACK, WFULL, WUPD, KA, KAACK, REUSED = (
    1 << i for i in range(15)
)
FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10
M32 = 0xFFFFFFFF
HALF = 0x80000000
UNACKED_MAX = 1000  # TCP_MAX_UNACKED_SEGMENTS
