"""``ghost-agent eval``: the diagnosis benchmark, the agent run on lab worlds and scored with no LLM judge.

Each world (shipped names, YAML paths, or directories of worlds with ``answers/``) is investigated
``--trials`` times by the real agent (same loop, shell, orchestrator and RCA as ``ghost-agent --lab``),
with the world's symptom as the problem statement and ``--yes`` approving the lab's RISKY steps, except
the commands a ``--deny REGEX[=REASON]`` names: those are denied with that reason, to measure how the
brain recovers. The structured diagnosis of ``complete_investigation`` is scored against the world's
answers (:mod:`netghost.agent._scoring`); turns, approvals asked (all, and on the critical path: not
cleanup), denials, tool errors, wall time and, for Gemini, tokens come from the run's own audit trail.
A table goes to the screen and everything to ``--json``.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from netghost.agent._approval import lab_approver
from netghost.agent._paths import audit_dir_problem
from netghost.agent._plan_cover import COVER_NAME
from netghost.agent._run import Options, run_agent
from netghost.agent._scoring import score_diagnosis
from netghost.agent.demo import prepare_lab, world_symptom
from netghost.contracts import ApprovalRequest, DecidedBy
from netghost.errors import NetGhostError
from netghost.governance import read_wal
from netghost.lab import answer_for, load_world, scenario_names
from netghost.shell import HitlCallback, HitlDecision

__all__ = ["RunResult", "add_arguments", "evaluate", "expand_worlds", "run"]

_CLEANUP = re.compile(r"\b(delete|remove)\b|^rm\b")


@dataclass
class RunResult:
    """One investigation of one world, scored."""

    world: str
    trial: int
    exit_code: int
    detection: bool
    rca_f1: float
    localization_f1: float
    fault_type_f1: float
    turns: int
    approvals: int
    critical_approvals: int
    denials: int
    tool_errors: int
    wall_s: float
    tokens: int
    confidence: str | None
    diagnosis: dict[str, Any] | None
    truth: dict[str, Any] | None
    audit_dir: str
    errors: list[str] = field(default_factory=list)


def expand_worlds(sources: Sequence[str]) -> list[str]:
    """Shipped names and YAML paths as given; a directory (written as a path: ``./worlds``, ``a/b``) stands
    for every ``*.yaml`` in it."""
    out: list[str] = []
    for source in sources or scenario_names():
        path = Path(source)
        if ("/" in source or source in (".", "..")) and path.is_dir():  # a bare word is a shipped name
            out += [str(p) for p in sorted(path.glob("*.yaml"))]
        else:
            out.append(source)
    return out


class _Denier:
    """The lab's --yes (it approves only what the lab simulates), except the steps a --deny pattern names.

    ``refuses`` is asked before the capture plan's cover (``_plan_cover``): a scripted "no" to a read of
    the session's own outputs is a test of the denial flow, so it still gets its say.
    """

    def __init__(self, patterns: Sequence[tuple[re.Pattern[str], str]], world: str) -> None:
        self.patterns = patterns
        self.approve = lab_approver(Console(file=io.StringIO()), world=world)
        self.by = DecidedBy(kind="flag", name="--deny", detail=f"ghost-agent eval, lab {world}")

    def refuses(self, request: ApprovalRequest) -> HitlDecision | None:
        """The --deny pattern's "no" for ``request``, or None."""
        for pattern, reason in self.patterns:
            if pattern.search(request.what):
                return HitlDecision.deny(reason, by=self.by)
        return None

    def __call__(self, request: ApprovalRequest) -> HitlDecision:
        return self.refuses(request) or self.approve(request)


def _denier(patterns: Sequence[tuple[re.Pattern[str], str]], world: str) -> HitlCallback:
    """See :class:`_Denier`."""
    return _Denier(patterns, world)


