"""Collect every ``az`` argv the product issues in the lab: the test data of the differential test.

Usage (from the repository root)::

    .venv/bin/python tests/lab/arm/collect_argvs.py                  # run everything below afresh
    .venv/bin/python tests/lab/arm/collect_argvs.py --from-audit DIR  # reuse an earlier ``ghost-agent eval`` run

Three sources, written as runs (a world, the cloud faults injected into it, the calls in order with the lab
time each was made at) to ``tests/data/lab_arm/product_argvs.json``, which ``test_differential.py`` replays:

* **the playbook**: ``ghost-agent eval --brain playbook`` over every shipped world (the agent, its playbook
  and the Cloud Orchestrator through the real Safe-Exec Shell against the lab's ``az``), read back from each
  run's shell audit; lab time is wall time since the run's first command times the eval's clock scale;
  local paths under the run's directory become ``{WORK}``;
* **the orchestrator under each cloud fault**: one capture task on ``nsg-deny`` per fault its preflight and
  lifecycle handle (each stop reason, the faults during and after the capture), driven to its end and
  cleaned up, with the lab in-process (lab time is exact);
* **the command builders**: every argv ``netghost.orchestrator._commands`` can build, on a world with a scale
  set and an AKS cluster (``tests/data/lab_arm/worlds/scale-set-and-aks.yaml``, written here from
  ``healthy``);
* **the catalogue**: every read the simulator serves (VMs and their instance views and extensions, NICs with
  their effective rules and routes, NSGs and rules, VNets, subnets and peerings, route tables and routes,
  private DNS, private endpoints, VPN gateways, local gateways and connections, Network Watcher's diagnostics,
  ``resource show``, storage accounts) on every resource of a few rich worlds, found through the
  simulator's own list commands, plus a capture stopped by hand (create, show, stop, show-status, list,
  delete).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shlex
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))  # run as a script: the tests package is importable

from netghost.forensics.cli import main as engine_main  # noqa: E402
from netghost.lab import CloudFaultSpec, init_state  # noqa: E402
from netghost.lab.az import run_az  # noqa: E402
from netghost.lab.world import SCENARIO_DIR  # noqa: E402
from netghost.orchestrator import CloudOrchestrator  # noqa: E402
from netghost.shell import classify  # noqa: E402

DATA = ROOT / "tests" / "data" / "lab_arm"
OUT = DATA / "product_argvs.json"
BUILDERS_WORLD = DATA / "worlds" / "scale-set-and-aks.yaml"
CLOCK_SCALE = 60.0
"""The lab clock scale ``ghost-agent eval`` runs worlds at (``agent.demo.DEFAULT_CLOCK_SCALE``)."""
LAB_START = 1795770000.0  # the replay's start too (differential.LAB_START)
FAULT_RUNS: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
    ("ok", [], {}),
    ("dual-end", [], {"target": "web-vm-01 to redis-primary"}),
    ("key-mode", [], {"storage_auth_mode": "key"}),
    ("vm-deallocated", [{"kind": "vm-stopped", "vm": "web-vm-01"}], {}),
    ("extension-missing", [{"kind": "extension-missing", "vm": "web-vm-01"}], {}),
    ("extension-failed", [{"kind": "extension-failed", "vm": "web-vm-01"}], {}),
    ("wireserver-blocked", [{"kind": "wireserver-blocked", "vm": "web-vm-01"}], {}),
    ("container-missing", [{"kind": "container-missing", "account": "forensicssa", "container": "captures"}], {}),
    ("storage-rbac", [{"kind": "storage-auth-failure", "account": "forensicssa"}], {}),
    ("shared-key-off", [{"kind": "storage-auth-failure", "account": "forensicssa", "auth_mode": "key"}],
     {"storage_auth_mode": "key"}),
    ("no-watcher", [{"kind": "no-network-watcher", "region": "eastus"}], {}),
    ("quota", [{"kind": "capture-quota", "region": "eastus", "limit": 0}], {}),
    ("target-missing", [], {"target": "nope-vm"}),
    ("group-missing", [], {"resource_group": "missing-rg"}),
    ("storage-missing", [], {"storage_account": "nosuchaccount"}),
    ("capture-error", [{"kind": "capture-error", "vm": "web-vm-01", "delay_s": 10}], {}),
    ("early-stop", [{"kind": "capture-early-stop", "vm": "web-vm-01", "delay_s": 20}], {}),
    ("no-traffic", [{"kind": "capture-no-traffic", "vm": "web-vm-01"}], {}),
    ("blob-late", [{"kind": "blob-late", "delay_s": 10}], {}),
    ("poll-transient", [{"kind": "poll-transient", "count": 1}], {}),
    ("download-failure", [{"kind": "download-failure", "count": 1}], {}),
    ("create-unknown-outcome", [{"kind": "create-unknown-outcome", "count": 1}], {}),
]
"""(name, cloud faults, capture_traffic parameters over the default request) per orchestrator run."""


# ---- the playbook ---------------------------------------------------------------------------------
def _world_of(run_dir: Path) -> str:
    return str(json.loads((run_dir / "lab" / "meta.json").read_text(encoding="utf-8"))["scenario"])


def from_eval(eval_dir: Path) -> list[dict[str, Any]]:
    """One run per world from an eval directory's shell audits."""
    runs = []
    for run_dir in sorted(p for p in eval_dir.iterdir() if (p / "lab" / "meta.json").exists()):
        calls: list[dict[str, Any]] = []
        start: datetime | None = None
        for audit in sorted(run_dir.glob("shell_audit_*.jsonl")):
            for line in audit.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                if record.get("status") != "completed" or not record.get("command"):
                    continue
                moment = datetime.fromisoformat(record["ts"].replace("Z", "+00:00"))
                start = start or moment
                argv = shlex.split(record["command"])
                if argv[0] == "az":
                    calls.append({"argv": [a.replace(str(run_dir), "{WORK}") for a in argv[1:]],
                                  "at": round((moment - start).total_seconds() * CLOCK_SCALE, 1)})
        world = _world_of(run_dir)
        runs.append({"name": f"playbook:{world}", "world": world, "faults": [], "calls": calls})
    return runs


