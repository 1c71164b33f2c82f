"""ARM documents for network resources, shaped as az 2.91 prints them (AAZ-flattened).

Field sets follow the transcripts in ``tests/data/azure/transcripts`` where the real CLI printed
the resource, and the REST specs elsewhere. AAZ output drops null fields; JSON keys are sorted at
render time, so dict order here does not matter.
"""

from __future__ import annotations

import uuid
from typing import Any

from netghost.lab.world import (
    DEFAULT_PRIORITIES,
    DEFAULT_RULES,
    EffectiveRoute,
    Nic,
    Nsg,
    Peering,
    PrivateDnsZone,
    Route,
    RouteTable,
    SecurityRule,
    Subnet,
    Vm,
    VNet,
    World,
)

__all__ = [
    "etag",
    "guid",
    "nic_doc",
    "nsg_doc",
    "peering_doc",
    "public_ip_name",
    "ref",
    "route_doc",
    "route_table_doc",
    "rule_doc",
    "vnet_doc",
    "watcher_doc",
    "zone_doc",
]

_DEFAULT_DESCRIPTIONS = {
    "AllowVnetInBound": "Allow inbound traffic from all VMs in VNET",
    "AllowAzureLoadBalancerInBound": "Allow inbound traffic from azure load balancer",
    "DenyAllInBound": "Deny all inbound traffic",
    "AllowVnetOutBound": "Allow outbound traffic from all VMs to all VMs in VNET",
    "AllowInternetOutBound": "Allow outbound traffic from all VMs to Internet",
    "DenyAllOutBound": "Deny all outbound traffic",
}


