"""``az network watcher packet-capture create|show|show-status|list|stop|delete``.

Real syntax (AZURE.md T3-T8): ``create`` takes ``-g`` (the VM's group) and resolves the region from
the VM; every other verb takes ``-l/--location`` and ``-n`` and addresses the regional watcher
``NetworkWatcher_<loc>`` in ``NetworkWatcherRG``. Passing ``--resource-group`` to them is an
unrecognized argument (exit 2), exactly as the real CLI.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import etag
from netghost.lab.az._capture_store import STARTUP_S, capture_status, place_window
from netghost.lab.az._cloud_faults import (
    WATCHER_EXTENSIONS,
    capture_conflict,
    capture_quota,
    create_lost,
    extension_missing,
    find_fault,
    internal_server_error,
)
from netghost.lab.az._context import AzContext, Command, find_vm
from netghost.lab.az._errors import arm_error, plain_error
from netghost.lab.az._vmss import find_scale_set
from netghost.lab.az._watcher import normalise_location, require_extension, require_watcher
from netghost.lab.clock import format_azure_time
from netghost.lab.world import Vm

__all__ = ["COMMANDS", "WIRESERVER_IP", "capture_doc"]

_MAX_TIME = 18000
_REAL_QUOTA = 10000  # [DOC] parallel sessions per region per subscription
_WRITE = "Microsoft.Network/networkWatchers/packetCaptures/write"
WIRESERVER_IP = "168.63.129.16"  # the host agent (WireServer) the capture extension reports through


def _key(location: str, name: str) -> str:
    return f"{location.lower()}/{name}"


def _capture_id(ctx: AzContext, rec: dict[str, Any]) -> str:
    return ctx.world.rid("NetworkWatcherRG", "Microsoft.Network/networkWatchers",
                         f"{rec['watcher']}/packetCaptures/{rec['name']}")


def capture_doc(ctx: AzContext, rec: dict[str, Any]) -> dict[str, Any]:
    """The session as ``create``/``show``/``list`` print it (AZURE.md §3.1)."""
    storage: dict[str, Any] = {}
    if rec.get("storage_id"):
        storage["storageId"] = rec["storage_id"]
        storage["storagePath"] = rec["storage_path"]
    if rec.get("file_path"):
        storage["filePath"] = rec["file_path"]
        storage.setdefault("storagePath", rec.get("storage_path") or "")
    return {
        "bytesToCapturePerPacket": rec["capture_size"],
        "etag": etag(rec["name"], str(rec["created"])),
        "filters": rec["filters"],
        "id": _capture_id(ctx, rec),
        "name": rec["name"],
        "provisioningState": "Succeeded",
        "resourceGroup": "NetworkWatcherRG",
        "scope": {"exclude": rec.get("exclude", []), "include": rec.get("include", [])},
        "storageLocation": storage,
        "target": rec["target"],
        "targetType": rec["target_type"],
        "timeLimitInSeconds": rec["time_limit"],
        "totalBytesPerSession": rec["capture_limit"],
    }


def _int_arg(args: ParsedArgs, dest: str, flag: str, default: int, maximum: int) -> int:
    raw = args[dest]
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise plain_error(f"InvalidArgumentValue: {flag}: Invalid format: '{raw}' is not a valid integer") from exc
    if value > maximum:
        raise plain_error(f"InvalidArgumentValue: {flag}: Invalid format: '{raw}' is greater than {maximum}")
    if value < 0:
        raise plain_error(f"InvalidArgumentValue: {flag}: Invalid format: '{raw}' is less than 0")
    return value


def _default_blob(ctx: AzContext, rg: str, target: _Target, now: float) -> str:
    dt = datetime.fromtimestamp(now, tz=UTC)
    kind = "virtualmachinescalesets" if target.target_type == "AzureVMSS" else "virtualmachines"
    return (f"subscriptions/{ctx.world.sub_id}/resourcegroups/{rg.lower()}/providers/microsoft.compute/"
            f"{kind}/{target.name.lower()}/{dt:%Y/%m/%d}/packetcapture_{dt:%H_%M_%S}_{dt.microsecond // 1000:03d}.cap")


def _storage_target(ctx: AzContext, args: ParsedArgs, rg: str, target: _Target) -> dict[str, Any]:
    """storageId/storagePath plus the (account, container, blob) the capture will write."""
    account_arg, path, file_path = args["storage_account"], args["storage_path"], args["file_path"]
    usage = "usage error: --storage-account NAME_OR_ID [--storage-path PATH] [--file-path PATH] | --file-path PATH"
    if file_path and not file_path.endswith(".cap"):
        raise plain_error("usage error: --file-path PATH must end with the '*.cap' extension")
    if not account_arg:
        if path or not file_path:
            raise plain_error(usage)
        return {"file_path": file_path, "storage_path": "", "account": None}
    if account_arg.startswith("/subscriptions/"):
        storage_id, account = account_arg, account_arg.rstrip("/").split("/")[-1]
    else:
        account = account_arg
        storage_id = ctx.world.rid(rg, "Microsoft.Storage/storageAccounts", account_arg)
    now = ctx.now()
    if path:
        rest = path.split(".blob.core.windows.net/", 1)[1] if ".blob.core.windows.net/" in path else ""
        container, _, blob = rest.partition("/")
        if not container:
            raise plain_error(f"--storage-path {path} is not a blob container URL")
        if not blob or "." not in blob.rsplit("/", 1)[-1]:
            blob = (blob.rstrip("/") + "/" if blob else "") + _default_blob(ctx, rg, target, now)
            path = f"https://{account}.blob.core.windows.net/{container}/{blob}"
    else:
        container, blob = "network-watcher-logs", _default_blob(ctx, rg, target, now)
        path = f"https://{account}.blob.core.windows.net/{container}/{blob}"
        if any(a.name == account for a in ctx.world.spec.storage_accounts):
            ctx.state.ensure_container(account, container)  # the service creates it if missing
    return {"storage_id": storage_id, "storage_path": path, "account": account, "container": container,
            "blob": blob, "file_path": file_path}


def _check_storage_reference(ctx: AzContext, storage: dict[str, Any], cap_id: str) -> None:
    """NRP rejects a storageId that does not exist: a bare account name is expanded with the *VM's*
    group (AZURE.md T3), so an account in another group must be passed as a full ID."""
    storage_id = storage.get("storage_id")
    if not storage_id:
        return
    parts = storage_id.split("/")
    account = next((a for a in ctx.world.spec.storage_accounts if a.name == parts[-1]), None)
    if account is None or len(parts) < 5 or account.resource_group.lower() != parts[4].lower():
        raise arm_error("InvalidResourceReference",
                        f"Resource {storage_id} referenced by resource {cap_id} was not found. Please make sure "
                        "that the referenced resource exists, and that both resources are in the same region.", 1)


@dataclass(frozen=True)
class _Target:
    """What a create captures: one VM, or the chosen instances of a scale set."""

    target_id: str
    target_type: str
    rg: str
    name: str  # the VM's or the scale set's name (the default blob path names it)
    location: str
    vms: list[Vm]
    extensions: list[str]


def _resolve_target(ctx: AzContext, args: ParsedArgs) -> _Target:
    """``--vm``/``--target`` as a VM, or with ``--target-type AzureVMSS`` a scale set and its
    ``--include``/``--exclude`` instance scope (AZURE.md §2 "VMSS support")."""
    rg = args["resource_group"]
    if args["target_type"] != "AzureVMSS":
        target_arg = args["vm"] or args["target"]
        if not target_arg:
            raise plain_error("usage error: --vm NAME_OR_ID | --target NAME_OR_ID")
        vm = find_vm(ctx, rg, target_arg)
        return _Target(ctx.world.vm_id(vm), "AzureVM", vm.resource_group, vm.name, ctx.world.vm_location(vm), [vm],
                       list(vm.extensions))
    if not args["target"]:  # the wrapper reads args.target for a scale set (Azure/azure-cli#31442)
        raise plain_error("usage error: --vm NAME_OR_ID | --target NAME_OR_ID")
    vmss = find_scale_set(ctx, rg, args["target"])
    include, exclude = args["include"] or [], args["exclude"] or []
    chosen = [v for v in ctx.world.instances(vmss)
              if (not include or v.instance_id in include) and v.instance_id not in exclude]
    return _Target(ctx.world.vmss_id(vmss), "AzureVMSS", vmss.resource_group, vmss.name,
                   ctx.world.scale_set_location(vmss), chosen, list(vmss.extensions))


def _parse_filters(raw: str | None) -> list[dict[str, Any]]:
    if not raw:
        return []
    try:
        filters = json.loads(raw) if not raw.startswith("@") else json.loads(Path(raw[1:]).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise plain_error(f"Failed to parse '--filters' argument: {exc}") from exc
    if not isinstance(filters, list) or not all(isinstance(f, dict) for f in filters):
        raise plain_error("Failed to parse '--filters' argument: expected a JSON list of filter objects")
    return [{"protocol": "Any", **f} for f in filters]


def _check_room(ctx: AzContext, location: str, name: str, watcher: str) -> None:
    """A live session of the same name, or the region's session quota, refuses the create."""
    faults = ctx.state.cloud_faults()
    captures = ctx.state.captures()
    if _key(location, name) in captures:
        raise capture_conflict(name, watcher, find_fault(faults, "capture-name-conflict"))
    quota = find_fault(faults, "capture-quota", region=location)
    limit = quota.limit if quota else _REAL_QUOTA
    now = ctx.now()
    live = [r for r in captures.values() if r["location"] == location.lower()
            and capture_status(r, now)["status"] in ("NotStarted", "Running")]
    if len(live) >= limit:
        raise capture_quota(location, limit, quota)