# ---- the orchestrator -----------------------------------------------------------------------------
class _Recorder:
    """A shell for the orchestrator: the real classifier, everything approved, the lab in-process; it records
    every az argv with the lab time it ran at."""

    def __init__(self, state_root: Path, work: Path) -> None:
        self.env = {"NETGHOST_LAB_STATE": str(state_root)}
        self.work = work
        self.calls: list[dict[str, Any]] = []
        self.seq = 0
        from netghost.lab import LabState

        self.state = LabState(state_root)

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        command = request["command"]
        self.seq += 1
        argv = list(classify(command).argv)
        if argv[0] == "az":
            self.calls.append({"argv": [a.replace(str(self.work), "{WORK}") for a in argv[1:]],
                               "at": round(self.state.clock().now() - LAB_START, 3)})
            code, out, err = run_az(argv[1:], self.env)
        elif argv[0] == "rm":
            Path(argv[-1]).unlink(missing_ok=True)
            code, out, err = 0, "", ""
        else:  # the forensics engine, in-process
            buf_out, buf_err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(buf_out), contextlib.redirect_stderr(buf_err):
                try:
                    code = engine_main(argv[1:])
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 2
            out, err = buf_out.getvalue(), buf_err.getvalue()
        return {"audit_id": f"c_{self.seq:03d}", "command": command, "status": "completed", "action": "auto_approved",
                "exit_code": code, "output": out, "stderr": err, "error": None, "denial_reason": None}


