"""``az vmss show | list-instances``, ``az vmss extension list``: a uniform scale set and its instances.

The set is a :class:`~netghost.lab.world.ScaleSet`; its instances are the world's VMs that name it
(``<set>_<id>``), so their traffic, services and power states are the ones every other answer
uses. Ids follow ARM: the set is ``.../virtualMachineScaleSets/<set>``, an instance
``.../virtualMachineScaleSets/<set>/virtualMachines/<id>``. Output is the SDK shape (null fields kept,
as az prints them), trimmed to the profile parts the lab declares.
"""

from __future__ import annotations

from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import guid, nic_doc
from netghost.lab.az._context import AzContext, Command, id_parts, require_rg
from netghost.lab.az._errors import AzError, not_found
from netghost.lab.world import ScaleSet, Vm, World

__all__ = ["COMMANDS", "find_scale_set", "vmss_doc"]

_WATCHER_PUBLISHER = "Microsoft.Azure.NetworkWatcher"


def find_scale_set(ctx: AzContext, rg: str | None, name_or_id: str) -> ScaleSet:
    """Resolve ``-n NAME -g RG`` or a full scale-set id as az does (404 when missing).

    Raises:
        AzError: ResourceGroupNotFound / ResourceNotFound (exit 3), AuthorizationFailed (exit 1).
    """
    if name_or_id.startswith("/subscriptions/"):
        parts = id_parts(name_or_id)
        rg, name = parts[4], parts[8]
    else:
        name = name_or_id
    if rg is None:
        raise AzError(2, "ERROR: usage error: --resource-group is required when the scale set is a name, "
                         "not an ID\n")
    rtype = "Microsoft.Compute/virtualMachineScaleSets"
    require_rg(ctx, rg, f"{rtype}/read", ctx.world.rid(rg, rtype, name))
    vmss = ctx.world.scale_set(name)
    if vmss is None or vmss.resource_group.lower() != rg.lower():
        raise not_found(f"{rtype}/{name}", rg)
    return vmss


def _extension_profile(vmss: ScaleSet) -> list[dict[str, Any]]:
    return [{
        "autoUpgradeMinorVersion": True, "enableAutomaticUpgrade": None, "forceUpdateTag": None,
        "id": None, "name": name, "protectedSettings": None, "protectedSettingsFromKeyVault": None,
        "provisionAfterExtensions": None, "provisioningState": "Succeeded",  # ARM's GET of the model says so
        "publisher": _WATCHER_PUBLISHER if name.startswith("NetworkWatcherAgent") else "Microsoft.Azure.Extensions",
        "settings": None, "suppressFailures": None, "type": None, "typeHandlerVersion": "1.4",
        "typePropertiesType": name,
    } for name in vmss.extensions]


def vmss_doc(world: World, vmss: ScaleSet) -> dict[str, Any]:
    """``az vmss show`` output (the model, not its instances)."""
    sid = world.vmss_id(vmss)
    instances = world.instances(vmss)
    first_nic = instances[0].nics[0] if instances else None
    vnet_subnet = world.subnet_of(first_nic) if first_nic else None
    return {
        "additionalCapabilities": None, "automaticRepairsPolicy": None, "doNotRunExtensionsOnOverprovisionedVMs": False,
        "etag": None, "extendedLocation": None, "hostGroup": None, "id": sid, "identity": None,
        "location": world.scale_set_location(vmss), "name": vmss.name, "orchestrationMode": vmss.orchestration_mode,
        "overprovision": False, "plan": None, "platformFaultDomainCount": None, "provisioningState": "Succeeded",
        "proximityPlacementGroup": None, "resourceGroup": vmss.resource_group, "scaleInPolicy": None,
        "singlePlacementGroup": True,
        "sku": {"capacity": len(instances), "name": vmss.size, "tier": "Standard"},
        "tags": {}, "timeCreated": "2026-01-15T09:12:44.1234567+00:00",
        "type": "Microsoft.Compute/virtualMachineScaleSets", "uniqueId": guid(sid),
        "upgradePolicy": {"automaticOsUpgradePolicy": None, "mode": "Manual", "rollingUpgradePolicy": None},
        "virtualMachineProfile": {
            "extensionProfile": {"extensions": _extension_profile(vmss), "extensionsTimeBudget": None},
            "networkProfile": {"healthProbe": None, "networkApiVersion": None, "networkInterfaceConfigurations": [{
                "name": f"{vmss.name[:9]}Nic", "primary": True, "ipConfigurations": [{
                    "name": f"{vmss.name[:9]}IPConfig",
                    "subnet": {"id": world.subnet_id(*vnet_subnet) if vnet_subnet else None,
                               "resourceGroup": vnet_subnet[0].resource_group if vnet_subnet else None},
                }],
            }]},
            "osProfile": {"adminUsername": "azureuser", "computerNamePrefix": vmss.name[:9]},
            "storageProfile": {"osDisk": {"caching": "ReadWrite", "createOption": "FromImage", "osType": vmss.os}},
        },
        "zoneBalance": None, "zones": None,
    }


