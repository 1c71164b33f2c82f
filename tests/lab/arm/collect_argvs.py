"""Collect every ``az`` argv the product issues in the lab: the test data of the differential test.

Usage (from the repository root)::

    .venv/bin/python tests/lab/arm/collect_argvs.py                 # run the playbook over every shipped world
    .venv/bin/python tests/lab/arm/collect_argvs.py --from-audit DIR  # read an earlier ``ghost-agent eval`` run

It runs ``ghost-agent eval --brain playbook`` (the agent, its playbook brain and the Cloud Orchestrator,
through the real Safe-Exec Shell against the lab's ``az``) over the shipped worlds and reads each run's
shell audit: every ``az`` command, in order, with the lab time it ran at (wall seconds since the run's
first command times the lab's clock scale). Local paths under the run's directory become ``{WORK}`` so
a replay can point them at its own. Commands the shell refused or never ran are left out. The result
is ``tests/data/lab_arm/product_argvs.json``; ``test_differential.py`` replays it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "tests" / "data" / "lab_arm" / "product_argvs.json"
CLOCK_SCALE = 60.0
"""The lab clock scale ``ghost-agent eval`` runs worlds at (``agent.demo.DEFAULT_CLOCK_SCALE``)."""


def _world_of(run_dir: Path) -> str:
    session = json.loads((run_dir / "lab" / "meta.json").read_text(encoding="utf-8"))
    return str(session["scenario"])


def collect(eval_dir: Path) -> dict[str, list[dict[str, object]]]:
    """``{world: [{"argv": [...], "at": lab seconds}, ...]}`` from an eval run's directories."""
    worlds: dict[str, list[dict[str, object]]] = {}
    for run_dir in sorted(p for p in eval_dir.iterdir() if (p / "lab" / "meta.json").exists()):
        audits = sorted(run_dir.glob("shell_audit_*.jsonl"))
        calls: list[dict[str, object]] = []
        start: datetime | None = None
        for audit in audits:
            for line in audit.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                if record.get("status") != "completed" or not record.get("command"):
                    continue
                moment = datetime.fromisoformat(record["ts"].replace("Z", "+00:00"))
                start = start or moment
                argv = shlex.split(record["command"])
                if argv[0] != "az":
                    continue
                argv = [a.replace(str(run_dir), "{WORK}") for a in argv[1:]]
                calls.append({"argv": argv, "at": round((moment - start).total_seconds() * CLOCK_SCALE, 1)})
        worlds[_world_of(run_dir)] = calls
    return worlds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from-audit", type=Path, help="an earlier `ghost-agent eval --audit-dir` directory")
    parser.add_argument("worlds", nargs="*", help="shipped world names (default: all)")
    args = parser.parse_args(argv)
    if args.from_audit:
        worlds = collect(args.from_audit)
    else:
        with tempfile.TemporaryDirectory(prefix="netghost-argvs-") as tmp:
            subprocess.run([str(Path(sys.executable).parent / "ghost-agent"), "eval", "--brain", "playbook",
                            "--audit-dir", tmp, *args.worlds], check=True)
            worlds = collect(Path(tmp))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = {"v": 1, "about": "az argvs the product issued in lab runs (tests/lab/arm/collect_argvs.py)",
            "worlds": worlds}
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"{sum(len(c) for c in worlds.values())} az calls from {len(worlds)} worlds -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
