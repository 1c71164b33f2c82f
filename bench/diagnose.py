"""The diagnosis benchmark over every shipped lab world: ``ghost-agent eval`` with its table and JSON.

Runs the real agent (playbook brain by default, ``--brain gemini`` with a key) on each world, N trials
each, and prints NIKA-style scores with no LLM judge (RCA, localization and fault-type F1, detection)
beside the costs (turns, approvals, denials, tool errors, wall time, tokens).

Run: ``.venv/bin/python bench/diagnose.py [--trials 3] [--brain playbook] [WORLD ...]``
(the JSON lands in ``bench/_work/diagnose.json``; each run's audit trail under ``bench/_work/diagnose/``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from netghost.agent.cli import main as ghost_agent

WORK = Path(__file__).resolve().parent / "_work"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("worlds", nargs="*")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--brain", default="playbook", choices=("playbook", "gemini"))
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    return ghost_agent(["eval", *args.worlds, "--trials", str(args.trials), "--brain", args.brain,
                        "--audit-dir", str(WORK / "diagnose"), "--json", str(WORK / "diagnose.json")])


if __name__ == "__main__":
    sys.exit(main())
