"""The commands the playbook runs, each a targeted read (``--query``, ``-o json``), and how to tell them apart.

Every read names exactly what it needs (seed 001's targeted-query rule), works for VMs in any resource
group, and has a fixed shape, so that :func:`step_of` can tell from a command line alone which step it
was: the brain keeps no state of its own and rebuilds what it knows from the history on every turn
(which is also what makes ``--resume`` exact).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

__all__ = [
    "appliance_by_ip",
    "curl_probe",
    "dig_short",
    "local_gateways",
    "nsg_owning_rule",
    "nsg_rules",
    "option",
    "private_endpoints",
    "private_zone_links",
    "private_zone_list",
    "private_zone_records",
    "routes_to",
    "show_next_hop",
    "step_of",
    "storage_accounts",
    "test_ip_flow",
    "vm_list",
    "vmss_list",
    "vmss_nics",
    "vnet_list",
    "vpn_connections",
]

_VM_FIELDS = "{name:name, rg:resourceGroup, ip:privateIps, location:location, power:powerState, id:id}"


def vm_list() -> str:
    """Every VM with its group, private IPs, region and power state (one read finds both ends anywhere)."""
    return f'az vm list -d --query "[].{_VM_FIELDS}" -o json'


def vmss_list() -> str:
    """Every scale set (uniform instances are no ``az vm list`` entries, so a set named in the complaint is
    found only here)."""
    return 'az vmss list --query "[].{name:name, rg:resourceGroup, id:id, location:location}" -o json'


def vmss_nics(rg: str, name: str) -> str:
    """A scale set's instances by address: each NIC's private IP and the instance it belongs to."""
    return (f"az vmss nic list -g {shlex.quote(rg)} --vmss-name {shlex.quote(name)} "
            '--query "[].{ip:ipConfigurations[0].privateIPAddress, instance:virtualMachine.id}" -o json')


def vnet_list() -> str:
    """VNets with their prefixes, subnets (NSG, route table) and peerings (state, remote)."""
    query = ("[].{name:name, rg:resourceGroup, id:id, prefixes:addressSpace.addressPrefixes, "
             "subnets:subnets[].{name:name, prefix:addressPrefix, nsg:networkSecurityGroup.id, "
             "routeTable:routeTable.id}, peerings:virtualNetworkPeerings[].{name:name, id:id, "
             "state:peeringState, remote:remoteVirtualNetwork.id}}")
    return f'az network vnet list --query "{query}" -o json'


def storage_accounts() -> str:
    """Storage accounts a capture could be written to."""
    return 'az storage account list --query "[].{name:name, rg:resourceGroup, location:location, id:id}" -o json'


def dig_short(name: str) -> str:
    """What this machine's resolver answers for ``name`` (LOCAL evidence: not the VNet's view)."""
    return f"dig +short {shlex.quote(name)}"


def private_zone_list() -> str:
    """The private DNS zones (which one owns the name the client asks for)."""
    return 'az network private-dns zone list --query "[].{name:name, rg:resourceGroup, id:id}" -o json'


def private_zone_links(rg: str, zone: str) -> str:
    """The VNets a private zone is linked to (an unlinked VNet never sees the zone)."""
    return (f"az network private-dns link vnet list -g {shlex.quote(rg)} -z {shlex.quote(zone)} "
            '--query "[].{name:name, id:id, vnet:virtualNetwork.id, state:virtualNetworkLinkState}" -o json')


def private_zone_records(rg: str, zone: str) -> str:
    """A private zone's A records."""
    return (f"az network private-dns record-set a list -g {shlex.quote(rg)} -z {shlex.quote(zone)} "
            '--query "[].{name:name, ips:aRecords[].ipv4Address}" -o json')


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
    return (f"az network watcher test-ip-flow -g {shlex.quote(rg)} --vm {shlex.quote(vm)} --direction {direction} "
            f"--protocol TCP --local {shlex.quote(local)} --remote {shlex.quote(remote)} -o json")


