"""``az vm show|list|get-instance-view``, ``az vm extension list|show``, ``az account show|list``, ``az login``."""

from __future__ import annotations

from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import guid, nic_doc
from netghost.lab.az._cloud_faults import WATCHER_EXTENSIONS, find_fault
from netghost.lab.az._context import AzContext, Command, find_vm, id_parts, require_rg
from netghost.lab.az._errors import AzError, not_found
from netghost.lab.clock import format_azure_time
from netghost.lab.world import Vm, World

__all__ = ["COMMANDS", "extension_docs", "vm_doc", "vm_extensions"]

_PUBLISHERS = {
    "NetworkWatcherAgentLinux": ("Microsoft.Azure.NetworkWatcher", "1.4"),
    "NetworkWatcherAgentWindows": ("Microsoft.Azure.NetworkWatcher", "1.4"),
    "AzureMonitorLinuxAgent": ("Microsoft.Azure.Monitor", "1.0"),
    "AzureMonitorWindowsAgent": ("Microsoft.Azure.Monitor", "1.0"),
}
_IDS_ARGS = (Arg("--ids", kind="many"), Arg("--name", "-n"), Arg("--resource-group", "-g"))


def vm_doc(world: World, vm: Vm, details: bool = False) -> dict[str, Any]:
    """``az vm show`` output (SDK-shaped: null fields are kept, as az prints them)."""
    vid = world.vm_id(vm)
    linux = vm.os == "Linux"
    doc: dict[str, Any] = {
        "additionalCapabilities": None,
        "applicationProfile": None,
        "availabilitySet": None,
        "billingProfile": None,
        "capacityReservation": None,
        "diagnosticsProfile": {"bootDiagnostics": {"enabled": True, "storageUri": None}},
        "etag": None,
        "evictionPolicy": None,
        "extendedLocation": None,
        "extensionsTimeBudget": None,
        "hardwareProfile": {"vmSize": vm.size, "vmSizeProperties": None},
        "host": None,
        "hostGroup": None,
        "id": vid,
        "identity": None,
        "instanceView": None,
        "licenseType": None,
        "location": world.vm_location(vm),
        "managedBy": None,
        "name": vm.name,
        "networkProfile": {
            "networkApiVersion": None,
            "networkInterfaceConfigurations": None,
            "networkInterfaces": [
                {"deleteOption": None, "id": world.nic_id(vm, n), "primary": None, "resourceGroup": vm.resource_group}
                for n in vm.nics
            ],
        },
        "osProfile": {
            "adminPassword": None,
            "adminUsername": "azureuser",
            "allowExtensionOperations": True,
            "computerName": vm.name,
            "customData": None,
            "linuxConfiguration": {"disablePasswordAuthentication": True, "enableVmAgentPlatformUpdates": None,
                                   "patchSettings": {"assessmentMode": "ImageDefault", "patchMode": "ImageDefault"},
                                   "provisionVMAgent": True, "ssh": None} if linux else None,
            "requireGuestProvisionSignal": True,
            "secrets": [],
            "windowsConfiguration": None if linux else {"enableAutomaticUpdates": True, "provisionVMAgent": True},
        },
        "plan": None,
        "platformFaultDomain": None,
        "priority": None,
        "provisioningState": "Succeeded",
        "proximityPlacementGroup": None,
        "resourceGroup": vm.resource_group,
        "resources": [{"id": f"{vid}/extensions/{e}", "resourceGroup": vm.resource_group} for e in vm.extensions],
        "scheduledEventsProfile": None,
        "securityProfile": None,
        "storageProfile": {
            "dataDisks": [],
            "diskControllerType": None,
            "imageReference": {
                "exactVersion": "22.04.202611010" if linux else "20348.2700.241109",
                "id": None,
                "offer": "0001-com-ubuntu-server-jammy" if linux else "WindowsServer",
                "publisher": "Canonical" if linux else "MicrosoftWindowsServer",
                "sku": "22_04-lts-gen2" if linux else "2022-datacenter-azure-edition",
                "version": "latest",
            },
            "osDisk": {
                "caching": "ReadWrite",
                "createOption": "FromImage",
                "deleteOption": "Detach",
                "diskSizeGB": 30,
                "managedDisk": {"id": world.rid(vm.resource_group, "Microsoft.Compute/disks", f"{vm.name}_OsDisk_1"),
                                "resourceGroup": vm.resource_group, "storageAccountType": "Premium_LRS"},
                "name": f"{vm.name}_OsDisk_1",
                "osType": vm.os,
            },
        },
        "tags": dict(vm.tags),
        "timeCreated": "2026-01-15T09:12:44.1234567+00:00",
        "type": "Microsoft.Compute/virtualMachines",
        "userData": None,
        "virtualMachineScaleSet": {"id": world.vmss_id(owner), "resourceGroup": owner.resource_group}
        if (owner := world.scale_set(vm.scale_set or "")) is not None else None,
        "vmId": guid(vid),
        "zones": None,
    }
    if details:
        doc["powerState"] = f"VM {vm.power_state}"
        doc["privateIps"] = ",".join(n.private_ip for n in vm.nics)
        doc["publicIps"] = ",".join(n.public_ip for n in vm.nics if n.public_ip)
        doc["fqdns"] = ""
        doc["macAddresses"] = ",".join(nic_doc(world, vm, n)["macAddress"] for n in vm.nics)
    return doc


