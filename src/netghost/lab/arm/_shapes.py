"""Where ``properties`` sits in each resource type lab ARM serves (the REST specs' nesting).

Read from the REST specs of the api-versions azure-cli 2.91 asks for (``Microsoft.Network`` 2024-07-01
and later, ``Microsoft.Compute`` 2024-11-01 and later, ``Microsoft.Storage`` 2025-08-01,
``Microsoft.Network/privateDnsZones`` 2024-06-01, ``Microsoft.ContainerService`` 2025): which nested
objects are sub-resources with their own ``properties`` (an NSG's rules, a VNet's subnets and
peerings, a NIC's IP configurations, a route table's routes, a VM's NIC references ...), and which
properties az prints under another name. Everything not listed is a plain value: it stays where it is.
"""

from __future__ import annotations

from netghost.lab.arm._rest import ENVELOPE, FLAT, Shape

__all__ = [
    "AKS",
    "EXTENSION",
    "FLAT",
    "GATEWAY",
    "LOCAL_GATEWAY",
    "NIC",
    "NSG",
    "PACKET_CAPTURE",
    "PEERING",
    "PRIVATE_ENDPOINT",
    "RECORD_SET",
    "ROUTE",
    "ROUTE_TABLE",
    "RULE",
    "SECURITY_GROUP_VIEW",
    "STORAGE_ACCOUNT",
    "SUBNET",
    "VM",
    "VMSS",
    "VMSS_VM",
    "VNET",
    "VNET_LINK",
    "VPN_CONNECTION",
    "WATCHER",
    "ZONE",
]

_SUB = Shape(envelope=frozenset({"id", "name", "type", "etag"}))
"""A plain sub-resource: id, name, type, etag beside its properties."""
_REF_WITH_PROPERTIES = Shape(envelope=frozenset({"id"}))
"""A reference whose extra fields are properties (a VM's NIC reference: ``{id, properties: {primary}}``)."""

RULE = _SUB
ROUTE = _SUB
PEERING = _SUB
IPCONFIG = _SUB
SUBNET = _SUB
NSG = Shape(children={"securityRules": RULE, "defaultSecurityRules": RULE})
ROUTE_TABLE = Shape(children={"routes": ROUTE})
VNET = Shape(children={"subnets": SUBNET, "virtualNetworkPeerings": PEERING})
NIC = Shape(children={"ipConfigurations": IPCONFIG})
ZONE = Shape()
VNET_LINK = Shape()
RECORD_SET = Shape()
WATCHER = Shape()
PACKET_CAPTURE = Shape()
EXTENSION = Shape(renames={"typePropertiesType": "type"})
VM = Shape(envelope=ENVELOPE | {"resources"}, children={"networkProfile.networkInterfaces": _REF_WITH_PROPERTIES})
_VMSS_IPCONFIG = Shape(envelope=frozenset({"id", "name"}))
_VMSS_NICCONFIG = Shape(envelope=frozenset({"id", "name"}), children={"ipConfigurations": _VMSS_IPCONFIG})
_VMSS_EXTENSION = Shape(envelope=frozenset({"id", "name", "type"}), renames={"typePropertiesType": "type"})
VMSS = Shape(children={"virtualMachineProfile.networkProfile.networkInterfaceConfigurations": _VMSS_NICCONFIG,
                       "virtualMachineProfile.extensionProfile.extensions": _VMSS_EXTENSION})
VMSS_VM = Shape(envelope=ENVELOPE | {"instanceId", "resources"},
                children={"networkProfile.networkInterfaces": _REF_WITH_PROPERTIES})
AKS = Shape()
STORAGE_ACCOUNT = Shape(renames={"enableHttpsTrafficOnly": "supportsHttpsTrafficOnly", "networkRuleSet": "networkAcls"},
                        children={"networkAcls.virtualNetworkRules": Shape(flat=True, renames={"virtualNetworkResourceId": "id"}),
                                  "networkAcls.ipRules": Shape(flat=True, renames={"ipAddressOrRange": "value"})})
"""The account; its network rules are ``networkAcls`` on ARM, with ``id`` and ``value`` where the SDK says
``virtualNetworkResourceId`` and ``ipAddressOrRange``."""
PRIVATE_ENDPOINT = Shape(children={"privateLinkServiceConnections": _SUB,
                                   "manualPrivateLinkServiceConnections": _SUB})
GATEWAY = Shape(children={"ipConfigurations": _SUB})
LOCAL_GATEWAY = Shape()
VPN_CONNECTION = Shape()
_ASSOCIATIONS = "networkInterfaces.securityRuleAssociations"
SECURITY_GROUP_VIEW = Shape(flat=True, children={f"{_ASSOCIATIONS}.defaultSecurityRules": RULE,
                                                 f"{_ASSOCIATIONS}.networkInterfaceAssociation.securityRules": RULE,
                                                 f"{_ASSOCIATIONS}.subnetAssociation.securityRules": RULE})
"""``securityGroupView``'s result: flat, but the rules of its associations are resources with properties."""
