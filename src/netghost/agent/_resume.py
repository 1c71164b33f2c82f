"""``--resume SID`` (seed 001 §3 step 2): verify the audit first, then load, rebuild and reconcile.

Order matters: every hash-chained log of the session is verified *before* anything else is read or
run, and so is the session's trail (every log it must have is there, whole and its own:
``netghost.governance.check_trail``); a break is reported first (the user may stop there). Then the
session file must carry a valid seal: one that is unsealed, edited, sealed for another session or by
another installation is refused with a one-line reason and the next step, and never continued from
([F]resh/[A]bort; nothing it says reaches the model or the RCA). Then the conversation is rebuilt from
the audit trail (:mod:`netghost.agent._rebuild`), ``is_resume`` is set, and the RISKY commands the shell
audit shows as executed, or as "outcome unknown", are listed so that ``--yes`` never repeats one
without a human.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.text import Text

from netghost.agent._console import GhostConsole
from netghost.agent._paths import moved_session_line, unknown_session_line
from netghost.agent._rca import chain_paths
from netghost.agent._rebuild import Rebuilt, rebuild, shell_records
from netghost.agent._session import load_session, refusal_line, take_back
from netghost.contracts import IN_FLIGHT_TASK_STATES, SessionState
from netghost.governance import check_trail, read_wal, replay_latest, verify

__all__ = ["Resumed", "already_ran", "check_chains", "load_for_resume", "session_task_ids", "unfinished_tasks"]

OUTCOME_UNKNOWN = "outcome unknown"
_IN_FLIGHT = frozenset(s.value for s in IN_FLIGHT_TASK_STATES)
"""Task states a crash can leave a capture in mid-way: reconciled through check_task, never re-created."""


@dataclass
class Resumed:
    """What ``--resume`` found: the state (None: start fresh), the conversation, warnings for the RCA."""

    state: SessionState | None
    rebuilt: Rebuilt = field(default_factory=Rebuilt)
    warnings: list[str] = field(default_factory=list)
    abort: bool = False


def check_chains(ui: GhostConsole, audit_dir: Path, session_id: str, heads: Mapping[str, Any]) -> list[str]:
    """Verify each of the session's logs (and the head the session file pinned); the problems found."""
    problems: list[str] = []
    for name, path in chain_paths(audit_dir, session_id).items():
        if not path.exists():
            if name in heads:
                problems.append(f"{path.name}: missing (the session file pinned its head)")
            continue
        report = verify(path)
        for b in report.breaks:
            if b.kind != "torn_tail":
                problems.append(f"{path.name}: {b.kind} at seq {b.seq} (line {b.line_no}): {b.detail}")
        pinned = heads.get(name) or {}
        seq, sha = pinned.get("seq"), pinned.get("sha256")
        if isinstance(seq, int) and sha:
            at = next((r for r in read_wal(path).records if r.get("seq") == seq), None)
            if at is None or at.get("sha256") != sha:
                problems.append(f"{path.name}: record {seq} is not the head the session file pinned")
    for problem in check_trail(audit_dir, session_id).problems:
        # the session file is judged below; a provisional record the shell refuses when it opens (moved
        # aside, recorded in the chain, shown): neither needs the whole trail to be given up
        if problem.kind not in ("session_file", "provisional") and problem.line not in problems:
            problems.append(problem.line)
    for text in problems:  # one unwrapped line each
        ui.console.print(Text.assemble(("[ERROR] ", "bold red"), f"Audit trail broken: {text}"), soft_wrap=True)
    if not problems:
        ui.ok("Audit trail verified (every chain intact).")
    return problems


