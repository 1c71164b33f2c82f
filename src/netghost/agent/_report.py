"""``ghost-agent report SID [--audit-dir DIR]``: write a session's HTML RCA again, from its audit trail alone.

It reads, never runs: the session file (the current ``ghost_session.json`` if it is SID's, else the copy
kept as ``ghost_session_{SID}.json``; a session driven through MCP has none, and gets an empty hypothesis
log), the journal's ``complete_investigation`` call, the shell audit and the task registry. Nothing is
moved, so this is safe beside a running session. A session file whose seal does not check is not read
(the report is built from the audit trail alone, as for an MCP session) and stderr says why.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from netghost.agent._paths import session_id_problem, unknown_session_line
from netghost.agent._rca import chain_paths
from netghost.agent._rca_html import write_rca_html
from netghost.agent._rebuild import rebuild
from netghost.agent._session import SESSION_FILE, kept_path, load_session
from netghost.contracts import HYPOTHESIS_ARGS, CompleteInvestigationArgs, SessionState, format_timestamp

__all__ = ["add_arguments", "regenerate_html", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    parser.add_argument("session_id", metavar="SID", help="the session to report on (ghost_YYYYMMDD_HHMMSS)")
    parser.add_argument("--audit-dir", dest="report_audit_dir", metavar="DIR", default="./audit",
                        help="where the session's logs are (default: ./audit)")


def _state(audit_dir: Path, sid: str) -> SessionState:
    for path in (audit_dir / SESSION_FILE, kept_path(audit_dir, sid)):
        loaded = load_session(path)
        if loaded.state is not None and loaded.state.session_id == sid:
            return loaded.state
        if loaded.status == "refused" and (path.name != SESSION_FILE or _claims(path, sid)):
            print(f"ghost-agent report: {path.name} not used: {loaded.detail}; the report is built from the "
                  "audit trail alone", file=sys.stderr)
    return SessionState(session_id=sid, created_at=format_timestamp(datetime.now(UTC)), model="(none)",
                        audit_dir=str(audit_dir))


def _claims(path: Path, sid: str) -> bool:
    """Whether an (untrusted) session file says it is ``sid``'s: only to word the notice."""
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("session_id") == sid)
    except (OSError, ValueError, AttributeError):
        return False


def regenerate_html(audit_dir: Path, sid: str) -> Path:
    """Write ``ghost_rca_{sid}.html`` from the session's trail (what ``report`` and the lab demo call).

    Raises:
        FileNotFoundError: the session has no shell audit in ``audit_dir``.
        OSError: the page cannot be written.
    """
    paths = chain_paths(audit_dir, sid)
    if session_id_problem(sid) is not None or not paths["shell"].exists():
        raise FileNotFoundError(unknown_session_line(sid, audit_dir, command="ghost-agent report"))
    rebuilt = rebuild(paths["turns"], paths["shell"])
    done = {k: v for k, v in (rebuilt.completion or {}).items() if k not in HYPOTHESIS_ARGS}  # the loop's extras
    completion = CompleteInvestigationArgs.model_validate(done) if done else None
    return write_rca_html(audit_dir, _state(audit_dir, sid), completion, now=lambda: datetime.now(UTC))


def run(args: argparse.Namespace) -> int:
    """Write the page; exit 2 when the session has no shell audit here, 1 when it cannot be written."""
    audit_dir = Path(args.report_audit_dir).expanduser().resolve()
    problem = session_id_problem(args.session_id)
    if problem is not None:
        print(f"ghost-agent report: {problem.line}", file=sys.stderr)
        return int(problem.code)
    try:
        path = regenerate_html(audit_dir, args.session_id)
    except FileNotFoundError as exc:
        print(f"ghost-agent report: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"ghost-agent report: cannot write the report: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0