def _orchestrated(name: str, faults: list[dict[str, Any]], params: dict[str, Any], tmp: Path) -> dict[str, Any]:
    root = tmp / name
    state = init_state(root / "lab", "nsg-deny", lab_start=LAB_START, scale=0.0)
    for fault in faults:
        state.inject_fault(CloudFaultSpec.model_validate(fault))
    shell = _Recorder(state.root, root)

    def sleep(seconds: float) -> None:
        state.advance_clock(seconds)

    from datetime import UTC

    orch = CloudOrchestrator(shell, "collect", task_dir=str(root / "audit"), local_capture_dir=str(root / "captures"),
                             clock=lambda: datetime.fromtimestamp(state.clock().now(), tz=UTC), sleeper=sleep,
                             console=_quiet(), scan_azure_orphans=False)
    request = {"intent": "capture_traffic", "target": params.pop("target", "web-vm-01"),
               "parameters": {"duration_seconds": 60, "storage_account": "forensicssa", "resource_group": "prod-rg",
                              **params},
               "investigation_context": "web-vm-01 cannot reach redis-primary:6379"}
    first = orch.orchestrate(request)
    tasks = [t for t in (first.get("task_id"), (first.get("paired_task") or {}).get("task_id")) if t]
    for _ in range(12):
        state.advance_clock(30)
        states = [orch.orchestrate({"intent": "check_task", "task_id": t}) for t in tasks]
        if all(s["status"] != "task_pending" for s in states):
            break
    for task in tasks:
        orch.orchestrate({"intent": "cleanup_task", "task_id": task})
    orch.close()
    return {"name": f"orchestrator:{name}", "world": "nsg-deny", "faults": faults, "calls": shell.calls}


def _quiet() -> Any:
    from rich.console import Console

    return Console(file=io.StringIO(), width=100)


def from_orchestrator() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="netghost-argvs-") as tmp:
        return [_orchestrated(name, faults, dict(params), Path(tmp)) for name, faults, params in FAULT_RUNS]


# ---- the builders ---------------------------------------------------------------------------------
def builders_world() -> Path:
    """``healthy`` plus the scale set web-vmss (instances 0-2) and the AKS cluster aks-prod."""
    data = yaml.safe_load((SCENARIO_DIR / "healthy.yaml").read_text(encoding="utf-8"))
    data["name"] = "scale-set-and-aks"
    data["aks_clusters"] = [{"name": "aks-prod", "resource_group": "prod-rg"}]
    data["vm_scale_sets"] = [{"name": "web-vmss", "resource_group": "prod-rg"}]
    for index in range(3):
        data["vms"].append({"name": f"web-vmss_{index}", "resource_group": "prod-rg", "scale_set": "web-vmss",
                            "instance_id": str(index), "nics": [{"subnet": "vnet-prod/web",
                                                                 "private_ip": f"10.1.1.{10 + index}"}],
                            "services": [{"port": 443, "name": "nginx"}]})
    BUILDERS_WORLD.parent.mkdir(parents=True, exist_ok=True)
    BUILDERS_WORLD.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return BUILDERS_WORLD


def from_builders() -> dict[str, Any]:
    from tests.orchestrator.test_commands import all_builder_argvs

    world = builders_world()
    calls = [{"argv": [a.replace("/tmp/x.cap", "{WORK}/x.cap") for a in argv[1:]], "at": 0.0}
             for argv in all_builder_argvs()]
    return {"name": "builders", "world": str(world.relative_to(DATA)), "faults": [], "calls": calls}


# ---- the catalogue --------------------------------------------------------------------------------
CATALOGUE_WORLDS = ("vpn-connection-down", "private-endpoint-pending", "healthy-via-appliance", "dns-nxdomain")


def _sim_json(state_root: Path, *argv: str) -> Any:
    code, out, err = run_az([*argv, "-o", "json"], {"NETGHOST_LAB_STATE": str(state_root)})
    if code != 0:
        raise SystemExit(f"catalogue: az {' '.join(argv)} failed: {err}")
    return json.loads(out) if out.strip() else None


def _catalogue_calls(state_root: Path) -> list[list[str]]:
    """One argv per read the simulator serves, on each resource of the world (names from its list commands)."""
    return [["account", "show", "-o", "json"], ["account", "list", "-o", "json"],
            ["network", "watcher", "list", "-o", "json"], ["storage", "account", "list", "-o", "json"],
            *_compute_calls(state_root), *_network_calls(state_root), *_dns_calls(state_root),
            *_gateway_calls(state_root), *_watcher_calls(state_root)]


