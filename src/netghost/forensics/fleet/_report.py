"""The fleet's outputs: the fleet semantic JSON (schema: fleet.schema.json) and the Markdown report (the
HTML page: _html.py).

The JSON is built first and both reports are rendered from it, so reports and JSON agree. Every list
is bounded (captures are all listed, one line each, since "which VM" is the question; findings per
capture, outliers, pairs and paths are capped).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from netghost.forensics.fleet._paths import PointPair
from netghost.forensics.fleet._stats import (
    METRICS,
    MIN_SAMPLE,
    OUTLIER_WEIGHT,
    SEVERITY_WEIGHT,
    TOP_FINDINGS,
    TROUBLE,
    capture_metrics,
    rank_captures,
    robust_outliers,
)
from netghost.forensics.fleet._task import CaptureResult, PairResult
from netghost.safetext import md_code, md_inline

__all__ = ["FLEET_SCHEMA_ID", "FLEET_VERSION", "build_fleet_semantic", "fmt", "load_fleet_schema", "render_fleet_markdown",
           "score_legend", "score_text", "trouble_why", "verdict_lines"]

FLEET_VERSION = 1
FLEET_SCHEMA_ID = "https://netghost.dev/schemas/forensics-fleet-v1.json"


def load_fleet_schema() -> dict[str, Any]:
    """The JSON Schema of the fleet semantic document (shipped in the package)."""
    text = resources.files("netghost.forensics").joinpath("schemas", "fleet.schema.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


def _report_link(r: CaptureResult, kind: str) -> str | None:
    for name in r.outputs:
        if name.endswith(kind):
            return f"captures/{r.id}/{name}"
    return None


def _capture_row(r: CaptureResult, rank: int, score: float, flagged: list[str], parts: dict[str, float]) -> dict[str, Any]:
    sem = r.sem or {}
    cap, s = sem.get("capture", {}), sem.get("summary", {})
    return {
        "rank": rank, "id": r.id, "file": r.name, "source": r.uri, "trouble_score": score, "trouble": parts,
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
    ranked = rank_captures({r.id: r.sem for r in ok if r.sem is not None}, outliers)
    by_id = {r.id: r for r in ok}
    return {
        "schema": FLEET_SCHEMA_ID,
        "version": FLEET_VERSION,
        "fleet": {"captures": len(results), "analysed": len(ok), "failed": len(results) - len(ok),
                  "packets": sum(int((r.sem or {}).get("summary", {}).get("packets", 0)) for r in ok)},
        "run": run,
        "metrics": dict(METRICS),
        "captures": [_capture_row(by_id[cid], i, score, flagged, parts)
                     for i, (cid, score, flagged, parts) in enumerate(ranked, 1)],
        "outliers": outliers,
        "failed": [{"id": r.id, "source": r.uri, "error": r.error or "unknown error"} for r in results if not r.ok],
        "pairs": [_pair_row(pp, pr) for pp, pr in pairs],
        "paths": paths,
    }


def fmt(v: Any) -> str:
    """A figure as the reports print it ("-" for none)."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


_MEASURE_TEXT = {
    "retransmissions": lambda m: f"{100 * (m['retrans_rate'] or 0):.1f}% of its TCP segments retransmitted",
    "unanswered_syns": lambda m: f"{fmt(m['syn_failures'])} connection attempt(s) without a SYN-ACK",
    "resets": lambda m: f"{fmt(m['rst_packets'])} RST segment(s)",
    "zero_windows": lambda m: f"{fmt(m['zero_windows'])} zero-window segment(s)",
    "window_full": lambda m: f"{fmt(m['window_full'])} segment(s) filling the receiver's window",
    "dns_failures": lambda m: f"{fmt(m['dns_failures'])} failed DNS quer(ies)",
}


def score_text(c: dict[str, Any]) -> str:
    """The score with its non-zero parts, largest first: ``9.9 = retransmissions 8.3 + findings 1.6``."""
    parts = sorted(((k, v) for k, v in c["trouble"].items() if v > 0), key=lambda kv: (-kv[1], kv[0]))
    return f"{c['trouble_score']}" + (" = " + " + ".join(f"{k.replace('_', ' ')} {v:g}" for k, v in parts) if parts else "")


def trouble_why(c: dict[str, Any]) -> str:
    """Why a capture ranks where it does: its top finding, or the measure that weighs most when the
    measures outweigh the findings (a loss rate with only a mild finding), or its outlying metrics."""
    parts = c["trouble"]
    measure = max(_MEASURE_TEXT, key=lambda k: (parts.get(k, 0.0), k))
    if parts.get(measure, 0.0) > parts.get("findings", 0.0) or not c["top_findings"]:
        if parts.get(measure, 0.0) > 0:
            return _MEASURE_TEXT[measure](c["metrics"])
        return "unlike its peers on " + ", ".join(c["outlier_metrics"]) if c["outlier_metrics"] else "no trouble"
    return str(c["top_findings"][0]["title"])


