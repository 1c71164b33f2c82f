"""Every command the orchestrator sends, as an argv for the REAL azure-cli 2.91 (AZURE.md §1, §6).

One builder per command, pure functions of their values, so the same argv is planned, preflighted,
executed and checked against the real CLI's parser (tests/orchestrator/test_conformance_real_az.py)
and the lab's. Where the seeds' templates are wrong for the real CLI the builders follow AZURE.md:
``-l/--location`` (never ``-g``) on packet-capture show/show-status/list/delete; completion from
``show-status``; ``--auth-mode`` on every storage command; ``-o none`` on download; ``.cap`` blobs.
Queries that project or filter are avoided where Python can do the same from ``-o json``: the
output then has one shape to parse, whatever the CLI version renders for a projection.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from netghost.contracts import StorageAuthMode

__all__ = [
    "HOST_AGENT_IP",
    "NW_PUBLISHER",
    "aks_show",
    "blob_delete",
    "blob_download",
    "blob_exists",
    "blob_list",
    "blob_url",
    "capture_create",
    "capture_delete",
    "capture_list",
    "capture_show",
    "capture_status",
    "container_exists",
    "engine_fleet",
    "engine_run",
    "extension_list",
    "nic_effective_nsg",
    "nsg_outbound_rules",
    "remove_file",
    "render",
    "storage_account_show",
    "subnet_nsg",
    "vm_show",
    "vmss_extension_list",
    "vmss_instances",
    "vmss_show",
    "watcher_list",
]

HOST_AGENT_IP = "168.63.129.16"
"""Azure's host agent: the capture agent reports through it (AZURE.md §2: 168.63.129.16:8037)."""
NW_PUBLISHER = "Microsoft.Azure.NetworkWatcher"
_PC = ("az", "network", "watcher", "packet-capture")


def render(argv: Sequence[str]) -> str:
    """The one command line the shell parses back into exactly ``argv`` (POSIX quoting)."""
    return shlex.join(argv)


def vm_show(resource_group: str, vm: str) -> list[str]:
    """Resolve a VM: id, region, power state and NIC ids in one read (``-d`` adds ``powerState``)."""
    return ["az", "vm", "show", "-g", resource_group, "-n", vm, "-d",
            "--query", "{id:id, location:location, powerState:powerState, "
            "nics:networkProfile.networkInterfaces[].id}", "-o", "json"]


def vmss_show(resource_group: str, vmss: str) -> list[str]:
    """Resolve a scale set (``--target-type AzureVMSS``): id, region, and the subnets and NSGs of its NIC model.

    A uniform scale set's instance NICs have no ``list-effective-nsg`` (that action exists for
    ``Microsoft.Network/networkInterfaces`` only), so the host-agent check reads the NSGs the model
    attaches: the NIC configurations' own and their subnets'.
    """
    nics = "virtualMachineProfile.networkProfile.networkInterfaceConfigurations[]"
    return ["az", "vmss", "show", "-g", resource_group, "-n", vmss, "--query",
            f"{{id:id, location:location, subnets:{nics}.ipConfigurations[].subnet.id, "
            f"nsgs:{nics}.networkSecurityGroup.id}}", "-o", "json"]


def aks_show(resource_group: str, cluster: str) -> list[str]:
    """Is the target an AKS cluster (asked when it is neither a VM nor a scale set): id and region.

    Seed 000 edge case: a cluster is detected, not captured ("AKS capture pipeline not yet available").
    """
    return ["az", "aks", "show", "-g", resource_group, "-n", cluster, "--query", "{id:id, location:location}",
            "-o", "json"]


def vmss_instances(resource_group: str, vmss: str) -> list[str]:
    """The scale set's instances and their power states (``PowerState/running`` ...)."""
    return ["az", "vmss", "list-instances", "-g", resource_group, "-n", vmss, "--expand", "instanceView",
            "--query", "[].{instanceId:instanceId, statuses:instanceView.statuses[].code}", "-o", "json"]


