"""The RCA report of seed 001 §7: seven phases from the audit trail to ``ghost_rca_{sid}.md``.

1. read the shell audit, sort records by outcome, tag each [LOCAL]/[CLOUD], and run both advisory
   heuristics (a local probe failure beside an Azure Allow rule; a completed capture whose report
   could not be read); 2. read the task registry (last record per task wins); 3. collect the artifact
   paths (report, pcap, and the artifact hashes of the chain of custody); 4. read each capture's
   executive summary *through the shell* (``cat`` is RISKY, so the human is asked; a denial is
   recorded and reported); 5. build the Markdown; 6. write it; 7. the caller records the path in the
   session file. The Integrity Statement is checked, not asserted: each log is verified at generation
   time and its record count, head hash and anchor are printed. Every audit id the report cites exists
   in the shell audit; an id the model named that does not is marked as such. What the model claims is
   checked too (:mod:`netghost.agent._claims`): every finding is printed there, and the confidence
   shown is the claimed one capped by them.

Every text that came from the model or a tool (summary, actions, hypothesis ids and descriptions,
commands, reasons, paths, targets, the executive summary) is redacted again and escaped by
construction (:mod:`netghost.safetext`): rendered by any Markdown renderer, it opens no HTML, link,
image, heading, table or fence; the executive summary sits in a fenced block nothing in it can close.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from netghost.agent._answer import answer_of, symptom_of
from netghost.agent._approval import decision_text
from netghost.agent._claims import AUDIT_ID, ClaimCheck, check_claims
from netghost.agent._dispatch import ShellLike
from netghost.agent._journal import journal_path
from netghost.agent._leftovers import leftovers, state_label
from netghost.agent._untrusted import scrub_completion
from netghost.contracts import CompleteInvestigationArgs, SessionState, format_timestamp
from netghost.governance import read_wal, replay_latest, verify
from netghost.redact import redact
from netghost.safetext import md_block, md_code, md_fence, md_inline

__all__ = ["AUDIT_ID", "Rca", "chain_paths", "rca_path", "write_rca"]

NOT_IN_TRAIL = " (not in the audit trail)"
_EXIT_OK = 0


def rca_path(audit_dir: Path, session_id: str) -> Path:
    """``<audit_dir>/ghost_rca_{sid}.md``."""
    return audit_dir / f"ghost_rca_{session_id}.md"


def chain_paths(audit_dir: Path, session_id: str) -> dict[str, Path]:
    """The session's three hash-chained logs, by name."""
    return {
        "shell": audit_dir / f"shell_audit_{session_id}.jsonl",
        "orchestrator": audit_dir / f"orchestrator_tasks_{session_id}.jsonl",
        "turns": journal_path(audit_dir, session_id),
    }


@dataclass
class Rca:
    """The report: its text, where it was written (None when the write failed) and what it checked."""

    text: str
    path: Path | None
    chains: dict[str, dict[str, Any]] = field(default_factory=dict)
    write_error: str | None = None
    claims: ClaimCheck | None = None


# ---- phase 1 ---------------------------------------------------------------------------------------

def _shell_records(path: Path) -> list[dict[str, Any]]:
    return read_wal(path).records if path.exists() else []


def _context(record: Mapping[str, Any]) -> str:
    return "CLOUD" if record.get("environment") == "azure" else "LOCAL"


def _outcome(record: Mapping[str, Any]) -> str:
    status, code = record.get("status"), record.get("exit_code")
    if status == "completed":
        return "completed" if code == _EXIT_OK else f"failed (exit {code})"
    if status == "denied":
        if record.get("action") == "blocked":
            return "forbidden"
        reason = record.get("denial_reason")  # the person's words (the cell escapes them)
        return f"denied: {' '.join(str(reason).split())[:200]}" if reason else "denied"
    return str(record.get("error") or status)


def _advisory_a(records: list[dict[str, Any]]) -> bool:
    local_fail = any(_context(r) == "LOCAL" and r.get("exit_code") not in (None, 0)
                     and str(r.get("command", "")).startswith(("ping", "traceroute")) for r in records)
    allow = any(_context(r) == "CLOUD" and r.get("exit_code") == 0 and "az network nsg" in str(r.get("command"))
                and '"access": "Allow"' in str(r.get("output", "")) for r in records)
    return local_fail and allow


# ---- phases 2-4 -------------------------------------------------------------------------------------

