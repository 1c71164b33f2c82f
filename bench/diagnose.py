"""Time to RCA over the shipped lab worlds: 0 and 2 s per az call, sequential and parallel, in one run.

For each world, each latency (``$NETGHOST_LAB_AZ_LATENCY_S``: seconds the lab adds to every ``az`` call, as
ARM would) and each mode, the real agent (playbook brain, ``--yes`` on the lab's RISKY steps) investigates
the world's symptom, and the wall time from the start of the run to the written RCA is taken. Modes:

- ``sequential``: one shell call at a time and no read cache (the behaviour before parallel reads);
- ``parallel``: a turn's SAFE reads run at once and the session's read cache answers repeated reads.

It prints per world the times, shell calls (and how many the cache answered), whether a capture was taken
(no capture: a control-plane world), then per latency the medians, the ratio sequential / parallel and the
targets of the time-to-RCA issue: at 2 s per call, median time to RCA <= 30 s over the worlds (<= 20 s over
the control-plane ones) and >= 2x faster than sequential on the same worlds in the same run. Each run's
audit trail lands under ``bench/_work/diagnose/``, the figures in ``bench/_work/diagnose_times.json``.

Run: ``.venv/bin/python bench/diagnose.py [--worlds nsg-deny,dns-nxdomain] [--latencies 0,2]``
(every shipped world by default: long at 2 s per call). ``--scores [WORLD ...]`` runs the scoring
benchmark instead (``ghost-agent eval``: NIKA-style scores and costs, ``--trials``, ``--brain``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from netghost.agent._run import Options, run_agent
from netghost.agent.cli import main as ghost_agent
from netghost.agent.demo import prepare_lab, world_symptom
from netghost.governance import read_wal
from netghost.lab import load_world, scenario_names
from netghost.lab.az import LATENCY_ENV
from netghost.shell import HitlDecision

WORK = Path(__file__).resolve().parent / "_work"
TARGET_MEDIAN_S = 30.0
TARGET_CONTROL_PLANE_S = 20.0
TARGET_SPEEDUP = 2.0


def _run_one(world: str, latency: float, parallel: bool, root: Path) -> dict[str, Any]:
    """One investigation of ``world``; its time to RCA and what its audit trail shows."""
    mode = "parallel" if parallel else "sequential"
    audit_dir = root / f"{world}-{latency:g}s-{mode}"
    shutil.rmtree(audit_dir, ignore_errors=True)
    os.environ[LATENCY_ENV] = f"{latency:g}"
    lab = prepare_lab(world, audit_dir)
    try:
        started = time.monotonic()
        code = run_agent(Options(audit_dir=audit_dir, brain="playbook", intent=world_symptom(load_world(world)),
                                 yes=True, lab=lab, parallel_reads=parallel,
                                 read_cache_ttl_s=60.0 if parallel else 0.0),
                         stdin=io.StringIO(""), console=Console(file=io.StringIO(), width=120),
                         approver=lambda _request: HitlDecision.approve())
        wall = time.monotonic() - started
    finally:
        lab.close()
    sid = json.loads((audit_dir / "ghost_session.json").read_text(encoding="utf-8"))["session_id"]
    shell = read_wal(audit_dir / f"shell_audit_{sid}.jsonl").records
    commands = [str(r.get("command", "")) for r in shell]
    return {"world": world, "latency_s": latency, "mode": mode, "exit_code": code, "time_to_rca_s": round(wall, 2),
            "shell_calls": len(shell), "cached": sum(1 for r in shell if r.get("cached_from")),
            "az_run": sum(1 for r, c in zip(shell, commands, strict=True) if not r.get("cached_from") and
                          c.startswith("az ")),
            "captured": any("packet-capture create" in c for c in commands)}


def _median(values: list[float]) -> float:
    return round(float(statistics.median(values)), 2) if values else 0.0


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per latency: medians of each mode, the ratio, and the targets (for the 2 s latency)."""
    out: dict[str, Any] = {}
    for latency in sorted({r["latency_s"] for r in runs}):
        at = [r for r in runs if r["latency_s"] == latency]
        seq = {r["world"]: r for r in at if r["mode"] == "sequential"}
        par = {r["world"]: r for r in at if r["mode"] == "parallel"}
        both = sorted(set(seq) & set(par))
        control = [w for w in both if not par[w]["captured"]]
        s_med = _median([seq[w]["time_to_rca_s"] for w in both])
        p_med = _median([par[w]["time_to_rca_s"] for w in both])
        c_med = _median([par[w]["time_to_rca_s"] for w in control])
        ratio = round(s_med / p_med, 2) if p_med else 0.0
        entry: dict[str, Any] = {"worlds": len(both), "sequential_median_s": s_med, "parallel_median_s": p_med,
                                 "ratio": ratio, "control_plane_worlds": len(control),
                                 "control_plane_parallel_median_s": c_med}
        if latency == 2:
            entry["targets"] = {
                f"median <= {TARGET_MEDIAN_S:g} s": p_med <= TARGET_MEDIAN_S,
                f"control-plane median <= {TARGET_CONTROL_PLANE_S:g} s": (c_med <= TARGET_CONTROL_PLANE_S
                                                                          if control else None),
                f"sequential / parallel >= {TARGET_SPEEDUP:g}": ratio >= TARGET_SPEEDUP,
            }
        out[f"{latency:g}"] = entry
    return out


