"""The interactive CLI in an 80x24 pseudo-terminal, compared with seed 001 §10's console example.

A human (pexpect) types the problem at the prompt, approves one RISKY command, denies another with a
reason, and ends with [D]one; the model is the fake Gemini server through the real SDK. The screen's
lines are checked, in order, against the seed's lines (patterns where values vary: session id, paths,
duration), and every line of the approval box fits in 80 columns.
"""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path

import pexpect

from netghost import __version__
from netghost.lab.fake_gemini import FakeCall, FakeGemini, FakeTurn
from tests.agent.tty_screen import HANG, logical_lines, screen_lines

RG = "prod-rg"
UPDATE = (f"az network route-table route update -g {RG} --route-table-name rt-web -n to-data "
          "--next-hop-type VnetLocal")
REASON = "Wrong resource group — use cache-rg, not prod-rg"
INTENT = "VMs in prod-subnet cannot reach the Redis cache on port 6379"
RULE = "═" * 54

SCRIPT = [
    FakeTurn(text="I'll investigate this connectivity failure systematically.\n"
                  "Hypothesis H1: NSG rule blocking TCP 6379 between web and data.",
             calls=(FakeCall("run_shell_cmd", {"command": f"az network nsg list -g {RG} -o json",
                                               "reasoning": "Read the NSGs."}),)),
    FakeTurn.call("run_shell_cmd", {"command": f"az network route-table list -g {RG} -o json",
                                    "reasoning": "Read the route tables."},
                  text="NSG rules read. Now checking route tables."),
    FakeTurn.call("run_shell_cmd", {"command": "cat notes.txt", "reasoning": "Read the engineer's notes."}),
    FakeTurn.call("run_shell_cmd", {"command": UPDATE, "reasoning": "Attempting to correct the next hop."}),
    FakeTurn.say("Route update denied. I'll note it without modifying routes.\n"
                 "DenyAllFromWebSubnet in nsg-data blocks TCP 6379. H1 CONFIRMED."),
]

# seed 001 §10, in order; a str is a line's exact text (right spaces stripped), a Pattern must match it
EXPECTED: list[str | re.Pattern[str]] = [
    RULE,
    re.compile(rf"  UNIFIED GHOST AGENT  v{re.escape(__version__)}  \|  Session: ghost_\d{{8}}_\d{{6}}"),
    RULE,
    "Checking for orphaned resources from previous sessions...",
    "  [OK] No orphaned tasks found.",
    "  [OK] No stale local files found.",
    "What network problem should I investigate?",
    f"> {INTENT}",
    "[Ghost Agent] I'll investigate this connectivity failure systematically.",
    "Hypothesis H1: NSG rule blocking TCP 6379 between web and data.",
    f"[Shell] SAFE — auto-approved: az network nsg list -g {RG} -o json",
    "[Ghost Agent] NSG rules read. Now checking route tables.",
    f"[Shell] SAFE — auto-approved: az network route-table list -g {RG} -o json",
    re.compile(r"┌─+┐"),
    re.compile(r"│ +SAFETY SHELL ALERT +│"),
    re.compile(r"│ TIER: +\d+  \|  CLASSIFICATION: RISKY +│"),
    re.compile(r"│ COMMAND: +cat notes\.txt +│"),
    re.compile(r"│ RISK: +Reads notes\.txt on this machine .*│"),
    re.compile(r"│ REASONING: +Read the engineer's notes\. +│"),
    re.compile(r"│ +\[A\]pprove   \[D\]eny   \[M\]odify command +│"),
    re.compile(r"└─+┘"),
    "Your choice: a",
    "[Shell] RISKY — approved by the human at the terminal: cat notes.txt",
    re.compile(r"│ +SAFETY SHELL ALERT +│"),
    re.compile(r"│ COMMAND: +az network route-table route update .*│"),
    re.compile(r"│ RISK: +Changes Azure state: az network route-table route update +│"),
    re.compile(r"│ +to-data\. +│"),  # a name is never split at its hyphen
    re.compile(r"│ REASONING: +Attempting to correct the next hop\. +│"),
    "Your choice: d",
    f"Denial reason (optional, press Enter to skip): {REASON}",
    re.compile(r"\[Shell\] RISKY — denied by the human at the terminal: az network route-table route update .*"
               + re.escape(f'(reason: "{REASON}")')),
    "[Ghost Agent] Route update denied. I'll note it without modifying routes.",
    "DenyAllFromWebSubnet in nsg-data blocks TCP 6379. H1 CONFIRMED.",
    "Continue investigation? [C]ontinue / [D]one > d",
    RULE,
    re.compile(r"  RCA REPORT WRITTEN: .*/audit/ghost_rca_ghost_\d{8}_\d{6}\.md"),
    re.compile(r"  Confidence: low  \|  Turns: 5  \|  Duration: (\d+m )?\d+s"),
    RULE,
]


def _in_order(lines: list[str], expected: list[str | re.Pattern[str]]) -> list[str | re.Pattern[str]]:
    """The expected lines not found in order (empty when the screen shows them all)."""
    at = 0
    for i, want in enumerate(expected):
        while at < len(lines):
            line = lines[at]
            at += 1
            if (want.fullmatch(line) if isinstance(want, re.Pattern) else line == want):
                break
        else:
            return expected[i:]
    return []


def test_the_interactive_cli_matches_seed_001_console(tmp_path: Path) -> None:
    audit = tmp_path / "audit"
    audit.mkdir()
    (audit / "notes.txt").write_text("redis moved to the data subnet last week\n")
    transcript = io.StringIO()
    with FakeGemini(SCRIPT) as fake:
        env = {**os.environ, "GEMINI_API_KEY": "x", "GOOGLE_GEMINI_BASE_URL": fake.base_url, "TERM": "xterm"}
        env.pop("COLUMNS", None)
        env.pop("LINES", None)
        child = pexpect.spawn(sys.executable, ["-m", "netghost", "--lab", "nsg-deny", "--audit-dir", str(audit)],
                              env=env, cwd=str(tmp_path), dimensions=(24, 80), encoding="utf-8", timeout=60)
        child.logfile_read = transcript
        try:
            child.expect_exact("> ")
            child.sendline(INTENT)
            child.expect_exact("Your choice: ")
            child.sendline("a")
            child.expect_exact("Your choice: ")
            child.sendline("d")
            child.expect_exact("Denial reason (optional, press Enter to skip): ")
            child.sendline(REASON)
            child.expect_exact("[D]one > ")
            child.sendline("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        sent = [r for r in fake.requests if isinstance(r, dict)]
    screen = screen_lines(transcript.getvalue())
    assert child.exitstatus == 0, "\n".join(screen)
    shell = [line for line in screen if line.startswith(("[Shell] ", HANG))]
    assert max(len(line) for line in shell) <= 80, "\n".join(shell)  # folded by the program, never by the terminal
    assert len([line for line in shell if line.startswith(HANG)]) >= 2  # the denial's line was folded
    assert all(any(word in line.split() for line in shell) for word in UPDATE.split())  # never inside a word
    lines = logical_lines(screen)  # a [Shell] line folded between words, joined back
    missing = _in_order(lines, EXPECTED)
    assert missing == [], f"first missing: {missing[0]!r}\n" + "\n".join(lines)
    box = [line for line in lines if line[:1] in "┌│└"]
    assert box and max(len(line) for line in box) <= 80
    # the denial and its reason reached the model in the next turn
    meta = sent[4]["contents"][-1]["parts"][0]["functionResponse"]["response"]["_meta"]
    assert meta["denial_reason"] == REASON
