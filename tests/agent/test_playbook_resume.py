"""A playbook session whose RCA could not be written is finished by --resume from its audit trail.

The playbook's ``complete_investigation`` carries hypothesis updates (the loop's extra arguments); the
resume rebuilds that call from the journal and must write the RCA from it, not fail on the extras.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from netghost.agent._run import Options, run_agent
from netghost.agent.demo import prepare_lab

NOW = datetime(2026, 11, 22, 5, 0, 0, tzinfo=UTC)
INTENT = "web-vm-01 cannot reach redis-primary on port 6379"


def test_resume_writes_the_rca_the_first_run_could_not(tmp_path: Path) -> None:
    audit = tmp_path / "audit"
    audit.mkdir()
    blocker = audit / "ghost_rca_ghost_20261122_050000.md"
    blocker.mkdir()  # the RCA cannot be written where it belongs
    out = io.StringIO()
    code = run_agent(Options(audit_dir=audit, brain="playbook", intent=INTENT, yes=True,
                             lab=prepare_lab("nsg-deny", audit)),
                     stdin=io.StringIO(""), console=Console(file=out, width=120), now=lambda: NOW)
    assert code == 0 and "RCA report write failed" in out.getvalue()
    session = json.loads((audit / "ghost_session.json").read_text())
    assert session["session_id"] == "ghost_20261122_050000" and session["rca_report_path"] is None
    blocker.rmdir()
    out = io.StringIO()
    code = run_agent(Options(audit_dir=audit, brain="playbook", resume="ghost_20261122_050000",
                             lab=prepare_lab("nsg-deny", audit, fresh=False)),
                     stdin=io.StringIO(""), console=Console(file=out, width=120))
    assert code == 0, out.getvalue()
    rca = blocker.read_text()
    assert "DenyAllFromWebSubnet" in rca and "## Integrity Statement" in rca