def instance_doc(world: World, vmss: ScaleSet, vm: Vm, expand: bool) -> dict[str, Any]:
    """One element of ``az vmss list-instances`` (``--expand instanceView`` adds the power state)."""
    iid = world.vm_id(vm)
    doc: dict[str, Any] = {
        "id": iid, "instanceId": vm.instance_id, "instanceView": None, "latestModelApplied": True,
        "location": world.vm_location(vm), "name": vm.name,
        "networkProfile": {"networkInterfaces": [
            {"deleteOption": None, "id": f"{iid}/networkInterfaces/{n.name}", "primary": True,
             "resourceGroup": vm.resource_group} for n in vm.nics]},
        "osProfile": {"computerName": f"{vmss.name[:9]}{int(vm.instance_id or 0):06x}"},
        "provisioningState": "Succeeded", "resourceGroup": vm.resource_group,
        "sku": {"capacity": None, "name": vmss.size, "tier": "Standard"},
        "type": "Microsoft.Compute/virtualMachineScaleSets/virtualMachines", "vmId": guid(iid), "zones": None,
    }
    if expand:
        doc["instanceView"] = {"statuses": [
            {"code": "ProvisioningState/succeeded", "displayStatus": "Provisioning succeeded", "level": "Info",
             "message": None, "time": None},
            {"code": f"PowerState/{vm.power_state}", "displayStatus": f"VM {vm.power_state}", "level": "Info",
             "message": None, "time": None},
        ]}
    return doc


def _show(ctx: AzContext, args: ParsedArgs) -> Any:
    if args["ids"]:
        return vmss_doc(ctx.world, find_scale_set(ctx, None, args["ids"][0]))
    if not (args["name"] and args["resource_group"]):
        raise AzError(2, "ERROR: (--resource-group --name | --ids) are required\n")
    vmss = find_scale_set(ctx, args["resource_group"], args["name"])
    if args["instance_id"] is not None:
        vm = next((v for v in ctx.world.instances(vmss) if v.instance_id == args["instance_id"]), None)
        if vm is None:
            raise not_found(f"Microsoft.Compute/virtualMachineScaleSets/{vmss.name}/virtualMachines/"
                            f"{args['instance_id']}", vmss.resource_group)
        return instance_doc(ctx.world, vmss, vm, expand=False)
    return vmss_doc(ctx.world, vmss)


def _list_instances(ctx: AzContext, args: ParsedArgs) -> Any:
    vmss = find_scale_set(ctx, args["resource_group"], args["name"])
    expand = (args["expand"] or "").lower() == "instanceview"
    return [instance_doc(ctx.world, vmss, vm, expand) for vm in ctx.world.instances(vmss)]


def _list(ctx: AzContext, args: ParsedArgs) -> Any:
    """``az vmss list [-g]``: every scale set the subscription (or the group) holds."""
    rg = args["resource_group"]
    if rg:
        require_rg(ctx, rg, "Microsoft.Compute/virtualMachineScaleSets/read")
    return [vmss_doc(ctx.world, v) for v in ctx.world.spec.vm_scale_sets
            if rg is None or v.resource_group.lower() == rg.lower()]


def _nic_list(ctx: AzContext, args: ParsedArgs) -> Any:
    """``az vmss nic list -g RG --vmss-name NAME``: the instances' NICs. Their ids live under the
    instance (``.../virtualMachines/<id>/networkInterfaces/<nic>``) and ``virtualMachine`` names it."""
    vmss = find_scale_set(ctx, args["resource_group"], args["vmss_name"])
    out = []
    for vm in ctx.world.instances(vmss):
        iid = ctx.world.vm_id(vm)
        for nic in vm.nics:
            doc = nic_doc(ctx.world, vm, nic)
            nid = f"{iid}/networkInterfaces/{nic.name}"
            doc["id"] = nid
            for conf in doc["ipConfigurations"]:
                conf["id"] = f"{nid}/ipConfigurations/{vmss.name[:9]}IPConfig"
                conf["name"] = f"{vmss.name[:9]}IPConfig"
            doc["virtualMachine"] = {"id": iid, "resourceGroup": vm.resource_group}
            out.append(doc)
    return out


def _extension_list(ctx: AzContext, args: ParsedArgs) -> Any:
    vmss = find_scale_set(ctx, args["resource_group"], args["vmss_name"])
    sid = ctx.world.vmss_id(vmss)
    docs = _extension_profile(vmss)
    for doc in docs:
        doc.update({"id": f"{sid}/extensions/{doc['name']}", "provisioningState": "Succeeded",
                    "resourceGroup": vmss.resource_group,
                    "type": "Microsoft.Compute/virtualMachineScaleSets/extensions"})
    return docs


COMMANDS = [
    Command(CommandSpec(("vmss", "list"), (Arg("--resource-group", "-g"),),
                        (("List all virtual machine scale sets in a resource group.", "az vmss list -g MyResourceGroup"),)),
            _list),
    Command(CommandSpec(("vmss", "nic", "list"), (
        Arg("--resource-group", "-g", required=True), Arg("--vmss-name", required=True),
    ), (("List the network interfaces of a VMSS.", "az vmss nic list -g MyResourceGroup --vmss-name MyVmss"),)),
        _nic_list),
    Command(CommandSpec(("vmss", "show"), (
        Arg("--ids", kind="many"), Arg("--include-user-data", "-u", kind="flag"), Arg("--instance-id"),
        Arg("--name", "-n"), Arg("--resource-group", "-g"),
    )), _show),
    Command(CommandSpec(("vmss", "list-instances"), (
        Arg("--name", "-n", required=True), Arg("--resource-group", "-g", required=True),
        Arg("--expand"), Arg("--filter"), Arg("--select"), Arg("--resiliency-view", kind="flag"),
    ), (("List all virtual machines in a VMSS.", "az vmss list-instances -g MyResourceGroup -n MyVmss"),)),
        _list_instances),
    Command(CommandSpec(("vmss", "extension", "list"), (
        Arg("--resource-group", "-g", required=True), Arg("--vmss-name", required=True),
    ), (("List extensions associated with a VMSS.",
         "az vmss extension list --resource-group MyResourceGroup --vmss-name MyVmss"),)), _extension_list),
]
