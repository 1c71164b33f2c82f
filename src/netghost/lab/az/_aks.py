"""``az aks show``: an AKS cluster (``Microsoft.ContainerService/managedClusters``) the world declares.

The lab holds clusters so a capture request can *detect* one (Network Watcher's VM capture does not
cover a cluster; the orchestrator answers "AKS capture pipeline not yet available"). Their nodes are
not modelled. The document is the SDK's ManagedCluster shape as az prints it, trimmed to what the
lab declares; ARM spells the type ``Microsoft.ContainerService/ManagedClusters`` in the document and
``managedClusters`` in the id. A missing cluster is ARM's ``(ResourceNotFound)`` (exit 3).
"""

from __future__ import annotations

from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._context import AzContext, Command, id_parts, require_rg
from netghost.lab.az._errors import AzError, not_found
from netghost.lab.world import ManagedCluster, World

__all__ = ["COMMANDS", "aks_doc", "find_cluster"]

_RTYPE = "Microsoft.ContainerService/managedClusters"


def find_cluster(ctx: AzContext, rg: str, name: str) -> ManagedCluster:
    """Resolve ``-g RG -n NAME`` as az does.

    Raises:
        AzError: ResourceGroupNotFound / ResourceNotFound (exit 3), AuthorizationFailed (exit 1).
    """
    require_rg(ctx, rg, f"{_RTYPE}/read", ctx.world.rid(rg, _RTYPE, name))
    cluster = ctx.world.aks_cluster(name)
    if cluster is None or cluster.resource_group.lower() != rg.lower():
        raise not_found(f"{_RTYPE}/{name}", rg)
    return cluster


def aks_doc(world: World, cluster: ManagedCluster) -> dict[str, Any]:
    """``az aks show`` output."""
    location = world.aks_location(cluster)
    prefix = f"{cluster.name[:10]}-{cluster.resource_group[:16]}-{world.sub_id[:6]}"
    return {
        "aadProfile": None, "addonProfiles": None,
        "agentPoolProfiles": [{
            "count": cluster.node_count, "enableAutoScaling": False, "kubeletDiskType": "OS", "maxPods": 30,
            "mode": "System", "name": "nodepool1", "orchestratorVersion": cluster.kubernetes_version,
            "osDiskSizeGb": 128, "osSku": "Ubuntu", "osType": "Linux",
            "powerState": {"code": "Running"}, "provisioningState": "Succeeded",
            "type": "VirtualMachineScaleSets", "vmSize": cluster.node_vm_size,
        }],
        "dnsPrefix": prefix, "enableRbac": True, "fqdn": f"{prefix.lower()}.hcp.{location}.azmk8s.io",
        "id": world.aks_id(cluster), "identity": {"type": "SystemAssigned"},
        "kubernetesVersion": cluster.kubernetes_version, "location": location, "name": cluster.name,
        "networkProfile": {"dnsServiceIp": "10.0.0.10", "loadBalancerSku": "standard", "networkPlugin": "azure",
                           "outboundType": "loadBalancer", "serviceCidr": "10.0.0.0/16"},
        "nodeResourceGroup": f"MC_{cluster.resource_group}_{cluster.name}_{location}",
        "powerState": {"code": "Running"}, "provisioningState": "Succeeded",
        "resourceGroup": cluster.resource_group, "sku": {"name": "Base", "tier": "Free"}, "tags": None,
        "type": "Microsoft.ContainerService/ManagedClusters",
    }


def _show(ctx: AzContext, args: ParsedArgs) -> Any:
    if args["ids"]:
        parts = id_parts(args["ids"][0])
        return aks_doc(ctx.world, find_cluster(ctx, parts[4], parts[8]))
    if not (args["name"] and args["resource_group"]):
        raise AzError(2, "ERROR: (--resource-group --name | --ids) are required\n")
    return aks_doc(ctx.world, find_cluster(ctx, args["resource_group"], args["name"]))


COMMANDS = [
    Command(CommandSpec(("aks", "show"), (
        Arg("--ids", kind="many"), Arg("--name", "-n"), Arg("--resource-group", "-g"),
    ), (("Show the details for a managed Kubernetes cluster.", "az aks show -g MyResourceGroup -n MyManagedCluster"),)),
        _show),
]