def subnet_nsg(subnet_id: str) -> list[str]:
    """The NSG a subnet carries (``{"nsg": id-or-null}``)."""
    return ["az", "network", "vnet", "subnet", "show", "--ids", subnet_id,
            "--query", "{nsg:networkSecurityGroup.id}", "-o", "json"]


def nsg_outbound_rules(nsg_id: str) -> list[str]:
    """An NSG's own outbound rules (the defaults never block the host agent)."""
    return ["az", "network", "nsg", "show", "--ids", nsg_id,
            "--query", "securityRules[?direction=='Outbound']", "-o", "json"]


def extension_list(resource_group: str, vm: str) -> list[str]:
    """The VM's extensions (the Network Watcher agent must be there and provisioned)."""
    return ["az", "vm", "extension", "list", "-g", resource_group, "--vm-name", vm,
            "--query", "[].{name:name, publisher:publisher, state:provisioningState}", "-o", "json"]


def vmss_extension_list(resource_group: str, vmss: str) -> list[str]:
    """The scale set model's extensions (every instance needs the Network Watcher agent)."""
    return ["az", "vmss", "extension", "list", "-g", resource_group, "--vmss-name", vmss,
            "--query", "[].{name:name, publisher:publisher, state:provisioningState}", "-o", "json"]


def watcher_list() -> list[str]:
    """Regions that have a Network Watcher (the CLI never creates one)."""
    return ["az", "network", "watcher", "list", "--query", "[].location", "-o", "json"]


def nic_effective_nsg(nic_id: str) -> list[str]:
    """Outbound effective security rules of one NIC (is the host agent reachable), in the document's shape.

    The filter keeps the output small: the whole document (inbound rules, associations, tag maps) is
    long enough for the shell to truncate, and a truncated rule list cannot clear the check.
    """
    return ["az", "network", "nic", "list-effective-nsg", "--ids", nic_id, "--query",
            "{value: value[].{effectiveSecurityRules: effectiveSecurityRules[?direction=='Outbound']}}", "-o", "json"]


def storage_account_show(account: str, account_id: str | None = None) -> list[str]:
    """Resolve the capture's storage account through ARM before its data plane is touched.

    Why: in login mode the CLI asks no key, so a mistyped account is only found out on the data plane,
    where ``NAME.blob.core.windows.net`` does not resolve and the CLI retries for about 90 s (longer than
    the shell's timeout). ARM answers at once: ``Storage account 'NAME' not found.`` (exit 2, the name
    looked up in the subscription's account list) or ``ResourceNotFound`` (exit 3, a full id).
    """
    where = ["--ids", account_id] if account_id else ["-n", account]
    return ["az", "storage", "account", "show", *where, "--query", "{id:id, location:primaryLocation}", "-o", "json"]


def container_exists(account: str, container: str, auth_mode: StorageAuthMode) -> list[str]:
    """The storage smoke test of DETECTING (``{"exists": bool}``)."""
    return ["az", "storage", "container", "exists", "--account-name", account, "-n", container,
            "--auth-mode", auth_mode, "-o", "json"]


def blob_url(account: str, container: str, blob: str) -> str:
    """``https://{account}.blob.core.windows.net/{container}/{blob}``."""
    return f"https://{account}.blob.core.windows.net/{container}/{blob}"


def capture_create(  # noqa: PLR0917  one argument per CLI option, all needed
    resource_group: str,
    name: str,
    target: str,
    account: str,
    storage_path: str,
    time_limit_s: int,
    capture_limit_bytes: int,
    *,
    vmss: bool = False,
) -> list[str]:
    """``packet-capture create`` (T3 corrected): no ``-l``; the blob URL is passed and read back."""
    where = ["--target-type", "AzureVMSS", "--target", target] if vmss else ["--vm", target]
    return [*_PC, "create", "-g", resource_group, "-n", name, *where, "--storage-account", account,
            "--storage-path", storage_path, "--time-limit", str(time_limit_s),
            "--capture-limit", str(capture_limit_bytes), "-o", "json"]


