"""``ghost-agent demo``: the real agent investigating an offline lab world, with no cloud and no key.

The lab plays two parts here and keeps them apart: the *world* (an ``az`` simulator and probe shims
first on the shell's PATH, answering from a scenario with one injected fault) and the *engineer*
who reports the world's symptom ("web-vm-01 cannot reach redis-primary on port 6379"). The
investigator is the agent itself, exactly as ``ghost-agent --lab WORLD --brain playbook --intent
SYMPTOM`` runs it (Gemini with ``--brain gemini`` and a key): the same loop, Safe-Exec Shell, approval
box, orchestrator and RCA. ``--yes`` approves the lab's RISKY steps; without a terminal and without
``--yes`` the gate fails closed and the demo says so and how to approve. It ends by printing where
everything is: the RCA (Markdown and HTML), the session file, the audit chains and the forensic reports.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from rich.console import Console

from netghost.agent._run import LabSetup, Options, run_agent
from netghost.errors import NetGhostError
from netghost.governance import read_wal, verify
from netghost.lab import SCALE_ENV, LabState, World, init_state, lab_path_env, load_world
from netghost.llm import has_credentials
from netghost.shell import EgressScope

__all__ = ["add_arguments", "prepare_lab", "run", "world_scope", "world_symptom"]

DEFAULT_CLOCK_SCALE = 60.0
"""Lab seconds per wall second for lab runs: a 60 s capture takes one second."""


def _lab_path(env: dict[str, str]) -> str:
    """The lab's bin/ first, then this interpreter's directory (the engine's console script sits there,
    and a venv need not be on PATH), then the rest."""
    parts = env["PATH"].split(os.pathsep)
    return os.pathsep.join([parts[0], str(Path(sys.executable).parent), *parts[1:]])


def prepare_lab(world: str, audit_dir: Path, *, fresh: bool = True,
                clock_scale: float = DEFAULT_CLOCK_SCALE) -> LabSetup:
    """A lab world under ``<audit_dir>/lab`` for ``ghost-agent --lab``: the shell's PATH and variables and
    the orchestrator's lab clock. ``fresh`` recreates it; a resume keeps the world as the crash left it.

    Raises:
        LabError: the world does not load.
    """
    state_dir = audit_dir / "lab"
    if fresh or not (state_dir / "meta.json").exists():
        state = init_state(state_dir, world, scale=clock_scale, force=True)
    else:
        state = LabState(state_dir)
    env = lab_path_env(state_dir, base=os.environ)
    env[SCALE_ENV] = str(clock_scale)

    def sleep(seconds: float) -> None:
        time.sleep(seconds / clock_scale)

    return LabSetup(
        name=world,
        path=_lab_path(env),
        env={k: v for k, v in env.items() if k.startswith("NETGHOST_LAB")},
        orchestrator={"clock": lambda: state.clock().now_dt(), "sleeper": sleep,
                      "local_capture_dir": str(audit_dir / "captures")},
        scope=world_scope(state.world()),
    )


def world_scope(world: World) -> EgressScope:
    """Where the MCP server's probes may go in a lab world: its VNets, its private DNS zones and the hosts
    its symptom names (what a client investigating that world would be investigating)."""
    spec = world.spec
    scope = EgressScope().with_networks(*(p for v in spec.vnets for p in v.address_prefixes))
    scope = scope.with_zones(*(z.name for z in spec.private_dns_zones))
    return scope.with_text(world_symptom(world))


def world_symptom(world: World) -> str:
    """The engineer's complaint: the world's ``symptom``, else "client cannot reach server on port P" for
    the broken flow (the first flow from a VM in a healthy world)."""
    spec = world.spec
    if spec.symptom:
        return spec.symptom
    flows = {f.name: f for f in spec.traffic}
    broken = flows.get(spec.fault.flow) if spec.fault is not None else None
    flow = broken or next((f for f in spec.traffic if f.client in {v.name for v in spec.vms}), None)
    if flow is None:
        raise NetGhostError(f"lab world {spec.name} has no VM-to-VM traffic to investigate")
    return f"{flow.client} cannot reach {flow.server_name or flow.server} on port {flow.port}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the demo's options."""
    parser.add_argument("--scenario", default="nsg-deny",
                        help="lab world to investigate: a shipped name (`ghost-agent lab list`) or a YAML path")
    parser.add_argument("--audit-dir", default="./audit", help="where the audit logs, session, RCA and lab state go")
    parser.add_argument("--yes", action="store_true",
                        help="approve the lab's RISKY commands without asking (lab only; the audit records it)")
    parser.add_argument("--brain", choices=("gemini", "playbook"), default=None,
                        help="who investigates (default: gemini when a key is set, else the offline playbook)")
    parser.add_argument("--keep-lab", action="store_true",
                        help="keep the lab state under AUDIT_DIR/lab (faults added with `ghost-agent lab inject` "
                             "stay) instead of starting the world afresh")
    parser.add_argument("--clock-scale", type=float, default=DEFAULT_CLOCK_SCALE,
                        help="lab seconds per wall second (60: a 60 s capture takes one second)")


