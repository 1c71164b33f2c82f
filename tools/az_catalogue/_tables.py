"""Judgements REST semantics cannot give, as explicit tables with their reasons.

A POST is an action: it may change state, start something, or return a credential. A few actions
only compute a view of existing configuration; they are what a network diagnosis runs all day, so
they are listed here, one by one, each with why it is read-only. Templates are compared normalised
(lower case, every ``{parameter}`` as ``{}``). Everything not listed stays "not read-only".
"""

from __future__ import annotations

import re

__all__ = [
    "CODE_EXTENSION_TYPES",
    "CREDENTIAL_ACTION_SEGMENTS",
    "READ_ONLY_ACTIONS",
    "READ_ONLY_ACTION_SUFFIX",
    "normalise_template",
]

_NW = "/subscriptions/{}/resourcegroups/{}/providers/microsoft.network"

# (normalised template) -> why the POST only reads. Sources: the Network Watcher and networking
# REST references (learn.microsoft.com/rest/api/network-watcher, /rest/api/virtualnetwork): each of
# these "gets", "verifies", "queries" or "lists" and documents no change to any resource.
READ_ONLY_ACTIONS: dict[str, str] = {
    f"{_NW}/networkwatchers/{{}}/ipflowverify": "NetworkWatchers_VerifyIPFlow: evaluates NSG rules for a 5-tuple (test-ip-flow)",
    f"{_NW}/networkwatchers/{{}}/nexthop": "NetworkWatchers_GetNextHop: computes the next hop from route tables (show-next-hop)",
    f"{_NW}/networkwatchers/{{}}/securitygroupview": "NetworkWatchers_GetVMSecurityRules: the effective rules of a VM (show-security-group-view)",
    f"{_NW}/networkwatchers/{{}}/topology": "NetworkWatchers_GetTopology: the resource graph of a resource group (show-topology)",
    f"{_NW}/networkwatchers/{{}}/networkconfigurationdiagnostic": "NetworkWatchers_GetNetworkConfigurationDiagnostic: evaluates rules for flows (run-configuration-diagnostic)",
    f"{_NW}/networkwatchers/{{}}/queryflowlogstatus": "NetworkWatchers_GetFlowLogStatus: the flow-log configuration (flow-log show)",
    f"{_NW}/networkwatchers/{{}}/querytroubleshootresult": "NetworkWatchers_GetTroubleshootingResult: the last troubleshooting result (troubleshooting show)",
    f"{_NW}/networkwatchers/{{}}/packetcaptures/{{}}/querystatus": "PacketCaptures_GetStatus: a capture's state (packet-capture show-status)",
    f"{_NW}/networkwatchers/{{}}/connectionmonitors/{{}}/query": "ConnectionMonitors_Query: the monitor's last results (connection-monitor query)",
    f"{_NW}/networkinterfaces/{{}}/effectivenetworksecuritygroups": "NetworkInterfaces_ListEffectiveNetworkSecurityGroups (nic list-effective-nsg)",
    f"{_NW}/networkinterfaces/{{}}/effectiveroutetable": "NetworkInterfaces_GetEffectiveRouteTable (nic show-effective-route-table)",
    f"{_NW}/applicationgateways/{{}}/backendhealth": "ApplicationGateways_BackendHealth: the gateway's last probe results (show-backend-health)",
    f"{_NW}/virtualnetworkgateways/{{}}/getadvertisedroutes": "VirtualNetworkGateways_GetAdvertisedRoutes (list-advertised-routes)",
    f"{_NW}/virtualnetworkgateways/{{}}/getlearnedroutes": "VirtualNetworkGateways_GetLearnedRoutes (list-learned-routes)",
    f"{_NW}/virtualnetworkgateways/{{}}/getbgppeerstatus": "VirtualNetworkGateways_GetBgpPeerStatus (list-bgp-peer-status)",
    f"{_NW}/virtualnetworkgateways/{{}}/getvpnclientconnectionhealth": "VirtualNetworkGateways_GetVpnclientConnectionHealth (vpn-client show-health)",
    f"{_NW}/virtualnetworkgateways/{{}}/getroutesinformation": "VirtualNetworkGateways_GetRoutesInformation (get-routes-information)",
    f"{_NW}/virtualnetworkgateways/{{}}/getresiliencyinformation": "VirtualNetworkGateways_GetResiliencyInformation (get-resiliency-information)",
    f"{_NW}/virtualnetworkgateways/{{}}/supportedvpndevices": "VirtualNetworkGateways_SupportedVpnDevices: a static list (show-supported-devices)",
    f"{_NW}/expressroutegateways/{{}}/getroutesinformation": "ExpressRouteGateways_GetRoutesInformation",
    f"{_NW}/expressroutegateways/{{}}/getresiliencyinformation": "ExpressRouteGateways_GetResiliencyInformation",
    f"{_NW}/expressroutecircuits/{{}}/peerings/{{}}/arptables/{{}}": "ExpressRouteCircuits_ListArpTable (list-arp-tables)",
    f"{_NW}/expressroutecircuits/{{}}/peerings/{{}}/routetables/{{}}": "ExpressRouteCircuits_ListRoutesTable (list-route-tables)",
    f"{_NW}/expressroutecircuits/{{}}/peerings/{{}}/routetablessummary/{{}}": "ExpressRouteCircuits_ListRoutesTableSummary",
    f"{_NW}/virtualhubs/{{}}/bgpconnections/{{}}/advertisedroutes": "VirtualHubBgpConnections_ListAdvertisedRoutes (routeserver peering list-advertised-routes)",
    f"{_NW}/virtualhubs/{{}}/bgpconnections/{{}}/learnedroutes": "VirtualHubBgpConnections_ListLearnedRoutes (routeserver peering list-learned-routes)",
    f"{_NW}/publicipaddresses/{{}}/ddosprotectionstatus": "PublicIPAddresses_DdosProtectionStatus (public-ip ddos-protection show)",
    f"{_NW}/loadbalancers/{{}}/backendaddresspools/{{}}/queryinboundnatruleportmapping": "LoadBalancers_ListInboundNatRulePortMappings (lb list-mapping)",
    "/subscriptions/{}/providers/microsoft.network/getdnsresourcereference": "DnsResourceReference_GetByTargetResources (dns list-references)",
    "/{*}/providers/microsoft.insights/metrics": "Metrics_ListAtSubscriptionScopePost: metric values (monitor metrics list-sub)",
}  # fmt: skip

