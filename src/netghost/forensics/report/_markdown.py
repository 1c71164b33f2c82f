"""Markdown reports rendered from the semantic document (so report and JSON can never disagree).

Two outputs: the forensic report (Executive Summary near the top, findings, worst flows, TCP
analysis, DNS, ICMP, decode issues) and the executive summary (≤ 50 lines), which is what the
seeds' agent reads first. Text that comes from the capture (DNS names are whatever bytes a packet
carried, and finding titles and details quote them) or from the file system (the capture's name) is
escaped (:mod:`netghost.safetext`), so no packet can put HTML, a link or a heading into the report.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from netghost.safetext import md_code, md_inline

__all__ = ["MAX_SUMMARY_LINES", "render_executive_summary", "render_report"]

MAX_SUMMARY_LINES = 50
NO_TRAFFIC = "No traffic captured: the capture contains no packets."


def _ts(v: float | None) -> str:
    """A capture timestamp as a UTC date; the raw value when it is no calendar date.

    Why the fallback: timestamps come straight from the file, and a corrupt or crafted capture can
    carry ones past year 9999 (or NaN), which ``datetime`` refuses; the report must still be written.
    """
    if v is None:
        return "-"
    try:
        return datetime.fromtimestamp(v, UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    except (ValueError, OverflowError, OSError):
        return f"{v!r} s since the epoch (not a calendar date)"


def _frames(fr: list[int], n: int = 6) -> str:
    return ", ".join(f"#{f}" for f in fr[:n]) + (" …" if len(fr) > n else "") if fr else "-"


def _headline(sem: dict[str, Any]) -> list[str]:
    s = sem["summary"]
    cap = sem["capture"]
    if s["packets"] == 0:
        return [NO_TRAFFIC]
    ta = s["tcp_analysis"]
    lines = [
        f"- Capture {md_code(cap['file'])} ({cap['file_type']}): {s['packets']:,} packets over {cap['duration_s']:.3f} s, "
        f"{s['tcp_conversations']:,} TCP conversations.",
        f"- TCP: {ta['retransmission']:,} retransmissions ({ta['fast_retransmission']} fast, "
        f"{ta['spurious_retransmission']} spurious), {ta['lost_segment']} lost segments, "
        f"{ta['duplicate_ack']} duplicate ACKs, {ta['zero_window']} zero windows, {s['rst_packets']} RST packets, "
        f"{s['syn_without_synack']} connection attempts without SYN-ACK.",
    ]
    if s["dns"]["queries"] or s["dns_rcodes"]:
        rc = ", ".join(f"{k} {v}" for k, v in s["dns_rcodes"].items())
        answers = f"responses {rc}" if rc else "no responses"
        lines.append(f"- DNS: {s['dns']['queries']} queries, {answers}, {s['dns']['unanswered']} unanswered.")
    icmp = {**s["icmp"], **{f"v6 {k}": v for k, v in s["icmpv6"].items()}}
    if icmp:
        lines.append("- ICMP: " + ", ".join(f"{k}: {v}" for k, v in icmp.items()) + ".")
    if cap["truncated"]:
        lines.append("- WARNING: the capture is truncated/corrupt; analysed up to the cut.")
    if s["decode_issues"]:
        lines.append("- Decode issues: " + ", ".join(f"{k} {v}" for k, v in s["decode_issues"].items()) + ".")
    return lines


def render_executive_summary(sem: dict[str, Any]) -> str:
    """At most :data:`MAX_SUMMARY_LINES` lines: verdict, top findings with evidence, key counts."""
    out = [f"# Executive summary: {md_inline(sem['capture']['file'])}", ""]
    findings = sem["findings"]
    if sem["summary"]["packets"] == 0:
        out += [NO_TRAFFIC, ""]
    elif findings and findings[0]["severity"] != "info":
        top = findings[0]
        out += [f"**Most likely issue:** {md_inline(top['title'])} (severity {top['severity']}, confidence {top['confidence']:.0%}).", ""]
    else:  # notes (info) are listed below, never named the issue
        out += ["**No network fault detected** in this capture by the engine's detectors"
                + (" (notes below)." if findings else "."), ""]
    out += ["## Key facts", *_headline(sem), ""]
    if findings:
        out += ["## Top findings"]
        for f in findings[:8]:
            flows = f" flows {', '.join(f['flows'][:3])};" if f["flows"] else ""
            out.append(f"- \\[{f['id']}\\] **{f['severity'].upper()}** {md_inline(f['title'])} —{flows} frames {_frames(f['evidence']['frames'], 4)}")
        if len(findings) > 8:
            out.append(f"- … {len(findings) - 8} more in the forensic report.")
        out.append("")
    out.append("Full detail: the forensic report and the semantic JSON (frame numbers are Wireshark's).")
    return "\n".join(out[:MAX_SUMMARY_LINES]) + "\n"


def render_report(sem: dict[str, Any]) -> str:
    """The full Markdown forensic report: its sections in reading order, one blank line between them."""
    sections = [[f"# PCAP forensic report: {md_inline(sem['capture']['file'])}"], _summary_section(sem), _capture_section(sem),
                _findings_section(sem), _flows_section(sem), _tcp_section(sem["summary"]), _dns_section(sem),
                _icmp_section(sem), _decode_section(sem["summary"])]
    out = sections[0]
    for lines in sections[1:]:
        out += ["", *lines]
    return "\n".join(out) + "\n"


def _summary_section(sem: dict[str, Any]) -> list[str]:
    out = ["## Executive Summary", "", *_headline(sem)]
    if sem["findings"]:
        out += ["", f"**Most likely issue:** {md_inline(sem['findings'][0]['title'])}"]
    return out


def _capture_section(sem: dict[str, Any]) -> list[str]:
    cap, s = sem["capture"], sem["summary"]
    out = ["## Capture", "",
           f"- File type: {cap['file_type']}{' (gzip)' if cap['compressed'] else ''}, size {cap['size_bytes']} bytes",
           f"- First packet: {_ts(cap['first_ts'])}; last packet: {_ts(cap['last_ts'])}",
           f"- Link types: {', '.join(f'{k} ({v})' for k, v in s['link_types'].items()) or '-'}",
           f"- Network layer: {', '.join(f'{k} ({v})' for k, v in s['l3'].items()) or '-'}"]
    out += [f"- Warning: {md_inline(w)}" for w in cap["warnings"]]
    return out


def _findings_section(sem: dict[str, Any]) -> list[str]:
    out = ["## Findings", ""]
    if not sem["findings"]:
        return [*out, "No findings." if sem["summary"]["packets"] else NO_TRAFFIC]
    for i, f in enumerate(sem["findings"]):
        if i:
            out.append("")  # a blank line between findings
        out += [f"### {f['id']} \\[{f['severity'].upper()}, confidence {f['confidence']:.0%}\\] {md_inline(f['title'])}",
                "", md_inline(f["detail"]), "",
                f"- Evidence frames: {_frames(f['evidence']['frames'], 10)}"
                + (f" (first at {_ts(f['evidence']['first_ts'])})" if f["evidence"]["first_ts"] else "")]
        if f["flows"]:
            out.append(f"- Flows: {md_inline(', '.join(f['flows']))}")
        if f["metrics"]:
            out.append("- Metrics: " + md_inline(", ".join(f"{k}={v}" for k, v in f["metrics"].items())))
    return out


def _flows_section(sem: dict[str, Any]) -> list[str]:
    out = ["## Worst flows", ""]
    if not sem["flows"]:
        return [*out, "No TCP flows."]
    # retr = every segment tshark flags (SYN retries included); the % is over payload-carrying segments only
    out += ["retr counts every retransmitted segment (SYN retries included); the % is the data retransmission "
            "rate (payload segments only).", ""]
    out += ["| flow | client | server | state (history) | pkts c→s/s→c | bytes c→s/s→c | retr (data %) | iRTT ms | flags | frames |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for fl in sem["flows"][:15]:
        flags = ", ".join(f"{k} {v}" for k, v in fl["analysis"].items()) or "-"
        rtt = "-" if fl["handshake_rtt_ms"] is None else f"{fl['handshake_rtt_ms']:.1f}"
        out.append(
            f"| {fl['id']} | {fl['client']} | {fl['server']} | {fl['conn_state']} ({fl['history'] or '-'}) | {fl['packets']['c2s']}/{fl['packets']['s2c']} "
            f"| {fl['bytes']['c2s']}/{fl['bytes']['s2c']} | {fl['retransmissions']} ({100 * fl.get('retransmission_rate', 0.0):.1f}%) | {rtt} | {flags} | {_frames(fl['evidence_frames'], 4)} |")
    return out


def _tcp_section(s: dict[str, Any]) -> list[str]:
    out = ["## TCP analysis (tshark flag semantics)", "", "| flag | frames |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in s["tcp_analysis"].items() if v] or ["| (none) | 0 |"]
    if s["conn_states"]:
        out += ["", "Connection states (Zeek): " + ", ".join(f"{k} {v}" for k, v in s["conn_states"].items())]
    rtt = s["ack_rtt"]
    if rtt["count"]:
        out += ["", f"ACK RTT (tshark ack_rtt, {rtt['count']} samples): median {rtt['median_ms']:.2f} ms, "
                f"p95 {rtt['p95_ms']:.2f} ms, max {rtt['max_ms']:.2f} ms"]
    return out


def _dns_section(sem: dict[str, Any]) -> list[str]:
    s = sem["summary"]
    d = s["dns"]
    if not (d["queries"] or s["dns_rcodes"]):
        return ["## DNS", "", "No DNS traffic."]
    out = ["## DNS", "", f"- {d['queries']} queries, {d['responses']} responses, {d['unanswered']} unanswered"]
    if d["latency_s"]:
        lat = d["latency_s"]
        out.append(f"- Latency: median {lat['median'] * 1000:.1f} ms, p95 {lat['p95'] * 1000:.1f} ms, max {lat['max'] * 1000:.1f} ms")
    out.append("- Response codes: " + (", ".join(f"{k} {v}" for k, v in s["dns_rcodes"].items()) or "-"))
    for f in sem["dns"]["failures"][:10]:
        out.append(f"- {f['rcode']} for {md_code(f['qname'])} ({f['qtype']}) ×{f['count']}, frames {_frames(f['frames'])}")
    for u in sem["dns"]["unanswered"][:10]:
        out.append(f"- unanswered: {md_code(u['qname'])} ×{u['queries']}, frames {_frames(u['frames'])}")
    return out


def _icmp_section(sem: dict[str, Any]) -> list[str]:
    s = sem["summary"]
    if not (s["icmp"] or s["icmpv6"]):
        return ["## ICMP", "", "No ICMP traffic."]
    out = ["## ICMP", "",
           "- ICMP type/code: " + (", ".join(f"{k} {v}" for k, v in s["icmp"].items()) or "-"),
           "- ICMPv6 type/code: " + (", ".join(f"{k} {v}" for k, v in s["icmpv6"].items()) or "-")]
    for e in sem["icmp_errors"][:10]:
        mtu = f", MTU {e['mtu']}" if e["mtu"] is not None else ""
        out.append(f"- {e['family']} {e['type_code']} {e['name']} ×{e['count']} from {', '.join(e['reporters'])} "
                   f"about {e['inner_flow']}{mtu}; frames {_frames(e['frames'])}")
    return out


def _decode_section(s: dict[str, Any]) -> list[str]:
    issues = s["decode_issues"]
    return ["## Decode issues", "",
            ", ".join(f"{k}: {v}" for k, v in issues.items()) if issues else "None: every packet decoded."]
