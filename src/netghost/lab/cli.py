"""``ghost-agent lab list | show | reset``: look at the shipped worlds and (re)start a lab.

* ``list`` — the shipped scenarios and their one-line description;
* ``show [SCENARIO]`` — a world's inventory, NSG rules and route tables (:mod:`netghost.lab._show`) and,
  for the running lab, its clock and captures
  (never the fault or the answers: the lab is for investigating);
* ``reset SCENARIO`` — create or recreate the lab state (default ``./audit/lab``) and its ``bin/``;
* ``inject KIND`` — add a cloud-API fault (see :mod:`netghost.lab.az._cloud_faults`) to the running lab.
"""

from __future__ import annotations

import argparse
import os
import sys

from netghost.errors import LabError
from netghost.lab._show import inventory
from netghost.lab.az import capture_status, settle
from netghost.lab.bin import create_bin_dir
from netghost.lab.clock import format_azure_time, scale_from_env
from netghost.lab.state import LabState, default_state_dir, init_state
from netghost.lab.world import CLOUD_FAULT_KINDS, CloudFaultSpec, load_world, scenario_names
from netghost.safetext import show_hidden

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``list``/``show``/``reset`` to the ``lab`` subparser."""
    parser.add_argument("--state-dir", help="lab state directory (default: $NETGHOST_LAB_STATE or <audit-dir>/lab)")
    parser.add_argument("--audit-dir", default="./audit", help="audit directory the lab state lives under")
    sub = parser.add_subparsers(dest="lab_command", metavar="ACTION")
    sub.add_parser("list", help="list the shipped scenario worlds")
    show = sub.add_parser("show", help="show a world (default: the running lab's)")
    show.add_argument("scenario", nargs="?", help="a scenario name or YAML path")
    reset = sub.add_parser("reset", help="create or recreate the lab state from a scenario")
    reset.add_argument("scenario", help="a scenario name or YAML path")
    reset.add_argument("--clock-scale", type=float, default=None,
                       help="lab seconds per wall second (default: $NETGHOST_LAB_CLOCK_SCALE or 1)")
    inject = sub.add_parser("inject", help="inject a cloud-API fault into the running lab")
    inject.add_argument("kind", choices=CLOUD_FAULT_KINDS)
    for flag in ("--vm", "--region", "--account", "--container", "--error", "--message"):
        inject.add_argument(flag)
    inject.add_argument("--count", type=int)
    inject.add_argument("--delay-s", type=float)
    inject.add_argument("--limit", type=int)
    inject.add_argument("--auth-mode", choices=("login", "key"))
    inject.add_argument("--writes-only", action="store_true", default=None)
    inject.add_argument("--power-state", choices=("stopped", "deallocated"))
    inject.add_argument("--stop-reason")


def _state_dir(args: argparse.Namespace) -> str:
    return str(args.state_dir or default_state_dir(os.environ, args.audit_dir))


def run(args: argparse.Namespace) -> int:
    """Run one ``lab`` action; returns the exit code (2 for usage errors, 1 for lab errors)."""
    action = getattr(args, "lab_command", None)
    try:
        if action == "list":
            for name in scenario_names():
                print(show_hidden(f"{name:<30} {load_world(name).spec.description}"))
            return 0
        if action == "reset":
            directory = _state_dir(args)
            scale = args.clock_scale
            state = init_state(directory, args.scenario, force=True,
                               scale=scale if scale is not None else _env_scale())
            bin_dir = create_bin_dir(state.root)
            print(f"lab '{state.world().name}' ready in {state.root}")
            print(f"put {bin_dir} first on PATH to use its az")
            return 0
        if action == "inject":
            state = LabState(_state_dir(args)).require()
            fields = {k: getattr(args, k) for k in ("kind", "vm", "region", "account", "container", "error",
                                                     "message", "count", "delay_s", "limit", "auth_mode",
                                                     "writes_only", "power_state", "stop_reason")}
            fault = CloudFaultSpec.model_validate({k: v for k, v in fields.items() if v is not None})
            state.inject_fault(fault)
            print(f"injected {fault.kind} into {state.root}")
            return 0
        if action == "show":
            if args.scenario:
                print(show_hidden("\n".join(inventory(load_world(args.scenario)))))
                return 0
            state = LabState(_state_dir(args)).require()
            with state.locked():
                clock = state.clock()
                now = clock.now()
                settle(state, now)
                print(show_hidden("\n".join(inventory(state.world()))))
                print(f"  lab time {format_azure_time(now)} (x{clock.scale:g})")
                for key, rec in sorted(state.captures().items()):
                    st = capture_status(rec, now)
                    print(f"  capture {key} on {rec['vm']}: {st['status']} {st['stop_reason'] or ''}".rstrip())
                for account, containers in sorted(state.storage().items()):
                    for container, blobs in sorted(containers.items()):
                        for blob, meta in sorted(blobs.items()):
                            print(f"  blob {account}/{container}/{blob} ({meta['size']} bytes)")
                for fault in state.cloud_faults():
                    print(f"  cloud fault {fault.kind} " + " ".join(
                        f"{k}={v}" for k, v in fault.model_dump(exclude_none=True, exclude={"kind"}).items()))
            return 0
    except LabError as exc:
        print(f"ghost-agent lab: {exc}", file=sys.stderr)
        return 1
    print("usage: ghost-agent lab {list,show,reset,inject} ...", file=sys.stderr)
    return 2


def _env_scale() -> float:
    return scale_from_env(os.environ)