def _trail(audit_dir: Path) -> dict[str, Any]:
    """Turns, completion, tokens, approvals, denials and errors from the run's own logs."""
    session = json.loads((audit_dir / "ghost_session.json").read_text(encoding="utf-8"))
    sid = session["session_id"]
    turns, tokens, completion, tool_errors = 0, 0, None, 0
    journal = audit_dir / f"ghost_turns_{sid}.jsonl"
    for record in read_wal(journal).records if journal.exists() else []:
        if record.get("kind") == "model_turn":
            turns += 1
            usage = record.get("usage") or {}
            tokens += int(usage.get("total_tokens") or 0)  # what GeminiBrain records (none for the playbook)
            for part in (record.get("message") or {}).get("parts", []):
                call = part.get("call") or {}
                if call.get("name") == "complete_investigation":
                    completion = call.get("args")
        if record.get("kind") in ("orchestrator_call", "invalid_call") and \
                (record.get("response") or {}).get("status") == "error":
            tool_errors += 1
    shell = read_wal(audit_dir / f"shell_audit_{sid}.jsonl").records
    asked = [r for r in shell if r.get("action") in ("user_approved", "user_denied", "user_abandoned")
             and (r.get("decided_by") or {}).get("name") != COVER_NAME]  # the plan's approval asked nobody
    tool_errors += sum(1 for r in shell if r.get("status") == "error")
    return {
        "turns": turns, "tokens": tokens, "completion": completion, "tool_errors": tool_errors,
        "approvals": len(asked),
        "critical": sum(1 for r in asked if not _CLEANUP.search(str(r.get("command", "")))),
        "denials": sum(1 for r in asked if r.get("action") != "user_approved"),
    }


def _one(source: str, trial: int, root: Path, *, brain: str,
         deny: Sequence[tuple[re.Pattern[str], str]]) -> RunResult:
    world = load_world(source)
    name = world.spec.name
    answer = answer_for(source)
    audit_dir = root / f"{name}-{trial}"
    lab = prepare_lab(source, audit_dir)
    started = time.monotonic()
    try:
        code = run_agent(Options(audit_dir=audit_dir, brain=brain, intent=world_symptom(world), yes=True, lab=lab),
                         stdin=io.StringIO(""), console=Console(file=io.StringIO(), width=120),
                         approver=_denier(deny, name))
        wall = time.monotonic() - started
    finally:
        lab.close()
    errors: list[str] = []
    try:
        trail = _trail(audit_dir)
    except (OSError, KeyError, json.JSONDecodeError, NetGhostError) as exc:
        errors.append(f"no readable trail: {exc}")
        trail = {"turns": 0, "tokens": 0, "completion": None, "tool_errors": 0, "approvals": 0, "critical": 0,
                 "denials": 0}
    completion = trail["completion"] or {}
    diagnosis = completion.get("diagnosis")
    score = score_diagnosis(diagnosis, answer)
    return RunResult(world=name, trial=trial, exit_code=code, detection=score.detection, rca_f1=score.rca_f1,
                     localization_f1=score.localization_f1, fault_type_f1=score.fault_type_f1,
                     turns=trail["turns"], approvals=trail["approvals"], critical_approvals=trail["critical"],
                     denials=trail["denials"], tool_errors=trail["tool_errors"], wall_s=round(wall, 2),
                     tokens=trail["tokens"], confidence=completion.get("confidence"), diagnosis=diagnosis,
                     truth=answer, audit_dir=str(audit_dir), errors=errors)


def evaluate(worlds: Sequence[str], *, brain: str = "playbook", trials: int = 1, root: Path,
             deny: Sequence[tuple[str, str]] = (), progress: Console | None = None) -> list[RunResult]:
    """Run and score every world ``trials`` times under ``root``."""
    patterns = [(re.compile(p), reason) for p, reason in deny]
    results: list[RunResult] = []
    for source in expand_worlds(worlds):
        for trial in range(1, trials + 1):
            result = _one(source, trial, root, brain=brain, deny=patterns)
            results.append(result)
            if progress is not None:
                progress.print(f"  {result.world} #{trial}: rca_f1 {result.rca_f1:.2f}, {result.turns} turns, "
                               f"{result.critical_approvals} approvals, {result.wall_s:.1f} s", highlight=False)
    return results


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def summarise(results: Sequence[RunResult]) -> dict[str, dict[str, float]]:
    """Per world and overall: means of the scores, medians of the costs."""
    groups: dict[str, list[RunResult]] = {}
    for r in results:
        groups.setdefault(r.world, []).append(r)
    groups["ALL"] = list(results)
    out: dict[str, dict[str, float]] = {}
    for name, rs in groups.items():
        out[name] = {
            "runs": len(rs),
            "rca_f1": statistics.fmean(r.rca_f1 for r in rs),
            "localization_f1": statistics.fmean(r.localization_f1 for r in rs),
            "fault_type_f1": statistics.fmean(r.fault_type_f1 for r in rs),
            "detection": statistics.fmean(1.0 if r.detection else 0.0 for r in rs),
            "turns_median": _median([r.turns for r in rs]),
            "critical_approvals_median": _median([r.critical_approvals for r in rs]),
            "approvals_median": _median([r.approvals for r in rs]),
            "denials": float(sum(r.denials for r in rs)),
            "tool_errors": float(sum(r.tool_errors for r in rs)),
            "wall_s_median": _median([r.wall_s for r in rs]),
            "tokens": float(sum(r.tokens for r in rs)),
        }
    return out


