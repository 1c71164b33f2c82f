"""``ghost-agent demo``: an investigation against the offline lab, with no cloud and no key.

The lab plays two parts here and keeps them apart: the *world* (an ``az`` simulator and probe shims
first on the shell's PATH, answering from a scenario with one injected fault) and the *engineer*
who reports the symptom ("web-vm-01 cannot reach redis-primary on port 6379"). The investigator is
the fixed playbook in :mod:`netghost.agent.lab_playbook` until the Gemini loop lands; every command
it issues goes through the real Safe-Exec Shell, so RISKY steps (starting a capture, downloading
it) stop at the human gate. ``--yes`` answers that gate with "approve" for lab runs only; without
a terminal and without ``--yes`` the gate fails closed and the demo reports what it could not do.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from netghost.agent._approval import closed_gate
from netghost.agent._run import LabSetup
from netghost.agent.lab_playbook import PlaybookResult, Symptom, run_playbook
from netghost.contracts import ApprovalRequest
from netghost.governance import verify
from netghost.lab import SCALE_ENV, LabState, World, init_state, lab_path_env, load_world, scenario_names
from netghost.shell import HitlCallback, HitlDecision, SafeExecShell, terminal_hitl_callback

__all__ = ["add_arguments", "prepare_lab", "run"]

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
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the demo's options."""
    parser.add_argument("--scenario", default="nsg-deny", help="lab world to investigate (see `ghost-agent lab list`)")
    parser.add_argument("--audit-dir", default="./audit", help="where the audit log, lab state and evidence go")
    parser.add_argument("--yes", action="store_true",
                        help="approve the lab's RISKY commands without asking (lab only; the audit records it)")
    parser.add_argument("--clock-scale", type=float, default=DEFAULT_CLOCK_SCALE,
                        help="lab seconds per wall second (60: a 60 s capture takes one second)")


def _symptom(world: World) -> Symptom:
    """The engineer's complaint: the flow that breaks, or the first flow in a healthy world."""
    spec = world.spec
    flows = {f.name: f for f in spec.traffic}
    broken = flows.get(spec.fault.flow) if spec.fault is not None else None
    flow = broken or next((f for f in spec.traffic if f.client in {v.name for v in spec.vms}), None)
    if flow is None:
        raise SystemExit(f"ghost-agent demo: scenario {spec.name} has no VM-to-VM traffic to investigate")
    vm = next(v for v in spec.vms if v.name == flow.client)
    account = spec.storage_accounts[0].name if spec.storage_accounts else "forensicssa"
    return Symptom(client=flow.client, resource_group=vm.resource_group, server=flow.server,
                   port=flow.port, storage_account=account)


def _lab_approver(console: Console) -> HitlCallback:
    def approve(request: ApprovalRequest) -> HitlDecision:
        console.print(f"  [yellow]RISKY[/] {escape(request.what)}\n  [dim]approved by --yes (lab demo)[/]")
        return HitlDecision.approve(reason="approved by --yes for the offline lab demo")
    return approve


def _print_step(console: Console, command: str, response: dict[str, Any]) -> None:
    colour = {"SAFE": "green", "RISKY": "yellow", "FORBIDDEN": "red"}[response["classification"]]
    outcome = response["status"] if response["exit_code"] in (None, 0) else f"exit {response['exit_code']}"
    console.print(f"[dim]{response['audit_id']}[/] [{colour}]{response['classification']:<9}[/] "
                  f"{response['action']:<13} {outcome:<9} {escape(command)}", soft_wrap=True)
    if response["status"] in ("denied", "blocked"):
        why = response.get("denial_reason") or response.get("risk_reason") or response.get("stderr") or ""
        console.print(f"  [red]refused:[/] {escape(str(why).strip())}")


def _report_files(result: PlaybookResult) -> list[Path]:
    """The engine's outputs beside the downloaded capture (semantic JSON, report, executive summary)."""
    cap = result.capture_file
    if cap is None:
        return []
    names = (f"{cap.stem}_executive_summary.md", f"{cap.stem}_forensic_report.md", f"{cap.stem}_semantic.json")
    return [p for p in (cap.parent / n for n in names) if p.exists()]


def _report(console: Console, result: PlaybookResult, audit_path: Path, *, asked: bool) -> None:
    console.rule("[bold]Findings (each cites its audit record)")
    if not result.conclusions:
        console.print("No conclusive evidence gathered (see the denied or failed steps above).")
    for text, audit_id in result.conclusions:
        console.print(f"- {escape(text)}  [dim]\\[{audit_id}][/]")
    if result.semantic is not None:
        summary = result.semantic.get("summary", {})
        table = Table(title="Capture summary", show_header=False)
        for key in ("packets", "tcp_conversations", "rst_packets", "syn_without_synack"):
            table.add_row(key, str(summary.get(key)))
        console.print(table)
    files = _report_files(result)
    if files:
        console.print("Forensic outputs of the capture:")
        for path in [result.capture_file, *files]:
            console.print(f"  {path}", soft_wrap=True)
    denied = any(step.get("status") == "denied" for step in result.steps)
    if denied and not asked:
        console.print("Some steps need a human's approval and there was no terminal to ask, so they were "
                      "refused (fail closed). Run `ghost-agent demo --yes` to approve the lab's RISKY steps.")
    report = verify(audit_path)
    state = "intact" if report.ok else f"BROKEN ({len(report.breaks)} breaks)"
    console.print(f"Audit chain {audit_path}: {report.records} records, {state}, head {report.head_sha256}")


def run(args: argparse.Namespace) -> int:
    """Run the lab demo; exit 0 when the investigation ran and the audit chain is intact."""
    console = Console(highlight=False)
    if args.scenario not in scenario_names():
        print(f"ghost-agent demo: unknown scenario {args.scenario!r}; choose one of: "
              + ", ".join(scenario_names()), file=sys.stderr)
        return 2
    audit_dir = Path(args.audit_dir).resolve()
    session_id = time.strftime("ghost_%Y%m%d_%H%M%S", time.gmtime())
    lab = prepare_lab(args.scenario, audit_dir, clock_scale=args.clock_scale)
    symptom = _symptom(load_world(args.scenario))
    if args.yes:
        callback = _lab_approver(console)
    elif sys.stdin.isatty():
        callback = terminal_hitl_callback
    else:
        callback = closed_gate
    console.rule(f"[bold]Network Ghost Agent demo: lab world '{args.scenario}'")
    console.print(f"Symptom reported: [bold]{symptom.sentence()}[/] (session {session_id})")
    with SafeExecShell(session_id, callback, audit_dir=audit_dir, path=lab.path, env=lab.env, cwd=audit_dir) as shell:
        result = run_playbook(symptom, shell, audit_dir / "evidence" / session_id,
                              on_step=lambda c, r: _print_step(console, c, r))
        audit_path = shell.audit_path
    _report(console, result, audit_path, asked=callback is terminal_hitl_callback or args.yes)
    return 0 if verify(audit_path).ok else 1
