"""The fleet report as one self-contained HTML page (no script, nothing fetched), rendered from the fleet JSON.

Why a fixed table layout: the ranking is read on a laptop screen, and a table sized by its content
grows as wide as its longest cell (a capture's file name, a DNS name quoted by a finding), which
pushed columns off a 1280 px screen. Here the table takes the page's width, each column a share of
it, and long words break inside their cell; the outlier column is folded into the figures themselves
(an outlying figure is marked in its own cell), so every column fits. Tool text (file names, finding
titles, errors) is made visible and escaped like every report's.
"""

from __future__ import annotations

import html
from typing import Any

from netghost.forensics.fleet._report import fmt, score_legend, score_text, verdict_lines
from netghost.forensics.fleet._stats import METRICS
from netghost.safetext import visible

__all__ = ["render_fleet_html"]

_HEADS = {"retrans_rate": "retrans rate", "rtt_p95_ms": "RTT p95 ms", "syn_failures": "SYN fail",
          "rst_packets": "RST", "zero_windows": "zero win", "window_full": "win full", "dns_failures": "DNS fail"}
# column shares of the page width (percent): rank, capture, score, packets, one per metric, top finding
_WIDTHS = (3, 17, 10, 6, *(5,) * len(METRICS), 29)
_STYLE = (
    "body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;"
    "color:#222;box-sizing:border-box}h1{border-bottom:2px solid #444}h2{border-bottom:1px solid #ccc;margin-top:1.6em}"
    "table{border-collapse:collapse;width:100%;table-layout:fixed;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:.25em .4em;font-size:.85em;text-align:left;vertical-align:top;"
    "overflow-wrap:anywhere}th{background:#f0f0f0}td.n{text-align:right}td.out{background:#fde2e2;font-weight:bold}"
    "small{color:#555}code{background:#f4f4f4;padding:0 3px;overflow-wrap:anywhere}li{overflow-wrap:anywhere}"
)


def _e(value: object) -> str:
    """Tool text for the page: hidden characters shown, then escaped."""
    return html.escape(visible("" if value is None else str(value)), quote=True)


def _code(value: str) -> str:
    return f"<code>{_e(value)}</code>"


def _link(href: str | None, text: str = "report") -> str:
    return f'<a href="{_e(href)}">{text}</a>' if href else ""


def _capture_rows(doc: dict[str, Any]) -> str:
    out = []
    for c in doc["captures"]:
        m, outlying = c["metrics"], set(c["outlier_metrics"])
        cells = "".join(f'<td class="n out" title="unlike the others (median/MAD)">{_e(fmt(m[k]))}</td>' if k in outlying
                        else f'<td class="n">{_e(fmt(m[k]))}</td>' for k in METRICS)
        top = c["top_findings"][0] if c["top_findings"] else None
        finding = f"<strong>{_e(top['severity'].upper())}</strong> {_e(top['title'])}" if top else "-"
        parts = score_text(c).partition(" = ")[2]
        out.append(f"<tr><td class=\"n\">{c['rank']}</td><td>{_code(c['id'])}<br>{_link(c['report'])}</td>"
                   f"<td class=\"n\">{c['trouble_score']}{'<br><small>' + _e(parts) + '</small>' if parts else ''}</td>"
                   f"<td class=\"n\">{c['packets']:,}</td>{cells}<td>{finding}</td></tr>")
    return "".join(out)


def _pairs(doc: dict[str, Any]) -> str:
    if not doc["pairs"]:
        return "<p>None: no flow was seen at more than one capture point.</p>"
    heads = ("A", "B", "shared flows", "order by", "matched", "lost A→B", "lost B→A", "injected at B", "top finding")
    widths = (15, 15, 7, 7, 7, 7, 7, 7, 28)
    rows = "".join(
        f"<tr><td>{_code(p['a'])}</td><td>{_code(p['b'])}</td><td class=\"n\">{p['shared_flows']}</td>"
        f"<td>{_e(p['order_method'])}</td>"
        + "".join(f'<td class="n">{_e(fmt(p[k]))}</td>' for k in ("matched_packets", "lost_a_to_b", "lost_b_to_a", "injected_at_b"))
        + f"<td>{_e(p['top_finding'] or p['error'] or '-')} {_link(p['report'])}</td></tr>"
        for p in doc["pairs"])
    return _table(heads, widths, rows)


def _table(heads: tuple[str, ...], widths: tuple[int, ...], rows: str, titles: dict[str, str] | None = None) -> str:
    cols = "".join(f'<col style="width:{w}%">' for w in widths)
    th = "".join(f'<th title="{_e((titles or {}).get(h, h))}">{_e(h)}</th>' for h in heads)
    return f"<table><colgroup>{cols}</colgroup><thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table>"


def _outliers(doc: dict[str, Any]) -> str:
    items = []
    for name, e in doc["outliers"].items():
        listed = ", ".join(f"{_code(o['id'])} {_e(fmt(o['value']))} (z {_e(fmt(o['z']))})" for o in e["outliers"]) or "none"
        items.append(f"<li><strong>{_e(name)}</strong> ({_e(doc['metrics'][name])}): median {_e(fmt(e['median']))}, "
                     f"MAD {_e(fmt(e['mad']))} over {e['captures']} captures; outliers: {listed}.</li>")
    return f"<ul>{''.join(items)}</ul>"


def render_fleet_html(doc: dict[str, Any]) -> str:
    """A self-contained HTML page of the fleet report that fits a 1280 px screen (no scripts, no external
    resources; links to each capture's own report beside it)."""
    verdict = "".join(f"<li>{line}</li>" for line in verdict_lines(doc, _code, _e))
    heads = ("#", "capture", "score", "packets", *(_HEADS[k] for k in METRICS), "top finding")
    titles = {_HEADS[k]: v for k, v in METRICS.items()} | {"score": "trouble score: see How the score is computed"}
    failed = "".join(f"<li>{_code(f['id'])} ({_code(f['source'])}): {_e(f['error'])}</li>" for f in doc["failed"]) or "<li>None.</li>"
    legend = "".join(f"<li>{_e(x)}</li>" for x in score_legend())
    r = doc["run"]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        f'content="width=device-width"><title>Fleet forensic report</title><style>{_STYLE}</style></head><body>'
        f"<h1>Fleet forensic report</h1><ul>{verdict}</ul>"
        f"<h2>Captures, most trouble first</h2>{_table(heads, _WIDTHS, _capture_rows(doc), titles)}"
        f"<h2>How the score is computed</h2><p>The sum of:</p><ul>{legend}</ul>"
        f"<h2>Outliers (median/MAD, modified z &gt; 3.5)</h2>{_outliers(doc)}"
        f"<h2>Failed captures</h2><ul>{failed}</ul>"
        f"<h2>Capture points sharing flows (two-point comparison, A upstream)</h2>{_pairs(doc)}"
        f"<p><small>Run: {r['workers']} workers on {_e(r['scheduler'])}, {r['wall_s']} s wall.</small></p>"
        "</body></html>\n"
    )
