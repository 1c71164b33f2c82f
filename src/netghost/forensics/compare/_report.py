"""Compare-mode outputs: the semantic JSON with ``comparison``, the forensic report and the executive summary.

Files: ``{stemA}_vs_{stemB}_semantic.json``, ``{stemA}_vs_{stemB}_forensic_report.md``,
``{stemA}_vs_{stemB}_executive_summary.md`` (≤ 50 lines) and, with ``html`` in the formats,
``{stemA}_vs_{stemB}_forensic_report.html``. The semantic document is point A's single-capture
document (same schema) plus ``comparison`` (compare.schema.json); its findings put the comparison's
findings first, then A's. Reports are rendered from the document, so report and JSON agree.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from netghost.errors import CaptureFormatError
from netghost.forensics.compare._compare import compare_analyses
from netghost.forensics.compare._findings import compare_findings
from netghost.forensics.engine import Analysis, analyze_capture
from netghost.forensics.outputs import semantic_text, write_atomic, write_via_temp
from netghost.forensics.report import MAX_SUMMARY_LINES, build_semantic, render_report
from netghost.safetext import md_inline

__all__ = ["CompareOutputs", "build_compare_semantic", "capture_stem", "load_compare_schema",
           "render_compare_report", "render_compare_summary", "run_compare", "write_compare_outputs"]

MAX_FINDINGS = 30
_SEVERITY = ("info", "low", "medium", "high", "critical")


def load_compare_schema() -> dict[str, Any]:
    """JSON Schema of the ``comparison`` object (shipped in the package)."""
    text = resources.files("netghost.forensics").joinpath("schemas", "compare.schema.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


def capture_stem(path: str | Path) -> str:
    """File name without capture extensions (``x.pcapng.gz`` → ``x``), as the single-capture CLI names outputs."""
    name = Path(path).name
    for ext in (".gz", ".pcapng", ".pcap", ".cap", ".dmp"):
        if name.lower().endswith(ext):
            name = name[: -len(ext)]
    return name or "capture"


def build_compare_semantic(an_a: Analysis, an_b: Analysis, size_a: int | None = None, size_b: int | None = None,
                           series: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return (the compare-mode semantic document, point B's own semantic document).

    Args:
        an_a: analysis of point A's capture.
        an_b: analysis of point B's capture.
        size_a: capture A's size in bytes; size_b: capture B's.
        series: filled with the per-packet delay arrays for charts (see ``compare_analyses``).
    """
    doc = build_semantic(an_a, size_a)
    sem_b = build_semantic(an_b, size_b)
    comp = compare_analyses(an_a, an_b, series)
    sb = sem_b["summary"]
    comp["b_summary"] = {
        "packets": sb["packets"], "tcp_conversations": sb["tcp_conversations"], "rst_packets": sb["rst_packets"],
        "retransmissions": sb["tcp_analysis"]["retransmission"], "syn_without_synack": sb["syn_without_synack"],
        "top_findings": [{"severity": f["severity"], "title": f["title"]} for f in sem_b["findings"][:5]],
    }
    merged = compare_findings(comp)
    for f in doc["findings"]:
        f["metrics"].setdefault("point", "A")
        merged.append(f)
    # most severe first, the comparison's own first at equal severity (a stable sort): a note that the
    # windows missed each other (info) never heads a report whose points show loss on their own
    merged.sort(key=lambda f: -_SEVERITY.index(f["severity"]))
    doc["findings"] = merged[:MAX_FINDINGS]
    for i, f in enumerate(doc["findings"], 1):
        f["id"] = f"F{i}"
    doc["comparison"] = comp
    return doc, sem_b


def _frames(fr: list[int], n: int = 8) -> str:
    return ", ".join(f"#{f}" for f in fr[:n]) + (" …" if len(fr) > n else "") if fr else "-"