def guid(*parts: str) -> str:
    """A stable GUID for a resource (same world, same GUID, across invocations)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "netghost-lab:" + "/".join(parts)))


def etag(*parts: str) -> str:
    return f'W/"{guid("etag", *parts)}"'


def ref(resource_id: str) -> dict[str, str]:
    """``{"id": ..., "resourceGroup": ...}`` as AAZ prints a sub-resource reference."""
    rg = resource_id.split("/resourceGroups/")[1].split("/", maxsplit=1)[0]
    return {"id": resource_id, "resourceGroup": rg}


def _prefix_fields(kind: str, value: str | list[str]) -> dict[str, Any]:
    """Singular + plural fields (``sourceAddressPrefix`` / ``sourceAddressPrefixes``)."""
    if isinstance(value, str):
        return {kind: value, kind + "es" if kind.endswith("Prefix") else kind + "s": []}
    plural = kind + "es" if kind.endswith("Prefix") else kind + "s"
    return {plural: list(value)}


def rule_doc(world: World, nsg: Nsg, rule: SecurityRule, default: bool = False) -> dict[str, Any]:
    """One rule as ``az network nsg rule list`` prints it."""
    collection = "defaultSecurityRules" if default else "securityRules"
    rid = f"{world.nsg_id(nsg)}/{collection}/{rule.name}"
    doc: dict[str, Any] = {
        "access": rule.access,
        "direction": rule.direction,
        "etag": etag(rid),
        "id": rid,
        "name": rule.name,
        "priority": DEFAULT_PRIORITIES[rule.name] if default else rule.priority,
        "protocol": rule.protocol,
        "provisioningState": "Succeeded",
        "resourceGroup": nsg.resource_group,
        "type": f"Microsoft.Network/networkSecurityGroups/{collection}",
    }
    doc.update(_prefix_fields("sourceAddressPrefix", rule.source_address_prefix))
    doc.update(_prefix_fields("destinationAddressPrefix", rule.destination_address_prefix))
    doc.update(_prefix_fields("sourcePortRange", rule.source_port_range))
    doc.update(_prefix_fields("destinationPortRange", rule.destination_port_range))
    description = _DEFAULT_DESCRIPTIONS.get(rule.name) if default else rule.description
    if description:
        doc["description"] = description
    return doc


def nsg_doc(world: World, nsg: Nsg) -> dict[str, Any]:
    nics = [world.nic_id(vm, n) for vm, n in world.nics() if n.nsg == nsg.name]
    subnets = [world.subnet_id(v, s) for v in world.spec.vnets for s in v.subnets if s.nsg == nsg.name]
    return {
        "defaultSecurityRules": [rule_doc(world, nsg, r, default=True) for r in DEFAULT_RULES],
        "etag": etag(world.nsg_id(nsg)),
        "id": world.nsg_id(nsg),
        "location": nsg.location or world.rg_location(nsg.resource_group),
        "name": nsg.name,
        "networkInterfaces": [ref(i) for i in nics],
        "provisioningState": "Succeeded",
        "resourceGroup": nsg.resource_group,
        "resourceGuid": guid(world.nsg_id(nsg)),
        "securityRules": [rule_doc(world, nsg, r) for r in nsg.rules],
        "subnets": [ref(i) for i in subnets],
        "type": "Microsoft.Network/networkSecurityGroups",
    }


def route_doc(world: World, rt: RouteTable, route: Route) -> dict[str, Any]:
    rid = f"{world.route_table_id(rt.name)}/routes/{route.name}"
    doc: dict[str, Any] = {
        "addressPrefix": route.address_prefix,
        "etag": etag(rid),
        "hasBgpOverride": False,
        "id": rid,
        "name": route.name,
        "nextHopType": route.next_hop_type,
        "provisioningState": "Succeeded",
        "resourceGroup": rt.resource_group,
        "type": "Microsoft.Network/routeTables/routes",
    }
    if route.next_hop_ip:
        doc["nextHopIpAddress"] = route.next_hop_ip
    return doc


def route_table_doc(world: World, rt: RouteTable) -> dict[str, Any]:
    rid = world.route_table_id(rt.name)
    subnets = [world.subnet_id(v, s) for v in world.spec.vnets for s in v.subnets if s.route_table == rt.name]
    return {
        "disableBgpRoutePropagation": rt.disable_bgp_route_propagation,
        "etag": etag(rid),
        "id": rid,
        "location": rt.location or world.rg_location(rt.resource_group),
        "name": rt.name,
        "provisioningState": "Succeeded",
        "resourceGroup": rt.resource_group,
        "resourceGuid": guid(rid),
        "routes": [route_doc(world, rt, r) for r in rt.routes],
        "subnets": [ref(i) for i in subnets],
        "type": "Microsoft.Network/routeTables",
    }


def ipconfig_id(world: World, vm: Vm, nic: Nic) -> str:
    return f"{world.nic_id(vm, nic)}/ipConfigurations/ipconfig{vm.name}"


def public_ip_name(vm: Vm, nic: Nic) -> str:
    """The public IP resource a NIC with a public address uses (``az vm create``'s ``<vm>PublicIP``)."""
    return f"{vm.name}PublicIP" if nic is vm.nics[0] else f"{nic.name}PublicIP"


def nic_doc(world: World, vm: Vm, nic: Nic) -> dict[str, Any]:
    vnet, subnet = world.subnet_of(nic)
    nid = world.nic_id(vm, nic)
    mac = guid(nid).replace("-", "")[:12].upper()
    ipconf: dict[str, Any] = {
        "etag": etag(nid),
        "id": ipconfig_id(world, vm, nic),
        "name": f"ipconfig{vm.name}",
        "primary": True,
        "privateIPAddress": nic.private_ip,
        "privateIPAddressVersion": "IPv4",
        "privateIPAllocationMethod": "Dynamic",
        "provisioningState": "Succeeded",
        "resourceGroup": vm.resource_group,
        "subnet": ref(world.subnet_id(vnet, subnet)),
        "type": "Microsoft.Network/networkInterfaces/ipConfigurations",
    }
    pools = [f"{world.lb_id(lb)}/backendAddressPools/{pool.name}" for lb in world.spec.load_balancers
             for pool in lb.backend_pools if nic is vm.nics[0] and vm.name in pool.members]
    if pools:
        ipconf["loadBalancerBackendAddressPools"] = [ref(p) for p in pools]
    if nic.public_ip:  # ARM's NIC names the public IP resource (``vm show -d`` reads its address from there)
        ipconf["publicIPAddress"] = ref(world.rid(vm.resource_group, "Microsoft.Network/publicIPAddresses",
                                                  public_ip_name(vm, nic)))
    doc: dict[str, Any] = {
        "auxiliaryMode": "None",
        "auxiliarySku": "None",
        "disableTcpStateTracking": False,
        "dnsSettings": {"appliedDnsServers": [], "dnsServers": [],
                        "internalDomainNameSuffix": f"{guid(vnet.name)[:8]}.bx.internal.cloudapp.net"},
        "enableAcceleratedNetworking": False,
        "enableIPForwarding": nic.ip_forwarding,
        "etag": etag(nid),
        "hostedWorkloads": [],
        "id": nid,
        "ipConfigurations": [ipconf],
        "location": world.vm_location(vm),
        "macAddress": "-".join(mac[i:i + 2] for i in range(0, 12, 2)),
        "name": nic.name,
        "nicType": "Standard",
        "primary": nic is vm.nics[0],
        "provisioningState": "Succeeded",
        "resourceGroup": vm.resource_group,
        "resourceGuid": guid(nid),
        "tapConfigurations": [],
        "type": "Microsoft.Network/networkInterfaces",
        "virtualMachine": ref(world.vm_id(vm)),
        "vnetEncryptionSupported": False,
    }
    if nic.nsg:
        nsg = world.nsg(nic.nsg)
        assert nsg is not None  # validated at load
        doc["networkSecurityGroup"] = ref(world.nsg_id(nsg))
    return doc


def peering_doc(world: World, vnet: VNet, peer: Peering) -> dict[str, Any]:
    remote = world.vnet(peer.remote_vnet)
    assert remote is not None  # validated at load
    rid = f"{world.vnet_id(vnet)}/virtualNetworkPeerings/{peer.name}"
    space = {"addressPrefixes": list(remote.address_prefixes)}
    return {
        "allowForwardedTraffic": peer.allow_forwarded_traffic,
        "allowGatewayTransit": peer.allow_gateway_transit,
        "allowVirtualNetworkAccess": peer.allow_virtual_network_access,
        "doNotVerifyRemoteGateways": False,
        "etag": etag(rid),
        "id": rid,
        "name": peer.name,
        "peeringState": peer.state,
        "peeringSyncLevel": peer.sync_level,
        "provisioningState": "Succeeded",
        "remoteAddressSpace": space,
        "remoteVirtualNetwork": ref(world.vnet_id(remote)),
        "remoteVirtualNetworkAddressSpace": space,
        "resourceGroup": vnet.resource_group,
        "resourceGuid": guid(rid),
        "type": "Microsoft.Network/virtualNetworks/virtualNetworkPeerings",
        "useRemoteGateways": peer.use_remote_gateways,
    }


def vnet_doc(world: World, vnet: VNet) -> dict[str, Any]:
    vid = world.vnet_id(vnet)
    subnets = []
    for sn in vnet.subnets:
        sid = world.subnet_id(vnet, sn)
        doc: dict[str, Any] = {
            "addressPrefix": sn.address_prefix,
            "delegations": [],
            "etag": etag(sid),
            "id": sid,
            "ipConfigurations": [
                ref(f"{world.nic_id(vm, n)}/ipConfigurations/ipconfig{vm.name}")
                for vm, n in world.nics() if n.subnet == f"{vnet.name}/{sn.name}"
            ],
            "name": sn.name,
            "privateEndpointNetworkPolicies": "Disabled",
            "privateLinkServiceNetworkPolicies": "Enabled",
            "provisioningState": "Succeeded",
            "resourceGroup": vnet.resource_group,
            "type": "Microsoft.Network/virtualNetworks/subnets",
        }
        if sn.nsg:
            nsg = world.nsg(sn.nsg)
            assert nsg is not None
            doc["networkSecurityGroup"] = ref(world.nsg_id(nsg))
        if sn.route_table:
            doc["routeTable"] = ref(world.route_table_id(sn.route_table))
        _subnet_edges(world, vnet, sn, doc)
        subnets.append(doc)
    return {
        "addressSpace": {"addressPrefixes": list(vnet.address_prefixes)},
        "dhcpOptions": {"dnsServers": list(vnet.dns_servers)},
        "enableDdosProtection": False,
        "etag": etag(vid),
        "id": vid,
        "location": vnet.location or world.rg_location(vnet.resource_group),
        "name": vnet.name,
        "privateEndpointVNetPolicies": "Disabled",
        "provisioningState": "Succeeded",
        "resourceGroup": vnet.resource_group,
        "resourceGuid": guid(vid),
        "subnets": subnets,
        "type": "Microsoft.Network/virtualNetworks",
        "virtualNetworkPeerings": [peering_doc(world, vnet, p) for p in vnet.peerings],
    }


def _subnet_edges(world: World, vnet: VNet, sn: Subnet, doc: dict[str, Any]) -> None:
    """A subnet's NAT gateway, service endpoints and service endpoint policies, as the subnet GET shows them."""
    if sn.nat_gateway:
        nat = world.nat_gateway(sn.nat_gateway)
        assert nat is not None  # validated at load
        doc["natGateway"] = ref(world.nat_gateway_id(nat))
    if sn.service_endpoints:
        region = vnet.location or world.rg_location(vnet.resource_group)
        doc["serviceEndpoints"] = [{"locations": [region] if service != "Microsoft.Storage" else [region, "*"],
                                    "provisioningState": "Succeeded", "service": service}
                                   for service in sn.service_endpoints]
    policies = [world.service_endpoint_policy(name) for name in sn.service_endpoint_policies]
    if policies:
        doc["serviceEndpointPolicies"] = [ref(world.service_endpoint_policy_id(p)) for p in policies if p]


def zone_doc(world: World, zone: PrivateDnsZone) -> dict[str, Any]:
    zid = world.rid(zone.resource_group, "Microsoft.Network/privateDnsZones", zone.name)
    return {
        "etag": guid("etag", zid),
        "id": zid,
        "location": "global",
        "maxNumberOfRecordSets": 25000,
        "maxNumberOfVirtualNetworkLinks": 1000,
        "maxNumberOfVirtualNetworkLinksWithRegistration": 100,
        "name": zone.name,
        "numberOfRecordSets": len(zone.records) + 1,  # + the SOA record
        "numberOfVirtualNetworkLinks": len(zone.links),
        "numberOfVirtualNetworkLinksWithRegistration": sum(1 for link in zone.links if link.registration_enabled),
        "provisioningState": "Succeeded",
        "resourceGroup": zone.resource_group,
        "type": "Microsoft.Network/privateDnsZones",
    }


def watcher_doc(world: World, location: str, name: str, rg: str) -> dict[str, Any]:
    wid = world.rid(rg, "Microsoft.Network/networkWatchers", name)
    return {
        "etag": etag(wid),
        "id": wid,
        "location": location,
        "name": name,
        "provisioningState": "Succeeded",
        "resourceGroup": rg,
        "type": "Microsoft.Network/networkWatchers",
    }


def effective_route_doc(route: EffectiveRoute) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "addressPrefix": list(route.address_prefixes),
        "nextHopIpAddress": list(route.next_hop_ips),
        "nextHopType": route.next_hop_type,
        "source": route.source,
        "state": route.state,
    }
    if route.source == "User":
        doc["name"] = route.name
        doc["disableBgpRoutePropagation"] = route.disable_bgp_route_propagation
    return doc
