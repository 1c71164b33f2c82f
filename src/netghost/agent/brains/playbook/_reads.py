"""The commands the playbook runs, each a targeted read (``--query``, ``-o json``), and how to tell them apart.

Every read names exactly what it needs (seed 001's targeted-query rule), works for resources in any
resource group, and has a fixed shape, so that :func:`step_of` can tell from a command line alone which
step it was: the brain keeps no state of its own and rebuilds what it knows from the history on every
turn (which is also what makes ``--resume`` exact). The inventory reads (VMs, NICs, VNets, scale sets,
storage) are taken once; the path walk then reads per hop: a NIC's effective routes, Network Watcher's
NSG verdict at each end, an NSG's rules where a hop forwards packets addressed to others, a gateway's
connections and on-premises ranges.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

__all__ = [
    "curl_probe",
    "dig_short",
    "effective_nsg_rule",
    "effective_routes",
    "firewall_list",
    "firewall_policy_groups",
    "learned_routes",
    "load_balancers",
    "local_gateways",
    "nic_list",
    "nsg_rules",
    "option",
    "private_endpoints",
    "private_zone_links",
    "private_zone_list",
    "private_zone_records",
    "route_table",
    "service_endpoint_policies",
    "step_of",
    "storage_accounts",
    "test_ip_flow",
    "vm_list",
    "vmss_instances",
    "vmss_list",
    "vmss_nics",
    "vnet_gateways",
    "vnet_list",
    "vpn_connections",
]

_VM_FIELDS = "{name:name, rg:resourceGroup, ip:privateIps, location:location, power:powerState, id:id}"
_RULE_FIELDS = ("{name:name, priority:priority, direction:direction, access:access, protocol:protocol, "
                "src:sourceAddressPrefix, srcs:sourceAddressPrefixes, dst:destinationAddressPrefix, "
                "dsts:destinationAddressPrefixes, port:destinationPortRange, ports:destinationPortRanges}")


def _q(word: str) -> str:
    return shlex.quote(word)


def vm_list() -> str:
    """Every VM with its group, private IPs, region and power state (one read finds both ends anywhere)."""
    return f'az vm list -d --query "[].{_VM_FIELDS}" -o json'


def nic_list() -> str:
    """Every NIC: its VM, addresses, subnet, its own NSG and its IP forwarding flag (an appliance that
    forwards needs it; a NIC's NSG filters before the subnet's on the way in)."""
    return ('az network nic list --query "[].{name:name, id:id, rg:resourceGroup, vm:virtualMachine.id, '
            'forwarding:enableIPForwarding, nsg:networkSecurityGroup.id, ips:ipConfigurations[].privateIPAddress, '
            'subnet:ipConfigurations[0].subnet.id}" -o json')


def vmss_list() -> str:
    """Every scale set (uniform instances are no ``az vm list`` entries, so a set named in the complaint is
    found only here)."""
    return 'az vmss list --query "[].{name:name, rg:resourceGroup, id:id, location:location}" -o json'


def vmss_nics(rg: str, name: str) -> str:
    """A scale set's instances by address: each NIC's private IP, NSG and subnet, and its instance."""
    return (f"az vmss nic list -g {_q(rg)} --vmss-name {_q(name)} "
            '--query "[].{ip:ipConfigurations[0].privateIPAddress, instance:virtualMachine.id, id:id, '
            'nsg:networkSecurityGroup.id, subnet:ipConfigurations[0].subnet.id}" -o json')


def vmss_instances(rg: str, name: str) -> str:
    """A scale set's instances with their power state (one stopped instance fails one call in N)."""
    return (f"az vmss list-instances -g {_q(rg)} -n {_q(name)} --expand instanceView "
            "--query \"[].{id:id, instance:instanceId, power:instanceView.statuses[?starts_with(code, "
            "'PowerState/')].displayStatus | [0]}\" -o json")


