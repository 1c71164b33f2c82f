"""ICMP / ICMPv6: counts by ``type/code`` (keyed like tshark's truth) and errors attributed to the
flow of the packet they quote (e.g. "port unreachable for UDP 10.0.0.5:5353 → 10.0.0.9:53")."""

from __future__ import annotations

from typing import Any

import numpy as np

from netghost.forensics.decode import Packets, format_addr

__all__ = ["ICMP6_NAMES", "ICMP_NAMES", "analyze_icmp", "icmp_name"]

ICMP_NAMES = {
    "0/0": "echo reply", "8/0": "echo request", "3/0": "net unreachable", "3/1": "host unreachable",
    "3/2": "protocol unreachable", "3/3": "port unreachable", "3/4": "fragmentation needed (DF set)",
    "3/9": "net administratively prohibited", "3/10": "host administratively prohibited",
    "3/13": "communication administratively prohibited", "11/0": "TTL exceeded in transit",
    "11/1": "fragment reassembly time exceeded", "5/0": "redirect for network", "5/1": "redirect for host",
}
ICMP6_NAMES = {
    "1/0": "no route to destination", "1/1": "administratively prohibited", "1/3": "address unreachable",
    "1/4": "port unreachable", "2/0": "packet too big", "3/0": "hop limit exceeded", "128/0": "echo request",
    "129/0": "echo reply", "135/0": "neighbor solicitation", "136/0": "neighbor advertisement",
    "133/0": "router solicitation", "134/0": "router advertisement",
}
PROTO_NAMES = {6: "TCP", 17: "UDP", 1: "ICMP", 58: "ICMPv6"}


def icmp_name(v6: bool, key: str) -> str:
    """Human name of an ICMP ``type/code`` key."""
    return (ICMP6_NAMES if v6 else ICMP_NAMES).get(key, f"type {key}")


def analyze_icmp(cols: Packets, max_items: int = 20) -> dict[str, Any]:
    """Count ICMP type/code and group error messages by the quoted flow.

    Returns:
        ``type_code_counts`` / ``icmpv6_type_code_counts`` ({"3/3": n}), and ``errors``: one entry per
        (family, type/code, quoted flow) with count, next-hop MTU, reporter addresses and frames.
    """
    out: dict[str, Any] = {"type_code_counts": {}, "icmpv6_type_code_counts": {}, "errors": []}
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for pr, key, errs in ((1, "type_code_counts", (3, 4, 5, 11, 12)), (58, "icmpv6_type_code_counts", (1, 2, 3, 4))):
        rows = np.flatnonzero((cols.proto == pr) & (cols.icmp_type >= 0))
        if not rows.size:
            continue
        tc = cols.icmp_type[rows].astype(np.int64) * 256 + cols.icmp_code[rows]
        u, c = np.unique(tc, return_counts=True)
        out[key] = {f"{int(x) // 256}/{int(x) % 256}": int(k) for x, k in zip(u, c, strict=True)}
        er = rows[np.isin(cols.icmp_type[rows], errs)]
        for r in er.tolist():
            tck = f"{int(cols.icmp_type[r])}/{int(cols.icmp_code[r])}"
            ip = int(cols.in_proto[r])
            flow = None
            if ip >= 0:
                flow = (
                    f"{PROTO_NAMES.get(ip, str(ip))} {format_addr(cols.in_src_hi[r], cols.in_src_lo[r])}"
                    + (f":{int(cols.in_sport[r])}" if cols.in_sport[r] >= 0 else "")
                    + f" -> {format_addr(cols.in_dst_hi[r], cols.in_dst_lo[r])}"
                    + (f":{int(cols.in_dport[r])}" if cols.in_dport[r] >= 0 else "")
                )
            g = groups.setdefault((pr, tck, flow), {
                "family": "icmpv6" if pr == 58 else "icmp", "type_code": tck, "name": icmp_name(pr == 58, tck),
                "inner_flow": flow, "count": 0, "mtu": None, "reporters": [], "frames": [],
                "first_ts": float(cols.ts[r]),
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