def _compute_calls(state_root: Path) -> list[list[str]]:
    calls: list[list[str]] = []
    for vm in _sim_json(state_root, "vm", "list"):
        rg, name = vm["resourceGroup"], vm["name"]
        calls += [["vm", "show", "-g", rg, "-n", name, "-o", "json"], ["vm", "show", "-g", rg, "-n", name, "-d", "-o", "json"],
                  ["vm", "get-instance-view", "-g", rg, "-n", name, "-o", "json"],
                  ["vm", "extension", "list", "-g", rg, "--vm-name", name, "-o", "json"],
                  ["resource", "show", "--ids", vm["id"], "-o", "json"]]
        for ext in _sim_json(state_root, "vm", "extension", "list", "-g", rg, "--vm-name", name):
            calls.append(["vm", "extension", "show", "-g", rg, "--vm-name", name, "-n", ext["name"], "-o", "json"])
    return calls


def _network_calls(state_root: Path) -> list[list[str]]:
    calls: list[list[str]] = []
    for nic in _sim_json(state_root, "network", "nic", "list"):
        calls += [["network", "nic", "show", "--ids", nic["id"], "-o", "json"],
                  ["network", "nic", "list-effective-nsg", "--ids", nic["id"], "-o", "json"],
                  ["network", "nic", "show-effective-route-table", "--ids", nic["id"], "-o", "json"]]
    calls.append(["network", "nic", "list", "-o", "json"])
    for nsg in _sim_json(state_root, "network", "nsg", "list"):
        rg, name = nsg["resourceGroup"], nsg["name"]
        calls += [["network", "nsg", "show", "-g", rg, "-n", name, "-o", "json"],
                  ["network", "nsg", "rule", "list", "-g", rg, "--nsg-name", name, "--include-default", "-o", "json"]]
        calls += [["network", "nsg", "rule", "show", "-g", rg, "--nsg-name", name, "-n", rule["name"], "-o", "json"]
                  for rule in nsg["securityRules"][:2]]
    for vnet in _sim_json(state_root, "network", "vnet", "list"):
        rg, name = vnet["resourceGroup"], vnet["name"]
        calls += [["network", "vnet", "show", "-g", rg, "-n", name, "-o", "json"],
                  ["network", "vnet", "subnet", "list", "-g", rg, "--vnet-name", name, "-o", "json"],
                  ["network", "vnet", "peering", "list", "-g", rg, "--vnet-name", name, "-o", "json"]]
        calls += [["network", "vnet", "subnet", "show", "-g", rg, "--vnet-name", name, "-n", sub["name"], "-o", "json"]
                  for sub in vnet["subnets"]]
        calls += [["network", "vnet", "peering", "show", "-g", rg, "--vnet-name", name, "-n", peer["name"], "-o", "json"]
                  for peer in vnet["virtualNetworkPeerings"]]
    for table in _sim_json(state_root, "network", "route-table", "list"):
        rg, name = table["resourceGroup"], table["name"]
        calls += [["network", "route-table", "show", "-g", rg, "-n", name, "-o", "json"],
                  ["network", "route-table", "route", "list", "-g", rg, "--route-table-name", name, "-o", "json"]]
        calls += [["network", "route-table", "route", "show", "-g", rg, "--route-table-name", name, "-n", route["name"],
                   "-o", "json"] for route in table["routes"]]
    return calls


def _dns_calls(state_root: Path) -> list[list[str]]:
    calls: list[list[str]] = []
    for zone in _sim_json(state_root, "network", "private-dns", "zone", "list"):
        rg, name = zone["resourceGroup"], zone["name"]
        for kind in ([], ["a"], ["cname"], ["txt"]):
            calls.append(["network", "private-dns", "record-set", *kind, "list", "-g", rg, "-z", name, "-o", "json"])
        calls.append(["network", "private-dns", "link", "vnet", "list", "-g", rg, "-z", name, "-o", "json"])
        calls += [["network", "private-dns", "record-set", "a", "show", "-g", rg, "-z", name, "-n", rec["name"], "-o",
                   "json"] for rec in _sim_json(state_root, "network", "private-dns", "record-set", "a", "list", "-g", rg,
                                                "-z", name)]
    for endpoint in _sim_json(state_root, "network", "private-endpoint", "list"):
        calls.append(["network", "private-endpoint", "show", "--ids", endpoint["id"], "-o", "json"])
    return calls