def verdict_lines(doc: dict[str, Any], code: Callable[[str], str], text: Callable[[str], str]) -> list[str]:
    """The summary's bullets (without the bullet), with ``code`` and ``text`` making capture ids and tool
    text safe for the medium (Markdown or HTML)."""
    f = doc["fleet"]
    lines = [f"{f['captures']} captures: {f['analysed']} analysed ({f['packets']:,} packets), {f['failed']} failed."]
    caps = doc["captures"]
    if caps and caps[0]["trouble_score"] > 0:
        top = caps[0]
        lines.append(f"Most trouble: {code(top['id'])} (score {score_text(top)}): {text(trouble_why(top))}.")
    elif caps:
        lines.append("No capture shows trouble.")
    outl = [(name, o) for name, e in doc["outliers"].items() for o in e["outliers"]]
    if outl:
        lines.append("Different from the others (median/MAD): " + "; ".join(
            f"{code(o['id'])} on {name} ({fmt(o['value'])} vs median {fmt(doc['outliers'][name]['median'])})"
            for name, o in outl[:8]) + ".")
    elif len(caps) >= 3:
        lines.append("No capture stands out from the others on any figure (median/MAD).")
    for p in doc["pairs"][:5]:
        if p["compared"]:
            lines.append(f"{code(p['a'])} → {code(p['b'])} ({p['shared_flows']} shared flows, order by {p['order_method']}): "
                         f"{p['matched_packets']} packets matched, lost {p['lost_a_to_b']} A→B / {p['lost_b_to_a']} B→A, "
                         f"injected {p['injected_at_b']} at B; {text(p['top_finding'] or 'no findings')}.")
    return lines


def score_legend() -> list[str]:
    """How the trouble score is computed, one line a part (both reports print it)."""
    sev = ", ".join(f"{k} {v:g}" for k, v in SEVERITY_WEIGHT.items() if v)
    return [f"{name.replace('_', ' ')}: up to {m.weight:g} points ({m.what}; a rate over fewer than {MIN_SAMPLE} "
            "segments, connections or queries counts in proportion)" for name, m in TROUBLE.items()] + [
        f"findings: the top {TOP_FINDINGS} findings' severity weight ({sev}) times their confidence",
        f"outliers: {OUTLIER_WEIGHT:g} points per figure on which the capture is unlike the others (median/MAD)"]


def render_fleet_markdown(doc: dict[str, Any]) -> str:
    """The fleet report in Markdown: verdict, ranked captures (one line each, linking to its report),
    outliers, failures, compared pairs and path orders. Tool text (finding titles, errors, sources) is
    escaped; capture ids are written as they are (they hold only letters, digits, ``.``, ``_`` and ``-``:
    see ``_sources.py``)."""
    def code(v: str) -> str:
        return v

    out = ["# Fleet forensic report", "", "## Summary", "", *(f"- {x}" for x in verdict_lines(doc, code, md_inline)), ""]
    out += ["## Captures, most trouble first", "",
            "| # | capture | score | packets | retrans rate | RTT p95 ms | SYN fail | RST | zero win | win full | DNS fail "
            "| outlier on | top finding | report |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in doc["captures"]:
        m = c["metrics"]
        top = f"{c['top_findings'][0]['severity'].upper()}: {md_inline(c['top_findings'][0]['title'])}" if c["top_findings"] else "-"
        link = f"[report](<{c['report']}>)" if c["report"] else "-"
        out.append(f"| {c['rank']} | {code(c['id'])} | {c['trouble_score']} | {c['packets']:,} | " + " | ".join(
            fmt(m[k]) for k in METRICS) + f" | {', '.join(c['outlier_metrics']) or '-'} | {top} | {link} |")
    out += ["", "## How the score is computed", "", "The sum of:", *(f"- {x}" for x in score_legend())]
    out += ["", "## Outliers (median/MAD, modified z > 3.5)", ""]
    for name, e in doc["outliers"].items():
        listed = ", ".join(f"{code(o['id'])} {fmt(o['value'])} (z {fmt(o['z'])})" for o in e["outliers"]) or "none"
        out.append(f"- **{name}** ({doc['metrics'][name]}): median {fmt(e['median'])}, MAD {fmt(e['mad'])} over "
                   f"{e['captures']} captures; outliers: {listed}.")
    out += ["", "## Failed captures", ""]
    out += [f"- {code(f['id'])} ({md_code(f['source'])}): {md_inline(f['error'])}" for f in doc["failed"]] or ["None."]
    out += ["", "## Capture points sharing flows (two-point comparison, A upstream)", ""]
    if doc["pairs"]:
        out += ["| A | B | shared flows | order by | matched | lost A→B | lost B→A | injected at B | blocked | delay A→B ms | top finding | report |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for p in doc["pairs"]:
            link = f"[report](<{p['report']}>)" if p["report"] else md_inline(p["error"] or "-")
            out.append(f"| {code(p['a'])} | {code(p['b'])} | {p['shared_flows']} | {p['order_method']} | {fmt(p['matched_packets'])} | "
                       f"{fmt(p['lost_a_to_b'])} | {fmt(p['lost_b_to_a'])} | {fmt(p['injected_at_b'])} | {fmt(p['blocked'])} | "
                       f"{fmt(p['delay_a_to_b_ms'])} | {md_inline(p['top_finding'] or '-')} | {link} |")
    else:
        out.append("None: no flow was seen at more than one capture point.")
    if doc["paths"]:
        out += ["", "## Paths through the capture points (client side first)", ""]
        out += [f"- {' → '.join(code(x) for x in p['points'])} (by {p['method']}): {p['flows']} flow(s), e.g. "
                f"{', '.join(md_inline(x) for x in p['examples'])}" for p in doc["paths"]]
    r = doc["run"]
    out += ["", f"Run: {r['workers']} workers on {md_inline(r['scheduler'])}, {r['wall_s']} s wall."]
    return "\n".join(out) + "\n"
