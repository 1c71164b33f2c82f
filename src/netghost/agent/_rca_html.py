"""The RCA as one self-contained HTML page, beside the Markdown: ``ghost_rca_{sid}.html``.

Built from the audit trail alone, so ``ghost-agent report SID`` regenerates exactly what the run wrote:
the shell audit (every command, with its output as the AI saw it), the task registry (captures, their
artifact hashes), the session file (hypotheses) and the journal's ``complete_investigation`` call (the
conclusion). The executive summaries are the outputs of the RCA's own ``cat`` commands in the shell
audit (the human approved those reads); nothing is read around the gate except the forensic engine's
HTML report, whose charts are inlined, and whose sha256 is checked against the task's artifact record
when it is registered there. When the orchestrator's analysis wrote no HTML report (it asks the engine
for md and json), :func:`draw_charts` has the engine draw one through the shell before the RCAs are
written, while the pcap is still on disk, so the run is audited and cited like any other command.

Every audit id the page cites is a link to that record, rendered further down the same page, so a
reader can follow a conclusion to the command and the output behind it. The chain verification
(records, verdict, head hash, anchor) is computed when the page is written, and so are the claim checks
(:mod:`netghost.agent._claims`): the confidence shown is the claimed one capped by them. Nothing is
fetched: the style is inline and the charts are inline SVG.

Every text on the page is escaped (``html.escape`` over :func:`~netghost.safetext.visible`, so bidi
overrides and zero-width characters are shown, not obeyed); the model's texts are redacted again
first. The only markup not written here is the charts' SVG, inlined from the engine's report only when
its sha256 matches the task's artifact record and it holds no script, event handler, foreign object
or outside link; otherwise the page says why it left them out.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from netghost.agent._answer import Answer, answer_of, symptom_of
from netghost.agent._approval import decision_text
from netghost.agent._claims import ClaimCheck, check_claims
from netghost.agent._dispatch import ShellLike
from netghost.agent._leftovers import leftovers
from netghost.agent._rca import AUDIT_ID, _check_chains, chain_paths
from netghost.agent._untrusted import scrub_completion
from netghost.contracts import CompleteInvestigationArgs, SessionState, format_timestamp
from netghost.governance import read_wal, replay_latest
from netghost.redact import redact
from netghost.safetext import md_inline_html, visible

__all__ = ["draw_charts", "html_path", "render_rca_html", "write_rca_html"]

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;color:#222}
h1{border-bottom:2px solid #444}h2{border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0;width:100%}td,th{border:1px solid #ccc;padding:3px 6px;
text-align:left;vertical-align:top}td code{overflow-wrap:anywhere}th{background:#f0f0f0}code,pre{background:#f4f4f4}code{padding:0 3px}
pre{padding:.5em;overflow-x:auto;white-space:pre-wrap;font-size:.8em;max-height:28em}
.meta{color:#555}.ok{color:#1b5e20;font-weight:bold}.bad{color:#b71c1c;font-weight:bold}
.SAFE{color:#1b5e20}.RISKY{color:#e65100}.FORBIDDEN{color:#b71c1c}
.record{border:1px solid #ddd;border-left:4px solid #3a7bd5;margin:.8em 0;padding:.2em 1em}
.record:target{background:#fffbe6;border-left-color:#e0a000}dl{display:grid;grid-template-columns:11em 1fr;gap:2px 1em}
dt{font-weight:bold;color:#444}dd{margin:0;word-break:break-all}blockquote{border-left:3px solid #ccc;margin:.5em 0;
padding:.2em 1em;color:#333;white-space:pre-wrap}svg.chart{max-width:100%;height:auto;border:1px solid #ddd;background:#fff}
.notice{background:#fff6e0;border-left:4px solid #e0a000;padding:.6em 1em}figure{margin:1em 0}figcaption{font-size:.85em;color:#555}
.summary{border-left:3px solid #3a7bd5;margin:.5em 0;padding:.1em 1em;background:#f7faff}.summary h4{margin:.6em 0 .2em}
.answer{border:2px solid #3a7bd5;background:#f7faff;padding:.2em 1em 1em}.answer h2{margin-top:.4em}
.answer dd{word-break:normal}details>summary{cursor:pointer}details>summary h2{display:inline-block}
"""
_FIGURE = re.compile(r"<figure>.*?</figure>", flags=re.S)
# What an engine chart never holds, and an inlined figure must not: scripts, event handlers, embedded
# HTML, links anywhere but to the figure's own definitions (matplotlib's <use xlink:href="#...">).
_UNSAFE_SVG = re.compile(r"(?i)<\s*(?:script|foreignobject|iframe|object|embed|image|a)\b|\son[a-z]+\s*=|javascript:|"
                         r"(?:xlink:)?href\s*=\s*(?![\"']?#)|url\(\s*(?![\"']?#)|@import")
