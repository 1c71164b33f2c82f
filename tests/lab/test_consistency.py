"""Per world: the simulator's diagnostics agree with each other and with the world's verdicts.

The checks re-derive answers from the *az output* itself (not from the world object): the
longest-prefix match over ``show-effective-route-table`` must give ``show-next-hop``'s hop, and a
first-match walk over ``list-effective-nsg`` must give ``test-ip-flow``'s rule. The flow verdicts
of the world must match what the diagnostics say about the same packets, and every answer file's
``resource_id`` must exist in the simulated cloud.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable

import pytest

from netghost.lab.world import SCENARIO_DIR, scenario_names

from .conftest import Lab


def _lpm(routes: list[dict], dst: str) -> dict:
    address = ipaddress.IPv4Address(dst)
    best = None
    for route in routes:
        if route["state"] != "Active":
            continue
        for prefix in route["addressPrefix"]:
            net = ipaddress.ip_network(prefix)
            if address in net:
                rank = (net.prefixlen, route["source"] == "User")
                if best is None or rank > best[0]:
                    best = (rank, route)
    assert best is not None
    return best[1]


def _matches(prefix: str, ip: str, vnet_space: list[str]) -> bool:
    if prefix == "0.0.0.0/0":
        return True
    if prefix == "VirtualNetwork":
        return any(ipaddress.IPv4Address(ip) in ipaddress.ip_network(p) for p in vnet_space)
    if prefix == "AzureLoadBalancer":
        return ip == "168.63.129.16"
    if prefix == "Internet":
        return ipaddress.IPv4Address(ip).is_global
    return ipaddress.IPv4Address(ip) in ipaddress.ip_network(prefix, strict=False)


def _port_ok(ranges: list[str], port: int) -> bool:
    return any(int(r.split("-")[0]) <= port <= int(r.split("-")[1]) for r in ranges)


def _first_match(effective: dict, direction: str, *, src: str, sport: int, dst: str, dport: int,
                 vnet_space: list[str]) -> list[tuple[str, str]]:
    """(access, name) of the deciding rule in each NSG layer, from the az output alone."""
    verdicts = []
    for group in effective["value"]:
        rules = sorted((r for r in group["effectiveSecurityRules"] if r["direction"] == direction),
                       key=lambda r: r["priority"])
        for rule in rules:
            if rule["protocol"] not in ("All", "Tcp"):
                continue
            if not any(_matches(p, src, vnet_space) for p in rule["sourceAddressPrefixes"]):
                continue
            if not any(_matches(p, dst, vnet_space) for p in rule["destinationAddressPrefixes"]):
                continue
            if _port_ok(rule["sourcePortRanges"], sport) and _port_ok(rule["destinationPortRanges"], dport):
                verdicts.append((rule["access"], rule["name"]))
                break
    return verdicts


def _json(lab: Lab, command: str) -> dict | list:
    result = lab.az(command)
    assert result.code == 0, f"az {command}\n{result.err}"
    return json.loads(result.out)


@pytest.mark.parametrize("name", scenario_names())
def test_diagnostics_agree(make_lab: Callable[..., Lab], name: str) -> None:
    lab = make_lab(name)
    world = lab.state.world()
    for flow in world.spec.traffic:
        outcome = world.flow_outcome(flow)
        client = world.vm(flow.client)
        server = world.vm(flow.server)
        if outcome.server_ip is None or flow.protocol == "Icmp":  # test-ip-flow takes TCP or UDP only
            continue
        if client is not None:
            nic = client.nics[0]
            routes = _json(lab, f"network nic show-effective-route-table -g {client.resource_group} -n {nic.name}")
            hop = _json(lab, f"network watcher show-next-hop -g {client.resource_group} --vm {client.name} "
                             f"--source-ip {nic.private_ip} --dest-ip {outcome.server_ip}")
            chosen = _lpm(routes["value"], outcome.server_ip)
            assert hop["nextHopType"] == chosen["nextHopType"], flow.name
            assert hop.get("nextHopIpAddress") == (chosen["nextHopIpAddress"] or [None])[0]
            assert (hop["routeTableId"] == "System Route") == (chosen["source"] == "Default")
            if outcome.outcome == "no-route":
                assert hop["nextHopType"] == "None"
            if outcome.outcome == "appliance-down":
                assert hop["nextHopType"] == "VirtualAppliance"
            flow_check = _json(lab, f"network watcher test-ip-flow -g {client.resource_group} --vm {client.name} "
                                    f"--direction Outbound --protocol TCP --local {nic.private_ip}:49152 "
                                    f"--remote {outcome.server_ip}:{flow.port}")
            assert (flow_check["access"] == "Deny") == (outcome.outcome == "nsg-denied-outbound")
        # (a uniform scale set's instance is no virtualMachines resource: --vm cannot name it)
        if server is not None and server.scale_set is None and \
                outcome.outcome not in ("no-route", "appliance-down", "nsg-denied-outbound"):
            nic = server.nics[0]
            effective = _json(lab, f"network nic list-effective-nsg -g {server.resource_group} -n {nic.name}")
            space = list(world.match_context(nic).virtual_network)
            # the packets' own source: a firewall that translated it is what the server's NSGs see
            source = str(outcome.params.get("seen_source") or outcome.client_ip)
            layers = _first_match(effective, "Inbound", src=source, sport=49152, dst=nic.private_ip,
                                  dport=flow.port, vnet_space=space)
            flow_check = _json(lab, f"network watcher test-ip-flow -g {server.resource_group} --vm {server.name} "
                                    f"--direction Inbound --protocol TCP --local {nic.private_ip}:{flow.port} "
                                    f"--remote {source}:49152")
            denies = [name for access, name in layers if access == "Deny"]
            assert (flow_check["access"] == "Deny") == bool(denies), flow.name
            if denies:
                assert flow_check["ruleName"] == denies[0]
            assert (flow_check["access"] == "Deny") == (outcome.outcome == "nsg-denied-inbound")


_CHILD_LISTINGS = {
    "securityRules": ("network nsg rule list -g {rg} --nsg-name {parent}", "name"),
    "routes": ("network route-table route list -g {rg} --route-table-name {parent}", "name"),
    "virtualNetworkPeerings": ("network vnet peering list -g {rg} --vnet-name {parent}", "name"),
    "virtualMachines": ("vmss list-instances -g {rg} -n {parent}", "instanceId"),  # a scale set's instance
    "subnets": ("network vnet subnet list -g {rg} --vnet-name {parent}", "name"),
    "ruleCollectionGroups": ("network firewall policy rule-collection-group list -g {rg} --policy-name {parent}",
                             "name"),
    "networkRuleCollections": ("network firewall network-rule collection list -g {rg} -f {parent}", "name"),
    "probes": ("network lb probe list -g {rg} --lb-name {parent}", "name"),
    "loadBalancingRules": ("network lb rule list -g {rg} --lb-name {parent}", "name"),
    "backendAddressPools": ("network lb address-pool list -g {rg} --lb-name {parent}", "name"),
}


@pytest.mark.parametrize("name", scenario_names())
def test_answer_resource_exists_in_the_simulated_cloud(make_lab: Callable[..., Lab], name: str) -> None:
    answer = json.loads((SCENARIO_DIR / "answers" / f"{name}.json").read_text())
    if answer["resource_id"] is None:
        assert answer["fault_type"] == "none"
        return
    lab = make_lab(name)
    for rid in [f["resource_id"] for f in answer.get("faults") or [answer]]:
        parts = rid.split("/")
        top = "/".join(parts[:9])
        shown = _json(lab, f"resource show --ids {top}")
        assert shown["id"] == top
        if len(parts) > 9:  # a child: rule, route, peering, probe ... listed by its parent's command
            command, key = _CHILD_LISTINGS[parts[9]]
            listing = command.format(rg=parts[4], parent=parts[8])
            assert parts[10] in {item[key] for item in _json(lab, listing)}


def test_disconnected_peering_is_visible(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("peering-disconnected")
    peerings = _json(lab, "network vnet peering list -g prod-rg --vnet-name vnet-prod")
    states = {p["name"]: p["peeringState"] for p in peerings}
    assert states == {"prod-to-hub": "Connected", "prod-to-data": "Disconnected"}


def test_dead_appliance_is_visible_in_vm_show(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("udr-dead-appliance")
    result = lab.az("vm show -g hub-rg -n fw-vm-01 -d --query powerState -o tsv")
    assert result.out == "VM deallocated\n"
    connectivity = lab.az("network watcher test-connectivity -g prod-rg --source-resource web-vm-01 "
                          "--dest-address 10.1.2.4 --dest-port 6379")
    doc = json.loads(connectivity.out)
    assert doc["connectionStatus"] == "Unreachable"
    assert [h["type"] for h in doc["hops"]] == ["Source", "VirtualAppliance"]
    assert "preview" in connectivity.err


def test_private_zone_link_listing_shows_the_missing_link(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("dns-private-zone-not-linked")
    assert _json(lab, "network private-dns link vnet list -g prod-rg -z privatelink.redis.cache.windows.net") == []
    records = _json(lab, "network private-dns record-set a list -g prod-rg -z privatelink.redis.cache.windows.net")
    assert records[0]["aRecords"] == [{"ipv4Address": "10.1.2.4"}]


def test_test_connectivity_probes_icmp_when_asked_and_tcp_otherwise(make_lab: Callable[..., Lab]) -> None:
    """`--protocol Icmp` sends echo requests (no port): an NSG that denies ICMP by design makes it
    Unreachable with the rule named, while the TCP check of the same pair is Reachable."""
    lab = make_lab("healthy-icmp-denied")
    base = "network watcher test-connectivity -g prod-rg --source-resource web-vm-01 --dest-resource redis-primary"
    icmp = json.loads(lab.az(base + " --protocol Icmp").out)
    assert icmp["connectionStatus"] == "Unreachable" and icmp["probesFailed"] == icmp["probesSent"]
    issues = [i for h in icmp["hops"] for i in h["issues"]]
    assert [(i["type"], i["origin"]) for i in issues] == [("NetworkSecurityRule", "Inbound")]
    assert issues[0]["context"] == [{"key": "RuleName", "value": "DenyIcmpInbound"}]
    tcp = json.loads(lab.az(base + " --protocol Tcp --dest-port 6379").out)
    assert tcp["connectionStatus"] == "Reachable"
    healthy = make_lab("healthy")
    ping = json.loads(healthy.az("network watcher test-connectivity -g prod-rg --source-resource web-vm-01 "
                                 "--dest-resource redis-primary --protocol Icmp").out)
    assert ping["connectionStatus"] == "Reachable"  # no port on the data subnet's allow rule is needed for echo


def test_a_scale_set_is_listed_with_its_instance_nics_but_not_among_the_vms(make_lab: Callable[..., Lab]) -> None:
    """Uniform scale-set instances are not virtualMachines resources: `vm list` omits them, `vmss list`
    names the set and `vmss nic list` gives each instance's NIC under the instance's id, with its address."""
    lab = make_lab("vmss-one-instance-down")
    assert "orders-vmss_1" not in {v["name"] for v in _json(lab, "vm list")}
    sets = _json(lab, "vmss list")
    assert [(s["name"], s["resourceGroup"], s["sku"]["capacity"]) for s in sets] == [("orders-vmss", "orders-rg", 3)]
    assert _json(lab, "vmss list -g commerce-rg") == []
    nics = _json(lab, "vmss nic list -g orders-rg --vmss-name orders-vmss")
    rows = [(n["virtualMachine"]["id"].rsplit("/", 1)[-1], n["ipConfigurations"][0]["privateIPAddress"]) for n in nics]
    assert rows == [("0", "10.60.8.4"), ("1", "10.60.8.5"), ("2", "10.60.8.6")]
    assert all(n["id"].startswith(n["virtualMachine"]["id"] + "/networkInterfaces/") for n in nics)
    missing = lab.az("vmss nic list -g orders-rg --vmss-name no-such-vmss")
    assert missing.code == 3 and "ResourceNotFound" in missing.err


def test_a_private_endpoint_shows_its_address_and_connection_state(make_lab: Callable[..., Lab]) -> None:
    """A manual connection waiting for the owner is listed under manualPrivateLinkServiceConnections as
    Pending, with the service's FQDN and the endpoint's address; list, show and show --ids agree."""
    lab = make_lab("private-endpoint-pending")
    (pe,) = _json(lab, "network private-endpoint list")
    assert pe["name"] == "pe-partner-sql" and pe["privateLinkServiceConnections"] == []
    (conn,) = pe["manualPrivateLinkServiceConnections"]
    assert conn["privateLinkServiceConnectionState"]["status"] == "Pending" and conn["groupIds"] == ["sqlServer"]
    assert conn["privateLinkServiceId"].endswith("/providers/Microsoft.Sql/servers/partnersql")
    assert pe["customDnsConfigs"] == [{"fqdn": "partnersql.database.windows.net", "ipAddresses": ["10.80.9.5"]}]
    assert pe["subnet"]["id"].endswith("/virtualNetworks/vnet-billing/subnets/endpoints")
    assert _json(lab, "network private-endpoint show -g billing-rg -n pe-partner-sql") == pe
    assert _json(lab, f"network private-endpoint show --ids {pe['id']}") == pe
    assert _json(lab, "network private-endpoint list -g billing-rg") == [pe]
    missing = lab.az("network private-endpoint show -g billing-rg -n pe-nothing")
    assert missing.code == 3 and "ResourceNotFound" in missing.err
    status = "[0].{s:(privateLinkServiceConnections[0] || manualPrivateLinkServiceConnections[0])" \
             ".privateLinkServiceConnectionState.status}"
    assert _json(lab, f'network private-endpoint list --query "{status}"') == {"s": "Pending"}


def test_an_nsg_at_the_appliance_hop_stops_one_port_and_test_connectivity_says_where(
        make_lab: Callable[..., Lab]) -> None:
    """Both ends allow 5432, the hub NVA's subnet NSG does not: the flow dies at the appliance hop, and
    test-connectivity puts the rule on the VirtualAppliance hop; 443 to the same server passes."""
    lab = make_lab("nsg-deny-at-appliance")
    base = "network watcher test-connectivity -g spoke-rg --source-resource report-vm --dest-resource warehouse-db"
    blocked = json.loads(lab.az(base + " --dest-port 5432").out)
    assert blocked["connectionStatus"] == "Unreachable"
    assert [h["type"] for h in blocked["hops"]] == ["Source", "VirtualAppliance"]
    (issue,) = blocked["hops"][1]["issues"]
    assert issue["type"] == "NetworkSecurityRule" and issue["origin"] == "Inbound"
    assert issue["context"] == [{"key": "RuleName", "value": "DenySpokeToData"}]
    assert json.loads(lab.az(base + " --dest-port 443").out)["connectionStatus"] == "Reachable"
    inbound = _json(lab, "network watcher test-ip-flow -g spoke-rg --vm warehouse-db --direction Inbound --protocol TCP "
                         "--local 10.90.2.8:5432 --remote 10.90.1.5:49152")
    assert inbound["access"] == "Allow"  # the server's own NSGs allow it: only the hop in between does not