def _blocks_wireserver(ctx: AzContext, vm: Vm) -> bool:
    """The VM's effective outbound NSG denies the host agent at 168.63.129.16 (80 or 32526/tcp)."""
    nic = vm.nics[0]
    return any(ctx.world.evaluate_nsg(vm, "Outbound", protocol="Tcp", local_ip=nic.private_ip, local_port=None,
                                      remote_ip=WIRESERVER_IP, remote_port=port, nic=nic).access == "Deny"
               for port in (80, 32526))


def _agent_fate(ctx: AzContext, target: _Target, time_limit: int, now: float) -> dict[str, Any]:
    """When and how the session fails or stops early, from the VMs' state and the injected faults.

    An agent that cannot run (VM not running, extension Failed, WireServer blocked) leaves the
    session in ``Error``/``AgentStopped`` at once; ARM still accepts it, as the real service does.
    """
    faults = ctx.state.cloud_faults()
    running = [v for v in target.vms if v.power_state == "running"
               and find_fault(faults, "extension-failed", vm=v.name) is None and not _blocks_wireserver(ctx, v)]
    if not running:
        return {"error_at": now, "error_kind": "AgentStopped", "instances": []}
    fate: dict[str, Any] = {"instances": [v.name for v in running]}
    error = find_fault(faults, "capture-error", vm=target.vms[0].name, region=target.location)
    if error is not None:
        fate["error_at"] = now + min(float(time_limit), error.delay_s)
        fate["error_kind"] = error.error or "CaptureFailed"
    early = find_fault(faults, "capture-early-stop", vm=target.vms[0].name, region=target.location)
    if early is not None:
        fate["early_stop_at"] = now + STARTUP_S + min(float(time_limit), early.delay_s)
        fate["early_stop_reason"] = early.stop_reason
    return fate