def _verdict(doc: dict[str, Any]) -> list[str]:
    comp = doc["comparison"]
    pa, pb = comp["points"]["a"], comp["points"]["b"]
    lines = [f"- Point A `{pa['file']}`: {pa['packets']:,} packets; point B `{pb['file']}`: {pb['packets']:,} packets."]
    if not comp["shared"]:
        return [*lines, f"- {comp['note']}"]
    lines.append(f"- {comp['matched_packets']:,} packets matched (A {100 * comp['match_rate']['a']:.1f}%, "
                 f"B {100 * comp['match_rate']['b']:.1f}%) over {comp['flows']['compared']} shared flows.")
    lo, inj, bl = comp["lost"], comp["injected"], comp["blocked"]
    lines.append(f"- Lost A→B {lo['a_to_b']['count']}, lost B→A {lo['b_to_a']['count']}; injected at B "
                 f"{inj['at_b']['count']}, at A {inj['at_a']['count']}; blocked (flow cut) {bl['at_b']['count']} "
                 f"+ {bl['at_a']['count']}.")
    d = comp["delay_ms"]
    for name, x in (("A→B", d["a_to_b"]), ("B→A", d["b_to_a"])):
        if x["samples"]:
            lines.append(f"- One-way delay {name}: min {x['min']} ms, median {x['median']} ms, p95 {x['p95']} ms "
                         f"({x['samples']} packets).")
    off = comp["clock_offset_ms"]
    lines.append(f"- Clock offset (B − A): {off:+.3f} ms." if off is not None else "- Clock offset: unknown (assumed 0).")
    m = comp["modified"]
    mods = [f"{k} {v}" for k, v in (("TTL raised", m["ttl"]["raised_packets"]), ("DSCP changed", m["dscp"]["changed_packets"]),
                                     ("MSS clamped", m["mss_clamped"]["count"]), ("NAT-rewritten", m["nat"]["rewritten_packets"])) if v]
    lines.append("- Modified in flight: " + (", ".join(mods) if mods else "none") + ".")
    return lines


def _each_point(comp: dict[str, Any], alone: dict[str, list[dict[str, Any]]]) -> list[str]:
    """What each capture shows on its own: when the two share no packet the comparison cannot say anything,
    but each point's own top findings still can (a lossy path, a reset, or nothing wrong at all)."""
    out = ["## What each point shows on its own"]
    for key in ("a", "b"):
        fs = alone.get(key) or []
        name = comp["points"][key]["file"]
        if not fs:
            out.append(f"- Point {key.upper()} `{name}`: no network fault detected.")
        out += [f"- Point {key.upper()} `{name}`: **{f['severity'].upper()}** {f['title']}" for f in fs[:3]]
    return [*out, ""]


def render_compare_summary(doc: dict[str, Any], alone: dict[str, list[dict[str, Any]]] | None = None) -> str:
    """Executive summary of a comparison, at most :data:`MAX_SUMMARY_LINES` lines; ``alone`` (each point's own
    findings) is shown when the captures share no packet."""
    comp = doc["comparison"]
    out = [f"# Executive summary: {comp['points']['a']['file']} vs {comp['points']['b']['file']}", ""]
    fs = doc["findings"]
    if fs and fs[0]["severity"] != "info":
        out += [f"**Most likely issue:** {fs[0]['title']} (severity {fs[0]['severity']}, confidence {fs[0]['confidence']:.0%}).", ""]
    else:  # notes (info: the delay, flows elsewhere, windows that missed) are listed below, never named the issue
        out += ["**No difference between the capture points** and no network fault detected"
                + (" (notes below)." if fs else "."), ""]
    out += ["## Two-point comparison", *_verdict(doc), ""]
    if not comp["shared"] and alone is not None:
        out += _each_point(comp, alone)
    if fs:
        out.append("## Top findings")
        for f in fs[:10]:
            pt = f["metrics"].get("point")
            where = f" ({pt} frames {_frames(f['evidence']['frames'], 4)})" if pt and f["evidence"]["frames"] else ""
            out.append(f"- [{f['id']}] **{f['severity'].upper()}** {f['title']}{where}")
        out.append("")
    out.append("Full detail: the forensic report and the semantic JSON (`comparison`; frame numbers are each point's own).")
    return "\n".join(out[:MAX_SUMMARY_LINES]) + "\n"


def _category_table(title: str, cat: dict[str, Any], point: str) -> list[str]:
    out = [f"### {title}: {cat['count']}", ""]
    if not cat["count"]:
        return [*out, "None.", ""]
    out += [f"Frames at {point}: {_frames(cat['frames'], 30)}", "", "| flow | direction | from → to | count | frames |",
            "|---|---|---|---|---|"]
    out += [f"| {e['flow']} | {e['direction']} | {e['from']} → {e['to']} | {e['count']} | {_frames(e['frames'])} |"
            for e in cat["by_flow"][:15]]
    return [*out, ""]