def _tasks(path: Path) -> dict[str, dict[str, Any]]:
    return replay_latest(path, "task_id") if path.exists() else {}


def _summary_path(report_path: str) -> str:
    return report_path.replace("_forensic_report.md", "_executive_summary.md")


def _read(shell: ShellLike, earlier: Mapping[str, Mapping[str, Any]], command: str,
          reasoning: str) -> Mapping[str, Any]:
    """The session's own earlier answer to ``command`` when there is one (the investigation already read
    the summary, or the human already refused it: neither is asked again), else a new read."""
    prior = earlier.get(command)
    if prior is not None and (prior.get("status") in ("denied", "blocked")
                              or (prior.get("status") == "completed" and prior.get("exit_code") == 0)):
        return prior
    return shell.execute({"command": command, "reasoning": reasoning})


def _read_summary(shell: ShellLike, report_path: str,
                  earlier: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[str | None, list[str]]:
    """Phase 4: (executive summary text or None when denied/unreadable, the audit ids of the reads)."""
    ids: list[str] = []
    seen = earlier or {}
    first = _read(shell, seen, f"cat {_summary_path(report_path)}", "Reading executive summary for RCA generation.")
    ids.append(str(first.get("audit_id")))
    if first.get("status") in ("denied", "blocked"):
        return None, ids
    if first.get("status") == "completed" and first.get("exit_code") == 0:
        return str(first.get("output", "")).strip(), ids
    full = _read(shell, seen, f"cat {report_path}",
                 "Reading forensic report for RCA generation (exec summary not found).")
    ids.append(str(full.get("audit_id")))
    if full.get("status") != "completed" or full.get("exit_code") != 0:
        return None, ids
    return _executive_section(str(full.get("output", ""))), ids


def _executive_section(text: str) -> str | None:
    match = re.search(r"^## Executive Summary\s*\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    return match.group(1).strip() if match else None


# ---- phase 5 ---------------------------------------------------------------------------------------

def _cell(value: object) -> str:
    """One line of untrusted text for a table cell or a sentence: redacted, escaped."""
    return md_inline(redact("" if value is None else str(value)).text)


def _code(value: object, *, table: bool = False) -> str:
    """A command or a path (untrusted) as a code span: exact and greppable, redacted, nothing inside it live."""
    return md_code(redact("" if value is None else str(value)).text, table=table)


def _annotate(escaped: str, known: set[str]) -> str:
    """Mark each audit id in already escaped text that is not in the trail (escaping leaves an audit
    id as it is: its underscores are intraword, and nothing else escapes into that shape)."""
    return AUDIT_ID.sub(lambda m: m.group() if m.group() in known else m.group() + NOT_IN_TRAIL, escaped)


def _mark_unknown(text: str, known: set[str]) -> str:
    """One line of untrusted text with its audit ids checked against the trail."""
    return _annotate(_cell(text), known)


def _mark_block(text: str, known: set[str]) -> str:
    """Untrusted paragraphs (the summary) with their audit ids checked against the trail."""
    return _annotate(md_block(redact(text).text), known)


def _cite(audit_id: str | None, known: set[str]) -> str:
    if not audit_id:
        return ""
    return _cell(audit_id) + ("" if audit_id in known else NOT_IN_TRAIL)


@dataclass
class _Inputs:
    state: SessionState
    completion: CompleteInvestigationArgs
    records: list[dict[str, Any]]
    tasks: dict[str, dict[str, Any]]
    summaries: dict[str, str | None]
    chains: dict[str, dict[str, Any]]
    now: datetime
    warnings: list[str]
    claims: ClaimCheck
    symptom: str = ""

    @property
    def known(self) -> set[str]:
        return {str(r.get("audit_id")) for r in self.records}


def _hypotheses_section(inp: _Inputs) -> list[str]:
    lines = ["## Hypotheses Log", "", "| Hypothesis ID | Description | Final State | Denial Count | Resolving Audit ID |",
             "|---|---|---|---|---|"]
    for h in inp.state.hypothesis_log:
        lines.append(f"| {_cell(h.id)} | {_mark_unknown(h.description, inp.known)} | {h.state.value} | "
                     f"{h.denial_count} | {_cite(h.resolving_audit_id, inp.known)} |")
    if not inp.state.hypothesis_log:
        lines.append("| — | No hypothesis was recorded. | — | 0 | |")
    unverifiable = [h.id for h in inp.state.hypothesis_log if h.state.value == "UNVERIFIABLE"]
    if unverifiable:
        lines += ["", f"Unverifiable (repeated denials): {', '.join(_cell(u) for u in unverifiable)}."]
    for (turn, audit_id, command, why), hids in _denials(inp.state).items():  # one line per "no", not per hypothesis
        reason = f" — reason: “{_cell(why)}”" if why else " — no reason given"
        lines.append(f"- Denied at turn {turn}, {_cite(audit_id, inp.known)}: {_code(command)}{reason} "
                     f"(charged to {', '.join(_cell(h) for h in hids)})")
    for c in inp.state.evidence_conflicts:
        ids = ", ".join(_cite(i, inp.known) for i in c.conflicting_audit_ids)
        lines.append(f"- Conflict on {_cell(c.hypothesis_id)}: {ids}; trusted {_cell(c.higher_fidelity_source or '?')}; "
                     f"resolved {c.resolution or 'not yet'}.")
    return [*lines, ""]


def _disagreements_section(inp: _Inputs) -> list[str]:
    """Each disagreement between two pieces of evidence (the control plane and the packets), as a finding of its
    own: what disagrees, both sides' audit ids, the side trusted and why, and how it was resolved."""
    if not inp.state.evidence_conflicts:
        return []
    lines = ["## Disagreement Findings", ""]
    for c in inp.state.evidence_conflicts:
        ids = ", ".join(_cite(i, inp.known) for i in c.conflicting_audit_ids)
        what = _mark_unknown(c.description, inp.known) if c.description else "Two results contradict each other."
        lines += [f"- {what}", f"  - Evidence that disagrees: {ids or '—'}",
                  f"  - Trusted: {_cell(c.higher_fidelity_source or 'not stated')}",
                  f"  - Hypothesis {_cell(c.hypothesis_id)}, resolved {c.resolution or 'not yet'}."]
    return [*lines, ""]


def _denials(state: SessionState) -> dict[tuple[int, str, str, str], list[str]]:
    """Each denial once, with the hypotheses it was charged to (the seed charges every active one)."""
    out: dict[tuple[int, str, str, str], list[str]] = {}
    for h in state.hypothesis_log:
        for e in h.denial_events:
            out.setdefault((e.turn, e.audit_id, e.command, e.denial_reason), []).append(h.id)
    return out


def _commands_section(inp: _Inputs) -> list[str]:
    lines = ["## Command Evidence", "",
             "| Audit ID | Context | Command | Classification | Action | Exit Code | Outcome |",
             "|---|---|---|---|---|---|---|"]
    for r in inp.records:
        lines.append(f"| {_cell(r.get('audit_id'))} | \\[{_context(r)}\\] | {_ran(r)} | "
                     f"{_cell(r.get('classification'))} | {_cell(decision_text(r))} | {_cell(r.get('exit_code'))} | "
                     f"{_cell(_outcome(r))} |")
    lines += ["", "NOTE ON LOCAL EVIDENCE: Rows tagged [LOCAL] reflect the engineer's local environment. Readers "
              "should not interpret [LOCAL] probe failures as definitive evidence of Azure infrastructure failures "
              "without corroborating [CLOUD] evidence.", ""]
    return lines


def _ran(record: Mapping[str, Any]) -> str:
    """The command cell: what ran; after a person's modify, theirs first and the model's named after it."""
    instead = record.get("modified_command")
    if not instead:
        return _code(record.get("command"), table=True)
    return f"{_code(instead, table=True)} (modified by a person; the model asked: {_code(record.get('command'), table=True)})"


def _pcap_cell(task: Mapping[str, Any]) -> str:
    """The capture file's path once one was downloaded (a path planned for a capture that never ran is not shown)."""
    path = task.get("local_pcap_path")
    if not path or not (task.get("download_attempts") or Path(str(path)).name in (task.get("artifact_hashes") or {})):
        return "none (nothing was downloaded)"
    return _code(path, table=True)


def _captures_section(inp: _Inputs) -> list[str]:
    lines = ["## Capture Evidence", "", "| Task ID | Target | State | Report Path | PCAP Path |", "|---|---|---|---|---|"]
    for task_id, t in inp.tasks.items():
        lines.append(f"| {_cell(task_id)} | {_cell(t.get('target'))} | {_cell(state_label(t))} | "
                     f"{_code(t.get('report_path'), table=True)} | {_pcap_cell(t)} |")
    if not inp.tasks:
        lines.append("| — | No packet capture was taken. | | | |")
    for task_id, t in inp.tasks.items():
        reason = t.get("stop_reason")
        if reason:  # why Azure ended the capture: anything but its time limit means it may be cut short
            early = "" if reason == "TimeExceeded" else " — it ended before its time limit, so it may miss traffic"
            lines += ["", f"Capture {_cell(task_id)}: Azure stopReason {_cell(reason)}{early}."]
        hashes = t.get("artifact_hashes") or {}
        if hashes:
            lines += ["", f"Artifacts of {_cell(task_id)} (chain of custody):"]
            lines += [f"- {_code(p)} {_code(h)}" for p, h in sorted(hashes.items())]
        report = t.get("report_path")
        if report and report in inp.summaries:
            text = inp.summaries[report]
            lines += ["", f"Executive summary of {_cell(task_id)} (the engine's text, as it was read):", ""]
            lines += ([md_fence(redact(text).text)] if text
                      else ["Report content unavailable (cat denied by engineer)."])
    if _advisory_a(inp.records):
        lines += ["", "Advisory: local probe failure detected alongside an Azure 'Allow' NSG rule. PCAP evidence "
                  "may clarify whether the data path is actually blocked. See the evidence hierarchy in the "
                  "system prompt."]
    for task_id, t in inp.tasks.items():
        report = t.get("report_path")
        if t.get("state") in ("COMPLETED", "DONE") and report and inp.summaries.get(report) is None:
            lines += ["", f"Advisory: forensic report for task {_cell(task_id)} unavailable — cat was denied by the "
                      f"engineer. The full report is at {_code(report)} for offline review."]
    return [*lines, ""]


def _leftovers_section(inp: _Inputs) -> list[str]:
    """What the session left in the cloud or on disk, each with the exact command that removes it."""
    if not inp.tasks:
        return []
    left = leftovers(inp.tasks)
    if not left:
        return ["## Resources Left Behind", "", "None: every capture, blob and local capture file this session "
                "created was cleaned up.", ""]
    lines = ["## Resources Left Behind", "", f"WARNING: {len(left)} task(s) of this session still hold resources "
             "that may incur charges. Each command below removes one:", ""]
    for item in left:
        lines.append(f"- Task {_cell(item.task_id)} ({_cell(item.state)}, target {_cell(item.target)}):")
        lines += [f"  - {what}: {_code(command)}" for what, command in item.items]
    return [*lines, ""]


def _integrity_section(inp: _Inputs) -> list[str]:
    lines = ["## Integrity Statement", "",
             "All evidence in this report is cited by audit_id from append-only, hash-chained JSONL files, "
             "each verified when this report was generated:", ""]
    for c in inp.chains.values():
        # the counts, verdicts, hashes and anchors are governance.verify's own words, printed as they are
        lines.append(f"- {c['label']}: {_code(c['path'])} — {c['records']} records, chain {c['verdict']}, "
                     f"head {c['head'] or '(empty)'}, anchor {c['anchor']}")
    lines += ["", "Raw command output is retained in the audit trail; only summaries appear here."]
    lines += [f"- WARNING: {_cell(w)}" for w in inp.warnings]
    lines += _claims_lines(inp.claims)
    return [*lines, ""]


def _claims_lines(claims: ClaimCheck) -> list[str]:
    """The claim checks: each finding, and the confidence they leave (see :mod:`netghost.agent._claims`)."""
    if not claims.findings:
        return ["", "Claim checks: the conclusion's confidence, citations and hypotheses agree with the trail."]
    lines = ["", f"Claim checks ({len(claims.findings)} finding(s); the model claimed confidence {claims.claimed}, "
                 f"shown: {claims.confidence}):"]
    return lines + [f"- CLAIM CHECK {f.rule} (caps confidence at {f.cap}): {_cell(f.message)}" for f in claims.findings]


def _render(inp: _Inputs) -> str:
    c, s = inp.completion, inp.state
    capped = (f" (the model claimed {c.confidence}; capped by the claim checks in the Integrity Statement)"
              if inp.claims.capped else "")
    head = [f"# Root Cause Analysis — {_cell(s.session_id)}", f"_Generated: {format_timestamp(inp.now)}_",
            f"_Confidence: {inp.claims.confidence}{capped}_", f"_Model: {_cell(s.model)} · Turns: {s.turn_count}"
            + (f" · Resumed from: {_cell(s.resumed_from)}" if s.resumed_from else "") + "_", "",
            *_answer_section(inp), "## Investigation Summary", "", _mark_block(c.root_cause_summary, inp.known), ""]
    actions = ["## Recommended Actions", ""] + [f"- {_mark_unknown(a, inp.known)}" for a in c.recommended_actions]
    if not c.recommended_actions:
        actions.append("- None given.")
    # the answer first; the command table, the longest part, last (every row stays cited and reachable)
    body = [*head, *actions, "", *_disagreements_section(inp), *_hypotheses_section(inp), *_captures_section(inp),
            *_leftovers_section(inp), *_integrity_section(inp), *_commands_section(inp)]
    return "\n".join(body).rstrip("\n") + "\n"


def _answer_section(inp: _Inputs) -> list[str]:
    """The first screen (:mod:`netghost.agent._answer`): symptom, root cause, fix, confidence and why,
    evidence, hypotheses by their text. Every field is escaped here, like every other model text."""
    a = answer_of(inp.state, inp.completion, inp.claims, inp.symptom, inp.known)
    fix = (f"{_code(a.fix)}" + (f" — {_mark_unknown(a.fix_text, inp.known)}" if a.fix_text else "")) if a.fix \
        else (_mark_unknown(a.fix_text, inp.known) if a.fix_text else "none given")
    lines = ["## The Answer", "",
             f"- Symptom: {_cell(a.symptom) or 'not recorded'}",
             f"- Root cause: {_mark_unknown(a.root_cause, inp.known)}",
             f"- Fix: {fix}",
             f"- Confidence: {a.confidence} — {'; '.join(_cell(w) for w in a.why)}",
             f"- Evidence: {', '.join(_cite(i, inp.known) for i in a.evidence) or 'no audit id cited'}"]
    for label, items in a.hypotheses:
        lines.append(f"- {label}: " + "; ".join(f"{_cell(i)} “{_mark_unknown(t, inp.known)}”" for i, t in items))
    return [*lines, ""]


def _check_chains(audit_dir: Path, session_id: str) -> dict[str, dict[str, Any]]:
    labels = {"shell": "Shell audit", "orchestrator": "Task registry", "turns": "Conversation journal"}
    out: dict[str, dict[str, Any]] = {}
    for name, path in chain_paths(audit_dir, session_id).items():
        if not path.exists():
            continue
        report = verify(path)
        verdict = "intact" if report.ok else f"BROKEN ({len(report.breaks)} breaks: {report.breaks[0].kind})"
        out[name] = {"label": labels[name], "path": str(path), "records": report.records,
                     "head": report.head_sha256, "ok": report.ok, "verdict": verdict, "anchor": report.anchor}
    return out


def write_rca(
    audit_dir: Path,
    state: SessionState,
    completion: CompleteInvestigationArgs,
    shell: ShellLike,
    *,
    now: Callable[[], datetime],
    warnings: list[str] | None = None,
) -> Rca:
    """Run phases 1-6; the caller does phase 7 (the session's ``rca_report_path``).

    A write failure (seed 001 §9) is reported in :attr:`Rca.write_error` with the text kept for stdout.
    """
    sid = state.session_id
    paths = chain_paths(audit_dir, sid)
    tasks = _tasks(paths["orchestrator"])
    summaries: dict[str, str | None] = {}
    earlier = {str(r.get("command")): r for r in _shell_records(paths["shell"])}
    for t in tasks.values():
        report = t.get("report_path")
        if t.get("state") in ("COMPLETED", "DONE") and report and report not in summaries:
            summaries[report], _ = _read_summary(shell, str(report), earlier)
    records = _shell_records(paths["shell"])  # after phase 4: its cat records are evidence too
    chains = _check_chains(audit_dir, sid)
    completion = scrub_completion(completion)
    claims = check_claims(state, completion, records)
    inp = _Inputs(state, completion, records, tasks, summaries, chains, now(), list(warnings or []), claims,
                  symptom=symptom_of(paths["turns"]))
    text = _render(inp)
    target = rca_path(audit_dir, sid)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        return Rca(text, None, chains, write_error=f"{type(exc).__name__}: {exc}", claims=claims)
    return Rca(text, target, chains, claims=claims)