def vm_extensions(ctx: AzContext, vm: Vm) -> list[tuple[str, str]]:
    """``(name, provisioningState)`` of the VM's extensions as Azure reports them under the faults:
    ``extension-missing`` removes the Network Watcher agent, ``extension-failed`` marks it Failed."""
    faults = ctx.state.cloud_faults()
    missing = find_fault(faults, "extension-missing", vm=vm.name) is not None
    failed = find_fault(faults, "extension-failed", vm=vm.name) is not None
    out = []
    for name in vm.extensions:
        agent = name.lower() in WATCHER_EXTENSIONS
        if agent and missing:
            continue
        out.append((name, "Failed" if agent and failed else "Succeeded"))
    return out


def extension_docs(world: World, vm: Vm, states: list[tuple[str, str]] | None = None) -> list[dict[str, Any]]:
    """``az vm extension list`` elements (``states`` from :func:`vm_extensions`; default: all Succeeded)."""
    out = []
    for name, state in states if states is not None else [(e, "Succeeded") for e in vm.extensions]:
        publisher, version = _PUBLISHERS.get(name, ("Microsoft.Azure.Extensions", "2.1"))
        out.append({
            "autoUpgradeMinorVersion": True,
            "enableAutomaticUpgrade": None,
            "forceUpdateTag": None,
            "id": f"{world.vm_id(vm)}/extensions/{name}",
            "instanceView": None,
            "location": world.vm_location(vm),
            "name": name,
            "protectedSettings": None,
            "protectedSettingsFromKeyVault": None,
            "provisionAfterExtensions": None,
            "provisioningState": state,
            "publisher": publisher,
            "resourceGroup": vm.resource_group,
            "settings": None,
            "suppressFailures": None,
            "tags": None,
            "type": "Microsoft.Compute/virtualMachines/extensions",
            "typeHandlerVersion": version,
            "typePropertiesType": name,
        })
    return out


def _ids_or_names(args: ParsedArgs) -> list[tuple[str, str]]:
    if args["ids"]:
        out = []
        for rid in args["ids"]:
            parts = id_parts(rid)
            out.append((parts[4], parts[-1]))
        return out
    if not args["name"] or not args["resource_group"]:
        raise AzError(2, "ERROR: (--resource-group --name | --ids) are required\n")
    return [(args["resource_group"], args["name"])]


def _vm_show(ctx: AzContext, args: ParsedArgs) -> Any:
    docs = [vm_doc(ctx.world, find_vm(ctx, rg, name), bool(args["show_details"])) for rg, name in _ids_or_names(args)]
    return docs[0] if len(docs) == 1 else docs


def _vm_list(ctx: AzContext, args: ParsedArgs) -> Any:
    rg = args["resource_group"]
    if rg:
        require_rg(ctx, rg, "Microsoft.Compute/virtualMachines/read", f"/subscriptions/{ctx.world.sub_id}/resourceGroups/{rg}")
    return [vm_doc(ctx.world, vm, bool(args["show_details"])) for vm in ctx.world.spec.vms
            if (vm.scale_set is None or ctx.world.is_flexible_instance(vm))
            and (rg is None or vm.resource_group.lower() == rg.lower())]


def _instance_view(ctx: AzContext, args: ParsedArgs) -> Any:
    """``az vm get-instance-view``: the VM document with its power state and agent statuses."""
    docs = []
    for rg, name in _ids_or_names(args):
        vm = find_vm(ctx, rg, name)
        doc = vm_doc(ctx.world, vm)
        when = format_azure_time(ctx.now()).replace("Z", "+00:00")
        ok = {"code": "ProvisioningState/succeeded", "displayStatus": "Provisioning succeeded", "level": "Info",
              "message": None, "time": when}
        power = {"code": f"PowerState/{vm.power_state}", "displayStatus": f"VM {vm.power_state}", "level": "Info",
                 "message": None, "time": None}
        running = vm.power_state == "running"
        failed = {"code": "ProvisioningState/failed/1", "displayStatus": "Provisioning failed", "level": "Error",
                  "message": "Enable failed: the Network Watcher agent did not start.", "time": when}
        doc["instanceView"] = {
            "computerName": vm.name if running else None,
            "extensions": [{"name": e["name"],
                            "statuses": ([ok] if e["provisioningState"] == "Succeeded" else [failed]) if running else [],
                            "type": f"{e['publisher']}.{e['typePropertiesType']}",
                            "typeHandlerVersion": e["typeHandlerVersion"]}
                           for e in extension_docs(ctx.world, vm, vm_extensions(ctx, vm))],
            "osName": "ubuntu" if vm.os == "Linux" and running else None,
            "osVersion": "22.04" if vm.os == "Linux" and running else None,
            "statuses": [ok, power],
            "vmAgent": {"statuses": [{"code": "ProvisioningState/succeeded" if running else "ProvisioningState/Unavailable",
                                      "displayStatus": "Ready" if running else "Not Ready", "level": "Info" if running else "Warning",
                                      "message": "Guest Agent is running" if running else "VM status blob is found but not yet populated.",
                                      "time": when}],
                        "vmAgentVersion": "2.11.1.12" if running else "Unknown"},
        }
        docs.append(doc)
    return docs[0] if len(docs) == 1 else docs


