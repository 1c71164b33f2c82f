"""Diagnostic findings: specific, ranked (severity, confidence), each with bounded evidence frames.

Each detector reads the analysis columns and emits findings in an investigator's vocabulary
("SYN to 10.0.2.4:6379 retried 3× with no answer → silently dropped (NSG/firewall)"). Detectors
are pure functions of the :class:`~netghost.forensics.engine.Analysis`, so they are testable with
synthetic captures whose faults are known.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netghost.forensics.decode import format_addr
from netghost.forensics.engine import Analysis
from netghost.forensics.flows import CONN_STATES, mix_hash
from netghost.forensics.tcp import FLAG_BITS

__all__ = ["SEVERITIES", "build_findings", "capture_duplicates", "flow_id"]

SEVERITIES = ("info", "low", "medium", "high", "critical")
MAX_FRAMES = 10
Finding = dict[str, Any]


def flow_id(stream: int) -> str:
    """Stable id of a TCP stream in the semantic output (tshark's ``tcp.stream`` number)."""
    return f"tcp/{stream}"


def _ep(hi: Any, lo: Any, port: Any) -> str:
    addr = format_addr(hi, lo)
    return f"[{addr}]:{int(port)}" if ":" in addr else f"{addr}:{int(port)}"


def _finding(kind: str, severity: str, confidence: float, title: str, detail: str,  # noqa: PLR0917  compact call sites
             frames: list[int], flows: list[str] | None = None, ts: float | None = None, **metrics: Any) -> Finding:
    return {
        "kind": kind, "severity": severity, "confidence": round(float(confidence), 2), "title": title,
        "detail": detail, "flows": (flows or [])[:MAX_FRAMES],
        "evidence": {"frames": sorted(int(f) for f in frames)[:MAX_FRAMES], "first_ts": ts},
        "metrics": metrics,
    }


class _Ctx:
    """Per-segment views shared by the detectors."""

    def __init__(self, a: Analysis) -> None:
        self.a = a
        c = a.cols
        r = a.tcp_rows
        self.frame = c.frame[r]
        self.ts = c.ts[r]
        self.fl = c.tcp_flags[r].astype(np.int64)
        self.pay = c.paylen[r]
        self.ttl = c.ttl[r]
        self.sid = a.tcp_stream
        self.src_hi, self.src_lo, self.sport = c.src_hi[r], c.src_lo[r], c.sport[r]
        st = a.streams
        self.from_client = (self.src_hi == st.c_hi[self.sid]) & (self.src_lo == st.c_lo[self.sid]) & (
            self.sport == st.c_port[self.sid])

        self.dup = capture_duplicates(a)
        # each stream is one contiguous block of this permutation (the engine's, or a stable sort)
        self.order = a.tcp_order if a.tcp_order is not None else np.argsort(self.sid, kind="stable")
        ss = self.sid[self.order]
        n = ss.shape[0]
        chg = np.flatnonzero(np.r_[True, ss[1:] != ss[:-1]]) if n else np.zeros(0, np.int64)
        self.start = np.zeros(len(st), np.int64)
        self.end = np.zeros(len(st), np.int64)
        self.start[ss[chg]] = chg
        self.end[ss[chg]] = np.r_[chg[1:], n]

    def rows_of(self, s: int) -> np.ndarray:
        """Segment indices of one stream, in capture order (a slice of a grouped index)."""
        out: np.ndarray = self.order[self.start[s] : self.end[s]]
        return out

    def frames_of(self, streams: np.ndarray, mask: np.ndarray) -> list[int]:
        """First evidence frames among ``streams`` where ``mask`` holds (bounded work per group)."""
        picked: list[np.ndarray] = []
        for s in np.sort(streams)[:50].tolist():
            r = self.rows_of(s)
            picked.append(r[mask[r]][:MAX_FRAMES])
        rows = np.sort(np.concatenate(picked)) if picked else np.zeros(0, np.int64)
        return [int(x) for x in self.frame[rows[:MAX_FRAMES]]]


def _server_groups(a: Analysis, streams: np.ndarray) -> dict[str, list[int]]:
    """Group streams by server host; one port keeps ``host:port``, several (a scan) list the ports."""
    st = a.streams
    groups: dict[str, list[int]] = {}
    if not streams.size:
        return groups
    hosts = np.stack([st.s_hi[streams], st.s_lo[streams]], axis=1)
    _, first, inv = np.unique(hosts, axis=0, return_index=True, return_inverse=True)
    inv = inv.ravel()
    for g in np.argsort(first, kind="stable").tolist():
        ss = streams[inv == g]
        ports = np.unique(st.s_port[ss])
        s0 = int(ss[0])
        if ports.shape[0] == 1:
            groups[_ep(st.s_hi[s0], st.s_lo[s0], ports[0])] = ss.tolist()
        else:
            shown = ", ".join(str(int(p)) for p in ports[:6]) + (f" (+{ports.shape[0] - 6} more)" if ports.shape[0] > 6 else "")
            groups[f"{format_addr(st.s_hi[s0], st.s_lo[s0])} ports {shown}"] = ss.tolist()
    return groups


SCAN_MIN_PORTS = 20


def _port_scans(x: _Ctx, out: list[Finding]) -> np.ndarray:
    """One client SYN-ing >= SCAN_MIN_PORTS ports of one host is a scan, not an outage.

    Appends one finding per (scanner, target) and returns a per-stream mask of the scan's streams,
    which the SYN-failure detectors then leave alone (a filtered port in a scan is not a "drop").
    """
    st = x.a.streams
    mask = np.zeros(len(st), bool)
    cand = np.flatnonzero(st.syn > 0)
    if cand.size < SCAN_MIN_PORTS:
        return mask
    pairs = np.stack([st.c_hi[cand], st.c_lo[cand], st.s_hi[cand], st.s_lo[cand]], axis=1)
    _, inv, counts = np.unique(pairs, axis=0, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    for g in np.flatnonzero(counts >= SCAN_MIN_PORTS).tolist():
        ss = cand[inv == g]
        ports = np.unique(st.s_port[ss])
        if ports.shape[0] < SCAN_MIN_PORTS:
            continue
        mask[ss] = True
        answered = ss[st.synack[ss] > 0]
        refused = ss[(st.synack[ss] == 0) & (st.rst_s[ss] > 0)]
        silent = ss.shape[0] - answered.shape[0] - refused.shape[0]
        open_ports = sorted({int(p) for p in st.s_port[answered]})[:10]
        scanner = format_addr(st.c_hi[ss[0]], st.c_lo[ss[0]])
        target = format_addr(st.s_hi[ss[0]], st.s_lo[ss[0]])
        out.append(_finding(
            "port_scan", "medium", 0.85,
            f"{scanner} probed {ports.shape[0]} ports of {target} (SYN scan): {answered.shape[0]} open"
            + (f" ({', '.join(map(str, open_ports))})" if open_ports else "")
            + f", {refused.shape[0]} closed (RST), {silent} filtered (no answer)",
            "Many ports of one host from one client in a short time is a port scan (or a service-discovery "
            "sweep); its unanswered SYNs show what a filter drops, not an outage.",
            [int(f) for f in x.frame[np.isin(x.sid, ss[:MAX_FRAMES])][:MAX_FRAMES]],
            [flow_id(int(s)) for s in ss[:MAX_FRAMES]], float(st.first_ts[ss].min()),
            ports=int(ports.shape[0]), open=int(answered.shape[0]), closed=int(refused.shape[0]), filtered=int(silent),
        ))
    return mask


def _syn_failures(x: _Ctx) -> list[Finding]:
    a, st = x.a, x.a.streams
    out: list[Finding] = []
    syn = (x.fl & 0x12) == 0x02
    rst = (x.fl & 0x04) != 0
    scanned = _port_scans(x, out)
    s0 = np.flatnonzero((st.syn > 0) & (st.synack == 0) & (st.pkts_s2c == 0) & (st.rst_c == 0) & ~scanned)
    for server, ss in _server_groups(a, s0).items():
        arr = np.asarray(ss)
        attempts = int(st.syn[arr].sum())
        per = attempts / len(ss)
        clients = sorted({format_addr(st.c_hi[s], st.c_lo[s]) for s in ss})
        retried = f"retried {per:.0f}×" if per >= 2 else "sent once"
        conns = f" on {len(ss)} connections" if len(ss) > 1 else ""
        out.append(_finding(
            "syn_no_answer", "high", 0.9 if per >= 2 else 0.6,
            f"SYN to {server} {retried}{conns} with no answer → silently dropped (NSG/firewall or host down)",
            f"{attempts} SYN(s) from {', '.join(clients[:3])} to {server} got neither SYN-ACK nor RST. A drop "
            "without reply is what an NSG deny rule, a firewall or a missing route does; a closed port would "
            "answer with RST.",
            x.frames_of(arr, syn), [flow_id(s) for s in ss], float(st.first_ts[arr].min()),
            connections=len(ss), syn_attempts=attempts, server=server,
        ))
    rej = np.flatnonzero((st.syn > 0) & (st.synack == 0) & (st.rst_s > 0) & ~scanned)
    for server, ss in _server_groups(a, rej).items():
        arr = np.asarray(ss)
        out.append(_finding(
            "syn_rejected_rst", "high", 0.9,
            f"SYN to {server} answered by RST from the server port → nothing listening (or a reject rule)",
            f"{len(ss)} connection attempt(s) to {server} were refused with RST instead of SYN-ACK: no process "
            "listens on that port on the target (or a host firewall rejects with reset).",
            x.frames_of(arr, syn | rst), [flow_id(s) for s in ss], float(st.first_ts[arr].min()),
            connections=len(ss), server=server,
        ))
    return out


def _resets(x: _Ctx) -> list[Finding]:
    st = x.a.streams
    out: list[Finding] = []
    is_rst = (x.fl & 0x04) != 0
    rst_rows = np.flatnonzero(is_rst)
    established = (st.synack > 0) | (st.data_pkts > 0)
    first_rst = np.unique(x.sid[rst_rows], return_index=True)[1]
    plain: list[int] = []
    for k in rst_rows[first_rst].tolist():
        s = int(x.sid[k])
        if not established[s] or (st.syn[s] > 0 and st.synack[s] == 0):
            continue
        r = x.rows_of(s)
        same = r[(x.from_client[r] == x.from_client[k]) & ~is_rst[r]]
        if same.size:
            usual = int(np.argmax(np.bincount(x.ttl[same].astype(np.int64) & 0xFF, minlength=256)))
            if abs(int(x.ttl[k]) - usual) >= 2:
                who = "client" if x.from_client[k] else "server"
                sender = _ep(x.src_hi[k], x.src_lo[k], x.sport[k])
                peer = (_ep(st.s_hi[s], st.s_lo[s], st.s_port[s]) if x.from_client[k]
                        else _ep(st.c_hi[s], st.c_lo[s], st.c_port[s]))
                out.append(_finding(
                    "rst_injected", "high", 0.8,
                    f"RST mid-stream on {flow_id(s)} ({sender} → {peer}) with TTL {int(x.ttl[k])} where the "
                    f"{who} always uses {usual} → injected by a middlebox",
                    f"The reset claims to come from the {who} {sender} but its IP TTL ({int(x.ttl[k])}) differs "
                    f"from the other packets of that sender ({usual}); a firewall/IPS or load balancer on the path "
                    "forged it.",
                    [int(x.frame[k]), int(x.frame[same[0]])], [flow_id(s)], float(x.ts[k]), rst_ttl=int(x.ttl[k]),
                    usual_ttl=usual,
                ))
                continue
        if st.data_pkts[s] > 0:
            plain.append(k)
    if 0 < len(plain) <= 3:
        for k in plain:
            s = int(x.sid[k])
            who = "client" if x.from_client[k] else "server"
            out.append(_finding(
                "rst_midstream", "medium", 0.7,
                f"{who.capitalize()} {_ep(x.src_hi[k], x.src_lo[k], x.sport[k])} reset {flow_id(s)} mid-stream after "
                f"{int(st.data_pkts[s])} data segments",
                f"Connection {flow_id(s)} was aborted with RST by the {who} instead of a FIN close "
                f"(Zeek state {CONN_STATES[st.conn_state[s]]}): an application abort, an idle timeout on a "
                "middlebox, or a crash.",
                [int(x.frame[k])], [flow_id(s)], float(x.ts[k]), by=who,
            ))
    elif plain:
        by_c = int(np.count_nonzero(x.from_client[plain]))
        out.append(_finding(
            "rst_midstream", "medium", 0.6,
            f"{len(plain)} established connections aborted with RST mid-stream ({by_c} by the client, "
            f"{len(plain) - by_c} by the server)",
            "Many aborts rather than FIN closes: application resets, idle timeouts on a middlebox (NVA, load "
            "balancer) or connection-pool churn.",
            [int(x.frame[k]) for k in plain[:MAX_FRAMES]], [flow_id(int(x.sid[k])) for k in plain[:MAX_FRAMES]],
            float(x.ts[plain[0]]), connections=len(plain), by_client=by_c,
        ))
    return out[:20]


def _retransmissions(x: _Ctx) -> list[Finding]:
    """Data-segment retransmission rates (SYN retransmissions belong to the handshake findings)."""
    st = x.a.streams
    out: list[Finding] = []
    data = st.data_pkts
    retr = ((x.a.tcp_flags & FLAG_BITS["retransmission"]) != 0) & (x.pay > 0) & ~x.dup
    dretr = np.bincount(x.sid[retr], minlength=len(st))
    rate = np.where(data > 0, dretr / np.maximum(data, 1), 0.0)
    cand = np.flatnonzero((data >= 20) & (rate >= 0.02) & (dretr >= 3))
    for s in cand[np.argsort(-rate[cand], kind="stable")][:10].tolist():
        pct = 100 * rate[s]
        sev = "high" if pct >= 10 else "medium" if pct >= 3 else "low"
        out.append(_finding(
            "retransmissions", sev, 0.8,
            f"{pct:.1f}% retransmissions on {flow_id(s)} ({_ep(st.c_hi[s], st.c_lo[s], st.c_port[s])} ↔ "
            f"{_ep(st.s_hi[s], st.s_lo[s], st.s_port[s])}) → loss on the path",
            f"{int(dretr[s])} of {int(data[s])} data segments were retransmissions; sustained loss means "
            "congestion, a faulty link or a policer between the endpoints.",
            x.frames_of(np.asarray([s]), retr), [flow_id(s)], float(st.first_ts[s]),
            retransmissions=int(dretr[s]), data_segments=int(data[s]), rate=round(float(rate[s]), 4),
        ))
    tot_data = int(data.sum())
    tot_retr = int(dretr.sum())
    if tot_data >= 50 and tot_retr / tot_data >= 0.02 and len(out) != 1:
        pct = 100 * tot_retr / tot_data
        out.append(_finding(
            "retransmissions_overall", "medium" if pct >= 3 else "low", 0.6,
            f"{pct:.1f}% of all TCP data segments are retransmissions ({tot_retr} of {tot_data})",
            "Retransmissions spread over many flows point at the shared path (link, gateway, NVA) rather "
            "than one server.",
            [int(f) for f in x.frame[retr][:MAX_FRAMES]], [], None, retransmissions=tot_retr,
        ))
    return out


def _pmtu(x: _Ctx) -> list[Finding]:
    """ICMP "fragmentation needed"/"packet too big", tied to the TCP flow it quotes.

    A black hole is claimed only when the quoted flow itself retransmits large segments; otherwise
    the ICMP is reported per next-hop MTU as a (medium) path-MTU fact.
    """
    a, st, c = x.a, x.a.streams, x.a.cols
    out: list[Finding] = []
    big_retr = ((a.tcp_flags & FLAG_BITS["retransmission"]) != 0) & (x.pay >= 1000)
    index: dict[tuple[tuple[int, int, int], tuple[int, int, int]], int] = {}
    for s in np.unique(x.sid[big_retr]).tolist():
        ce = (int(st.c_hi[s]), int(st.c_lo[s]), int(st.c_port[s]))
        se = (int(st.s_hi[s]), int(st.s_lo[s]), int(st.s_port[s]))
        index[(ce, se)] = index[(se, ce)] = s
    rows = np.flatnonzero(((c.proto == 1) & (c.icmp_type == 3) & (c.icmp_code == 4))
                          | ((c.proto == 58) & (c.icmp_type == 2)))
    groups: dict[tuple[int, int], list[int]] = {}
    for r in rows[:5000].tolist():
        s = -1
        if c.in_proto[r] == 6:
            src = (int(c.in_src_hi[r]), int(c.in_src_lo[r]), int(c.in_sport[r]))
            dst = (int(c.in_dst_hi[r]), int(c.in_dst_lo[r]), int(c.in_dport[r]))
            s = index.get((src, dst), -1)
        groups.setdefault((s, int(c.icmp_mtu[r])), []).append(r)
    for (s, mtu), rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        reporters = sorted({format_addr(c.src_hi[r], c.src_lo[r]) for r in rs[:50]})[:2]
        icmp_frames = [int(c.frame[r]) for r in rs[:5]]
        if s >= 0:
            m = big_retr & (x.sid == s)
            out.append(_finding(
                "pmtu_blackhole", "high", 0.85,
                f"ICMP fragmentation-needed (next-hop MTU {mtu}) for {flow_id(s)} "
                f"({_ep(st.c_hi[s], st.c_lo[s], st.c_port[s])} → {_ep(st.s_hi[s], st.s_lo[s], st.s_port[s])}) and "
                f"{int(m.sum())} large segment(s) retransmitted → PMTU black hole",
                f"{', '.join(reporters)} reported a next-hop MTU of {mtu} for this flow, whose segments of >=1000 "
                "bytes keep being retransmitted: packets larger than the path MTU are dropped. Lower the MTU/MSS "
                "(MSS clamping on the NVA/VPN) or let ICMP type 3/4 (ICMPv6 type 2) reach the sender.",
                icmp_frames + [int(f) for f in x.frame[m][:5]], [flow_id(s)], float(c.ts[rs[0]]),
                mtu=mtu, large_retransmissions=int(m.sum()), icmp_messages=len(rs),
            ))
        else:
            out.append(_finding(
                "pmtu_frag_needed", "medium", 0.7,
                f"ICMP fragmentation-needed from {', '.join(reporters)}: next-hop MTU {mtu} ({len(rs)} message(s))",
                "A router on the path cannot forward packets this large with DF set; senders that receive this "
                "adapt, but where such ICMP is filtered large transfers stall (PMTU black hole).",
                icmp_frames, [], float(c.ts[rs[0]]), mtu=mtu, count=len(rs),
            ))
    if not out:
        # No ICMP at all, yet the same full-size segment is retransmitted again and again.
        st = a.streams
        for s in np.unique(x.sid[big_retr]).tolist():
            m = big_retr & (x.sid == s)
            if m.sum() >= 3 and st.retrans[s] >= 0.5 * st.data_pkts[s]:
                out.append(_finding(
                    "pmtu_suspect", "medium", 0.5,
                    f"Full-size segments on {flow_id(s)} retransmitted {int(m.sum())}× while small ones pass → "
                    "possible PMTU black hole (ICMP filtered)",
                    "Only large segments are lost and no ICMP fragmentation-needed is seen: a smaller-MTU hop "
                    "(VPN, tunnel) whose ICMP is blocked would look like this.",
                    [int(f) for f in x.frame[m][:MAX_FRAMES]], [flow_id(s)], float(x.ts[m][0]),
                ))
    return out


def _zero_window(x: _Ctx) -> list[Finding]:
    st = x.a.streams
    zw = (x.a.tcp_flags & FLAG_BITS["zero_window"]) != 0
    out = []
    for s in np.flatnonzero(st.zero_window > 0)[:5].tolist():
        m = zw & (x.sid == s)
        k = np.flatnonzero(m)[0]
        who = _ep(x.src_hi[k], x.src_lo[k], x.sport[k])
        out.append(_finding(
            "zero_window", "medium", 0.8,
            f"{who} advertised a zero receive window {int(st.zero_window[s])}× on {flow_id(s)} → receiver not reading",
            "The receiving application (or host) did not drain its socket buffer, so the sender had to stop: "
            "a receiver-side bottleneck, not a network fault.",
            [int(f) for f in x.frame[m][:MAX_FRAMES]], [flow_id(s)], float(x.ts[k]), count=int(st.zero_window[s]),
        ))
    return out


_DNS_MEANING = {
    "NXDomain": ("medium", "name not in the zone (typo, missing record, or private DNS zone not linked to the VNet)"),
    "ServFail": ("high", "the resolver failed to get an answer upstream (DNSSEC, unreachable forwarder)"),
    "Refused": ("high", "the server refused to answer (ACL, recursion disabled)"),
}


def _dns(x: _Ctx) -> list[Finding]:
    d = x.a.dns
    out = []
    for f in d["failures"]:
        sev, meaning = _DNS_MEANING.get(f["rcode"], ("low", "the server returned an error"))
        out.append(_finding(
            "dns_" + f["rcode"].lower(), sev, 0.9,
            f"DNS {f['rcode'].upper()} for {f['qname'] or '(no name)'} ({f['qtype']}) → {meaning.split(' (')[0]}",
            f"{f['count']} response(s) with rcode {f['rcode']}: {meaning}.", f["frames"], [], None,
            qname=f["qname"], count=f["count"],
        ))
    for u in d["unanswered_names"][:5]:
        out.append(_finding(
            "dns_unanswered", "medium", 0.7,
            f"DNS query for {u['qname'] or '(no name)'} never answered ({u['queries']} query key(s)) → resolver "
            "unreachable or UDP/TCP 53 blocked",
            "No response was captured for these queries; check the VNet DNS servers setting, NSG rules for port "
            "53, and the resolver's health.", u["frames"], [], None, qname=u["qname"],
        ))
    return out


_UNREACH = {
    "3/0": ("medium", "no route to the network"), "3/1": ("medium", "host unreachable (no ARP/ND answer or no route)"),
    "3/3": ("medium", "nothing listening on that UDP port"), "3/2": ("low", "protocol not supported"),
    "3/9": ("high", "blocked by an administrative filter"), "3/10": ("high", "blocked by an administrative filter"),
    "3/13": ("high", "blocked by a firewall/ACL (communication administratively prohibited)"),
    "1/1": ("high", "blocked by a firewall/ACL (administratively prohibited)"), "1/0": ("medium", "no route"),
    "1/3": ("medium", "address unreachable"), "1/4": ("medium", "nothing listening on that port"),
    "11/0": ("low", "TTL expired in transit (traceroute, or a routing loop)"),
    "3/0v6": ("low", "hop limit exceeded (traceroute, or a routing loop)"),
}


def _icmp(x: _Ctx) -> list[Finding]:
    out = []
    for e in x.a.icmp["errors"]:
        key = e["type_code"] + ("v6" if e["family"] == "icmpv6" and e["type_code"] == "3/0" else "")
        if key in ("3/4",) or (e["family"] == "icmpv6" and key.startswith("2/")):
            continue
        if e["family"] == "icmp" and key.startswith("1/"):
            continue
        sev, meaning = _UNREACH.get(key, ("low", e["name"]))
        out.append(_finding(
            "icmp_" + e["family"] + "_" + e["type_code"].replace("/", "_"), sev, 0.85,
            f"ICMP {e['name']} from {', '.join(e['reporters'][:2])} for {e['inner_flow'] or 'a quoted packet'} → {meaning}",
            f"{e['count']} {e['family'].upper()} {e['type_code']} message(s) quote {e['inner_flow']}.",
            e["frames"], [], e["first_ts"], count=e["count"], type_code=e["type_code"],
        ))
    return out


def capture_duplicates(a: Analysis) -> np.ndarray:
    """Per analysed TCP segment: True when it is a copy made by the capture, not by the sender.

    A copy has the same addresses, ports, IP ID, seq, ack and payload as an earlier segment and
    appears < 1 ms after it (a SPAN/bridge seeing the packet twice) or *before* it in time (files
    merged). IP ID 0 (DF packets of some stacks) is ignored, and so are copies seen later than
    1 ms: some stacks resend a segment with its old IP ID after an RTO, which is a real retransmission.
    """
    c = a.cols
    dup = np.zeros(a.tcp_rows.shape[0], bool)
    # a copy is always flagged by tshark (retransmission / dup-ACK ...), so only streams with flags matter
    flagged_stream = a.streams.flagged[a.tcp_stream] > 0 if len(a.streams) else np.zeros(0, bool)
    sel = np.flatnonzero((c.l3[a.tcp_rows] == 4) & (c.ip_id[a.tcp_rows] != 0) & flagged_stream)
    if sel.size < 2:
        return dup
    r = a.tcp_rows[sel]
    h = np.full(r.shape[0], np.uint64(7), np.uint64)
    for col in (c.src_lo[r], c.dst_lo[r], c.sport[r], c.dport[r], c.ip_id[r], c.seq[r], c.ack[r], c.pay_hash[r]):
        h = mix_hash(h, col.astype(np.uint64))
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    d = np.ones(r.shape[0], bool)
    d[first] = False
    d &= (c.ts[r] - c.ts[r[first[inv.ravel()]]]) < 0.001
    dup[sel] = d
    return dup


def _duplicates(x: _Ctx) -> list[Finding]:
    """Why: a duplicated capture makes tshark (and us, faithfully) flag every copy as a
    retransmission; the reader must be told the loss picture is an artefact."""
    a, c = x.a, x.a.cols
    n_dup = int(x.dup.sum())
    back = np.flatnonzero(np.diff(c.ts) < -1.0)
    out: list[Finding] = []
    if n_dup >= 20 and n_dup >= 0.05 * x.dup.shape[0]:
        rows = a.tcp_rows[x.dup]
        out.append(_finding(
            "capture_duplicates", "medium", 0.85,
            f"{n_dup} TCP segments ({100 * n_dup / x.dup.shape[0]:.0f}%) are exact copies made by the capture (same "
            "IP ID, seq, ack and payload) → duplicated or merged capture; tshark counts them as retransmissions",
            "Real retransmissions are sent later (and usually with a new IP ID); identical copies within a "
            "millisecond, or earlier in time, come from the capture itself (SPAN of both directions, two capture "
            "points merged, a file concatenated with itself). Retransmission findings below exclude them.",
            [int(f) for f in c.frame[rows[:MAX_FRAMES]]], [], float(c.ts[rows[0]]), duplicates=n_dup,
            time_jumps_back=int(back.size),
        ))
    elif back.size:
        out.append(_finding(
            "capture_time_backwards", "low", 0.8,
            f"Capture time goes backwards {back.size}× (largest jump {float(-np.diff(c.ts).min()):.1f} s) → merged "
            "or clock-stepped capture",
            "Out-of-order timestamps distort RTT, out-of-order and retransmission timing.",
            [int(c.frame[k + 1]) for k in back[:MAX_FRAMES]], [], None, jumps=int(back.size),
        ))
    return out


def _capture(x: _Ctx) -> list[Finding]:
    a = x.a
    out = []
    if a.info.truncated:
        out.append(_finding("capture_truncated", "low", 1.0, "Capture file is truncated or corrupt; analysed up to the cut",
                            "; ".join(a.info.warnings)[:400], [], [], None))
    out += _duplicates(x)
    if a.decode_issues:
        total = sum(a.decode_issues.values())
        frames = [f for v in a.decode_issue_frames.values() for f in v]
        out.append(_finding("decode_issues", "info", 1.0, f"{total} packet(s) could not be fully decoded",
                            ", ".join(f"{k}: {v}" for k, v in a.decode_issues.items()), frames, [], None))
    return out


PER_KIND = 3


def _cap_per_kind(found: list[Finding]) -> list[Finding]:
    """Keep the best PER_KIND findings of each kind; fold the rest into one "N more" finding.

    Why: on big captures one fault class (e.g. 50 unreachable hosts) would otherwise fill the whole
    bounded list and hide every other kind of problem from a reader with a small token budget.
    """
    by_kind: dict[str, list[Finding]] = {}
    for f in found:
        by_kind.setdefault(f["kind"], []).append(f)
    out: list[Finding] = []
    for kind, fs in by_kind.items():
        out += fs[:PER_KIND]
        rest = fs[PER_KIND:]
        if rest:
            frames = [fr for f in rest[:MAX_FRAMES] for fr in f["evidence"]["frames"][:1]]
            flows = [fl for f in rest[:MAX_FRAMES] for fl in f["flows"][:1]]
            out.append(_finding(
                kind, max((f["severity"] for f in rest), key=SEVERITIES.index), min(f["confidence"] for f in rest),
                f"… and {len(rest)} more '{kind}' findings like the above",
                "; ".join(f["title"] for f in rest[:3])[:600], frames, flows, rest[0]["evidence"]["first_ts"],
                folded=len(rest),
            ))
    return out


def build_findings(a: Analysis, limit: int = 24) -> list[Finding]:
    """Run every detector and rank: severity, then confidence, then evidence size.

    Args:
        a: the capture analysis.
        limit: maximum number of findings kept (the semantic JSON stays compact).
    """
    if a.packets == 0:
        return []
    x = _Ctx(a)
    found = [*_syn_failures(x), *_resets(x), *_pmtu(x), *_retransmissions(x), *_zero_window(x), *_dns(x),
             *_icmp(x), *_capture(x)]
    found.sort(key=lambda f: (-SEVERITIES.index(f["severity"]), -f["confidence"], -len(f["evidence"]["frames"])))
    found = _cap_per_kind(found)
    found.sort(key=lambda f: (-SEVERITIES.index(f["severity"]), -f["confidence"], "folded" in f["metrics"],
                              -len(f["evidence"]["frames"])))
    for i, f in enumerate(found[:limit], 1):
        f["id"] = f"F{i}"
    return found[:limit]