def render_compare_report(doc: dict[str, Any], sem_b: dict[str, Any]) -> str:
    """The full Markdown report: summary, findings, comparison detail, then each point's own report."""
    comp = doc["comparison"]
    out = [f"# Two-point forensic report: {comp['points']['a']['file']} vs {comp['points']['b']['file']}", "",
           "## Executive Summary", "", *_verdict(doc), ""]
    out += ["## Findings", ""]
    for f in doc["findings"]:
        pt = f["metrics"].get("point")
        out += [f"### {f['id']} \\[{f['severity'].upper()}, confidence {f['confidence']:.0%}\\] {md_inline(f['title'])}", "",
                md_inline(f["detail"]), "",
                f"- Evidence frames{f' ({pt})' if pt else ''}: {_frames(f['evidence']['frames'], 10)}"]
        if f["flows"]:
            out.append(f"- Flows: {', '.join(f['flows'])}")
        out.append("")
    if not doc["findings"]:
        out += ["No findings.", ""]
    out += ["## Comparison detail", ""]
    if comp["note"]:
        out += [comp["note"], ""]
    out += _category_table("Lost between A and B (left A, never reached B)", comp["lost"]["a_to_b"], "A")
    out += _category_table("Lost between B and A (left B, never reached A)", comp["lost"]["b_to_a"], "B")
    out += _category_table("Injected between A and B (seen at B, never passed A)", comp["injected"]["at_b"], "B")
    out += _category_table("Injected between B and A (seen at A, never passed B)", comp["injected"]["at_a"], "A")
    out += _category_table("Blocked before B (flow cut: seen at A, absent at B)", comp["blocked"]["at_b"], "A")
    out += _category_table("Blocked before A (flow cut: seen at B, absent at A)", comp["blocked"]["at_a"], "B")
    if comp["injected_packets"]:
        out += ["### Injected packets", "", "| point | frame | flow | src → dst | flags | TTL | sender's usual TTL |",
                "|---|---|---|---|---|---|---|"]
        out += [f"| {p['point']} | #{p['frame']} | {p['flow']} | {p['src']} → {p['dst']} | {p['tcp_flags']} | {p['ttl']} | {p['usual_ttl']} |"
                for p in comp["injected_packets"]]
        out.append("")
    m = comp["modified"]
    out += ["### Modified in flight", "",
            f"- TTL hops (upstream − downstream TTL → packets): {m['ttl']['hops'] or '-'}; raised {m['ttl']['raised_packets']}",
            f"- DSCP changed: {m['dscp']['changed_packets']} {m['dscp']['transitions'] or ''}",
            f"- MSS clamped: {m['mss_clamped']['count']} "
            + ", ".join(f"{e['flow']} {e['mss_a']}→{e['mss_b']}" for e in m["mss_clamped"]["examples"][:5]),
            f"- NAT-rewritten packets: {m['nat']['rewritten_packets']} "
            + "; ".join(f"{e['a']} ⇒ {e['b']}" for e in m["nat"]["mappings"][:5]), ""]
    out += ["### Per-flow delay and differences", "", f"Clock offset (B − A): {comp['clock_offset_ms']} ms. {comp['clock_offset_method']}.", "",
            "| flow | client → server | one-way delay ms | c2s A/B/matched (up) | s2c A/B/matched (up) | lost | injected | blocked |",
            "|---|---|---|---|---|---|---|---|"]
    for f in comp["per_flow"]:
        c, s = f["directions"]["c2s"], f["directions"]["s2c"]
        out.append(f"| {f['id']} | {f['client']} → {f['server']} | {f['one_way_delay_ms']} | "
                   f"{c['packets_a']}/{c['packets_b']}/{c['matched']} ({c['upstream'] or '?'}) | "
                   f"{s['packets_a']}/{s['packets_b']}/{s['matched']} ({s['upstream'] or '?'}) | "
                   f"{c['lost'] + s['lost']} | {c['injected'] + s['injected']} | {c['blocked'] + s['blocked']} |")
    out.append("")
    for name, sem in (("A", {k: v for k, v in doc.items() if k != "comparison"}), ("B", sem_b)):
        body = render_report(sem).splitlines()
        out += [f"## Point {name}: {sem['capture']['file']}", ""]
        out += [("#" + line if line.startswith("#") else line) for line in body[1:]]
    return "\n".join(out) + "\n"


