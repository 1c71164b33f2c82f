"""``az network watcher packet-capture create|show|show-status|list|stop|delete``.

Real syntax (AZURE.md T3-T8): ``create`` takes ``-g`` (the VM's group) and resolves the region from
the VM; every other verb takes ``-l/--location`` and ``-n`` and addresses the regional watcher
``NetworkWatcher_<loc>`` in ``NetworkWatcherRG``. Passing ``--resource-group`` to them is an
unrecognized argument (exit 2), exactly as the real CLI.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import etag
from netghost.lab.az._capture_store import STARTUP_S, capture_status
from netghost.lab.az._cloud_faults import capture_conflict, capture_quota, find_fault, internal_server_error
from netghost.lab.az._context import AzContext, Command, find_vm
from netghost.lab.az._errors import arm_error, plain_error
from netghost.lab.az._watcher import normalise_location, require_extension, require_watcher
from netghost.lab.clock import format_azure_time

__all__ = ["COMMANDS", "capture_doc"]

_MAX_TIME = 18000
_REAL_QUOTA = 10000  # [DOC] parallel sessions per region per subscription
_WRITE = "Microsoft.Network/networkWatchers/packetCaptures/write"


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


def _default_blob(ctx: AzContext, rg: str, vm_name: str, now: float) -> str:
    dt = datetime.fromtimestamp(now, tz=UTC)
    return (f"subscriptions/{ctx.world.sub_id}/resourcegroups/{rg.lower()}/providers/microsoft.compute/"
            f"virtualmachines/{vm_name.lower()}/{dt:%Y/%m/%d}/packetcapture_{dt:%H_%M_%S}_{dt.microsecond // 1000:03d}.cap")


def _storage_target(ctx: AzContext, args: ParsedArgs, rg: str, vm_name: str) -> dict[str, Any]:
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
            blob = (blob.rstrip("/") + "/" if blob else "") + _default_blob(ctx, rg, vm_name, now)
            path = f"https://{account}.blob.core.windows.net/{container}/{blob}"
    else:
        container, blob = "network-watcher-logs", _default_blob(ctx, rg, vm_name, now)
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


def _create(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, name = args["resource_group"], args["name"]
    target_arg = args["target"] if args["target_type"] == "AzureVMSS" else (args["vm"] or args["target"])
    if not target_arg:
        raise plain_error("usage error: --vm NAME_OR_ID | --target NAME_OR_ID")
    if args["target_type"] == "AzureVMSS":
        raise arm_error("ResourceNotFound", f"The Resource 'Microsoft.Compute/virtualMachineScaleSets/{target_arg}' "
                        f"under resource group '{rg}' was not found. For more details please go to "
                        "https://aka.ms/ARMResourceNotFoundFix")
    vm = find_vm(ctx, rg, target_arg)
    location = ctx.world.vm_location(vm)
    watcher = require_watcher(ctx, location)
    time_limit = _int_arg(args, "time_limit", "--time-limit", _MAX_TIME, _MAX_TIME)
    capture_limit = _int_arg(args, "capture_limit", "--capture-limit", 1073741824, 4294967295)
    capture_size = _int_arg(args, "capture_size", "--capture-size", 0, 4294967295)
    storage = _storage_target(ctx, args, rg, vm.name)
    cap_id = ctx.world.rid("NetworkWatcherRG", "Microsoft.Network/networkWatchers", f"{watcher}/packetCaptures/{name}")
    ctx.check_action(_WRITE, cap_id)
    _check_storage_reference(ctx, storage, cap_id)
    require_extension(ctx, vm)
    faults = ctx.state.cloud_faults()
    captures = ctx.state.captures()
    now = ctx.now()
    if _key(location, name) in captures:
        raise capture_conflict(name, watcher, find_fault(faults, "capture-name-conflict"))
    quota = find_fault(faults, "capture-quota", region=location)
    limit = quota.limit if quota else _REAL_QUOTA
    live = [r for r in captures.values() if r["location"] == location.lower()
            and capture_status(r, now)["status"] in ("NotStarted", "Running")]
    if len(live) >= limit:
        raise capture_quota(location, limit, quota)
    filters = []
    if args["filters"]:
        raw = args["filters"]
        try:
            filters = json.loads(raw) if not raw.startswith("@") else json.loads(open(raw[1:]).read())  # noqa: SIM115
        except (OSError, json.JSONDecodeError) as exc:
            raise plain_error(f"Failed to parse '--filters' argument: {exc}") from exc
        if not isinstance(filters, list) or not all(isinstance(f, dict) for f in filters):
            raise plain_error("Failed to parse '--filters' argument: expected a JSON list of filter objects")
        filters = [{"protocol": "Any", **f} for f in filters]
    rec: dict[str, Any] = {
        "name": name, "location": location.lower(), "watcher": watcher, "vm": vm.name, "rg": vm.resource_group,
        "target": ctx.world.vm_id(vm), "target_type": "AzureVM", "time_limit": time_limit,
        "capture_limit": capture_limit, "capture_size": capture_size, "filters": filters,
        "created": now, "stopped_at": None, "blob_written": False,
        "include": args["include"] or [], "exclude": args["exclude"] or [], **storage,
    }
    error = find_fault(faults, "capture-error", vm=vm.name, region=location)
    if vm.power_state != "running":  # ARM accepts the session; the agent on a stopped VM never starts it
        rec["error_at"] = now
        rec["error_kind"] = "AgentStopped"
    elif error is not None:
        rec["error_at"] = now + min(float(time_limit), error.delay_s)
        rec["error_kind"] = error.error or "CaptureFailed"
    if not args["no_wait"]:
        # az waited for the LRO: by the time it prints, the session is already Running
        rec["created"] = now - STARTUP_S
    captures[_key(location, name)] = rec
    ctx.state.save_captures(captures)
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