def _table(summary: dict[str, dict[str, float]], brain: str, trials: int) -> Table:
    table = Table(title=f"Diagnosis benchmark: {brain} brain, {trials} trial(s) per world")
    table.add_column("world", no_wrap=True)
    for col in ("runs", "rca", "loc", "type", "detect", "turns", "appr", "deny", "err", "wall s", "tokens"):
        table.add_column(col, justify="right", no_wrap=True)
    table.caption = ("rca/loc/type: F1 of the diagnosis (resource+type, resource, type); detect: is_anomaly right; "
                     "turns, wall s: medians; appr: approvals asked, critical path/all (medians)")
    for name, s in summary.items():
        table.add_row(name, f"{s['runs']:.0f}", f"{s['rca_f1']:.2f}", f"{s['localization_f1']:.2f}",
                      f"{s['fault_type_f1']:.2f}", f"{s['detection']:.2f}", f"{s['turns_median']:.0f}",
                      f"{s['critical_approvals_median']:.0f}/{s['approvals_median']:.0f}", f"{s['denials']:.0f}",
                      f"{s['tool_errors']:.0f}", f"{s['wall_s_median']:.1f}", f"{s['tokens']:.0f}",
                      end_section=name == list(summary)[-2] if len(summary) > 1 else False)
    return table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the benchmark's options."""
    parser.add_argument("worlds", nargs="*", metavar="WORLD",
                        help="shipped names, world YAML paths or folders of worlds (default: every shipped world)")
    parser.add_argument("--brain", choices=("gemini", "playbook"), default="playbook")
    parser.add_argument("--trials", type=int, default=1, help="investigations per world (default 1)")
    parser.add_argument("--json", metavar="OUT", help="write every run and the summary as JSON")
    parser.add_argument("--audit-dir", dest="eval_audit_dir", default="./audit/eval",
                        help="where each run's audit trail, RCA and lab go (default ./audit/eval)")
    parser.add_argument("--deny", action="append", default=[], metavar="REGEX[=REASON]",
                        help="deny the RISKY commands matching REGEX (with REASON) instead of approving them")


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; 0 when every run finished (whatever it scored), 2 on bad input."""
    # piped to a file or CI log: wide enough that no column of the table is cut to an ellipsis
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 140)
    if args.trials < 1:
        print("ghost-agent eval: --trials must be at least 1", file=sys.stderr)
        return 2
    deny = [(p.split("=", 1)[0], p.split("=", 1)[1] if "=" in p else "denied by the benchmark's script")
            for p in args.deny]
    root = Path(args.eval_audit_dir).expanduser().resolve()
    problem = audit_dir_problem(root)
    if problem is not None:
        print(f"ghost-agent eval: {problem.line}", file=sys.stderr)
        return int(problem.code)
    try:
        for p, _ in deny:
            re.compile(p)
        worlds = expand_worlds(args.worlds)
        for w in worlds:
            load_world(w)
    except (NetGhostError, re.error) as exc:
        print(f"ghost-agent eval: {exc}", file=sys.stderr)
        return 2
    console.print(f"Evaluating {len(worlds)} world(s) x {args.trials} trial(s) with the {args.brain} brain "
                  f"(runs under {root})")
    results = evaluate(worlds, brain=args.brain, trials=args.trials, root=root, deny=deny, progress=console)
    summary = summarise(results)
    console.print(_table(summary, args.brain, args.trials))
    if args.json:
        Path(args.json).write_text(json.dumps({"brain": args.brain, "trials": args.trials, "summary": summary,
                                               "runs": [asdict(r) for r in results]}, indent=2) + "\n",
                                   encoding="utf-8")
        console.print(f"JSON: {Path(args.json).resolve()}")
    return 0 if all(r.exit_code == 0 for r in results) else 1