def _extension_target(args: ParsedArgs) -> tuple[str | None, str, str | None]:
    """(group, VM name, extension name) from ``-g/--vm-name/-n`` or an extension's (or VM's) ``--ids``."""
    if args["ids"]:
        parts = id_parts(args["ids"][0])
        if len(parts) >= 11 and parts[9].lower() == "extensions":
            return parts[4], parts[8], parts[10]
        return parts[4], parts[8], args["name"]
    return args["resource_group"], args["vm_name"] or "", args["name"]


def _extension_list(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, vm_name, _ext = _extension_target(args)
    vm = find_vm(ctx, rg, vm_name)
    return extension_docs(ctx.world, vm, vm_extensions(ctx, vm))


def _extension_show(ctx: AzContext, args: ParsedArgs) -> Any:
    rg, vm_name, ext = _extension_target(args)
    if not (rg and vm_name and ext):
        raise AzError(2, "ERROR: (--resource-group --vm-name --name | --ids) are required\n")
    vm = find_vm(ctx, rg, vm_name)
    for doc in extension_docs(ctx.world, vm, vm_extensions(ctx, vm)):
        if doc["name"].lower() == ext.lower():
            return doc
    raise not_found(f"Microsoft.Compute/virtualMachines/{vm.name}/extensions/{ext}", vm.resource_group)


def _account_show(ctx: AzContext, args: ParsedArgs) -> Any:
    sub = ctx.world.spec.subscription
    wanted = args["subscription"]
    if wanted and wanted not in (sub.id, sub.name):
        raise AzError(1, f"ERROR: Subscription '{wanted}' not found. Check the spelling and casing and try again.\n")
    return {
        "environmentName": "AzureCloud",
        "homeTenantId": sub.tenant_id,
        "id": sub.id,
        "isDefault": True,
        "managedByTenants": [],
        "name": sub.name,
        "state": "Enabled",
        "tenantId": sub.tenant_id,
        "user": {"name": sub.user, "type": sub.user_type},
    }



def _account_list(ctx: AzContext, args: ParsedArgs) -> Any:
    """``az account list`` names the cloud ``cloudName`` where ``account show`` says ``environmentName``."""
    entry = _account_show(ctx, args)
    entry["cloudName"] = entry.pop("environmentName")
    return [entry]


def _login(ctx: AzContext, args: ParsedArgs) -> Any:
    """The lab is always logged in as its world's identity; ``az login`` just lists it, as real az does."""
    ctx.warn("WARNING: netghost lab: already signed in as the lab identity; no credentials were used.\n")
    return [_account_show(ctx, args)]


COMMANDS = [
    Command(CommandSpec(("vm", "show"), (
        Arg("--include-user-data", "-u", kind="flag"), Arg("--show-details", "-d", kind="flag"), *_IDS_ARGS,
    )), _vm_show),
    Command(CommandSpec(("vm", "get-instance-view"), (Arg("--include-user-data", "-u", kind="flag"), *_IDS_ARGS)),
            _instance_view),
    Command(CommandSpec(("vm", "list"), (
        Arg("--resource-group", "-g"), Arg("--show-details", "-d", kind="flag"), Arg("--vmss"),
    )), _vm_list),
    Command(CommandSpec(("vm", "extension", "list"), (
        Arg("--resource-group", "-g", required=True), Arg("--vm-name", required=True), Arg("--ids", kind="many"),
    ), (("List the extensions attached to a VM.", "az vm extension list -g MyResourceGroup --vm-name MyVm"),)),
        _extension_list),
    Command(CommandSpec(("vm", "extension", "show"), (
        Arg("--ids", kind="many"), Arg("--instance-view", kind="flag"), Arg("--name", "-n"),
        Arg("--resource-group", "-g"), Arg("--vm-name"),
    )), _extension_show),
    Command(CommandSpec(("account", "show"), (Arg("--name", "-n"),)), _account_show),
    Command(CommandSpec(("account", "list"), (Arg("--all", kind="flag"), Arg("--refresh", kind="flag"))),
            _account_list),
    Command(CommandSpec(("login",), (
        Arg("--identity", kind="flag"), Arg("--service-principal", kind="flag"), Arg("--username", "-u"),
        Arg("--password", "-p"), Arg("--tenant", "-t"), Arg("--use-device-code", kind="flag"),
        Arg("--allow-no-subscriptions", kind="flag"), Arg("--scope"),
    )), _login),
]