def _create(ctx: AzContext, args: ParsedArgs) -> Any:
    name = args["name"]
    target = _resolve_target(ctx, args)
    watcher = require_watcher(ctx, target.location)
    time_limit = _int_arg(args, "time_limit", "--time-limit", _MAX_TIME, _MAX_TIME)
    capture_limit = _int_arg(args, "capture_limit", "--capture-limit", 1073741824, 4294967295)
    capture_size = _int_arg(args, "capture_size", "--capture-size", 0, 4294967295)
    storage = _storage_target(ctx, args, args["resource_group"], target)
    cap_id = ctx.world.rid("NetworkWatcherRG", "Microsoft.Network/networkWatchers", f"{watcher}/packetCaptures/{name}")
    ctx.check_action(_WRITE, cap_id)
    _check_storage_reference(ctx, storage, cap_id)
    if target.target_type == "AzureVM":
        require_extension(ctx, target.vms[0])
    elif not any(e.lower() in WATCHER_EXTENSIONS for e in target.extensions):
        raise extension_missing(target.target_id, find_fault(ctx.state.cloud_faults(), "extension-missing"))
    _check_room(ctx, target.location, name, watcher)
    filters = _parse_filters(args["filters"])
    now = ctx.now()
    rec: dict[str, Any] = {
        "name": name, "location": target.location.lower(), "watcher": watcher, "vm": target.name,
        "rg": target.rg, "target": target.target_id, "target_type": target.target_type, "time_limit": time_limit,
        "capture_limit": capture_limit, "capture_size": capture_size, "filters": filters,
        "created": now, "stopped_at": None, "blob_written": False,
        "include": args["include"] or [], "exclude": args["exclude"] or [], **storage,
    }
    fate = _agent_fate(ctx, target, time_limit, now)
    if target.target_type == "AzureVMSS":
        rec["instances"] = fate["instances"]
    rec.update({k: v for k, v in fate.items() if k != "instances"})
    if not args["no_wait"]:
        # az waited for the LRO: by the time it prints, the session is already Running
        rec["created"] = now - STARTUP_S
    rec["created_steady"] = ctx.clock.at_wall_speed() - (now - float(rec["created"]))
    captures = ctx.state.captures()
    rec["data_start"] = place_window(captures, rec)
    captures[_key(target.location, name)] = rec
    ctx.state.save_captures(captures)
    unknown = find_fault(ctx.state.cloud_faults(), "create-unknown-outcome", region=target.location)
    if unknown is not None and ctx.state.bump_counter("create-unknown-outcome") <= unknown.count:
        raise create_lost(unknown)  # the session exists: a later `show` finds it
    return None if args["no_wait"] else capture_doc(ctx, rec)


