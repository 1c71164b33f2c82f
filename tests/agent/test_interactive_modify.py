"""Modify and deny in an 80x24 pseudo-terminal, against the real ``ghost-agent`` on the lab.

A person (pexpect) chooses [M]odify: the line comes pre-filled with the model's command, they erase its
last word and type another, and that command is what runs, what the screen says ran, what the audit
holds and what the RCA's command table shows. Then they deny a route change with a reason, and the reason
is in the RCA. The model is the fake Gemini server through the real SDK.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pexpect

from netghost.governance import read_wal
from netghost.lab.fake_gemini import FakeGemini, FakeTurn
from tests.agent.tty_screen import logical_lines, screen_lines

UPDATE = ("az network route-table route update -g prod-rg --route-table-name rt-web -n to-data "
          "--next-hop-type VnetLocal")
REASON = "change freeze until Monday"
SCRIPT = [
    FakeTurn.call("run_shell_cmd", {"command": "cat notes.txt", "reasoning": "Read the engineer's notes."}),
    FakeTurn.call("run_shell_cmd", {"command": UPDATE, "reasoning": "Correct the next hop."}),
    FakeTurn.say("Nothing more to read. H1 stays open."),
]


def test_modify_runs_shows_audits_and_reports_the_edited_command_and_a_denial_keeps_its_reason(
        tmp_path: Path) -> None:
    audit = tmp_path / "audit"
    audit.mkdir()
    (audit / "notes.txt").write_text("the model's choice\n")
    (audit / "other.txt").write_text("the person's choice: redis moved last week\n")
    transcript = io.StringIO()
    with FakeGemini(SCRIPT) as fake:
        env = {**os.environ, "GEMINI_API_KEY": "x", "GOOGLE_GEMINI_BASE_URL": fake.base_url, "TERM": "xterm"}
        env.pop("COLUMNS", None)
        env.pop("LINES", None)
        child = pexpect.spawn(sys.executable, ["-m", "netghost", "--lab", "nsg-deny", "--audit-dir", str(audit),
                                               "--intent", "web-vm-01 cannot reach redis-primary on 6379"],
                              env=env, cwd=str(tmp_path), dimensions=(24, 80), encoding="utf-8", timeout=90)
        child.logfile_read = transcript
        try:
            child.expect_exact("Your choice: ")
            child.sendline("m")
            child.expect_exact("Modified command: ")
            child.expect_exact("cat notes.txt")  # pre-filled: the person edits, never retypes
            child.send("\b" * len("notes.txt") + "other.txt\r")
            child.expect_exact("Reason for the change (optional, press Enter to skip): ")
            child.sendline("")
            child.expect_exact("Your choice: ")
            child.sendline("d")
            child.expect_exact("Denial reason (optional, press Enter to skip): ")
            child.sendline(REASON)
            child.expect_exact("[D]one > ")
            child.sendline("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        sent = json.dumps([r for r in fake.requests if isinstance(r, dict)])
    lines = logical_lines(screen_lines(transcript.getvalue()))
    text = "\n".join(lines)
    assert child.exitstatus == 0, text
    assert "the person's choice" in sent and "the model's choice" not in sent  # what ran is what the model read
    ran = [ln for ln in lines if ln.startswith("[Shell] RISKY — modified")]
    assert ran and "ran: cat other.txt" in ran[0] and "instead of: cat notes.txt" in ran[0], text
    assert not [ln for ln in lines if ln.startswith("[Shell]") and "notes.txt" in ln and "instead of" not in ln]
    assert text.count("Your choice: ") == 2, "the modified command is not asked about again"
    (log,) = audit.glob("shell_audit_*.jsonl")
    records = read_wal(log).records
    modified = [r for r in records if r.get("action") == "user_modified"]
    assert [r["modified_command"] for r in modified] == ["cat other.txt"]
    denied = [r for r in records if r.get("action") == "user_denied"]
    assert denied and denied[-1]["denial_reason"] == REASON
    (rca,) = audit.glob("ghost_rca_*.md")
    body = rca.read_text()
    assert "`cat other.txt` (modified by a person; the model asked: `cat notes.txt`)" in body
    assert REASON in body
    html = next(audit.glob("ghost_rca_*.html")).read_text()
    assert "cat other.txt" in html and REASON in html
