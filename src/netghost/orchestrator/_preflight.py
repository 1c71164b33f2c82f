"""DETECTING: resolve the target and check, before anything is created, that a capture can work.

Users of Network Watcher keep hitting captures that fail or stop without saying why. Each check
here ends the task with a *named* stop reason and a fix the user can act on: the VM must be
running, the Network Watcher agent extension installed and provisioned, a watcher present in the
VM's region, the effective NSG must let the VM reach the host agent 168.63.129.16, and the storage
container must exist and accept the chosen ``--auth-mode``. Errors Azure reports later (at create
or while the capture runs) are named with the same vocabulary (:func:`name_az_error`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

from netghost.contracts import TaskRecord, TaskState
from netghost.orchestrator import _commands as cmd
from netghost.orchestrator._plan import bindings, is_member, storage_account_ref
from netghost.orchestrator._runtime import Ran, Runtime, parse_json

__all__ = ["STOP_REASONS", "blocking_rule", "detect", "fail", "name_az_error"]

STOP_REASONS: Mapping[str, tuple[str, str]] = {
    "target_not_found": ("the target VM was not found", "check the VM name and its resource group"),
    "resource_group_not_found": ("the resource group does not exist", "check the resource_group parameter"),
    "permission_denied": ("Azure refused the request (AuthorizationFailed)",
                          "grant the identity Network Contributor (or a role with the named action)"),
    "aks_not_supported": ("the target is an AKS cluster: AKS capture pipeline not yet available",
                          "capture on the cluster's node VMs (its node resource group) instead"),
    "vm_not_running": ("the VM is not running, so the capture agent cannot start",
                       "start it: az vm start -g {rg} -n {target}"),
    "vmss_not_running": ("no instance of the scale set is running, so no capture agent can start",
                         "start them: az vmss start -g {rg} -n {target}"),
    "extension_missing": ("the Network Watcher agent extension is not installed on the VM",
                          "az vm extension set -g {rg} --vm-name {target} --publisher "
                          "Microsoft.Azure.NetworkWatcher --name NetworkWatcherAgentLinux (or ...Windows)"),
    "extension_not_provisioned": ("the Network Watcher agent extension is installed but not provisioned",
                                  "reinstall it (az vm extension set ...) and wait for provisioningState "
                                  "Succeeded"),
    "network_watcher_not_enabled": ("Network Watcher is not enabled in the VM's region",
                                    "az network watcher configure -g NetworkWatcherRG -l {location} --enabled true"),
    "nsg_blocks_host_agent": ("the VM's effective NSG denies outbound traffic to the host agent 168.63.129.16",
                              "allow outbound TCP to 168.63.129.16 (ports 80, 8037) above rule {rule}"),
    "storage_not_found": ("the storage account {sa} does not exist in this subscription",
                          "name an account in the VM's region (az storage account list --query "
                          "\"[?primaryLocation=='{location}'].name\" -o tsv), or create one: az storage account "
                          "create -g {rg} -n <name> -l {location} --sku Standard_LRS"),
    "storage_container_missing": ("the storage container does not exist",
                                  "create it: az storage container create --account-name {sa} -n {container} "
                                  "--auth-mode login"),
    "storage_auth_failed": ("the storage account refused --auth-mode {auth}",
                            "az role assignment create --assignee <the identity az is logged in as> --role "
                            "'Storage Blob Data Contributor' --scope {account_id} (or, where the account allows "
                            "shared keys, storage_auth_mode='key')"),
    "storage_inaccessible": ("the storage account could not be checked", "see the az error text"),
    "quota_exceeded": ("the region's packet-capture quota is used up",
                       "delete finished captures (cleanup_task) or wait for running ones to end"),
    "capture_name_conflict": ("a capture with this name already exists", "retry: a new task gets a new name"),
    "create_failed": ("Azure refused to create the capture", "see the az error text"),
    "detection_failed": ("the target could not be resolved", "see the az error text"),
    "policy_denied": ("the preflight policy denied the capture plan", "see the policy reasons"),
}
"""name -> (what happened, what the user can do); ``{rg}``, ``{target}`` ... are filled from the task."""

_AZ_NAMES: tuple[tuple[str, str], ...] = (
    ("ResourceGroupNotFound", "resource_group_not_found"),
    ("ResourceNotFound", "target_not_found"),
    ("AuthorizationFailed", "permission_denied"),
    ("network watcher is not enabled", "network_watcher_not_enabled"),
    ("NetworkWatcherExtension", "extension_missing"),
    ("QuotaExceeded", "quota_exceeded"),
    ("AlreadyExists", "capture_name_conflict"),
    ("Conflict", "capture_name_conflict"),
    ("You do not have the required permissions", "storage_auth_failed"),
)


def name_az_error(stderr: str, default: str) -> str:
    """The stop-reason name for an az error text (``default`` when none applies)."""
    return next((name for needle, name in _AZ_NAMES if needle in stderr), default)


def _explain(record: TaskRecord, reason: str, extra: Mapping[str, str] | None = None) -> str:
    what, fix = STOP_REASONS.get(reason, (reason, ""))
    params = record.parameters
    values = {"rg": params.resource_group if params else "", "target": record.target or "",
              "location": record.location or "", "sa": record.storage_account or "",
              "container": record.storage_container, "auth": record.storage_auth_mode or "login", "rule": "",
              "account_id": f"<the id of storage account {record.storage_account or ''}>"}
    values.update(extra or {})
    return f"{what.format(**values)}. Fix: {fix.format(**values)}" if fix else what.format(**values)


def fail(rt: Runtime, record: TaskRecord, reason: str, *, detail: str = "",
         extra: Mapping[str, str] | None = None) -> TaskRecord:
    """End a task in DETECTING (nothing was created, so cleanup is ``skipped``)."""
    text = _explain(record, reason, extra) + (f" ({detail})" if detail else "")
    rt.say(f"[red]{record.task_id}: FAILED[/] {reason}: {text}")
    return rt.move(record, TaskState.FAILED, failure_reason=reason, error_detail=text, cleanup_status="skipped")


def _port_in(ranges: Iterable[str], ports: Iterable[int]) -> bool:
    wanted = list(ports)
    for text in ranges:
        if text in ("*", ""):
            return True
        low, _, high = text.partition("-")
        if low.isdigit() and any(int(low) <= p <= int(high or low) for p in wanted):
            return True
    return False


def _covers(prefixes: Iterable[str], address: str) -> bool:
    ip = ipaddress.ip_address(address)
    for prefix in prefixes:
        if prefix in ("*", "0.0.0.0/0"):
            return True
        try:
            if ip in ipaddress.ip_network(prefix, strict=False):
                return True
        except ValueError:  # a service tag (VirtualNetwork, Internet, ...) does not cover the host agent
            continue
    return False


def blocking_rule(doc: Any, address: str = cmd.HOST_AGENT_IP, ports: tuple[int, ...] = (80, 8037)) -> str | None:
    """The outbound rule that denies ``address`` (highest priority match), from list-effective-nsg output.

    Only the NSGs' own rules count: Azure lets the host agent through whatever the default rules say
    (``DenyAllOutBound`` does not stop it), but an explicit user rule can.
    """
    groups = [g for g in (doc.get("value") or [] if isinstance(doc, dict) else []) if isinstance(g, dict)]
    for group in groups:  # a truncated list ends in a marker string: only dicts are rules
        rules = [r for r in group.get("effectiveSecurityRules") or [] if isinstance(r, dict)
                 and r.get("direction") == "Outbound"
                 and not str(r.get("name", "")).startswith("defaultSecurityRules/")]
        for rule in sorted(rules, key=lambda r: int(r.get("priority", 65535))):
            prefixes = [*(rule.get("destinationAddressPrefixes") or [rule.get("destinationAddressPrefix", "")]),
                        *(rule.get("expandedDestinationAddressPrefix") or [])]
            port_ranges = rule.get("destinationPortRanges") or [rule.get("destinationPortRange", "*")]
            if rule.get("protocol", "All") in ("All", "Tcp", "*") and _covers(prefixes, address) and \
                    _port_in(port_ranges, ports):
                return str(rule.get("name")) if rule.get("access") == "Deny" else None
    return None


def _resolve(rt: Runtime, record: TaskRecord) -> tuple[TaskRecord, dict[str, Any] | None, Ran]:
    """``vm show``; when Azure has no such VM, ``vmss show``; then ``aks show`` (seed: "detect target type")."""
    params = record.parameters
    assert params is not None  # capture tasks always carry their parameters
    record, ran = rt.run(record, cmd.vm_show(params.resource_group, record.target or ""),
                         f"Resolve {record.target}'s id, region and power state before a capture.")
    if ran.outcome == "failed" and "(ResourceNotFound)" in ran.stderr and "/virtualMachines/" in ran.stderr:
        record, again = rt.run(record, cmd.vmss_show(params.resource_group, record.target or ""),
                               f"{record.target} is not a VM: is it a scale set?")
        if again.outcome == "ok":
            record = record.model_copy(update={"target_type": "vmss"})
            ran = again
        elif again.outcome == "failed" and "(ResourceNotFound)" in again.stderr:
            record, cluster = rt.run(record, cmd.aks_show(params.resource_group, record.target or ""),
                                     f"{record.target} is neither a VM nor a scale set: is it an AKS cluster?")
            if cluster.outcome == "ok":
                record = record.model_copy(update={"target_type": "aks"})
                ran = cluster
    doc = parse_json(ran.output) if ran.outcome == "ok" else None
    return record, doc if isinstance(doc, dict) else None, ran


def detect(rt: Runtime, record: TaskRecord) -> TaskRecord:
    """Run every DETECTING check; the task ends APPROVED, or FAILED with a named reason."""
    record, doc, ran = _resolve(rt, record)
    if doc is None:
        reason = name_az_error(ran.stderr, "detection_failed") if ran.outcome == "failed" else "detection_failed"
        return fail(rt, record, reason, detail=ran.error_text())
    record = rt.move(record, TaskState.DETECTING, vm_id=doc.get("id"), location=str(doc.get("location") or "").lower(),
                     target_type=record.target_type or "vm")
    if record.target_type == "aks":  # seed 000 edge case: detected, not captured; a paired VM task goes on alone
        return fail(rt, record, "aks_not_supported")
    if record.target_type == "vm" and doc.get("powerState") not in (None, "VM running"):
        return fail(rt, record, "vm_not_running", detail=str(doc.get("powerState")))
    checks = (_check_instances, _check_extension, _check_watcher, _check_vmss_nsg, _check_storage) \
        if record.target_type == "vmss" else (_check_extension, _check_watcher, _check_nsg, _check_storage)
    for check in checks:
        record, stop, detail, extra = check(rt, record, doc)
        if stop is not None:
            return fail(rt, record, stop, detail=detail, extra=extra)
    return rt.move(record, TaskState.APPROVED)


Check = tuple[TaskRecord, str | None, str, dict[str, str] | None]


def _check_extension(rt: Runtime, record: TaskRecord, _doc: dict[str, Any]) -> Check:
    if record.parameters is None:
        return record, None, "", None
    lister = cmd.vmss_extension_list if record.target_type == "vmss" else cmd.extension_list
    record, ran = rt.run(record, lister(record.parameters.resource_group, record.target or ""),
                         "Check that the Network Watcher agent extension is installed (captures need it).")
    if ran.outcome != "ok":
        return record, "detection_failed", ran.error_text(), None
    found = [e for e in parse_json(ran.output) or [] if isinstance(e, dict) and e.get("publisher") == cmd.NW_PUBLISHER]
    if not found:
        return record, "extension_missing", "", None
    if all(e.get("state") != "Succeeded" for e in found):
        return record, "extension_not_provisioned", f"provisioningState {found[0].get('state')}", None
    return record, None, "", None


def _check_watcher(rt: Runtime, record: TaskRecord, _doc: dict[str, Any]) -> Check:
    record, ran = rt.run(record, cmd.watcher_list(), "Check that Network Watcher is enabled in the VM's region.")
    if ran.outcome != "ok":
        return record, "detection_failed", ran.error_text(), None
    regions = {str(r).lower() for r in parse_json(ran.output) or []}
    return (record, None, "", None) if record.location in regions else \
        (record, "network_watcher_not_enabled", f"region {record.location}", None)


def _blocking(rt: Runtime, record: TaskRecord, ran: Ran, doc: Any, where: str) -> Check | None:
    """The stop for an NSG document that denies the host agent (None: it does not, or it was not readable)."""
    if ran.outcome != "ok":  # needs an extra RBAC action: a warning, not a stop
        rt.say(f"[yellow]{record.task_id}: {where} not readable[/] ({ran.error_text()})")
        return None
    rule = blocking_rule(doc)
    meta = ran.response.get("output_metadata")
    if rule is None and isinstance(meta, dict) and meta.get("truncation_applied"):
        rt.say(f"[yellow]{record.task_id}: {where} came back truncated; rules past the cut "
               f"were not checked for a block of {cmd.HOST_AGENT_IP}[/]")
    return (record, "nsg_blocks_host_agent", f"rule {rule}", {"rule": rule}) if rule is not None else None


def _check_nsg(rt: Runtime, record: TaskRecord, doc: dict[str, Any]) -> Check:
    for nic in doc.get("nics") or []:
        record, ran = rt.run(record, cmd.nic_effective_nsg(str(nic)),
                             "Check that the VM's effective NSG lets the capture agent reach 168.63.129.16.")
        stop = _blocking(rt, record, ran, parse_json(ran.output), f"the effective NSG of {nic}")
        if stop is not None:
            return stop
    return record, None, "", None


def _ids(value: Any) -> list[str]:
    """ARM ids out of a projected (possibly nested, null-holding) list, in order, once each."""
    flat = [v for item in (value or []) for v in (item if isinstance(item, list) else [item])]
    return list(dict.fromkeys(str(v) for v in flat if isinstance(v, str) and v))


def _check_vmss_nsg(rt: Runtime, record: TaskRecord, doc: dict[str, Any]) -> Check:
    """A scale set: the NSGs its NIC model and its subnets attach must not deny 168.63.129.16 outbound."""
    nsgs = _ids(doc.get("nsgs"))
    for subnet in _ids(doc.get("subnets")):
        record, ran = rt.run(record, cmd.subnet_nsg(subnet), "Which NSG guards the scale set's subnet?")
        found = parse_json(ran.output) if ran.outcome == "ok" else None
        if ran.outcome != "ok":
            rt.say(f"[yellow]{record.task_id}: subnet {subnet} not readable[/] ({ran.error_text()})")
        nsgs += [n for n in _ids([found.get("nsg")] if isinstance(found, dict) else []) if n not in nsgs]
    for nsg in nsgs:
        record, ran = rt.run(record, cmd.nsg_outbound_rules(nsg),
                             "Check that the scale set's NSGs let the capture agent reach 168.63.129.16.")
        rules = parse_json(ran.output)
        stop = _blocking(rt, record, ran, {"value": [{"effectiveSecurityRules": rules if isinstance(rules, list)
                                                      else []}]}, f"NSG {nsg}")
        if stop is not None:
            return stop
    return record, None, "", None


def _check_instances(rt: Runtime, record: TaskRecord, _doc: dict[str, Any]) -> Check:
    """A scale set: at least one instance must be running (a stopped one just drops out, with a warning)."""
    if record.parameters is None:
        return record, None, "", None
    record, ran = rt.run(record, cmd.vmss_instances(record.parameters.resource_group, record.target or ""),
                         "Check the scale set's instance power states (a stopped instance captures nothing).")
    if ran.outcome != "ok":
        return record, "detection_failed", ran.error_text(), None
    instances = [i for i in parse_json(ran.output) or [] if isinstance(i, dict)]
    running = [i for i in instances if "PowerState/running" in (i.get("statuses") or [])]
    idle = sorted(str(i.get("instanceId")) for i in instances if i not in running)
    if not running:
        return record, "vmss_not_running", f"{len(instances)} instance(s), none running", None
    if idle:
        rt.say(f"[yellow]{record.task_id}: scale-set instance(s) {', '.join(idle)} not running: "
               f"they capture nothing[/]")
    return record, None, "", None


def _account_missing(ran: Ran) -> bool:
    """ARM (or the CLI's lookup in the subscription's account list) says the storage account does not exist."""
    first = ran.error_text()
    return ran.outcome == "failed" and (
        (first.startswith("Storage account '") and first.endswith("' not found."))
        or (ran.exit_code == 3 and "Microsoft.Storage/storageAccounts/" in first and "(ResourceNotFound)" in first)
        or (ran.exit_code == 3 and "(ResourceGroupNotFound)" in first))


def _resolve_account(rt: Runtime, record: TaskRecord) -> tuple[TaskRecord, Check | None, dict[str, str]]:
    """``storage account show`` first (ARM knows at once whether the account exists); a stop or the account's id.

    A task planned before this step existed (a resumed registry) skips it: its plan does not hold it. A
    read ARM refuses (the identity has a data-plane role on the account only) is a warning; the
    container check then decides.
    """
    _, account_id = storage_account_ref(record.parameters.storage_account if record.parameters else "")
    argv = cmd.storage_account_show(record.storage_account or "", account_id)
    bound = bindings(record.task_id, record.location, record.storage_path, record.storage_container,
                     record.local_pcap_path)
    if record.plan is None or not is_member(argv, record.plan, bound):
        return record, None, {}
    record, ran = rt.run(record, argv, "Resolve the storage account through ARM before touching its data plane.")
    if _account_missing(ran):
        return record, (record, "storage_not_found", ran.error_text(), None), {}
    doc = parse_json(ran.output) if ran.outcome == "ok" else None
    if isinstance(doc, dict) and isinstance(doc.get("id"), str):
        return record, None, {"account_id": doc["id"]}
    if ran.outcome == "failed" and name_az_error(ran.stderr, "") == "permission_denied":
        rt.say(f"[yellow]{record.task_id}: storage account {record.storage_account} not readable through ARM[/] "
               f"({ran.error_text()}); checking its container directly")
        return record, None, {}
    return record, (record, name_az_error(ran.stderr, "storage_inaccessible"), ran.error_text(), None), {}


def _check_storage(rt: Runtime, record: TaskRecord, _doc: dict[str, Any]) -> Check:
    record, stop, extra = _resolve_account(rt, record)
    if stop is not None:
        return stop
    auth = record.storage_auth_mode or "login"
    record, ran = rt.run(record, cmd.container_exists(record.storage_account or "", record.storage_container, auth),
                         "Verify the storage container is reachable before creating anything.")
    if ran.outcome == "failed":
        if _account_missing(ran):
            return record, "storage_not_found", ran.error_text(), None
        return record, name_az_error(ran.stderr, "storage_inaccessible"), ran.error_text(), extra or None
    if ran.outcome != "ok":
        return record, "storage_inaccessible", ran.error_text(), None
    exists = parse_json(ran.output)
    if not (isinstance(exists, dict) and exists.get("exists") is True):
        return record, "storage_container_missing", "", None
    return record, None, "", None
