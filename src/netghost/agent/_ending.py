"""Every way an investigation ends: the cleanup sweep, the RCA, the loud leftovers, the exit code, the paths.

Why one module for all the ends: a session can end by ``complete_investigation``, [D]one, the turn
limit, Ctrl-C, a brain error or an exception, and each must leave the same guarantees behind (seed 001
§9 and issue 23): the session saved, every task the session created cleaned up through the
orchestrator or listed loudly with the command that cleans it (on screen and in the RCA), an exit code
that says whether resources remain (:data:`~netghost.agent._leftovers.EXIT_LEFTOVERS`), the resume
command where the run can go on, and where every file is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol

from netghost.agent._console import GhostConsole, InterruptFlag
from netghost.agent._dispatch import OrchestratorLike, WatchedShell
from netghost.agent._exit_codes import ExitCode
from netghost.agent._journal import Journal
from netghost.agent._leftovers import EXIT_LEFTOVERS, Leftover, show, sweep
from netghost.agent._loop import LoopEnd
from netghost.agent._rca import chain_paths, write_rca
from netghost.agent._rca_html import draw_charts, write_rca_html
from netghost.agent._whereis import print_locations
from netghost.contracts import CompleteInvestigationArgs, SessionState
from netghost.errors import NetGhostError

__all__ = ["Ending", "Parts", "end_already_complete", "end_stopped", "end_with_rca"]


class Parts(Protocol):
    """What an ending needs of the run (the run's ``_Parts``)."""

    @property
    def ui(self) -> GhostConsole: ...
    @property
    def state(self) -> SessionState: ...
    @property
    def journal(self) -> Journal: ...
    @property
    def watched(self) -> WatchedShell: ...
    @property
    def orchestrator(self) -> OrchestratorLike: ...
    @property
    def flag(self) -> InterruptFlag: ...
    @property
    def warnings(self) -> list[str]: ...

    def save(self) -> None:
        """Write the session file."""


@dataclass
class Ending:
    """How this run was started: where it writes, how to resume it, when it started, its clock."""

    audit_dir: Path
    resume_command: str
    started: float
    clock: Callable[[], datetime]
    left: list[Leftover] = field(default_factory=list)


def _sweep(parts: Parts, ending: Ending) -> list[Leftover]:
    """Clean every task of the session (Ctrl-C during it stops the asking), note what is left."""
    parts.flag.set = False  # a Ctrl-C from now on means "stop cleaning", not the one that ended the loop
    registry = chain_paths(ending.audit_dir, parts.state.session_id)["orchestrator"]
    left = sweep(parts.orchestrator, registry, say=parts.ui.notice, stop=parts.flag)
    for item in left:
        if item.task_id not in parts.state.manual_cleanup_pending:
            parts.state.manual_cleanup_pending.append(item.task_id)
    cleaned = {t for t in parts.state.manual_cleanup_pending if t not in {i.task_id for i in left}}
    parts.state.manual_cleanup_pending = [t for t in parts.state.manual_cleanup_pending if t not in cleaned]
    ending.left = left
    if left:
        parts.journal.write("session_event", event="resources_left", turn=parts.state.turn_count,
                            tasks=[{"task_id": i.task_id, "commands": [c for _, c in i.items]} for i in left])
    return left


def _code(code: int, ending: Ending) -> int:
    return EXIT_LEFTOVERS if ending.left else code


def end_with_rca(parts: Parts, end: LoopEnd, ending: Ending) -> int:
    """complete_investigation, [D]one or the turn limit: charts, cleanup, the two RCAs, the leftovers, the paths."""
    audit_dir, clock = ending.audit_dir, ending.clock
    completion = end.completion or CompleteInvestigationArgs(
        confidence="low",
        root_cause_summary=end.last_text or "The investigation ended before the model concluded.",
    )
    state = parts.state
    draw_charts(audit_dir, state.session_id, parts.watched, parts.journal.write)  # before the cleanup removes the pcaps
    _sweep(parts, ending)
    parts.ui.notice("Generating root cause analysis report...")
    rca = write_rca(audit_dir, state, completion, parts.watched, now=clock, warnings=parts.warnings)
    if rca.path is None:
        parts.ui.error(f"RCA report write failed ({rca.write_error}); the report follows.")
        parts.ui.console.print(rca.text, markup=False)
        state.rca_report_path = None
    else:
        state.rca_report_path = str(rca.path)
    claims = rca.claims
    confidence = claims.confidence if claims else completion.confidence
    state.rca_confidence = confidence
    if rca.path is not None:
        parts.journal.write("session_event", event="rca_written", turn=state.turn_count, path=str(rca.path),
                            confidence=confidence, claimed_confidence=completion.confidence,
                            claim_checks=[f"{f.rule}: {f.message}" for f in claims.findings] if claims else [])
    try:
        html = write_rca_html(audit_dir, state, completion, now=clock, warnings=parts.warnings)
        parts.ui.notice(f"HTML report: {html}")
    except OSError as exc:
        parts.ui.error(f"HTML RCA write failed ({type(exc).__name__}: {exc}); the Markdown RCA stands.")
    parts.save()
    if claims is not None and claims.capped:
        parts.ui.warn(claims.why() + " See the RCA's Integrity Statement.")
    show(parts.ui.console, ending.left, resume=ending.resume_command if ending.left else None)
    parts.ui.closing(str(rca.path or "(stdout)"), confidence=confidence, turns=state.turn_count,
                     duration_s=time.monotonic() - ending.started)
    print_locations(parts.ui.console, audit_dir, state)
    return _code(ExitCode.OK, ending)


def end_stopped(parts: Parts, why: str, ending: Ending, code: int = ExitCode.INTERRUPTED) -> int:
    """Ctrl-C, a brain error or an internal error: cleanup, the leftovers, the session saved, how to resume."""
    if why:
        parts.ui.notice(why)
    try:
        _sweep(parts, ending)
    except NetGhostError as exc:  # the registry itself could not be read: say so, the session is still saved
        parts.ui.error(f"The end-of-session cleanup could not run: {exc}")
    try:
        parts.save()
    except (OSError, NetGhostError) as exc:
        parts.ui.error(f"The session could not be saved: {exc}")
    show(parts.ui.console, ending.left)
    parts.ui.notice(f"Session saved. Resume with: {ending.resume_command}")
    print_locations(parts.ui.console, ending.audit_dir, parts.state)
    return _code(code, ending)


def end_already_complete(parts: Parts, ending: Ending) -> int:
    """A resumed session that had already written its RCA: only the cleanup it left is finished here."""
    _sweep(parts, ending)
    parts.save()
    show(parts.ui.console, ending.left, resume=ending.resume_command if ending.left else None)
    print_locations(parts.ui.console, ending.audit_dir, parts.state)
    return _code(ExitCode.OK, ending)