def _paths(console: Console, audit_dir: Path) -> None:
    """Where everything the run wrote is, each path on its own line."""
    session_file = audit_dir / "ghost_session.json"
    try:
        session = json.loads(session_file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return
    sid = str(session.get("session_id", ""))
    console.rule("[bold]Where everything is")
    rca = session.get("rca_report_path")
    rows: list[tuple[str, str | None, str]] = [
        ("RCA (Markdown)", rca, ""), ("RCA (HTML)", str(Path(rca).with_suffix(".html")) if rca else None, ""),
        ("Session", str(session_file), "")]
    for label, name in (("Shell audit", f"shell_audit_{sid}.jsonl"), ("Conversation", f"ghost_turns_{sid}.jsonl"),
                        ("Task registry", f"orchestrator_tasks_{sid}.jsonl")):
        path = audit_dir / name
        if path.exists():
            report = verify(path)
            rows.append((label, str(path), f"  ({report.records} records, chain {'intact' if report.ok else 'BROKEN'})"))
    registry = audit_dir / f"orchestrator_tasks_{sid}.jsonl"
    reports: dict[str, None] = {}
    for record in read_wal(registry).records if registry.exists() else []:
        for key in ("report_path", "semantic_json_path"):
            if record.get(key):
                reports[str(record[key])] = None
    for report_path in reports:
        summary = report_path.replace("_forensic_report.md", "_executive_summary.md")
        html = report_path.replace("_forensic_report.md", "_forensic_report.html")
        rows += [("Forensic output", p, "") for p in (report_path, summary, html)]
        fleet = Path(report_path).parent / "fleet"  # a scale set's capture: the report ranking its instances
        rows += [("Fleet report", str(fleet / name), "") for name in ("fleet_report.md", "fleet_report.html")]
    shown: set[str] = set()
    for label, value, extra in rows:
        if value and value not in shown and Path(value).exists():
            shown.add(value)
            console.print(f"{label + ':':<17} {value}{extra}", soft_wrap=True, markup=False)


def run(args: argparse.Namespace) -> int:
    """Run the agent on a lab world with its symptom as the problem statement; the agent's exit code."""
    console = Console(highlight=False)
    audit_dir = Path(args.audit_dir).resolve()
    brain = args.brain or ("gemini" if has_credentials(os.environ) else "playbook")
    try:
        world = load_world(args.scenario)
        intent = world_symptom(world)
        lab = prepare_lab(args.scenario, audit_dir, fresh=not args.keep_lab, clock_scale=args.clock_scale)
    except NetGhostError as exc:
        print(f"ghost-agent demo: {exc}", file=sys.stderr)
        return 2
    console.rule(f"[bold]Network Ghost Agent demo: lab world '{world.spec.name}' ({brain} brain)")
    console.print(f"The engineer reports: [bold]{intent}[/]", highlight=False)
    interactive = sys.stdin.isatty()
    if not args.yes and not interactive:
        console.print("No terminal to ask and --yes not given: RISKY steps (a capture, reading its report) will "
                      "be refused (failing closed). Run `ghost-agent demo --yes` to approve the lab's RISKY steps.")
    code = run_agent(Options(audit_dir=audit_dir, brain=brain, intent=intent, yes=args.yes, lab=lab),
                     console=console)
    _paths(console, audit_dir)
    if not args.yes and not interactive and _refused(audit_dir):
        console.print("Some steps were refused because nobody could be asked. Run `ghost-agent demo --yes` "
                      "to approve the lab's RISKY steps.")
    return code


def _refused(audit_dir: Path) -> bool:
    """Did the closed gate refuse anything in this run (its shell audit)?"""
    try:
        sid = json.loads((audit_dir / "ghost_session.json").read_text(encoding="utf-8"))["session_id"]
    except (OSError, KeyError, json.JSONDecodeError):
        return False
    path = audit_dir / f"shell_audit_{sid}.jsonl"
    return path.exists() and any(r.get("action") == "user_denied" for r in read_wal(path).records)