@dataclass
class CompareOutputs:
    """What :func:`write_compare_outputs` produced: the document, files written, notices for stderr."""

    doc: dict[str, Any]
    written: list[Path] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def write_compare_outputs(path_a: str | Path, path_b: str | Path, *, semantic_dir: str | Path = ".",
                          report_dir: str | Path = ".", formats: set[str] | None = None,
                          narrative: bool = False, analyze: Callable[[Path], Analysis] | None = None) -> CompareOutputs:
    """Analyse both captures, compare them and write the compare-mode outputs.

    Args:
        path_a: capture at point A.
        path_b: capture at point B.
        semantic_dir: directory for ``{stemA}_vs_{stemB}_semantic.json``.
        report_dir: directory for the Markdown (and HTML) reports.
        formats: subset of {"md", "json", "html"} (default md and json).
        narrative: add a Gemini narrative on top of the reports when a key is configured.
        analyze: how to analyse one capture (default :func:`analyze_capture`; the CLI passes its
            progress-bar wrapper).

    Raises:
        CaptureFormatError: either capture is missing or unreadable.
        OSError: an output cannot be written.
    """
    formats = {"md", "json"} if formats is None else set(formats)
    pa, pb = Path(path_a), Path(path_b)
    run = analyze or analyze_capture
    an_a, an_b = run(pa), run(pb)
    series: dict[str, Any] = {}
    doc, sem_b = build_compare_semantic(an_a, an_b, pa.stat().st_size, pb.stat().st_size, series)
    res = CompareOutputs(doc=doc)
    res.notices += [f"A: {w}" for w in an_a.info.warnings] + [f"B: {w}" for w in an_b.info.warnings]
    stem = f"{capture_stem(pa)}_vs_{capture_stem(pb)}"
    story, model = None, None
    if narrative:
        from netghost.forensics.report import generate_narrative  # noqa: PLC0415  optional SDK

        nres = generate_narrative(doc)
        story, model = nres.text, nres.model
        res.notices.append(nres.message)
    if "json" in formats:
        d = Path(semantic_dir)
        d.mkdir(parents=True, exist_ok=True)
        out = d / f"{stem}_semantic.json"
        write_atomic(out, semantic_text(doc))
        res.written.append(out)
    rdir = Path(report_dir)
    report = render_compare_report(doc, sem_b)
    alone = None if doc["comparison"]["shared"] else {
        "a": build_semantic(an_a, pa.stat().st_size)["findings"], "b": sem_b["findings"]}
    if "md" in formats:
        from netghost.forensics.report import with_narrative  # noqa: PLC0415  tiny, keeps imports light

        rdir.mkdir(parents=True, exist_ok=True)
        for suffix, text in (("forensic_report", with_narrative(report, story, model)),
                             ("executive_summary", render_compare_summary(doc, alone))):
            out = rdir / f"{stem}_{suffix}.md"
            write_atomic(out, text)
            res.written.append(out)
    if "html" in formats:
        from netghost.forensics.report import write_html_report  # noqa: PLC0415  optional matplotlib

        rdir.mkdir(parents=True, exist_ok=True)
        out = rdir / f"{stem}_forensic_report.html"
        res.notices += write_via_temp(out, lambda tmp: write_html_report(tmp, doc, an_a, markdown=report, narrative=story,
                                                                         model=model, delay=series), res.written)
    return res


def run_compare(args: argparse.Namespace, prog: str = "pcap-forensics",
                analyze: Callable[[Path], Analysis] | None = None) -> int:
    """CLI entry for ``CAPTURE --compare CAPTURE_B``: write the outputs, print a summary, return the exit code.

    Exit 0 on success; 2 with a one-line ``prog: error: ...`` for a missing/unreadable capture, an
    unknown format or an unwritable output (the single-capture CLI's contract).

    Args:
        args: parsed options ``capture``, ``compare``, ``semantic_dir``, ``report_dir``, ``format``, ``narrative``.
        prog: program name for messages.
        analyze: optional per-capture analysis function (e.g. one that shows a progress bar).
    """
    formats = {f.strip() for f in str(getattr(args, "format", "md,json")).split(",") if f.strip()}
    unknown = formats - {"md", "json", "html"}
    if unknown:
        print(f"{prog}: error: unknown --format {', '.join(sorted(unknown))} (choose from md, json, html)", file=sys.stderr)
        return 2
    try:
        res = write_compare_outputs(args.capture, args.compare, semantic_dir=args.semantic_dir, report_dir=args.report_dir,
                                    formats=formats, narrative=bool(getattr(args, "narrative", False)), analyze=analyze)
    except CaptureFormatError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{prog}: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for n in res.notices:
        print(f"{prog}: {'warning: ' if not n.startswith('--') else ''}{n}", file=sys.stderr)
    comp = res.doc["comparison"]
    top = res.doc["findings"][0]["title"] if res.doc["findings"] else "no findings"
    print(f"{comp['points']['a']['file']} vs {comp['points']['b']['file']}: {comp['matched_packets']} packets matched, "
          f"lost A→B {comp['lost']['a_to_b']['count']}, injected at B {comp['injected']['at_b']['count']}, "
          f"blocked {comp['blocked']['at_b']['count']}; top: {top}")
    for w in res.written:
        print(f"wrote {w}")
    return 0