_RECORD_FIELDS = ("command", "modified_command", "reasoning", "classification", "tier", "risk_reason", "environment",
                  "action", "status", "exit_code", "error", "denial_reason", "plan_token", "policy_rule",
                  "duration_ms", "client", "decided_by", "confinement", "seq", "ts", "prev_sha256", "sha256")


def html_path(audit_dir: Path, session_id: str) -> Path:
    """``<audit_dir>/ghost_rca_{sid}.html``."""
    return audit_dir / f"ghost_rca_{session_id}.html"


def _e(value: object) -> str:
    """Text for the page: hidden characters shown, then escaped (the shell audit is redacted already)."""
    return html.escape(visible("" if value is None else str(value), multiline=True), quote=True)


def _t(value: object) -> str:
    """The model's text for the page: redacted again (an old or edited session file), then :func:`_e`."""
    return _e(redact("" if value is None else str(value)).text)


@dataclass
class _Page:
    state: SessionState
    completion: CompleteInvestigationArgs | None
    records: list[dict[str, Any]]
    tasks: dict[str, dict[str, Any]]
    chains: dict[str, dict[str, Any]]
    now: datetime
    warnings: list[str] = field(default_factory=list)
    charts: dict[str, list[_Charts]] = field(default_factory=dict)
    claims: ClaimCheck | None = None
    symptom: str = ""

    @property
    def known(self) -> set[str]:
        return {str(r.get("audit_id")) for r in self.records}

    def cite(self, audit_id: str | None) -> str:
        """A link to the record, or the id marked as missing from the trail."""
        if not audit_id:
            return ""
        if audit_id in self.known:
            return f'<a href="#{_e(audit_id)}">{_e(audit_id)}</a>'
        return f"{_e(audit_id)} <em>(not in the audit trail)</em>"

    def linkify(self, text: str) -> str:
        """Redact and escape ``text`` (the model's) and turn every audit id in it into a citation."""
        text = redact(text).text
        out, last = [], 0
        for m in AUDIT_ID.finditer(text):
            out += [_e(text[last:m.start()]), self.cite(m.group())]
            last = m.end()
        return "".join([*out, _e(text[last:])])


# ---- reading the trail -----------------------------------------------------------------------------

def _summary_path(report_path: str) -> str:
    return report_path.replace("_forensic_report.md", "_executive_summary.md")