def capture_show(location: str, name: str) -> list[str]:
    """Does the session exist (asked before deciding after an unknown create outcome)."""
    return [*_PC, "show", "-l", location, "-n", name, "-o", "json"]


def capture_status(location: str, name: str) -> list[str]:
    """The completion check: ``packetCaptureStatus``, ``stopReason``, ``packetCaptureError``."""
    return [*_PC, "show-status", "-l", location, "-n", name, "-o", "json"]


def capture_list(location: str) -> list[str]:
    """Names of every session of the region's watcher (orphan sweep; ``ghost_`` filtered in Python)."""
    return [*_PC, "list", "-l", location, "--query", "[].name", "-o", "json"]


def capture_delete(location: str, name: str) -> list[str]:
    """Remove the session (the blob stays: see :func:`blob_delete`)."""
    return [*_PC, "delete", "-l", location, "-n", name]


def blob_exists(account: str, container: str, blob: str, auth_mode: StorageAuthMode) -> list[str]:
    """Is the blob there (before a delete, so an already-gone blob costs the user no prompt)."""
    return ["az", "storage", "blob", "exists", "--account-name", account, "-c", container, "-n", blob,
            "--auth-mode", auth_mode, "-o", "json"]


def blob_list(account: str, container: str, prefix: str, auth_mode: StorageAuthMode) -> list[str]:
    """Blob names under ``prefix``: a scale-set capture writes one ``<stem>_<instanceId>.cap`` per instance."""
    return ["az", "storage", "blob", "list", "--account-name", account, "-c", container, "--prefix", prefix,
            "--auth-mode", auth_mode, "--query", "[].name", "-o", "json"]


def blob_show(account: str, container: str, blob: str, auth_mode: StorageAuthMode) -> list[str]:
    """A blob's length and Content-MD5: a file downloaded before a restart is kept only if it matches."""
    return ["az", "storage", "blob", "show", "--account-name", account, "-c", container, "-n", blob,
            "--auth-mode", auth_mode, "--query",
            "{length: properties.contentLength, md5: properties.contentSettings.contentMd5}", "-o", "json"]


def blob_download(account: str, container: str, blob: str, path: str, auth_mode: StorageAuthMode) -> list[str]:
    """Download to the task's workspace; ``-o none`` drops the properties document az prints."""
    return ["az", "storage", "blob", "download", "--account-name", account, "-c", container, "-n", blob,
            "-f", path, "--auth-mode", auth_mode, "--no-progress", "-o", "none"]


def blob_delete(account: str, container: str, blob: str, auth_mode: StorageAuthMode) -> list[str]:
    """Delete the capture blob (exit 3 BlobNotFound means it is already gone)."""
    return ["az", "storage", "blob", "delete", "--account-name", account, "-c", container, "-n", blob,
            "--auth-mode", auth_mode]


def engine_run(engine: Sequence[str], capture: str, out_dir: str, compare: str | None = None) -> list[str]:
    """The forensics engine as a program (``pcap-forensics`` or ``python -m netghost.forensics``); one capture's
    report comes in Markdown, JSON and HTML (the engineer opens the HTML one, with its charts)."""
    if compare:
        return [*engine, capture, "--compare", compare, "--semantic-dir", out_dir, "--report-dir", out_dir]
    return [*engine, capture, "--semantic-dir", out_dir, "--report-dir", out_dir, "--format", "md,json,html"]


def engine_fleet(engine: Sequence[str], local_pcap: str, out_dir: str) -> list[str]:
    """The engine's fleet mode over a scale set's instance captures (the folder of ``local_pcap``): one
    report ranking the instances, flagging the one unlike the others, under ``out_dir/fleet``."""
    return [*engine, "--fleet", os.path.dirname(local_pcap) or ".", "--out", os.path.join(out_dir, "fleet")]


def remove_file(path: str) -> list[str]:
    """Delete one local file (RISKY: the human approves it); ``-f`` so a gone file is no error."""
    return ["rm", "-f", path]
