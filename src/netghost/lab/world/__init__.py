"""The lab's world: a scenario's declared Azure network, and the answers computed from it.

A scenario (``lab/scenarios/<name>.yaml``) validates into a :class:`WorldSpec`; a :class:`World`
wraps it and answers every network question (NSG verdicts, effective routes, DNS, listening
services, the end-to-end outcome of each traffic flow) from first principles, so the ``az``
simulator, the probe shims and the capture synthesizer, which all ask it, cannot disagree. The
spec also declares the faults: one network fault (``WorldSpec.fault``) and any number of
:class:`CloudFaultSpec` failures of the Azure API.
"""

from netghost.lab.world._answers import DnsAnswer, FlowOutcome, NextHop, NsgDecision
from netghost.lab.world._edge import LbBackendPool, LbFrontend, LbProbe, LbRule, LoadBalancer, NatGateway
from netghost.lab.world._fault_specs import CLOUD_FAULT_KINDS, CloudFaultSpec
from netghost.lab.world._fields import is_ip
from netghost.lab.world._firewall import (
    AzureFirewall,
    FirewallPolicy,
    FirewallRuleCollection,
    FirewallVerdict,
    RuleCollectionGroup,
    firewall_verdict,
)
from netghost.lab.world._gateways import (
    GATEWAY_SUBNET,
    BgpSettings,
    LocalNetworkGateway,
    VnetGateway,
    VpnConnection,
)
from netghost.lab.world._netcalc import (
    DEFAULT_PRIORITIES,
    DEFAULT_RULES,
    EffectiveRoute,
    RuleMatchContext,
)
from netghost.lab.world._resources import (
    ManagedCluster,
    Nic,
    Nsg,
    Peering,
    PrivateDnsZone,
    PrivateEndpoint,
    Route,
    RouteTable,
    ScaleSet,
    SecurityRule,
    ServiceEndpointPolicy,
    StorageAccount,
    Subnet,
    TrafficFlow,
    Vm,
    VNet,
)
from netghost.lab.world._spec import WorldSpec
from netghost.lab.world._world import (
    SCENARIO_DIR,
    World,
    answer_for,
    fault_problems,
    load_world,
    scenario_names,
    world_from_yaml,
    world_path,
)

__all__ = [
    "CLOUD_FAULT_KINDS",
    "DEFAULT_PRIORITIES",
    "DEFAULT_RULES",
    "GATEWAY_SUBNET",
    "SCENARIO_DIR",
    "AzureFirewall",
    "BgpSettings",
    "CloudFaultSpec",
    "DnsAnswer",
    "EffectiveRoute",
    "FirewallPolicy",
    "FirewallRuleCollection",
    "FirewallVerdict",
    "FlowOutcome",
    "LbBackendPool",
    "LbFrontend",
    "LbProbe",
    "LbRule",
    "LoadBalancer",
    "LocalNetworkGateway",
    "ManagedCluster",
    "NatGateway",
    "NextHop",
    "Nic",
    "Nsg",
    "NsgDecision",
    "Peering",
    "PrivateDnsZone",
    "PrivateEndpoint",
    "Route",
    "RouteTable",
    "RuleCollectionGroup",
    "RuleMatchContext",
    "ScaleSet",
    "SecurityRule",
    "ServiceEndpointPolicy",
    "StorageAccount",
    "Subnet",
    "TrafficFlow",
    "VNet",
    "Vm",
    "VnetGateway",
    "VpnConnection",
    "World",
    "WorldSpec",
    "answer_for",
    "fault_problems",
    "firewall_verdict",
    "is_ip",
    "load_world",
    "scenario_names",
    "world_from_yaml",
    "world_path",
]
