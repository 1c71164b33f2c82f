"""ICMP / ICMPv6: counts by ``type/code`` (keyed like tshark's truth) and errors attributed to the
flow of the packet they quote (e.g. "port unreachable for UDP 10.0.0.5:5353 → 10.0.0.9:53")."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from netghost.forensics.arrays import group_rows, member, nonzero_blocks, take
from netghost.forensics.decode import V4_MARK, Packets, addr_text, format_addr

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

    Only the ICMP rows are touched (one pass over ``icmp_type`` finds them); errors are grouped with
    one lexsort and only the reported groups are rendered to strings.

    Returns:
        ``type_code_counts`` / ``icmpv6_type_code_counts`` ({"3/3": n}), and ``errors``: one entry per
        (family, type/code, quoted flow) with count, next-hop MTU, reporter addresses and frames.
    """
    out: dict[str, Any] = {"type_code_counts": {}, "icmpv6_type_code_counts": {}, "errors": []}
    groups: list[dict[str, Any]] = []
    it = cols.icmp_type  # (in blocks past the memory budget: no capture-sized mask)
    icmp_rows = nonzero_blocks(it.shape[0], lambda lo, hi: it[lo:hi] >= 0)
    for pr, key, errs in ((1, "type_code_counts", (3, 4, 5, 11, 12)), (58, "icmpv6_type_code_counts", (1, 2, 3, 4))):
        # (take: gathers at scattered rows of spilled columns keep few pages resident)
        rows = icmp_rows[take(cols.proto, icmp_rows) == pr]
        if not rows.size:
            continue
        itype = take(cols.icmp_type, rows)
        tc = itype.astype(np.int64) * 256 + take(cols.icmp_code, rows)
        u, c = np.unique(tc, return_counts=True)
        out[key] = {f"{int(x) // 256}/{int(x) % 256}": int(k) for x, k in zip(u, c, strict=True)}
        er = rows[member(itype, np.array(errs))]
        if er.size:
            groups += _error_groups(cols, pr, er)
    groups.sort(key=lambda g: -g["count"])
    out["errors"] = [_render(cols, pr, g) for pr, g in ((g.pop("_pr"), g) for g in groups[:max_items])]
    return out


def _flow(cols: Packets, r: int) -> str | None:
    """The quoted flow of ICMP error row ``r`` ("UDP a:p -> b:q"), None when nothing is quoted."""
    ip = int(cols.in_proto[r])
    if ip < 0:
        return None
    return (
        f"{PROTO_NAMES.get(ip, str(ip))} {_addr(int(cols.in_src_hi[r]), int(cols.in_src_lo[r]))}"
        + (f":{int(cols.in_sport[r])}" if cols.in_sport[r] >= 0 else "")
        + f" -> {_addr(int(cols.in_dst_hi[r]), int(cols.in_dst_lo[r]))}"
        + (f":{int(cols.in_dport[r])}" if cols.in_dport[r] >= 0 else "")
    )


@lru_cache(maxsize=4096)
def _addr(hi: int, lo: int) -> str:
    # the text of str(IPv4Address / IPv6Address), without building the object
    text = addr_text(hi, lo, _V4)
    return text if text is not None else format_addr(hi, lo)


_V4 = int(V4_MARK)


def _error_groups(cols: Packets, pr: int, er: np.ndarray) -> list[dict[str, Any]]:
    """Errors of one family grouped by (type/code, quoted flow), in order of first appearance.

    Each group carries its rows (ascending) and count; the rows are bucketed by the raw quoted-flow
    columns (vectorised). Distinct buckets render to distinct keys unless an IPv4 address has bits above
    32 (never decoded so, but then buckets with the same rendered key are merged), so the grouping is
    by the rendered key exactly, and only the reported groups are ever rendered.
    """
    g = {name: take(getattr(cols, name), er) for name in (
        "icmp_type", "icmp_code", "in_proto", "in_src_hi", "in_src_lo", "in_sport", "in_dst_hi", "in_dst_lo", "in_dport")}
    has = g["in_proto"] >= 0

    def k(name: str, cond: np.ndarray) -> np.ndarray:
        col = g[name]
        out: np.ndarray = np.where(cond, col, -1 if col.dtype.kind == "i" else 0)
        return out

    o, b = group_rows(g["icmp_type"], g["icmp_code"], k("in_proto", has), k("in_src_hi", has),
                      k("in_src_lo", has), k("in_sport", has & (g["in_sport"] >= 0)),
                      k("in_dst_hi", has), k("in_dst_lo", has), k("in_dport", has & (g["in_dport"] >= 0)))
    heads = o[b[:-1]]  # first member of each bucket (members ascending)
    first = np.argsort(heads, kind="stable")  # buckets by first appearance
    v4 = np.uint64(V4_MARK)
    if not np.any(has & (((g["in_src_hi"] == v4) & (g["in_src_lo"] >> np.uint64(32) != 0))
                         | ((g["in_dst_hi"] == v4) & (g["in_dst_lo"] >> np.uint64(32) != 0)))):
        # distinct buckets render to distinct strings: no merging, render only the reported groups later
        return [{"_pr": pr, "rows": er[o[b[i] : b[i + 1]]], "count": int(b[i + 1] - b[i])} for i in first.tolist()]
    final: dict[tuple[str, str | None], int] = {}
    bucket_final = np.empty(heads.shape[0], np.int64)
    for i in first.tolist():
        r = int(er[heads[i]])
        bucket_final[i] = final.setdefault(_key(cols, r), len(final))
    fid = np.empty(er.shape[0], np.int64)
    fid[o] = np.repeat(bucket_final, np.diff(b))
    by = np.argsort(fid, kind="stable")
    bounds = np.r_[0, np.cumsum(np.bincount(fid, minlength=len(final)))]
    return [{"_pr": pr, "rows": er[by[bounds[g] : bounds[g + 1]]], "count": int(bounds[g + 1] - bounds[g])}
            for g in final.values()]


def _key(cols: Packets, r: int) -> tuple[str, str | None]:
    return f"{int(cols.icmp_type[r])}/{int(cols.icmp_code[r])}", _flow(cols, r)


def _render(cols: Packets, pr: int, g: dict[str, Any]) -> dict[str, Any]:
    """One reported error group as the summary dict (rows in capture order)."""
    rows = g["rows"]
    tck, flow = _key(cols, int(rows[0]))
    mtu_rows = rows[cols.icmp_mtu[rows] >= 0]
    reporters: list[str] = []
    for hi, lo in zip(cols.src_hi[rows].tolist(), cols.src_lo[rows].tolist(), strict=True):
        rep = _addr(hi, lo)
        if rep not in reporters:
            reporters.append(rep)
            if len(reporters) == 5:
                break
    return {
        "family": "icmpv6" if pr == 58 else "icmp", "type_code": tck, "name": icmp_name(pr == 58, tck),
        "inner_flow": flow, "count": g["count"], "mtu": int(cols.icmp_mtu[mtu_rows[-1]]) if mtu_rows.size else None,
        "reporters": reporters, "frames": [int(f) for f in cols.frame[rows[:10]]], "first_ts": float(cols.ts[rows[0]]),
    }