def _gateway_calls(state_root: Path) -> list[list[str]]:
    calls: list[list[str]] = []
    groups = sorted({vm["resourceGroup"] for vm in _sim_json(state_root, "vm", "list")})
    for rg in groups:
        for group in ("vnet-gateway", "local-gateway", "vpn-connection"):
            for item in _sim_json(state_root, "network", group, "list", "-g", rg):
                calls.append(["network", group, "show", "--ids", item["id"], "-o", "json"])
                if group == "vnet-gateway":
                    calls.append(["network", "vnet-gateway", "list-learned-routes", "--ids", item["id"], "-o", "json"])
            calls.append(["network", group, "list", "-g", rg, "-o", "json"])
    return calls


def _watcher_calls(state_root: Path) -> list[list[str]]:
    calls: list[list[str]] = []
    vms = _sim_json(state_root, "vm", "list")
    if len(vms) >= 2:
        first, second = vms[0], vms[1]
        calls += [["network", "watcher", "test-connectivity", "-g", first["resourceGroup"], "--source-resource",
                   first["name"], "--dest-resource", second["id"], "--dest-port", "443", "-o", "json"],
                  ["network", "watcher", "show-security-group-view", "-g", first["resourceGroup"], "--vm", first["name"],
                   "-o", "json"],
                  ["network", "watcher", "show-topology", "-g", first["resourceGroup"], "-o", "json"]]
    return calls


def _manual_capture(world: str) -> list[list[str]]:
    """A capture an engineer drives by hand: create, show, stop, show-status, list, delete."""
    from netghost.lab import load_world

    w = load_world(world)
    vm = next(v for v in w.spec.vms if v.scale_set is None and any(e.startswith("NetworkWatcher") for e in v.extensions))
    account = next(a for a in w.spec.storage_accounts if a.resource_group == vm.resource_group)
    location = w.vm_location(vm)
    pc = ["network", "watcher", "packet-capture"]
    return [[*pc, "create", "-g", vm.resource_group, "-n", "ghost_manual", "--vm", vm.name, "--storage-account",
             account.name, "--time-limit", "600", "-o", "json"],
            [*pc, "show", "-l", location, "-n", "ghost_manual", "-o", "json"],
            [*pc, "stop", "-l", location, "-n", "ghost_manual"],
            [*pc, "show-status", "-l", location, "-n", "ghost_manual", "-o", "json"],
            [*pc, "list", "-l", location, "-o", "json"],
            [*pc, "delete", "-l", location, "-n", "ghost_manual"],
            [*pc, "show", "-l", location, "-n", "ghost_manual", "-o", "json"]]


def from_catalogue() -> list[dict[str, Any]]:
    runs = []
    with tempfile.TemporaryDirectory(prefix="netghost-argvs-") as tmp:
        for world in CATALOGUE_WORLDS:
            state = init_state(Path(tmp) / world, world, lab_start=LAB_START, scale=0.0)
            calls = [{"argv": argv, "at": 0.0} for argv in _catalogue_calls(state.root)]
            calls += [{"argv": argv, "at": 60.0 * i} for i, argv in enumerate(_manual_capture(world))]
            runs.append({"name": f"catalogue:{world}", "world": world, "faults": [], "calls": calls})
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from-audit", type=Path, help="an earlier `ghost-agent eval --audit-dir` directory")
    args = parser.parse_args(argv)
    if args.from_audit:
        runs = from_eval(args.from_audit)
    else:
        with tempfile.TemporaryDirectory(prefix="netghost-argvs-") as tmp:
            subprocess.run([str(Path(sys.executable).parent / "ghost-agent"), "eval", "--brain", "playbook",
                            "--audit-dir", tmp], check=True)
            runs = from_eval(Path(tmp))
    runs += from_orchestrator()
    runs.append(from_builders())
    runs += from_catalogue()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = {"v": 2, "about": "az argvs the product issued in lab runs (tests/lab/arm/collect_argvs.py)", "runs": runs}
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"{sum(len(r['calls']) for r in runs)} az calls in {len(runs)} runs -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