def vnet_list() -> str:
    """VNets with their prefixes and DNS servers, subnets (NSG, route table) and peerings (state both ways is
    read from both VNets, the remote's address space, gateway transit)."""
    query = ("[].{name:name, rg:resourceGroup, id:id, prefixes:addressSpace.addressPrefixes, "
             "dns:dhcpOptions.dnsServers, subnets:subnets[].{name:name, id:id, prefix:addressPrefix, "
             "nsg:networkSecurityGroup.id, routeTable:routeTable.id, endpoints:serviceEndpoints[].service, "
             "policies:serviceEndpointPolicies[].id, natGateway:natGateway.id}, peerings:virtualNetworkPeerings[].{name:name, "
             "id:id, state:peeringState, remote:remoteVirtualNetwork.id, remotePrefixes:remoteAddressSpace."
             "addressPrefixes, forwarded:allowForwardedTraffic, transit:allowGatewayTransit, "
             "useRemote:useRemoteGateways}}")
    return f'az network vnet list --query "{query}" -o json'


def storage_accounts() -> str:
    """Storage accounts a capture could be written to."""
    return ('az storage account list --query "[].{name:name, rg:resourceGroup, location:location, id:id, '
            'default:networkRuleSet.defaultAction, vnetRules:networkRuleSet.virtualNetworkRules[].[id, '
            'virtualNetworkResourceId][], ipRules:networkRuleSet.ipRules[].[value, ipAddressOrRange][]}" -o json')


def service_endpoint_policies() -> str:
    """Service endpoint policies: which storage accounts a subnet's service endpoint may still reach."""
    return ('az network service-endpoint policy list --query "[].{name:name, id:id, '
            'definitions:serviceEndpointPolicyDefinitions[].{service:service, resources:serviceResources}}" -o json')


def dig_short(name: str) -> str:
    """What this machine's resolver answers for ``name`` (LOCAL evidence: not the VNet's view)."""
    return f"dig +short {_q(name)}"


def private_zone_list() -> str:
    """The private DNS zones (which one owns the name the client asks for)."""
    return 'az network private-dns zone list --query "[].{name:name, rg:resourceGroup, id:id}" -o json'


def private_zone_links(rg: str, zone: str) -> str:
    """The VNets a private zone is linked to (an unlinked VNet never sees the zone)."""
    return (f"az network private-dns link vnet list -g {_q(rg)} -z {_q(zone)} "
            '--query "[].{name:name, id:id, vnet:virtualNetwork.id, state:virtualNetworkLinkState}" -o json')


def private_zone_records(rg: str, zone: str) -> str:
    """A private zone's record sets of every type (a name that holds only a TXT record answers an A lookup with
    no address): name, type, addresses, alias."""
    return (f"az network private-dns record-set list -g {_q(rg)} -z {_q(zone)} "
            '--query "[].{name:name, type:type, ips:aRecords[].ipv4Address, cname:cnameRecord.cname}" -o json')


def private_endpoints() -> str:
    """Private endpoints with their addresses and the state of their connection (auto-approved ones list it
    under privateLinkServiceConnections, manual ones under manualPrivateLinkServiceConnections)."""
    query = ("[].{name:name, id:id, rg:resourceGroup, ips:customDnsConfigs[].ipAddresses[], "
             "fqdns:customDnsConfigs[].fqdn, "
             "status:(privateLinkServiceConnections[0] || manualPrivateLinkServiceConnections[0])"
             ".privateLinkServiceConnectionState.status, "
             "target:(privateLinkServiceConnections[0] || manualPrivateLinkServiceConnections[0]).privateLinkServiceId}")
    return f'az network private-endpoint list --query "{query}" -o json'


def test_ip_flow(rg: str, vm: str, direction: str, local: str, remote: str) -> str:
    """Network Watcher's NSG verdict for one leg of the flow, as seen on ``vm``'s NIC."""
    return (f"az network watcher test-ip-flow -g {_q(rg)} --vm {_q(vm)} --direction {direction} "
            f"--protocol TCP --local {_q(local)} --remote {_q(remote)} -o json")


