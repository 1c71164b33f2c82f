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
from rich.markup import escape

from netghost.agent._paths import audit_dir_problem
from netghost.agent._run import LabSetup, Options, run_agent
from netghost.errors import LabError, NetGhostError
from netghost.governance import read_wal
from netghost.lab import SCALE_ENV, LabState, World, init_state, lab_path_env, load_world, start_resident
from netghost.llm import has_credentials, model_environment
from netghost.orchestrator import Budgets
from netghost.shell import EgressScope, LabConfinement

__all__ = ["add_arguments", "clock_scale", "prepare_lab", "run", "world_scope", "world_symptom"]

DEFAULT_CLOCK_SCALE = 60.0
"""Lab seconds per wall second for lab runs: a 60 s capture takes one second."""
MAX_CLOCK_SCALE = 1e6
"""The lab clock's own limit (``NETGHOST_LAB_CLOCK_SCALE`` must be in (0, 1e6])."""


def _lab_path(env: dict[str, str]) -> str:
    """The lab's bin/ first, then this interpreter's directory (the engine's console script sits there,
    and a venv need not be on PATH), then the rest."""
    parts = env["PATH"].split(os.pathsep)
    return os.pathsep.join([parts[0], str(Path(sys.executable).parent), *parts[1:]])


def prepare_lab(world: str, audit_dir: Path, *, fresh: bool = True,
                clock_scale: float = DEFAULT_CLOCK_SCALE) -> LabSetup:
    """A lab world under ``<audit_dir>/lab`` for ``ghost-agent --lab``: the shell's PATH and variables, the
    orchestrator's lab clock, and the confinement (only what the lab simulates runs without a person; the session
    directory is ``audit_dir``, its captures under ``captures/``, the lab's own state private). ``fresh``
    recreates it; a resume keeps the world as the crash left it. The lab state's resident lab is started (or
    reused); the returned setup's ``close`` stops it.

    Raises:
        LabError: the world does not load, or ``clock_scale`` is not in (0, 1e6].
    """
    if not 0 < clock_scale <= MAX_CLOCK_SCALE:
        raise LabError(f"the lab clock scale must be in (0, {MAX_CLOCK_SCALE:g}] lab seconds per wall second, "
                       f"got {clock_scale:g}")
    state_dir = audit_dir / "lab"
    if fresh or not (state_dir / "meta.json").exists():
        state = init_state(state_dir, world, scale=clock_scale, force=True)
    else:
        state = LabState(state_dir)
    env = lab_path_env(state_dir, base=os.environ)
    env[SCALE_ENV] = str(clock_scale)
    resident = start_resident(state_dir)  # one lab process answers the shims (else one process per call)
    if not resident.running:
        print(f"ghost-agent: lab: the resident lab could not start ({resident.problem}); every lab call runs as "
              "its own process (slower)", file=sys.stderr)

    def sleep(seconds: float) -> None:
        time.sleep(seconds / clock_scale)

    captures = audit_dir / "captures"
    captures.mkdir(mode=0o700, parents=True, exist_ok=True)
    # the lab's bin/ was just written: its launchers' hashes are what the confinement recognises from now on
    confinement = LabConfinement(f"lab:{world}", bin_dir=state_dir / "bin", root=audit_dir, captures=captures, private=[state_dir])
    return LabSetup(
        name=world,
        path=_lab_path(env),
        env={k: v for k, v in env.items() if k.startswith("NETGHOST_LAB")},
        orchestrator={"clock": lambda: state.clock().now_dt(), "sleeper": sleep, "clock_scale": clock_scale,
                      "local_capture_dir": str(captures)},
        confinement=confinement,
        close=resident.stop,
        scope=world_scope(state.world()),
    )


def world_scope(world: World) -> EgressScope:
    """Where the MCP server's probes may go in a lab world: its VNets, its private DNS zones and the hosts
    its symptom names (what a client investigating that world would be investigating)."""
    spec = world.spec
    scope = EgressScope().with_networks(*(p for v in spec.vnets for p in v.address_prefixes))
    scope = scope.with_zones(*(z.name for z in spec.private_dns_zones))
    return scope.with_text(world_symptom(world))


def clock_scale(text: str) -> float:
    """``--clock-scale``: a positive number of lab seconds per wall second, as the lab's clock accepts.

    Why here and not only in the lab: an invalid scale used to reach the lab's ``az``, whose every call then
    failed with ``ERROR: lab: ...``, and the investigation read those failures as an empty world.

    Raises:
        argparse.ArgumentTypeError: not a number, or not in (0, 1e6].
    """
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (lab seconds per wall second, e.g. 60)") from exc
    if not 0 < value <= MAX_CLOCK_SCALE:
        raise argparse.ArgumentTypeError(f"must be in (0, {MAX_CLOCK_SCALE:g}] lab seconds per wall second, got "
                                         f"{text} (60: a 60 s capture takes one second; 1: real time)")
    return value


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
    parser.add_argument("--clock-scale", type=clock_scale, default=DEFAULT_CLOCK_SCALE,
                        help="lab seconds per wall second, a number in (0, 1e6] (60: a 60 s capture takes one second)")


def run(args: argparse.Namespace) -> int:
    """Run the agent on a lab world with its symptom as the problem statement; the agent's exit code."""
    console = Console(highlight=False)
    audit_dir = Path(args.audit_dir).expanduser().resolve()
    problem = audit_dir_problem(audit_dir)
    if problem is not None:
        print(f"ghost-agent demo: {problem.line}", file=sys.stderr)
        return int(problem.code)
    brain = args.brain or ("gemini" if has_credentials(model_environment()) else "playbook")
    try:
        world = load_world(args.scenario)
        intent = world_symptom(world)
        lab = prepare_lab(args.scenario, audit_dir, fresh=not args.keep_lab, clock_scale=args.clock_scale)
        budgets = Budgets.load(os.environ)
    except NetGhostError as exc:
        print(f"ghost-agent demo: {exc}", file=sys.stderr)
        return 2
    console.rule(f"[bold]Network Ghost Agent demo: lab world '{escape(world.spec.name)}' ({brain} brain)")
    console.print(f"The engineer reports: [bold]{escape(intent)}[/]", highlight=False)  # a world file's text
    interactive = sys.stdin.isatty()
    if not args.yes and not interactive:
        console.print("No terminal to ask and --yes not given: RISKY steps (a capture, reading its report) will "
                      "be refused (failing closed). Run `ghost-agent demo --yes` to approve the lab's RISKY steps.")
    try:
        code = run_agent(Options(audit_dir=audit_dir, brain=brain, intent=intent, yes=args.yes, lab=lab,
                                 budgets=budgets), console=console)  # it ends with where everything is
    finally:
        lab.close()
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
