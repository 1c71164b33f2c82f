"""The fleet's outputs: the fleet semantic JSON (schema: fleet.schema.json), the Markdown and HTML reports.

The JSON is built first and both reports are rendered from it, so reports and JSON agree. Every list
is bounded (captures are all listed, one line each, since "which VM" is the question; findings per
capture, outliers, pairs and paths are capped).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from netghost.forensics.fleet._paths import PointPair
from netghost.forensics.fleet._stats import METRICS, capture_metrics, rank_captures, robust_outliers
from netghost.forensics.fleet._task import CaptureResult, PairResult

__all__ = ["FLEET_SCHEMA_ID", "FLEET_VERSION", "build_fleet_semantic", "load_fleet_schema", "render_fleet_html",
           "render_fleet_markdown"]

FLEET_VERSION = 1
FLEET_SCHEMA_ID = "https://netghost.dev/schemas/forensics-fleet-v1.json"
TOP_FINDINGS = 3


def load_fleet_schema() -> dict[str, Any]:
    """The JSON Schema of the fleet semantic document (shipped in the package)."""
    text = resources.files("netghost.forensics").joinpath("schemas", "fleet.schema.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


def _report_link(r: CaptureResult, kind: str) -> str | None:
    for name in r.outputs:
        if name.endswith(kind):
            return f"captures/{r.id}/{name}"
    return None


def _capture_row(r: CaptureResult, rank: int, score: float, flagged: list[str]) -> dict[str, Any]:
    sem = r.sem or {}
    cap, s = sem.get("capture", {}), sem.get("summary", {})
    return {
        "rank": rank, "id": r.id, "file": r.name, "source": r.uri, "trouble_score": score,
        "packets": s.get("packets", 0), "first_ts": cap.get("first_ts"), "last_ts": cap.get("last_ts"),
        "duration_s": cap.get("duration_s", 0.0), "truncated": bool(cap.get("truncated", False)),
        "metrics": capture_metrics(sem), "outlier_metrics": flagged,
        "top_findings": [{"severity": f["severity"], "kind": f["kind"], "title": f["title"]}
                         for f in sem.get("findings", [])[:TOP_FINDINGS]],
        "findings": len(sem.get("findings", [])),
        "report": _report_link(r, "_forensic_report.md"), "semantic": _report_link(r, "_semantic.json"),
        "seconds": r.seconds, "worker": r.worker,
    }


def _pair_row(pp: PointPair, pr: PairResult | None) -> dict[str, Any]:
    row: dict[str, Any] = {"a": pp.a, "b": pp.b, "shared_flows": pp.shared_flows, "order_method": pp.method,
                           "examples": pp.examples, "compared": bool(pr and pr.ok), "error": pr.error if pr else None,
                           "matched_packets": None, "lost_a_to_b": None, "lost_b_to_a": None, "injected_at_b": None,
                           "injected_at_a": None, "blocked": None, "delay_a_to_b_ms": None, "top_finding": None,
                           "report": None}
    if pr and pr.ok and pr.comparison is not None:
        c = pr.comparison
        row.update(matched_packets=c["matched_packets"], lost_a_to_b=c["lost"]["a_to_b"]["count"],
                   lost_b_to_a=c["lost"]["b_to_a"]["count"], injected_at_b=c["injected"]["at_b"]["count"],
                   injected_at_a=c["injected"]["at_a"]["count"],
                   blocked=c["blocked"]["at_b"]["count"] + c["blocked"]["at_a"]["count"],
                   delay_a_to_b_ms=c["delay_ms"]["a_to_b"]["median"], top_finding=pr.top_finding,
                   report=next((f"pairs/{pp.a}_vs_{pp.b}/{n}" for n in pr.outputs if n.endswith("_forensic_report.md")),
                               None))
    return row


def build_fleet_semantic(results: Sequence[CaptureResult], pairs: Sequence[tuple[PointPair, PairResult | None]],
                         paths: list[dict[str, object]], run: dict[str, Any]) -> dict[str, Any]:
    """The fleet document: captures ranked by trouble, outliers, failures, matched pairs, path orders.

    Args:
        results: every capture's result (failed ones included).
        pairs: matched capture-point pairs with their comparison (None: not compared).
        paths: flows seen at several points with their order (``_paths.path_orders``).
        run: how the fleet ran (``sources``, ``scheduler``, ``workers``, ``wall_s``).
    """
    ok = [r for r in results if r.ok and r.sem is not None]
    table = {r.id: capture_metrics(r.sem) for r in ok if r.sem is not None}
    outliers = robust_outliers(table)
    ranked = rank_captures({r.id: (r.sem or {}).get("findings", []) for r in ok}, outliers)
    by_id = {r.id: r for r in ok}
    return {
        "schema": FLEET_SCHEMA_ID,
        "version": FLEET_VERSION,
        "fleet": {"captures": len(results), "analysed": len(ok), "failed": len(results) - len(ok),
                  "packets": sum(int((r.sem or {}).get("summary", {}).get("packets", 0)) for r in ok)},
        "run": run,
        "metrics": dict(METRICS),
        "captures": [_capture_row(by_id[cid], i, score, flagged) for i, (cid, score, flagged) in enumerate(ranked, 1)],
        "outliers": outliers,
        "failed": [{"id": r.id, "source": r.uri, "error": r.error or "unknown error"} for r in results if not r.ok],
        "pairs": [_pair_row(pp, pr) for pp, pr in pairs],
        "paths": paths,
    }


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _verdict(doc: dict[str, Any]) -> list[str]:
    f = doc["fleet"]
    lines = [f"- {f['captures']} captures: {f['analysed']} analysed ({f['packets']:,} packets), {f['failed']} failed."]
    caps = doc["captures"]
    if caps and caps[0]["trouble_score"] > 0:
        top = caps[0]
        why = top["top_findings"][0]["title"] if top["top_findings"] else "outlier figures"
        lines.append(f"- Most trouble: **{top['id']}** (score {top['trouble_score']}): {why}.")
    outl = [(name, o) for name, e in doc["outliers"].items() for o in e["outliers"]]
    if outl:
        lines.append("- Different from the others (median/MAD): " + "; ".join(
            f"{o['id']} on {name} ({_fmt(o['value'])} vs median {_fmt(doc['outliers'][name]['median'])})"
            for name, o in outl[:8]) + ".")
    elif len(caps) >= 3:
        lines.append("- No capture stands out from the others on any figure (median/MAD).")
    for p in doc["pairs"][:5]:
        if p["compared"]:
            lines.append(f"- {p['a']} → {p['b']} ({p['shared_flows']} shared flows, order by {p['order_method']}): "
                         f"{p['matched_packets']} packets matched, lost {p['lost_a_to_b']} A→B / {p['lost_b_to_a']} B→A, "
                         f"injected {p['injected_at_b']} at B; {p['top_finding'] or 'no findings'}.")
    return lines


def render_fleet_markdown(doc: dict[str, Any]) -> str:
    """The fleet report in Markdown: verdict, ranked captures (one line each, linking to its report),
    outliers, failures, compared pairs and path orders."""
    out = ["# Fleet forensic report", "", "## Summary", "", *_verdict(doc), ""]
    out += ["## Captures, most trouble first", "",
            "| # | capture | score | packets | retrans rate | RTT p95 ms | SYN fail | RST | zero win | DNS fail | outlier on | top finding | report |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in doc["captures"]:
        m = c["metrics"]
        top = f"{c['top_findings'][0]['severity'].upper()}: {c['top_findings'][0]['title']}" if c["top_findings"] else "-"
        link = f"[report]({c['report']})" if c["report"] else "-"
        out.append(f"| {c['rank']} | {c['id']} | {c['trouble_score']} | {c['packets']:,} | {_fmt(m['retrans_rate'])} | "
                   f"{_fmt(m['rtt_p95_ms'])} | {_fmt(m['syn_failures'])} | {_fmt(m['rst_packets'])} | "
                   f"{_fmt(m['zero_windows'])} | {_fmt(m['dns_failures'])} | {', '.join(c['outlier_metrics']) or '-'} | "
                   f"{top.replace('|', '/')} | {link} |")
    out += ["", "## Outliers (median/MAD, modified z > 3.5)", ""]
    for name, e in doc["outliers"].items():
        listed = ", ".join(f"{o['id']} {_fmt(o['value'])} (z {_fmt(o['z'])})" for o in e["outliers"]) or "none"
        out.append(f"- **{name}** ({doc['metrics'][name]}): median {_fmt(e['median'])}, MAD {_fmt(e['mad'])} over "
                   f"{e['captures']} captures; outliers: {listed}.")
    out += ["", "## Failed captures", ""]
    out += [f"- {f['id']} (`{f['source']}`): {f['error']}" for f in doc["failed"]] or ["None."]
    out += ["", "## Capture points sharing flows (two-point comparison, A upstream)", ""]
    if doc["pairs"]:
        out += ["| A | B | shared flows | order by | matched | lost A→B | lost B→A | injected at B | blocked | delay A→B ms | top finding | report |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for p in doc["pairs"]:
            link = f"[report]({p['report']})" if p["report"] else (p["error"] or "-")
            out.append(f"| {p['a']} | {p['b']} | {p['shared_flows']} | {p['order_method']} | {_fmt(p['matched_packets'])} | "
                       f"{_fmt(p['lost_a_to_b'])} | {_fmt(p['lost_b_to_a'])} | {_fmt(p['injected_at_b'])} | {_fmt(p['blocked'])} | "
                       f"{_fmt(p['delay_a_to_b_ms'])} | {(p['top_finding'] or '-').replace('|', '/')} | {link} |")
    else:
        out.append("No flow was seen at more than one capture point.")
    if doc["paths"]:
        out += ["", "## Paths through the capture points (client side first)", ""]
        out += [f"- {' → '.join(p['points'])} (by {p['method']}): {p['flows']} flow(s), e.g. {', '.join(p['examples'])}"
                for p in doc["paths"]]
    r = doc["run"]
    out += ["", f"Run: {r['workers']} workers on {r['scheduler']}, {r['wall_s']} s wall."]
    return "\n".join(out) + "\n"


def render_fleet_html(doc: dict[str, Any]) -> str:
    """A self-contained HTML page of the fleet report (no scripts, no external resources)."""
    e = html.escape
    rows = []
    for c in doc["captures"]:
        m = c["metrics"]
        link = f'<a href="{e(c["report"])}">report</a>' if c["report"] else "-"
        cls = ' class="out"' if c["outlier_metrics"] else ""
        top = e(c["top_findings"][0]["title"]) if c["top_findings"] else "-"
        rows.append(f"<tr{cls}><td>{c['rank']}</td><td>{e(c['id'])}</td><td>{c['trouble_score']}</td><td>{c['packets']:,}</td>"
                    + "".join(f"<td>{e(_fmt(m[k]))}</td>" for k in METRICS)
                    + f"<td>{e(', '.join(c['outlier_metrics']) or '-')}</td><td>{top}</td><td>{link}</td></tr>")
    heads = "".join(f'<th title="{e(v)}">{e(k)}</th>' for k, v in METRICS.items())
    failed = "".join(f"<li>{e(f['id'])} (<code>{e(f['source'])}</code>): {e(f['error'])}</li>" for f in doc["failed"]) or "<li>None.</li>"
    pairs = "".join(
        f"<tr><td>{e(p['a'])}</td><td>{e(p['b'])}</td><td>{p['shared_flows']}</td><td>{e(p['order_method'])}</td>"
        f"<td>{e(_fmt(p['matched_packets']))}</td><td>{e(_fmt(p['lost_a_to_b']))}</td><td>{e(_fmt(p['injected_at_b']))}</td>"
        f"<td>{e(p['top_finding'] or p['error'] or '-')}</td>"
        f"<td>{'<a href=' + chr(34) + e(p['report']) + chr(34) + '>report</a>' if p['report'] else '-'}</td></tr>"
        for p in doc["pairs"])
    verdict = "".join(f"<li>{e(line[2:]).replace('**', '')}</li>" for line in _verdict(doc))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Fleet forensic report</title><style>"
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:90em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.25em .5em;font-size:.9em}tr.out{background:#fde2e2}"
        "</style></head><body><h1>Fleet forensic report</h1>"
        f"<ul>{verdict}</ul><h2>Captures, most trouble first</h2><table><tr><th>#</th><th>capture</th><th>score</th>"
        f"<th>packets</th>{heads}<th>outlier on</th><th>top finding</th><th>report</th></tr>{''.join(rows)}</table>"
        f"<h2>Failed captures</h2><ul>{failed}</ul>"
        "<h2>Capture points sharing flows</h2><table><tr><th>A</th><th>B</th><th>shared flows</th><th>order by</th>"
        f"<th>matched</th><th>lost A→B</th><th>injected at B</th><th>top finding</th><th>report</th></tr>{pairs}</table>"
        "</body></html>\n"
    )