def show_next_hop(rg: str, vm: str, source: str, dest: str) -> str:
    """The route the client's NIC uses towards the server."""
    return (f"az network watcher show-next-hop -g {shlex.quote(rg)} --vm {shlex.quote(vm)} "
            f"--source-ip {source} --dest-ip {dest} -o json")


def appliance_by_ip(ip: str) -> str:
    """The VM that owns a next-hop address, with its power state."""
    return (f"az vm list -d --query \"[?contains(privateIps, '{ip}')].{_VM_FIELDS}\" -o json")


def routes_to(rg: str, table: str, next_hop_ip: str) -> str:
    """The user routes of ``table`` that send traffic to ``next_hop_ip``."""
    return (f"az network route-table route list -g {shlex.quote(rg)} --route-table-name {shlex.quote(table)} "
            f"--query \"[?nextHopIpAddress=='{next_hop_ip}'].{{name:name, id:id, prefix:addressPrefix}}\" -o json")


def nsg_owning_rule(rule: str) -> str:
    """The NSG that holds a custom rule named ``rule`` (test-ip-flow names the rule, not its NSG)."""
    return (f"az network nsg list --query \"[?securityRules[?name=='{rule}']].{{name:name, rg:resourceGroup, id:id, "
            f"rules:securityRules[?name=='{rule}'].{{name:name, priority:priority, access:access}}}}\" -o json")


def nsg_rules(nsg_id: str) -> str:
    """An NSG's custom rules with everything a verdict needs (the brain evaluates them itself where
    test-ip-flow cannot: on an appliance, whose NIC filters packets addressed to others)."""
    query = ("{name:name, id:id, rg:resourceGroup, rules:securityRules[].{name:name, priority:priority, "
             "direction:direction, access:access, protocol:protocol, src:sourceAddressPrefix, "
             "srcs:sourceAddressPrefixes, dst:destinationAddressPrefix, dsts:destinationAddressPrefixes, "
             "port:destinationPortRange, ports:destinationPortRanges}}")
    return f"az network nsg show --ids {shlex.quote(nsg_id)} --query \"{query}\" -o json"


def vpn_connections(rg: str) -> str:
    """A group's site-to-site connections: their state and the local network gateway each reaches."""
    return (f"az network vpn-connection list -g {shlex.quote(rg)} --query \"[].{{name:name, id:id, "
            "status:connectionStatus, local:localNetworkGateway2.id, gateway:virtualNetworkGateway1.id}\" -o json")


def local_gateways(rg: str) -> str:
    """A group's local network gateways: the on-premises ranges each stands for."""
    return (f"az network local-gateway list -g {shlex.quote(rg)} --query \"[].{{name:name, id:id, "
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


def step_of(command: str) -> str | None:
    """Which read a command line is (its step name), or None for a command the playbook never sends."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    head = " ".join(argv[:5])
    query = option(argv, "--query") or ""
    if head.startswith("az vm list"):
        return "appliance" if query.startswith("[?contains(privateIps") else "vms"
    table = {
        "az vmss list": "vmss",
        "az vmss nic list": "vmss_nics",
        "az network vnet list": "vnets",
        "az storage account list": "storage",
        "az network private-dns zone list": "zones",
        "az network private-dns link vnet": "zone_links",
        "az network private-dns record-set a": "zone_records",
        "az network watcher test-ip-flow": "flow",
        "az network watcher show-next-hop": "next_hop",
        "az network route-table route list": "routes",
        "az network nsg list": "rule_owner",
        "az network nsg show": "nsg_rules",
        "az network vpn-connection list": "vpn_connections",
        "az network local-gateway list": "local_gateways",
        "az network private-endpoint list": "endpoints",
    }
    for prefix, step in table.items():
        if head.startswith(prefix):
            return step
    if argv[:1] == ["dig"]:
        return "dig"
    if argv[:1] == ["curl"]:
        return "probe"
    if argv[:1] == ["cat"]:
        return "read_report"
    return None