def effective_routes(rg: str, nic: str) -> str:
    """The routes a NIC really uses (system, peering, gateway and user routes merged), active ones only: the
    walk picks the longest prefix itself, at every hop that forwards."""
    return (f"az network nic show-effective-route-table -g {_q(rg)} -n {_q(nic)} --query \"value[?state=='Active']"
            '.{prefixes:addressPrefix, type:nextHopType, ips:nextHopIpAddress, source:source, name:name}" -o json')


def effective_nsg_rule(rg: str, nic: str, rule: str) -> str:
    """Which NSG applied to a NIC (its own, or its subnet's) holds the rule Network Watcher named, and at
    what priority (the verdict names a rule, not its NSG; names repeat across NSGs)."""
    return (f"az network nic list-effective-nsg -g {_q(rg)} -n {_q(nic)} --query \"value[].{{nsg:"
            f"networkSecurityGroup.id, subnet:association.subnet.id, nic:association.networkInterface.id, "
            f"rules:effectiveSecurityRules[?name=='{rule}'].{{name:name, priority:priority, access:access, "
            f"direction:direction}}}}\" -o json")


def nsg_rules(nsg_id: str) -> str:
    """An NSG's custom rules with everything a verdict needs (the brain evaluates them itself where
    test-ip-flow cannot: on an appliance, whose NIC filters packets addressed to others)."""
    query = f"{{name:name, id:id, rg:resourceGroup, rules:securityRules[].{_RULE_FIELDS}}}"
    return f"az network nsg show --ids {_q(nsg_id)} --query \"{query}\" -o json"


def route_table(table_id: str) -> str:
    """A route table's settings that the effective routes do not show: whether it lets the gateway's routes
    in (BGP route propagation)."""
    return (f"az network route-table show --ids {_q(table_id)} --query \"{{name:name, id:id, rg:resourceGroup, "
            'disableBgp:disableBgpRoutePropagation, routes:routes[].{name:name, prefix:addressPrefix, '
            'type:nextHopType, ip:nextHopIpAddress}}" -o json')


def vnet_gateways(rg: str) -> str:
    """A group's virtual network gateways: where they sit and whether they are provisioned."""
    return (f"az network vnet-gateway list -g {_q(rg)} --query \"[].{{name:name, id:id, rg:resourceGroup, "
            "state:provisioningState, type:gatewayType, subnet:ipConfigurations[0].subnet.id}\" -o json")


def firewall_list() -> str:
    """Every Azure Firewall: the private address routes send traffic to, its policy, and its own (classic)
    rule collections (a firewall holds no NIC, so ``nic list`` never shows the appliance at that address)."""
    return ('az network firewall list --query "[].{name:name, id:id, rg:resourceGroup, state:provisioningState, '
            'ips:ipConfigurations[].privateIPAddress, policy:firewallPolicy.id, network:networkRuleCollections, '
            'application:applicationRuleCollections}" -o json')


def firewall_policy_groups(rg: str, policy: str) -> str:
    """A firewall policy's rule collection groups with their collections and rules (the firewall's rules)."""
    return (f"az network firewall policy rule-collection-group list -g {_q(rg)} --policy-name {_q(policy)} "
            '--query "[].{name:name, id:id, priority:priority, ruleCollections:ruleCollections}" -o json')