def load_for_resume(ui: GhostConsole, audit_dir: Path, session_id: str) -> Resumed:
    """Steps 2's checks in order; see the module docstring."""
    path = take_back(audit_dir, session_id)
    loaded = load_session(path)
    ours = loaded.state is not None and loaded.state.session_id == session_id
    has_trail = chain_paths(audit_dir, session_id)["shell"].exists()
    if not has_trail and not ours:
        # a mistyped id or the wrong directory: say so (never "audit trail broken", which reads like tampering)
        _line(ui, unknown_session_line(session_id, audit_dir, command="ghost-agent --resume"))
        return Resumed(None, abort=True)
    if loaded.status == "missing":
        _line(ui, f"Session {session_id}'s file {path.name} is missing from {audit_dir}: its audit trail is "
                  f"there; rebuild its report: ghost-agent report {session_id} --audit-dir {audit_dir}")
        return Resumed(None, abort=True)
    if ours and loaded.state is not None and not _same_dir(loaded.state.audit_dir, audit_dir):
        _line(ui, moved_session_line(session_id, loaded.state.audit_dir, audit_dir))
        return Resumed(None, abort=True)
    heads = loaded.state.audit_heads if loaded.state is not None and ours else {}
    problems = check_chains(ui, audit_dir, session_id, heads)
    warnings = [f"audit trail break reported at resume: {p}" for p in problems]
    if problems and ui.choose("The audit trail does not verify. [C]ontinue anyway  [A]bort",
                              {"c": "continue", "a": "abort"}, default="a") == "a":
        return Resumed(None, abort=True)
    if loaded.status == "refused":
        # one unwrapped line (the reason and the next step stay together and copyable)
        ui.console.print(Text.assemble(("[ERROR] ", "bold red"), refusal_line(path, session_id, audit_dir,
                                                                             loaded.detail)), soft_wrap=True)
        fresh = ui.choose("[F]resh session  [A]bort", {"f": "fresh", "a": "abort"}, default="a") == "f"
        return Resumed(None, abort=not fresh)
    if loaded.status == "corrupt" or loaded.state is None:
        _line(ui, f"Session file {path.name} is unreadable ({loaded.detail}): the audit trail is intact; "
                  f"rebuild the report from it: ghost-agent report {session_id} --audit-dir {audit_dir}, or "
                  f"start a new session (the file is kept as ghost_session.unreadable.json)")
        fresh = ui.choose("[F]resh session  [A]bort", {"f": "fresh", "a": "abort"}, default="a") == "f"
        return Resumed(None, abort=not fresh)
    if not ours:
        _line(ui, f"{path.name} holds session {loaded.state.session_id}, not {session_id}: rebuild {session_id}'s "
                  f"report from its audit trail: ghost-agent report {session_id} --audit-dir {audit_dir}")
        return Resumed(None, abort=True)
    paths = chain_paths(audit_dir, session_id)
    if not paths["shell"].exists():
        ui.notice("Warning: Audit file not found — conversation history cannot be reconstructed.")
    state = loaded.state
    state.is_resume = True
    state.resumed_from = session_id
    return Resumed(state, rebuild(paths["turns"], paths["shell"]), warnings)


def _line(ui: GhostConsole, text: str) -> None:
    """One ``[ERROR]`` line, never wrapped (the next step stays whole and copyable)."""
    ui.console.print(Text.assemble(("[ERROR] ", "bold red"), text), soft_wrap=True)


def _same_dir(recorded: str, audit_dir: Path) -> bool:
    try:
        return Path(recorded).resolve() == audit_dir.resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def already_ran(shell_audit: Path) -> set[str]:
    """RISKY commands the audit shows as executed or with an unknown outcome (never repeated unasked)."""
    out: set[str] = set()
    for r in shell_records(shell_audit):
        if r.get("classification") != "RISKY":
            continue
        ran = r.get("action") in ("user_approved", "user_modified") and r.get("status") == "completed"
        unknown = OUTCOME_UNKNOWN in str(r.get("stderr", ""))
        if ran or unknown:
            out.add(str(r.get("modified_command") or r.get("command")))
    return out


def session_task_ids(registry: Path) -> list[str]:
    """Every task the session's registry holds: what earlier runs created, whatever the session file says."""
    return list(replay_latest(registry, "task_id")) if registry.exists() else []


def unfinished_tasks(registry: Path, task_ids: list[str]) -> list[str]:
    """The session's tasks a crash left in flight (reconciled with check_task, never re-created)."""
    latest = replay_latest(registry, "task_id") if registry.exists() else {}
    return [t for t in task_ids if t in latest and latest[t].get("state") in _IN_FLIGHT]
