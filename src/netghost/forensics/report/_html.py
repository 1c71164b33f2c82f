"""Self-contained HTML report: the Markdown report's content with inline SVG charts.

WHY one file: the report is attached to tickets and opened offline, so charts are inline ``<svg>``
elements and the style is inline; nothing is fetched. The text is converted from the very Markdown
the ``md`` format writes (a converter for the subset our reports use), so the HTML and Markdown
reports never disagree. Reading order: the title, the executive summary, any time gap in the capture
(a finding: the charts cut it out of their axis), then the charts, then the detail.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from netghost.forensics.engine import Analysis
from netghost.forensics.report._charts import (
    charts_available,
    delay_svg,
    flow_axis,
    handshake_ladder_svg,
    sequence_graph_svg,
    stream_data_segments,
    stream_payload,
    timeline_svg,
)
from netghost.forensics.report._markdown import render_report
from netghost.forensics.report._timeaxis import TimeAxis, describe_gap, time_gaps
from netghost.safetext import md_inline_html, visible

__all__ = ["NO_MATPLOTLIB", "chart_flow", "markdown_to_html", "render_html", "worst_stream", "write_html_report"]

NO_MATPLOTLIB = ("Charts are not available: matplotlib could not be imported (it is a dependency of "
                 "netghost: reinstall the package) — run again with --format html once it imports.")
_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{border-bottom:2px solid #444}h2{border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}td code{overflow-wrap:anywhere}
th{background:#f0f0f0}code{background:#f4f4f4;padding:0 3px}img{max-width:100%;border:1px solid #ddd}
svg.chart{max-width:100%;height:auto;border:1px solid #ddd;background:#fff}figure{margin:1em 0}
figcaption{font-size:.85em;color:#555}p.chart-none{color:#555;font-style:italic}
.narrative{background:#eef5ff;border-left:4px solid #3a7bd5;padding:.6em 1em}.notice{background:#fff6e0;
border-left:4px solid #e0a000;padding:.6em 1em}.finding{background:#fdecea;border-left:4px solid #c62828;padding:.6em 1em}
"""


def _inline(text: str) -> str:
    # the report's Markdown escapes the tool text it holds (DNS names from packets, the narrative):
    # read the escapes back, make nothing but code and bold
    return md_inline_html(text)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_to_html(md: str) -> str:
    """Convert the Markdown subset our reports use: headings, bullets, pipe tables, paragraphs, bold, code."""
    out: list[str] = []
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(#{1,6}) (.*)$", line)
        if m:
            n = len(m.group(1))
            out.append(f"<h{n}>{_inline(m.group(2))}</h{n}>")
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            continue
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            head = "".join(f"<th>{_inline(c)}</th>" for c in _cells(rows[0]))
            body = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in _cells(r)) + "</tr>"
                           for r in rows[1:] if not re.fullmatch(r"\|[-|: ]+\|?", r.strip()))
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            continue
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    return "\n".join(out)


def _candidates(sem: dict[str, Any], an: Analysis) -> list[int]:
    """TCP streams in the order the report ranks them: the comparison's impaired flows, the flows the
    findings name (most severe first: the report's headline), then the ranked flows."""
    cands: list[str] = []
    comp = sem.get("comparison")
    if comp:
        cands += [f["id"] for f in comp["per_flow"]
                  if any(d["lost"] + d["injected"] + d["blocked"] for d in f["directions"].values())]
    cands += [fid for f in sem.get("findings", []) for fid in f.get("flows") or []]
    cands += [f["id"] for f in sem.get("flows", [])]
    out: list[int] = []
    for fid in cands:
        if fid.startswith("tcp/") and fid[4:].isdigit() and int(fid[4:]) < len(an.streams) and int(fid[4:]) not in out:
            out.append(int(fid[4:]))
    return out


GRAPH_MIN_SEGMENTS = 3  # fewer data segments make a sequence graph of a dot or two: the ladder says more


def chart_flow(sem: dict[str, Any], an: Analysis) -> tuple[int, bool] | None:
    """The flow to draw and whether as a sequence graph: the worst-ranked flow that carried at least
    :data:`GRAPH_MIN_SEGMENTS` data segments (a sequence graph), else the worst-ranked flow (a
    handshake ladder, which shows each of its packets); None without TCP."""
    cands = _candidates(sem, an)
    for s in cands:
        if stream_data_segments(an, s) >= GRAPH_MIN_SEGMENTS:
            return s, True
    return (cands[0], False) if cands else None


def worst_stream(sem: dict[str, Any], an: Analysis) -> int | None:
    """The TCP stream the charts draw (see :func:`chart_flow`)."""
    picked = chart_flow(sem, an)
    return picked[0] if picked else None


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{html.escape(caption, quote=False)}</figcaption></figure>"


def _split_summary(rest: str) -> tuple[str, str]:
    """(the first ``## `` section, everything after it) of the report body."""
    starts = [m.start() for m in re.finditer(r"^## ", rest, flags=re.M)]
    if len(starts) < 2:
        return rest, ""
    return rest[:starts[1]], rest[starts[1]:]