def load_balancers() -> str:
    """Every load balancer: its frontends' addresses, its rules (frontend and backend ports, pool, probe), its
    pools' members and its probes (a private address no NIC holds may be a frontend)."""
    query = ("[].{name:name, id:id, rg:resourceGroup, frontends:frontendIPConfigurations[].{name:name, id:id, "
             "ip:privateIPAddress}, rules:loadBalancingRules[].{name:name, id:id, frontend:frontendIPConfiguration.id, "
             "frontendPort:frontendPort, backendPort:backendPort, protocol:protocol, pool:backendAddressPool.id, "
             "probe:probe.id}, pools:backendAddressPools[].{name:name, id:id, members:backendIPConfigurations[].id, "
             "addresses:loadBalancerBackendAddresses[].ipAddress}, probes:probes[].{name:name, id:id, port:port, "
             "protocol:protocol, path:requestPath}}")
    return f'az network lb list --query "{query}" -o json'


def learned_routes(rg: str, gateway: str) -> str:
    """The routes a gateway has learned (a site whose tunnel is down, or whose range is not declared, has none)."""
    return (f"az network vnet-gateway list-learned-routes -g {_q(rg)} -n {_q(gateway)} "
            '--query "value[].{prefix:network, origin:origin, nextHop:nextHop}" -o json')


def vpn_connections(rg: str) -> str:
    """A group's site-to-site connections: their state and the local network gateway each reaches (RISKY:
    a connection's document carries its shared key, so a human approves the read; the key is redacted)."""
    return (f"az network vpn-connection list -g {_q(rg)} --query \"[].{{name:name, id:id, "
            "status:connectionStatus, local:localNetworkGateway2.id, gateway:virtualNetworkGateway1.id}\" -o json")


def local_gateways(rg: str) -> str:
    """A group's local network gateways: the on-premises ranges each stands for."""
    return (f"az network local-gateway list -g {_q(rg)} --query \"[].{{name:name, id:id, "
            "prefixes:localNetworkAddressSpace.addressPrefixes}\" -o json")


def curl_probe(ip: str, port: int) -> str:
    """A TCP connect from this machine (LOCAL): refused (exit 7), timed out (28) or connected (any HTTP
    answer or none); http:// because the shell runs only http(s) URLs automatically."""
    return f"curl -sS -m 5 -o /dev/null http://{ip}:{port}/"


def option(argv: Sequence[str], *names: str) -> str | None:
    """The value of the first of ``names`` in ``argv``."""
    for i, word in enumerate(argv):
        if word in names and i + 1 < len(argv):
            return argv[i + 1]
    return None


_STEPS = {
    "az vm list": "vms",
    "az vmss list-instances": "vmss_instances",
    "az vmss list": "vmss",
    "az vmss nic list": "vmss_nics",
    "az network nic list-effective-nsg": "nsg_owner",
    "az network nic show-effective-route-table": "eff_routes",
    "az network nic list": "nics",
    "az network vnet list": "vnets",
    "az storage account list": "storage",
    "az network private-dns zone list": "zones",
    "az network private-dns link vnet": "zone_links",
    "az network private-dns record-set": "zone_records",
    "az network watcher test-ip-flow": "flow",
    "az network nsg show": "nsg_rules",
    "az network route-table show": "route_table",
    "az network vnet-gateway list-learned-routes": "learned_routes",
    "az network vnet-gateway list": "gateways",
    "az network vpn-connection list": "vpn_connections",
    "az network local-gateway list": "local_gateways",
    "az network private-endpoint list": "endpoints",
    "az network firewall list": "firewalls",
    "az network lb list": "lbs",
    "az network service-endpoint policy list": "sep",
    "az network firewall policy rule-collection-group list": "fw_groups",
}


def step_of(command: str) -> str | None:
    """Which read a command line is (its step name), or None for a command the playbook never sends."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    words: list[str] = []
    for word in argv:  # the command group: the words before the first option
        if word.startswith("-"):
            break
        words.append(word)
    head = " ".join(words)
    for prefix, step in _STEPS.items():
        if head == prefix or head.startswith(prefix + " "):
            return step
    if argv[:1] == ["dig"]:
        return "dig"
    if argv[:1] == ["curl"]:
        return "probe"
    if argv[:1] == ["cat"]:
        return "read_report"
    return None