def timings(worlds: list[str], latencies: list[float]) -> int:
    root = WORK / "diagnose"
    root.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    saved = os.environ.get(LATENCY_ENV)
    try:
        for latency in latencies:
            for world in worlds:
                for parallel in (False, True):
                    run = _run_one(world, latency, parallel, root)
                    runs.append(run)
                    print(f"{world:32} {latency:>3g} s/call {run['mode']:10} {run['time_to_rca_s']:7.2f} s  "
                          f"{run['shell_calls']:3} calls ({run['cached']} cached, {run['az_run']} az run)  "
                          f"{'capture' if run['captured'] else 'control plane'}  exit {run['exit_code']}",
                          flush=True)
    finally:
        if saved is None:
            os.environ.pop(LATENCY_ENV, None)
        else:
            os.environ[LATENCY_ENV] = saved
    summary = summarise(runs)
    print()
    for latency, entry in summary.items():
        print(f"{latency} s per az call over {entry['worlds']} worlds: median sequential {entry['sequential_median_s']} s, "
              f"parallel {entry['parallel_median_s']} s, ratio {entry['ratio']}x; control-plane worlds "
              f"({entry['control_plane_worlds']}) parallel median {entry['control_plane_parallel_median_s']} s")
        for name, met in entry.get("targets", {}).items():
            print(f"  target {name}: {'met' if met else 'n/a' if met is None else 'NOT met'}")
    (WORK / "diagnose_times.json").write_text(json.dumps({"runs": runs, "summary": summary}, indent=2),
                                              encoding="utf-8")
    failed = [r for r in runs if r["exit_code"] != 0]
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worlds", default="", help="comma-separated world names (default: every shipped world)")
    parser.add_argument("--latencies", default="0,2", help="seconds per az call, comma-separated (default 0,2)")
    parser.add_argument("--scores", nargs="*", metavar="WORLD", default=None,
                        help="run the scoring benchmark (ghost-agent eval) on these worlds instead")
    parser.add_argument("--trials", type=int, default=3, help="--scores: trials per world")
    parser.add_argument("--brain", default="playbook", choices=("playbook", "gemini"), help="--scores: the brain")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    if args.scores is not None:
        return ghost_agent(["eval", *args.scores, "--trials", str(args.trials), "--brain", args.brain,
                            "--audit-dir", str(WORK / "diagnose"), "--json", str(WORK / "diagnose.json")])
    worlds = [w.strip() for w in args.worlds.split(",") if w.strip()] or list(scenario_names())
    try:
        latencies = [float(x) for x in args.latencies.split(",") if x.strip()]
    except ValueError:
        parser.error(f"--latencies {args.latencies!r}: seconds, comma-separated")
    unknown = [w for w in worlds if w not in scenario_names()]
    if unknown:
        parser.error(f"unknown world(s): {', '.join(unknown)} (see ghost-agent lab list)")
    return timings(worlds, latencies)


if __name__ == "__main__":
    sys.exit(main())