def _summary_from_trail(records: list[dict[str, Any]], report_path: str) -> tuple[str | None, str | None]:
    """(the executive summary the RCA's ``cat`` read, that record's audit id), from the shell audit."""
    wanted = {shlex.join(["cat", _summary_path(report_path)]): "summary", shlex.join(["cat", report_path]): "report"}
    for r in reversed(records):
        kind = wanted.get(str(r.get("command")))
        if kind and r.get("status") == "completed" and r.get("exit_code") == 0:
            text = str(r.get("output", ""))
            if kind == "report":
                m = re.search(r"^## Executive Summary\s*\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
                text = m.group(1) if m else ""
            return text.strip() or None, str(r.get("audit_id"))
    return None, None


def _forensic_html(task: Mapping[str, Any]) -> Path | None:
    report = task.get("report_path")
    return Path(str(report).replace("_forensic_report.md", "_forensic_report.html")) if report else None


@dataclass(frozen=True)
class _Chartable:
    """One engine HTML report whose charts belong in the RCA: where it is and the engine run that draws it."""

    title: str
    path: Path
    command: str | None  # None: the capture it needs is not known
    pcaps: tuple[str, ...]  # the captures the run reads (drawn only while they are on disk)


def _engine_command(pcap: str, out_dir: Path, compare: str | None = None) -> str:
    return shlex.join(["pcap-forensics", pcap, *(["--compare", compare] if compare else []), "--format", "html",
                       "--report-dir", str(out_dir), "--semantic-dir", str(out_dir)])


def _compare_holder(task: Mapping[str, Any], tasks: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether ``task`` is the one of a dual-end pair whose record holds the comparison (its report registered
    there; a trail without the record: the second end, named after ``_vs_`` in the report's name)."""
    report = Path(str(task.get("report_path") or ""))
    partner = tasks.get(str(task.get("paired_task_id") or "")) or {}
    registered = [t for t in (task, partner) if report.name in (t.get("artifact_hashes") or {})]
    if registered:
        return registered[0] is task
    pcap = str(task.get("local_pcap_path") or "")
    return bool(pcap) and report.name.endswith(f"_vs_{Path(pcap).stem}_forensic_report.md")


def _chartables(task: Mapping[str, Any], tasks: Mapping[str, Mapping[str, Any]]) -> list[_Chartable]:
    """The engine reports whose charts a completed capture puts in the RCA: its own analysis; for one end of
    a dual-end capture, that end's own report and (under the end whose record holds it) the comparison's."""
    target = _forensic_html(task)
    if task.get("state") not in ("COMPLETED", "DONE") or target is None:
        return []
    pcap = str(task.get("local_pcap_path") or "") or None
    if task.get("analysis_mode") != "compare":
        command = _engine_command(pcap, target.parent) if pcap else None
        return [_Chartable("", target, command, (pcap,) if pcap else ())]
    out_dir = target.parent
    own = out_dir / f"{Path(pcap).stem}_forensic_report.html" if pcap else None
    out = [_Chartable(f"This end's capture ({Path(pcap).name})", own, _engine_command(pcap, out_dir), (pcap,))
           ] if pcap and own is not None else []
    partner = tasks.get(str(task.get("paired_task_id") or "")) or {}
    other = str(partner.get("local_pcap_path") or "") or None
    if _compare_holder(task, tasks):
        first, second = (other, pcap) if other and target.name.startswith(f"{Path(other).stem}_vs_") else (pcap, other)
        command = _engine_command(first, out_dir, second) if first and second else None
        out.append(_Chartable("The two ends compared", target, command, tuple(p for p in (first, second) if p)))
    return out


def draw_charts(audit_dir: Path, session_id: str, shell: ShellLike,
                record: Callable[..., object] | None = None) -> list[str]:
    """Have the engine draw each HTML report (charts) a completed capture lacks; the audit ids of the runs.

    Run before the Markdown RCA, so both reports count the same records: the engine runs through the
    shell (``pcap-forensics PCAP [--compare PCAP] --format html``, SAFE, audited) and only while the
    pcaps are still on disk. ``record`` (the session journal's ``write``) keeps the sha256 of each page
    drawn as a ``chart_drawn`` record, the hash the RCA checks before it inlines a chart the orchestrator
    did not register.
    """
    registry = chain_paths(audit_dir, session_id)["orchestrator"]
    tasks = replay_latest(registry, "task_id") if registry.exists() else {}
    ids = []
    for task in tasks.values():
        for item in _chartables(task, tasks):
            if item.path.exists() or item.command is None or not all(Path(p).is_file() for p in item.pcaps):
                continue
            res = shell.execute({"command": item.command, "reasoning": "Drawing the capture's charts for the HTML RCA."})
            ids.append(str(res.get("audit_id")))
            if record is not None and res.get("exit_code") == 0 and item.path.is_file():
                digest = "sha256:" + hashlib.sha256(item.path.read_bytes()).hexdigest()
                record("chart_drawn", path=str(item.path), page_sha256=digest, audit_id=str(res.get("audit_id")))
    return ids


def _drawn_hashes(turns: Path) -> dict[str, str]:
    """path -> sha256 of the chart pages the agent had the engine draw (``chart_drawn`` in the journal)."""
    if not turns.exists():
        return {}
    return {str(r.get("path")): str(r.get("page_sha256")) for r in read_wal(turns).records if r.get("kind") == "chart_drawn"}


def _load_charts(page: _Page, drawn: Mapping[str, str]) -> None:
    """Each completed capture's charts, inlined from the engine's HTML reports, each page's hash checked
    against the task's artifact record or the journal's record of the run that drew it."""
    for task_id, task in page.tasks.items():
        for item in _chartables(task, page.tasks):
            page.charts.setdefault(task_id, []).append(_chart_block(item, task, drawn))


def _chart_block(item: _Chartable, task: Mapping[str, Any], drawn: Mapping[str, str]) -> _Charts:
    target = item.path
    if not target.exists():
        return _Charts(item, [], "No charts: the forensic engine's HTML report is not on disk (the capture was "
                                 "analysed without --format html and its pcap is gone).")
    data = target.read_bytes()
    hashes = task.get("artifact_hashes") or {}
    known = hashes.get(target.name) or hashes.get(str(target)) or drawn.get(str(target))
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    source = "the artifact record" if hashes.get(target.name) or hashes.get(str(target)) else "the journal's record of its drawing"
    check = (f" Hash matches {source}." if known == digest else
             f" HASH MISMATCH: {source} says {known}." if known else " (not a registered artifact)")
    figures = _FIGURE.findall(data.decode("utf-8", errors="replace"))
    unsafe = [f for f in figures if _UNSAFE_SVG.search(f)]
    if known != digest or unsafe:
        why = ("no record of its hash" if not known else "its hash does not match the record") if known != digest else \
            f"{len(unsafe)} figure(s) hold script, links or embedded content"
        return _Charts(item, [], f"Charts from {target.name}, {digest}.{check} Not inlined: {why}.")
    return _Charts(item, figures, f"Charts from {target.name}, {digest}.{check}")


@dataclass(frozen=True)
class _Charts:
    item: _Chartable
    figures: list[str]
    note: str


def _drawn_by(page: _Page, command: str | None) -> str:
    """The citation of the engine run that drew the charts, when the trail has it."""
    for r in page.records:
        if command and r.get("command") == command and r.get("exit_code") == 0:
            return f" Drawn by {page.cite(str(r.get('audit_id')))}."
    return ""


# ---- rendering ---------------------------------------------------------------------------------------

def _md_inline(text: str) -> str:
    return md_inline_html(text)  # the engine's escapes read back; nothing but code and bold made markup


def _summary_html(text: str) -> str:
    """The engine's executive summary (a small Markdown subset: headings, bullets, bold, code) as HTML."""
    out: list[str] = []
    items: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("- "):
            items.append(f"<li>{_md_inline(line[2:])}</li>")
            continue
        if items:
            out.append(f"<ul>{''.join(items)}</ul>")
            items = []
        heading = re.match(r"^(#{1,6}) (.*)$", line)
        if heading:
            out.append(f"<h4>{_md_inline(heading.group(2))}</h4>")
        elif line.strip():
            out.append(f"<p>{_md_inline(line)}</p>")
    return "".join(out)


def _context(record: Mapping[str, Any]) -> str:
    return "CLOUD" if record.get("environment") == "azure" else "LOCAL"


def _outcome(record: Mapping[str, Any]) -> str:
    status, code = record.get("status"), record.get("exit_code")
    if status == "completed":
        return "completed" if code == 0 else f"failed (exit {code})"
    if status == "denied":
        if record.get("action") == "blocked":
            return "forbidden"
        reason = record.get("denial_reason")  # the person's words (escaped where shown)
        return f"denied: {' '.join(str(reason).split())[:200]}" if reason else "denied"
    return str(record.get("error") or status)


def _head(page: _Page) -> list[str]:
    s, c = page.state, page.completion
    confidence: str = page.claims.confidence if page.claims else "none recorded"
    if page.claims is not None and page.claims.capped:
        confidence += f" (the model claimed {page.claims.claimed}; capped by the claim checks)"
    out = [f"<h1>Root Cause Analysis — {_e(s.session_id)}</h1>",
           f'<p class="meta">Generated {_e(format_timestamp(page.now))} · confidence <strong>{_e(confidence)}</strong> · '
           f"model {_e(s.model)} · turns {s.turn_count}"
           + (f" · resumed from {_e(s.resumed_from)}" if s.resumed_from else "") + "</p>"]
    if c is None:
        out.append('<p class="notice">No conclusion was recorded for this session (it was driven through MCP or '
                   "stopped before complete_investigation): the evidence below is the whole audit trail.</p>")
        return out
    if page.claims is not None:
        out += _answer_html(page, answer_of(s, c, page.claims, page.symptom, page.known))
    return [*out, "<h2>Investigation Summary</h2>", f"<p>{page.linkify(c.root_cause_summary)}</p>"]


def _answer_html(page: _Page, a: Answer) -> list[str]:
    """The first screen (:mod:`netghost.agent._answer`), every field escaped or linkified (cited ids link)."""
    fix = (f"<code>{_t(a.fix)}</code>" + (f" — {page.linkify(a.fix_text)}" if a.fix_text else "")) if a.fix \
        else (page.linkify(a.fix_text) if a.fix_text else "none given")
    rows = [("Symptom", _t(a.symptom) or "not recorded"), ("Root cause", page.linkify(a.root_cause)), ("Fix", fix),
            ("Confidence", f"<strong>{_e(a.confidence)}</strong> — {'; '.join(_t(w) for w in a.why)}"),
            ("Evidence", ", ".join(page.cite(i) for i in a.evidence) or "no audit id cited")]
    rows += [(label, "; ".join(f"{_t(i)} “{page.linkify(t)}”" for i, t in items)) for label, items in a.hypotheses]
    return ['<section class="answer"><h2>The Answer</h2><dl>',
            *(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in rows), "</dl></section>"]


def _hypotheses(page: _Page) -> list[str]:
    rows = [f"<tr><td>{_t(h.id)}</td><td>{page.linkify(h.description)}</td><td>{_e(h.state.value)}</td>"
            f"<td>{h.denial_count}</td><td>{page.cite(h.resolving_audit_id)}</td></tr>" for h in page.state.hypothesis_log]
    if not rows:
        rows = ['<tr><td colspan="5">No hypothesis was recorded.</td></tr>']
    out = ["<h2>Hypotheses</h2>", "<table><thead><tr><th>ID</th><th>Description</th><th>Final state</th>"
           "<th>Denials</th><th>Resolving audit id</th></tr></thead><tbody>", *rows, "</tbody></table>"]
    grouped: dict[tuple[int, str, str, str], list[str]] = {}
    for h in page.state.hypothesis_log:
        for e in h.denial_events:
            grouped.setdefault((e.turn, e.audit_id, e.command, e.denial_reason), []).append(h.id)
    events = [f"<li>Denied at turn {turn}, {page.cite(audit_id)}: <code>{_t(command)}</code>"
              + (f" — reason: {_t(why)}" if why else " — no reason given")
              + f" (charged to {', '.join(_t(h) for h in hids)})</li>"
              for (turn, audit_id, command, why), hids in grouped.items()]
    conflicts = [f"<li>Conflict on {_t(c.hypothesis_id)}: {', '.join(page.cite(i) for i in c.conflicting_audit_ids)}; "
                 f"trusted {_t(c.higher_fidelity_source or '?')}</li>" for c in page.state.evidence_conflicts]
    return out + ([f"<ul>{''.join(events + conflicts)}</ul>"] if events or conflicts else [])


def _disagreements(page: _Page) -> list[str]:
    """Each disagreement between two pieces of evidence as a finding of its own (see ``_rca``)."""
    items = [f"<li>{page.linkify(c.description or 'Two results contradict each other.')}<ul>"
             f"<li>Evidence that disagrees: {', '.join(page.cite(i) for i in c.conflicting_audit_ids)}</li>"
             f"<li>Trusted: {_t(c.higher_fidelity_source or 'not stated')}</li>"
             f"<li>Hypothesis {_t(c.hypothesis_id)}, resolved {_e(c.resolution or 'not yet')}.</li></ul></li>"
             for c in page.state.evidence_conflicts]
    return ["<h2>Disagreement Findings</h2>", f"<ul>{''.join(items)}</ul>"] if items else []
def _ran_html(record: Mapping[str, Any]) -> str:
    """What ran; after a person's modify, theirs and then the model's (escaped, like every record field)."""
    instead = record.get("modified_command")
    if not instead:
        return f"<code>{_e(record.get('command'))}</code>"
    return (f"<code>{_e(instead)}</code> (modified by a person; the model asked: "
            f"<code>{_e(record.get('command'))}</code>)")


def _evidence(page: _Page) -> list[str]:
    rows = []
    for r in page.records:
        cls = _e(r.get("classification"))
        client = r.get("client") or {}
        who = f"{client.get('name')} {client.get('version')}" if client else "agent"
        rows.append(f"<tr><td>{page.cite(str(r.get('audit_id')))}</td><td>[{_context(r)}]</td>"
                    f"<td>{_ran_html(r)}</td><td class=\"{cls}\">{cls}</td>"
                    f"<td>{_e(decision_text(r))}</td><td>{_e(r.get('exit_code'))}</td><td>{_e(_outcome(r))}</td>"
                    f"<td>{_e(who)}</td></tr>")
    if not rows:
        rows = ['<tr><td colspan="8">No command was run.</td></tr>']
    return [f"<details><summary><h2>Command Evidence ({len(page.records)} commands)</h2></summary>",
            "<table><thead><tr><th>Audit ID</th><th>Context</th><th>Command</th><th>Classification</th>"
            "<th>Action</th><th>Exit</th><th>Outcome</th><th>Asked by</th></tr></thead><tbody>", *rows,
            "</tbody></table>",
            "<p class=\"meta\">[LOCAL] rows reflect the engineer's local environment: a [LOCAL] probe failure is not "
            "evidence of an Azure failure without corroborating [CLOUD] evidence.</p></details>"]


def _captures(page: _Page) -> list[str]:
    out = ["<h2>Capture Evidence</h2>"]
    if not page.tasks:
        return [*out, "<p>No packet capture was taken.</p>"]
    rows = [f"<tr><td>{_e(tid)}</td><td>{_e(t.get('target'))}</td><td>{_e(t.get('state'))}</td>"
            f"<td>{_e(t.get('stop_reason') or '')}</td><td>{', '.join(page.cite(a) for a in t.get('shell_audit_ids') or [])}</td></tr>"
            for tid, t in page.tasks.items()]
    out += ["<table><thead><tr><th>Task</th><th>Target</th><th>State</th><th>Azure stopReason</th>"
            "<th>Commands</th></tr></thead><tbody>", *rows, "</tbody></table>"]
    for tid, t in page.tasks.items():
        out.append(f'<h3 id="task-{_e(tid)}">{_e(tid)}</h3>')
        reason = t.get("stop_reason")
        if reason and reason != "TimeExceeded":
            out.append(f'<p class="notice">Azure stopReason {_e(reason)}: the capture ended before its time limit, '
                       "so it may miss traffic.</p>")
        hashes = t.get("artifact_hashes") or {}
        if hashes:
            items = "".join(f"<tr><td><code>{_e(p)}</code></td><td><code>{_e(h)}</code></td></tr>"
                            for p, h in sorted(hashes.items()))
            out.append("<table><thead><tr><th>Artifact (chain of custody)</th><th>sha256</th></tr></thead>"
                       f"<tbody>{items}</tbody></table>")
        report = t.get("report_path")
        if report and t.get("state") in ("COMPLETED", "DONE"):
            text, read_by = _summary_from_trail(page.records, str(report))
            if text is not None:
                out.append(f"<p>Executive summary (read by {page.cite(read_by)}):</p>"
                           f'<div class="summary">{_summary_html(text)}</div>')
            else:
                out.append(f"<p>Executive summary unavailable (its read was denied or not made); the report is at "
                           f"<code>{_e(report)}</code>.</p>")
        for block in page.charts.get(tid, []):
            if block.item.title:
                out.append(f"<h4>Charts: {_e(block.item.title)}</h4>")
            out += block.figures
            out.append(f'<p class="meta">{_e(block.note)}{_drawn_by(page, block.item.command)}</p>')
    return out


def _actions(page: _Page) -> list[str]:
    acts = page.completion.recommended_actions if page.completion else []
    items = "".join(f"<li>{page.linkify(a)}</li>" for a in acts) or "<li>None given.</li>"
    return ["<h2>Recommended Actions</h2>", f"<ul>{items}</ul>"]


def _integrity(page: _Page) -> list[str]:
    rows = []
    for c in page.chains.values():
        verdict = f'<span class="{"ok" if c["ok"] else "bad"}">{_e(c["verdict"])}</span>'
        rows.append(f"<tr><td>{_e(c['label'])}</td><td><code>{_e(Path(c['path']).name)}</code></td><td>{c['records']}</td>"
                    f"<td>{verdict}</td><td><code>{_e(c['head'] or '(empty)')}</code></td><td>{_e(c['anchor'])}</td></tr>")
    warn = "".join(f"<li>WARNING: {_t(w)}</li>" for w in page.warnings)
    claims = page.claims
    if claims is not None and claims.findings:
        warn += "".join(f"<li>CLAIM CHECK {_e(f.rule)} (caps confidence at {_e(f.cap)}): {_t(f.message)}</li>"
                        for f in claims.findings)
    elif claims is not None:
        warn += "<li>Claim checks: the conclusion's confidence, citations and hypotheses agree with the trail.</li>"
    return ["<h2>Integrity Statement</h2>",
            "<p>Every piece of evidence is cited by audit id from append-only, hash-chained logs, each verified when "
            "this page was written:</p>",
            '<table id="chains"><thead><tr><th>Log</th><th>File</th><th>Records</th><th>Chain</th><th>Head hash</th>'
            "<th>Anchor</th></tr></thead><tbody>", *rows, "</tbody></table>",
            *([f"<ul>{warn}</ul>"] if warn else [])]


def _record_html(r: Mapping[str, Any]) -> str:
    rid = _e(r.get("audit_id"))
    fields = []
    for key in _RECORD_FIELDS:
        value = r.get(key)
        if value is None or value == "":
            continue
        shown = json.dumps(value, sort_keys=True) if isinstance(value, dict) else value
        fields.append(f"<dt>{_e(key)}</dt><dd>{_e(shown)}</dd>")
    body = "".join(f"<p><strong>{name}</strong></p><pre>{_e(r.get(name))}</pre>"
                   for name in ("output", "stderr") if r.get(name))
    return f'<section class="record" id="{rid}"><h3>{rid}</h3><dl>{"".join(fields)}</dl>{body}</section>'


def _left_behind(page: _Page) -> list[str]:
    """What the session left in the cloud or on disk, each with the exact command that removes it."""
    if not page.tasks:
        return []
    left = leftovers(page.tasks)
    if not left:
        return ["<h2>Resources Left Behind</h2>", "<p>None: every capture, blob and local capture file this session "
                "created was cleaned up.</p>"]
    items = "".join(f"<li>Task {_e(i.task_id)} ({_e(i.state)}, target {_e(i.target)})<ul>"
                    + "".join(f"<li>{_e(what)}: <code>{_e(command)}</code></li>" for what, command in i.items)
                    + "</ul></li>" for i in left)
    return ["<h2>Resources Left Behind</h2>",
            f'<p class="notice">WARNING: {len(left)} task(s) of this session still hold resources that may incur '
            "charges. Each command below removes one:</p>", f"<ul>{items}</ul>"]


def render_rca_html(page: _Page) -> str:
    """The whole page."""
    # the answer first; the command table folded below (cited ids link to the records, which stay open)
    body = [*_head(page), *_actions(page), *_disagreements(page), *_hypotheses(page), *_captures(page),
            *_left_behind(page), *_integrity(page), *_evidence(page),
            "<h2>Audit Records</h2>",
            "<p class=\"meta\">Each record as the shell wrote it (output redacted and truncated exactly as the AI saw it).</p>",
            *(_record_html(r) for r in page.records)]
    title = f"Root Cause Analysis — {page.state.session_id}"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f"<style>{_STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_rca_html(audit_dir: Path, state: SessionState, completion: CompleteInvestigationArgs | None, *,
                   now: Callable[[], datetime], warnings: list[str] | None = None) -> Path:
    """Write ``ghost_rca_{sid}.html`` from the audit trail; returns its path.

    Args:
        audit_dir: the session's audit directory.
        state: the session (hypotheses, model, turns).
        completion: the conclusion (None: none was recorded).
        now: the clock that dates the page.
        warnings: printed in the Integrity Statement.

    Raises:
        OSError: the page cannot be written.
    """
    sid = state.session_id
    paths = chain_paths(audit_dir, sid)
    tasks = replay_latest(paths["orchestrator"], "task_id") if paths["orchestrator"].exists() else {}
    records = read_wal(paths["shell"]).records if paths["shell"].exists() else []
    completion = scrub_completion(completion) if completion is not None else None
    page = _Page(state, completion, records, tasks, {}, now(), list(warnings or []))
    page.claims = check_claims(state, completion, records) if completion is not None else None
    page.symptom = symptom_of(paths["turns"])
    _load_charts(page, _drawn_hashes(paths["turns"]))
    page.chains = _check_chains(audit_dir, sid)
    target = html_path(audit_dir, sid)
    target.write_text(render_rca_html(page), encoding="utf-8")
    return target