GAP_FINDING_S = 60.0  # a silence this long is a finding about the capture, not only a cut in the axis


def _gap_findings(an: Analysis) -> list[str]:
    gaps = [g for g in time_gaps(an.cols.ts) if g.seconds >= GAP_FINDING_S] if an.packets else []
    if not gaps:
        return []
    items = "".join(f"<li>{html.escape(describe_gap(g), quote=False)}</li>" for g in gaps)
    return ['<div class="finding" id="time-gaps"><strong>Finding: the capture has time gaps.</strong> '
            "The charts cut these silences out of their time axis (marked //); statistics over the "
            f"capture's duration include them.<ul>{items}</ul></div>"]


def _none(text: str) -> str:
    return f'<p class="chart-none">{html.escape(text, quote=False)}</p>'


def _charts(sem: dict[str, Any], an: Analysis, delay: dict[str, Any] | None, notices: list[str]) -> list[str]:
    """The charts section: each chart drawn only with data to show; what has none is said in words."""
    parts = ["<h2>Charts</h2>"]
    if not charts_available():
        notices.append("--format html: " + NO_MATPLOTLIB)
        return [*parts, f'<p class="notice">{html.escape(NO_MATPLOTLIB, quote=False)}</p>']
    if not an.packets:
        return [*parts, '<p class="notice">No traffic captured: nothing to chart.</p>']
    axis = TimeAxis(an.cols.ts)
    picked = chart_flow(sem, an)
    stream = None
    if picked is not None:
        stream, carried = picked
        if carried:
            cap = f"Sequence graph of the worst flow that carried data, tcp/{stream}"
            parts.append(_figure(sequence_graph_svg(an, stream, cap, flow_axis(an, stream, axis.t0)),
                                 cap + " (tcptrace style; the flow's own silences cut)"))
        else:
            cap = (f"Handshake ladder of the worst flow, tcp/{stream} (no flow carried data)" if stream_payload(an, stream) == 0
                   else f"Packet ladder of the worst flow, tcp/{stream} (no flow carried enough data to graph)")
            parts.append(_figure(handshake_ladder_svg(an, stream, cap), cap))
    else:
        parts.append(_none("No TCP flow to draw: no sequence graph."))
    svg, missing = timeline_svg(an, axis, stream if picked and picked[1] else None)
    if svg is not None:
        parts.append(_figure(svg, "Over time, on one shared time axis"
                             + (f" ({len(axis.gaps)} silence(s) cut out, marked //)" if axis.gaps else "")))
    parts += [_none(m) for m in missing]
    if delay is not None:
        d = delay_svg(delay.get("t", ()), delay.get("delay_ms", ()), delay.get("a_to_b", ())) if len(delay.get("t", ())) else None
        parts.append(_figure(d, "One-way delay between the capture points over time") if d is not None
                     else _none("One-way delay: no packet matched at both points."))
    return parts


def render_html(sem: dict[str, Any], an: Analysis, *, markdown: str | None = None, narrative: str | None = None,
                model: str | None = None, delay: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    """Return (the HTML page, notices for stderr).

    Args:
        sem: semantic document (single or compare mode).
        an: the analysis of the capture the charts are drawn from (point A in compare mode).
        markdown: the Markdown report to convert (default :func:`render_report` of ``sem``).
        narrative: optional Gemini paragraph, shown labelled above the report.
        model: the model that wrote the narrative.
        delay: compare mode's per-packet delay series (``t``, ``delay_ms``, ``a_to_b``) for a delay chart.
    """
    md = markdown if markdown is not None else render_report(sem)
    title, _, rest = md.partition("\n")
    summary, detail = _split_summary(rest)
    notices: list[str] = []
    parts = [markdown_to_html(title)]
    if narrative:
        who = f"Gemini ({model})" if model else "Gemini"
        parts.append(f'<div class="narrative"><strong>Narrative (written by {html.escape(who)} from the semantic '
                     f"summary; the findings below are the evidence)</strong>"
                     f"<p>{html.escape(visible(narrative, multiline=True))}</p></div>")  # the model's text, literal
    parts.append(markdown_to_html(summary))
    parts += _gap_findings(an)
    parts += _charts(sem, an, delay, notices)
    parts.append(markdown_to_html(detail))
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title.lstrip("# "))}</title>'
            f"<style>{_STYLE}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")
    return page, notices


def write_html_report(out: str | Path, sem: dict[str, Any], an: Analysis, *, markdown: str | None = None,
                      narrative: str | None = None, model: str | None = None, delay: dict[str, Any] | None = None) -> list[str]:
    """Write :func:`render_html` to ``out``; returns the notices (e.g. matplotlib missing).

    Raises:
        OSError: the file cannot be written.
    """
    page, notices = render_html(sem, an, markdown=markdown, narrative=narrative, model=model, delay=delay)
    Path(out).write_text(page, encoding="utf-8")
    return notices