# A POST whose last segment is a name/availability check only answers whether a name is free
# (Microsoft.X/checkNameAvailability and its per-location or per-parent variants).
READ_ONLY_ACTION_SUFFIX = re.compile(r"^check[a-z]*availability$")

# Action segments that exist to return a credential: the ARM convention (RPC: secrets are returned
# only by POST actions named list*Keys / list*Secrets / list*Credential(s) / regenerate*) and the
# few service-specific names azure-cli reaches. Used for ``az rest``/``--ids`` paths on templates
# the catalogue does not know, and to mark catalogue POSTs FORBIDDEN when their response model is
# opaque.
CREDENTIAL_ACTION_SEGMENTS = re.compile(
    r"^(list[a-z]*(keys?|credentials?|secrets?|sas|callbackurls?|connectionstrings?|tokens?|passwords?|passphrases?)|"
    r"regenerate[a-z]*|generate[a-z]*(sas|token|key|credentials?)[a-z]*|get[a-z]*(keys?|secrets?|credentials?|tokens?)|"
    r"readonlykeys|sharedkeys?|listvalue|accessprofiles?|listclusteradmincredential|listclusterusercredential|"
    r"retrievebootdiagnosticsdata|getvpnprofilepackageurl|vpndeviceconfigurationscript|getcallbackconfig|"
    r"getpolicypropertieswithsecrets|getencryptionkey|getfullurl)$"
)

# VM extension types that run code or change the VM's users and keys: installing one is remote
# code execution or credential planting. Sources: the extensions' documentation (Custom Script
# Extension for Linux/Windows, Run Command, VMAccess, PowerShell DSC) and the names azure-cli's own
# vm module uses for VMAccess (``_LINUX_ACCESS_EXT``, ``_WINDOWS_ACCESS_EXT``), read at generation.
CODE_EXTENSION_TYPES = frozenset({
    "customscript", "customscriptextension", "customscriptforlinux", "runcommandlinux", "runcommandwindows",
    "runcommandhandlerlinux", "runcommandhandlerwindows", "vmaccessforlinux", "vmaccessagent",
    "enablevmaccess", "dsc", "dscforlinux", "vmaccess",
})  # fmt: skip


def normalise_template(template: str) -> str:
    """Lower case, every ``{name}`` -> ``{}`` (``{*name}`` -> ``{*}``): how templates are compared."""
    return re.sub(r"\{(\*?)[^}]*\}", lambda m: "{" + m.group(1) + "}", template).lower()