def _lookup(ctx: AzContext, args: ParsedArgs) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    location = normalise_location(args["location"])
    watcher = require_watcher(ctx, location)
    captures = ctx.state.captures()
    rec = captures.get(_key(location, args["name"]))
    if rec is None:
        rid = ctx.world.rid("NetworkWatcherRG", "Microsoft.Network/networkWatchers",
                            f"{watcher}/packetCaptures/{args['name']}")
        raise arm_error("NotFound", f"Resource {rid} not found.")
    return captures, rec


def _poll_flake(ctx: AzContext) -> None:
    fault = find_fault(ctx.state.cloud_faults(), "poll-transient")
    if fault is not None and ctx.state.bump_counter("poll-transient") <= fault.count:
        raise internal_server_error()


def _show(ctx: AzContext, args: ParsedArgs) -> Any:
    _captures, rec = _lookup(ctx, args)
    _poll_flake(ctx)
    return capture_doc(ctx, rec)


def _show_status(ctx: AzContext, args: ParsedArgs) -> Any:
    _captures, rec = _lookup(ctx, args)
    _poll_flake(ctx)
    st = capture_status(rec, ctx.now())
    doc: dict[str, Any] = {
        "captureStartTime": format_azure_time(float(rec["created"]) + STARTUP_S),
        "id": _capture_id(ctx, rec),
        "name": rec["name"],
        "packetCaptureError": st["errors"],
        "packetCaptureStatus": st["status"],
        "resourceGroup": "NetworkWatcherRG",
    }
    if st["stop_reason"]:
        doc["stopReason"] = st["stop_reason"]
    return doc


def _list(ctx: AzContext, args: ParsedArgs) -> Any:
    location = normalise_location(args["location"])
    require_watcher(ctx, location)
    return [capture_doc(ctx, r) for r in ctx.state.captures().values() if r["location"] == location.lower()]


def _stop(ctx: AzContext, args: ParsedArgs) -> Any:
    captures, rec = _lookup(ctx, args)
    if capture_status(rec, ctx.now())["status"] in ("NotStarted", "Running"):
        rec["stopped_at"] = ctx.now()
        ctx.state.save_captures(captures)
    return None


def _delete(ctx: AzContext, args: ParsedArgs) -> Any:
    location = normalise_location(args["location"])
    require_watcher(ctx, location)
    captures = ctx.state.captures()
    rec = captures.pop(_key(location, args["name"]), None)
    if rec is not None:  # [RUN] a second delete of a missing name also exits 0
        ctx.state.save_captures(captures)
    return None


_LOC = Arg("--location", "-l", required=True)
_NAME = Arg("--name", "-n", required=True)
_NOWAIT = Arg("--no-wait", kind="optbool")


def _ex(verb: str, text: str) -> tuple[tuple[str, str], ...]:
    return ((text, f"az network watcher packet-capture {verb} -l westus -n MyPacketCapture"),)


COMMANDS = [
    Command(CommandSpec(("network", "watcher", "packet-capture", "create"), (
        _NAME, Arg("--resource-group", "-g", required=True), Arg("--capture-limit"), Arg("--capture-size"),
        Arg("--filters"), _NOWAIT, Arg("--target"), Arg("--target-type", choices=("AzureVM", "AzureVMSS"), default="AzureVM"),
        Arg("--time-limit"), Arg("--vm"), Arg("--exclude", kind="many"), Arg("--include", kind="many"),
        Arg("--file-path"), Arg("--storage-account"), Arg("--storage-path"),
    ), (("Create a packet capture session on a VM.",
         "az network watcher packet-capture create -g MyResourceGroup -n MyPacketCaptureName --vm MyVm --storage-account MyStorageAccount"),),
        policy=True), _create),
    Command(CommandSpec(("network", "watcher", "packet-capture", "show"), (_LOC, _NAME),
                        _ex("show", "Show a packet capture session.")), _show),
    Command(CommandSpec(("network", "watcher", "packet-capture", "show-status"), (_LOC, _NAME, _NOWAIT),
                        _ex("show-status", "Show the status of a packet capture session."), policy=True), _show_status),
    Command(CommandSpec(("network", "watcher", "packet-capture", "list"), (_LOC,),
                        (("List all packet capture sessions within a region.",
                          "az network watcher packet-capture list -l westus"),)), _list),
    Command(CommandSpec(("network", "watcher", "packet-capture", "stop"), (_LOC, _NAME, _NOWAIT),
                        _ex("stop", "Stop a packet capture session."), policy=True), _stop),
    Command(CommandSpec(("network", "watcher", "packet-capture", "delete"), (_LOC, _NAME, _NOWAIT),
                        _ex("delete", "Delete a packet capture session."), policy=True), _delete),
]

