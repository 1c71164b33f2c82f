"""The Cloud Orchestrator end to end in the lab: a 60 s capture at lab clock scale 600, single and dual-end.

For each mode: ``capture_traffic`` -> ``check_task`` until COMPLETED (dual-end: both tasks, comparison
analysis) -> ``cleanup_task`` until DONE and the lab holds no ``ghost_*`` capture or blob. Prints wall
time, shell calls, approvals (every RISKY prompt, approved by a callback), the time spent inside
``shell.execute`` (az, the engine, rm) and the orchestrator's own overhead (everything else: planning,
the policy, the registry WAL with fsync, hashing, responses). The lab clock runs 600x, so the 60 s
capture takes 0.1 s of wall time and the orchestrator's backoff sleeps are 1/600 of their nominal value.

Shells: ``inproc`` (default: the real classifier and the lab ``az`` in this process, the engine's CLI
in-process; measures the orchestrator, not process start-up) or ``real`` (the Safe-Exec Shell, one
process per command through the lab's ``bin/``; ~1.4 s per ``az`` on a small machine).
Run: ``.venv/bin/python bench/orchestrator_bench.py [--shell inproc|real] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from netghost.contracts.cabincrew import ApprovalRequest
from netghost.forensics.cli import main as engine_main
from netghost.lab import LabState, init_state, lab_path_env
from netghost.lab.az import run_az
from netghost.orchestrator import CloudOrchestrator
from netghost.shell import HitlDecision, SafeExecShell, classify

SCALE = 600.0
PARAMS = {"duration_seconds": 60, "storage_account": "forensicssa", "resource_group": "prod-rg"}


class Approver:
    """Approves every prompt and counts them."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, _request: ApprovalRequest) -> HitlDecision:
        self.count += 1
        return HitlDecision.approve()


class InProcShell:
    """The real classifier, the callback for RISKY, the lab az / engine / rm in this process."""

    def __init__(self, env: dict[str, str], approve: Approver) -> None:
        self.env, self.approve = env, approve

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        cls = classify(request["command"])
        if cls.verdict == "FORBIDDEN":
            return {"status": "denied", "action": "blocked", "exit_code": None}
        action = "auto_approved"
        if cls.verdict == "RISKY":
            self.approve(ApprovalRequest(plan_token="sha256:" + "0" * 64, what=request["command"],
                                         why=request.get("reasoning", ""), risk=cls.reason,
                                         requested_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
            action = "user_approved"
        argv = list(cls.argv)
        if argv[0] == "az":
            code, out, err = run_az(argv[1:], self.env)
        elif argv[0] == "rm":
            Path(argv[-1]).unlink(missing_ok=True)
            code, out, err = 0, "", ""
        else:
            buf, ebuf = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(ebuf):
                code = engine_main(argv[1:])
            out, err = buf.getvalue(), ebuf.getvalue()
        return {"status": "completed", "action": action, "exit_code": code, "output": out, "stderr": err}


class Timed:
    """Counts shell calls and the wall time spent inside them."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls, self.seconds = inner, 0, 0.0

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        try:
            return dict(self.inner.execute(request))
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


def _drive(orch: CloudOrchestrator, task_ids: list[str], sleep: Callable[[float], None]) -> None:
    for task_id in task_ids:
        for _ in range(200):
            resp = orch.orchestrate({"intent": "check_task", "task_id": task_id})
            if resp["status"] != "task_pending" or resp.get("result"):
                break
            sleep(1.0)  # the Brain's pause between checks: one lab second... at 600x
        if resp["status"] == "task_pending":  # dual-end: the first end waits for its partner; check again
            resp = orch.orchestrate({"intent": "check_task", "task_id": task_id})
    for task_id in task_ids:
        final = orch.orchestrate({"intent": "check_task", "task_id": task_id})
        assert final["status"] == "task_completed", final
        cleaned = orch.orchestrate({"intent": "cleanup_task", "task_id": task_id})
        assert cleaned["cleanup_status"] == "completed", cleaned


def one_run(mode: str, shell_kind: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        state: LabState = init_state(root / "lab", "nsg-deny", scale=SCALE)
        approve = Approver()
        if shell_kind == "real":
            env = lab_path_env(state.root, base=os.environ)
            parts = env["PATH"].split(os.pathsep)
            path = os.pathsep.join([parts[0], str(Path(sys.executable).parent), *parts[1:]])
            inner: Any = SafeExecShell("bench", approve, audit_dir=root / "audit", path=path, cwd=root,
                                       env={k: v for k, v in env.items() if k.startswith("NETGHOST_LAB")})
        else:
            inner = InProcShell({"NETGHOST_LAB_STATE": str(state.root)}, approve)
        shell = Timed(inner)

        slept = [0.0]

        def sleep(seconds: float) -> None:
            slept[0] += seconds / SCALE
            time.sleep(seconds / SCALE)

        start = time.perf_counter()
        orch = CloudOrchestrator(shell, "bench", task_dir=str(root / "audit"), local_capture_dir=str(root / "caps"),
                                 clock=lambda: state.clock().now_dt(), sleeper=sleep,
                                 console=Console(file=io.StringIO()))
        target = "web-vm-01 to redis-primary" if mode == "dual" else "web-vm-01"
        first = orch.orchestrate({"intent": "capture_traffic", "target": target, "parameters": PARAMS,
                                  "investigation_context": "bench"})
        ids = [first["task_id"]] + ([first["paired_task"]["task_id"]] if mode == "dual" else [])
        _drive(orch, ids, sleep)
        wall = time.perf_counter() - start
        left = [*state.captures().values()] + [b for cs in state.storage().values() for bs in cs.values()
                                                  for b in bs]
        assert not left, left
        orch.close()
        if shell_kind == "real":
            inner.close()
        return {"wall": wall, "calls": shell.calls, "approvals": approve.count, "shell_s": shell.seconds,
                "sleep_s": slept[0], "own_s": wall - shell.seconds - slept[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shell", choices=("inproc", "real"), default="inproc")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"orchestrator_bench: 60 s lab capture at clock scale {SCALE:g}, shell={args.shell}, "
          f"median of {args.runs} runs")
    print(f"{'mode':<8}{'wall s':>9}{'shell calls':>13}{'approvals':>11}{'in shell s':>12}{'asleep s':>10}"
          f"{'own s':>9}{'own ms/call':>13}")
    for mode in ("single", "dual"):
        runs = [one_run(mode, args.shell) for _ in range(args.runs)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"{mode:<8}{med['wall']:>9.2f}{med['calls']:>13.0f}{med['approvals']:>11.0f}{med['shell_s']:>12.2f}"
              f"{med['sleep_s']:>10.2f}{med['own_s']:>9.2f}{1000 * med['own_s'] / med['calls']:>13.1f}")


if __name__ == "__main__":
    main()
