"""The common Azure connectivity faults the lab expresses, each computed from configuration (not declared): a
change to the one setting at fault turns the broken flow back into a delivered one, so the verdict really
follows that setting. Data-plane faults (SNAT exhaustion, VPN MSS) are checked on the synthesized packets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from netghost.lab.synth import capture_packets
from netghost.lab.world import (
    SCENARIO_DIR,
    World,
    fault_problems,
    firewall_verdict,
    load_world,
    world_from_yaml,
)

SYN, ACK, RST = 0x02, 0x10, 0x04


def _data(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((SCENARIO_DIR / f"{name}.yaml").read_text())
    return data


def _load(data: dict[str, Any]) -> World:
    return world_from_yaml(yaml.safe_dump(data))


def _fixed(name: str, change: Callable[[dict[str, Any]], None], flow: str) -> str:
    """The flow's outcome once ``change`` is applied to the world (and the fault declaration dropped)."""
    data = _data(name)
    data.pop("fault", None)
    data.pop("faults", None)
    change(data)
    return _load(data).flow_outcome(flow).outcome


def _named(items: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(i for i in items if i["name"] == name)


def _subnet(data: dict[str, Any], vnet: str, subnet: str) -> dict[str, Any]:
    return _named(_named(data["vnets"], vnet)["subnets"], subnet)


def test_firewall_policy_groups_go_by_priority_before_collections() -> None:
    world = load_world("fw-policy-deny")
    assert world.flow_outcome("api-to-ledger-sql").params["group"] == "rcg-platform"

    def swap(data: dict[str, Any]) -> None:  # the apps group first: its allow decides
        groups = data["firewall_policies"][0]["rule_collection_groups"]
        groups[0]["priority"], groups[1]["priority"] = 400, 150
    assert _fixed("fw-policy-deny", swap, "api-to-ledger-sql") == "delivered"


def test_firewall_default_deny_and_network_before_application_rules() -> None:
    world = load_world("fw-classic-default-deny")
    out = world.flow_outcome("etl-to-pg")
    assert (out.outcome, out.params["kind"]) == ("firewall-denied", "default")
    fw = world.spec.firewalls[0]
    web = firewall_verdict(fw, None, protocol="TCP", src_ip="172.21.4.13", dst_ip="172.22.8.20", dst_port=443,
                           fqdn=None)
    assert (web.action, web.collection, web.snat) == ("Allow", "coll-east-west", False)  # private: no SNAT
    updates = firewall_verdict(fw, None, protocol="TCP", src_ip="172.21.4.13", dst_ip="91.189.91.81", dst_port=443,
                               fqdn="archive.ubuntu.com")
    assert (updates.kind, updates.action, updates.snat) == ("application", "Allow", True)
    blocked = firewall_verdict(fw, None, protocol="TCP", src_ip="172.21.4.13", dst_ip="93.184.216.34", dst_port=443,
                               fqdn="example.org")
    assert (blocked.kind, blocked.reset) == ("default", True)  # an HTTPS flow: the firewall resets the client


def test_application_rules_translate_the_source_and_the_server_nsg_sees_the_firewall() -> None:
    world = load_world("fw-snat-nsg-deny")
    out = world.flow_outcome("web-to-billing")
    assert out.outcome == "nsg-denied-inbound" and out.params["seen_source"] == "10.128.0.4"
    billing, nic = world.vm_by_ip("10.130.2.10") or (None, None)
    assert billing is not None and nic is not None
    as_client = world.evaluate_nsg(billing, "Inbound", protocol="Tcp", local_ip=nic.private_ip, local_port=443,
                                   remote_ip="10.129.1.20", remote_port=49152, nic=nic)
    assert as_client.access == "Allow"  # what test-ip-flow with the client's address says: the disagreement

    def admit_firewall(data: dict[str, Any]) -> None:
        rules = _named(data["nsgs"], "nsg-br-billing")["rules"]
        rules[0]["source_address_prefix"] = "10.128.0.0/26"
    assert _fixed("fw-snat-nsg-deny", admit_firewall, "web-to-billing") == "delivered"


def test_nva_ip_forwarding_is_the_nic_setting() -> None:
    assert load_world("nva-forwarding-disabled").flow_outcome("orders-to-mysql").outcome == "appliance-not-forwarding"

    def forward(data: dict[str, Any]) -> None:
        _named(data["vms"], "nva-jp-01")["nics"][0]["ip_forwarding"] = True
    assert _fixed("nva-forwarding-disabled", forward, "orders-to-mysql") == "delivered"


def test_asymmetric_routing_both_ways_and_its_fix() -> None:
    out = load_world("asymmetric-peering-shortcut").flow_outcome("inventory-to-pricing")
    assert (out.outcome, out.params["shape"]) == ("asymmetric-return", "return-bypasses-appliance")

    def route_back(data: dict[str, Any]) -> None:
        _named(data["route_tables"], "rt-e2-pricing")["routes"].append(
            {"name": "inventory-via-fw", "address_prefix": "10.71.0.0/16", "next_hop_type": "VirtualAppliance",
             "next_hop_ip": "10.70.0.4"})
    assert _fixed("asymmetric-peering-shortcut", route_back, "inventory-to-pricing") == "delivered"
    out = load_world("asymmetric-return-nva").flow_outcome("calc-to-claims")
    assert (out.outcome, out.params["shape"]) == ("asymmetric-return", "return-via-appliance")

    def stateless(data: dict[str, Any]) -> None:  # a plain router on the way back drops nothing
        _named(data["vms"], "ips-gwc-01")["stateful"] = False
    assert _fixed("asymmetric-return-nva", stateless, "calc-to-claims") == "delivered"


def test_asymmetric_captures_show_each_side_its_half() -> None:
    world = load_world("asymmetric-return-nva")
    pkts = capture_packets(world, "claims-db", 1000.0, 1030.0)
    syn_acks = [p for p in pkts if (p.src, p.dst) == ("10.88.20.5", "10.88.10.17") and p.proto == 6
                and p.l4[13] == SYN | ACK]
    assert syn_acks and all(p.arrive is None for p in syn_acks)  # sent by the server, never delivered
    world = load_world("asymmetric-peering-shortcut")
    pkts = capture_packets(world, "inventory-app-2", 1000.0, 1030.0)
    client_data = [p for p in pkts if (p.src, p.dst) == ("10.71.3.22", "10.72.3.7") and p.proto == 6
                   and len(p.l4) > 40]
    assert client_data and all(p.arrive is None for p in client_data)  # the firewall drops all after the SYN


def test_load_balancer_health_comes_from_the_members() -> None:
    out = load_world("lb-probe-unhealthy").flow_outcome("front-to-catalog")
    assert out.outcome == "lb-no-healthy-backend" and "nothing listens on catalog-01:8080" in out.reason

    def probe_api_port(data: dict[str, Any]) -> None:
        data["load_balancers"][0]["probes"][0].update(port=443, protocol="Tcp", request_path=None)
    assert _fixed("lb-probe-unhealthy", probe_api_port, "front-to-catalog") == "delivered"

    def deny_probe_by_tag(data: dict[str, Any]) -> None:  # the probe's source tag, denied: unhealthy again
        probe_api_port(data)
        _named(data["nsgs"], "nsg-catalog")["rules"].append(
            {"name": "no-lb", "priority": 150, "direction": "Inbound", "access": "Deny", "protocol": "*",
             "source_address_prefix": "AzureLoadBalancer"})
    assert _fixed("lb-probe-unhealthy", deny_probe_by_tag, "front-to-catalog") == "lb-no-healthy-backend"

    def deny_internet_only(data: dict[str, Any]) -> None:  # 168.63.129.16 is not the Internet
        probe_api_port(data)
        _named(data["nsgs"], "nsg-catalog")["rules"].append(
            {"name": "no-internet", "priority": 150, "direction": "Inbound", "access": "Deny", "protocol": "*",
             "source_address_prefix": "Internet"})
    assert _fixed("lb-probe-unhealthy", deny_internet_only, "front-to-catalog") == "delivered"

    def fill_pool(data: dict[str, Any]) -> None:
        data["load_balancers"][0]["backend_pools"][0]["members"] = ["accounts-api-v2-a", "accounts-api-v2-b"]
    assert load_world("lb-empty-pool").flow_outcome("gateway-to-accounts").outcome == "lb-backend-pool-empty"
    assert _fixed("lb-empty-pool", fill_pool, "gateway-to-accounts") == "delivered"


def test_load_balanced_packets_are_translated_for_the_member_only() -> None:
    world = load_world("lb-backend-port-mismatch")
    assert world.flow_outcome("portal-to-docs").params == {"backend_ip": "10.33.2.21", "backend_port": 8443}
    pkts = capture_packets(world, "docs-fr-01", 1000.0, 1010.0)
    syns = [p for p in pkts if p.proto == 6 and p.l4[13] == SYN and p.far is not None]
    assert syns and all(p.dst == "10.33.2.10" and p.far is not None and (p.far[1], p.far[3]) == ("10.33.2.21", 8443)
                        for p in syns)
    resets = [p for p in pkts if p.proto == 6 and p.l4[13] & RST]
    assert resets and all(p.far is not None and p.far[0] == "10.33.2.21" for p in resets)


def test_snat_exhaustion_fails_a_share_of_new_connections_only() -> None:
    world = load_world("nat-snat-exhaustion")
    out = world.flow_outcome("upload-04")
    assert out.impairment == "snat-port-exhaustion" and out.params["egress"] == "ng-w3-egress"
    pkts = capture_packets(world, "ingest-w3-04", 1000.0, 1300.0)
    conns: dict[int, list[Any]] = {}
    for p in pkts:
        if p.proto == 6 and p.src == "10.150.8.14":
            conns.setdefault(int.from_bytes(p.l4[0:2], "big"), []).append(p)
    failed = [c for c in conns.values() if all(p.l4[13] == SYN for p in c)]
    assert 0.03 < len(failed) / len(conns) < 0.3  # about fail_rate, never all
    ok = [c for c in conns.values() if c not in failed]
    assert ok and all(p.arrive is not None for c in ok for p in c)  # established ones lose nothing

    def no_nat(data: dict[str, Any]) -> None:
        _subnet(data, "vnet-w3-ingest", "workers").pop("nat_gateway")
    data = _data("nat-snat-exhaustion")
    no_nat(data)
    assert "does not leave through a NAT gateway" in " ".join(fault_problems(_load(data)))


def test_bgp_propagation_and_the_way_back() -> None:
    assert load_world("bgp-propagation-off").flow_outcome("claims-to-mainframe").outcome == "no-route"

    def propagate(data: dict[str, Any]) -> None:
        data["route_tables"][0]["disable_bgp_route_propagation"] = False
    assert _fixed("bgp-propagation-off", propagate, "claims-to-mainframe") == "delivered"
    world = load_world("bgp-propagation-return")
    assert world.flow_outcome("pune-to-portal").outcome == "no-return-route"
    assert _fixed("bgp-propagation-return", propagate, "pune-to-portal") == "delivered"
    pkts = capture_packets(world, "hr-web-01", 1000.0, 1030.0)
    syn_acks = [p for p in pkts if (p.src, p.dst) == ("10.60.3.8", "10.180.4.57") and p.proto == 6
                and p.l4[13] == SYN | ACK]
    assert syn_acks and all(p.arrive is None for p in syn_acks)


def test_route_table_or_nsg_on_the_gateway_subnet() -> None:
    assert load_world("gatewaysubnet-route-table").flow_outcome("office-to-feed").outcome == "appliance-down"

    def unattach(data: dict[str, Any]) -> None:
        _subnet(data, "vnet-ea-trading", "GatewaySubnet").pop("route_table")
    assert _fixed("gatewaysubnet-route-table", unattach, "office-to-feed") == "delivered"
    assert load_world("gatewaysubnet-nsg").flow_outcome("plant-to-mes").outcome == "gateway-subnet-blocked"

    def no_nsg(data: dict[str, Any]) -> None:
        _subnet(data, "vnet-cae-mes", "GatewaySubnet").pop("nsg")
    assert _fixed("gatewaysubnet-nsg", no_nsg, "plant-to-mes") == "delivered"


def test_custom_dns_server_needs_the_azure_forwarder() -> None:
    world = load_world("custom-dns-no-forwarder")
    answer = world.resolve("chdocs.blob.core.windows.net", "vnet-ch-app")
    assert (answer.server, answer.addresses, answer.source) == ("10.100.0.10", ("20.60.139.17",), "public")
    assert world.flow_outcome("docapp-to-blob").outcome == "paas-denied"

    def conditional(data: dict[str, Any]) -> None:
        dc = _named(data["vms"], "dc-ch-01")
        dc["dns_server"]["conditional_forwarders"]["blob.core.windows.net"] = ["168.63.129.16"]
    assert _fixed("custom-dns-no-forwarder", conditional, "docapp-to-blob") == "delivered"

    def azure_dns(data: dict[str, Any]) -> None:
        _named(data["vnets"], "vnet-ch-app")["dns_servers"] = []
    assert _fixed("custom-dns-no-forwarder", azure_dns, "docapp-to-blob") == "delivered"


def test_vpn_mss_black_hole_with_icmp_allowed() -> None:
    world = load_world("vpn-mss-clamping")
    assert world.flow_outcome("scanner-ping").outcome == "delivered"  # ICMP passes end to end
    out = world.flow_outcome("scanner-downloads")
    assert out.impairment == "vpn-mtu-mss" and out.params["tunnel"] == "cn-weu-rotterdam"
    pkts = capture_packets(world, "logi-api-01", 1000.0, 1030.0)
    big = [p for p in pkts if p.src == "10.64.2.20" and p.size > 1400]
    assert big and all(p.arrive is None for p in big)
    assert not [p for p in pkts if p.proto == 1 and p.l4[0] == 3]  # no fragmentation-needed comes back


def test_pmtu_hop_that_never_sends_frag_needed_blackholes_even_where_icmp_is_allowed() -> None:
    data = _data("pmtu-blackhole")
    for nsg in data["nsgs"]:
        nsg["rules"] = [r for r in nsg["rules"] if not (r.get("protocol") == "Icmp" and r["access"] == "Deny")]
    assert _load(data).flow_outcome(data["fault"]["flow"]).impairment == "pmtud"  # ICMP allowed: PMTUD copes
    data["fault"].setdefault("params", {})["frag_needed"] = "never"
    assert _load(data).flow_outcome(data["fault"]["flow"]).impairment == "pmtu-blackhole"


def test_storage_network_rules_service_endpoints_and_policies() -> None:
    assert load_world("storage-service-endpoint-missing").flow_outcome("reports-to-blob").outcome == "paas-denied"

    def endpoint(data: dict[str, Any]) -> None:
        _subnet(data, "vnet-eus-rpt", "reporting")["service_endpoints"] = ["Microsoft.Storage"]
    assert _fixed("storage-service-endpoint-missing", endpoint, "reports-to-blob") == "delivered"
    assert load_world("storage-endpoint-policy").flow_outcome("train-to-new-datasets").outcome == "paas-denied"

    def listed(data: dict[str, Any]) -> None:
        data["service_endpoint_policies"][0]["definitions"][0]["service_resources"].append(
            "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/wus-data-rg/providers/"
            "Microsoft.Storage/storageAccounts/mldatasets2")
    assert _fixed("storage-endpoint-policy", listed, "train-to-new-datasets") == "delivered"


def test_an_https_flow_the_firewall_denies_is_reset_by_the_firewall_itself() -> None:
    """Application-rule territory (HTTPS by name) that no rule allows: the firewall answers the handshake in
    the server's name, takes the request and resets the client; the server never sees a packet."""
    data = _data("fw-snat-nsg-deny")
    data.pop("fault")
    data["firewall_policies"][0]["rule_collection_groups"][0]["collections"][0]["application_rules"][0][
        "target_fqdns"] = ["other.internal.contoso.net"]
    world = _load(data)
    out = world.flow_outcome("web-to-billing")
    assert (out.outcome, out.params["kind"], out.params["reset"]) == ("firewall-denied", "default", True)
    client = capture_packets(world, "web-br-01", 1000.0, 1020.0)
    answers = [p for p in client if p.src == "10.130.2.10" and p.dst == "10.129.1.20" and p.proto == 6]
    assert {p.l4[13] for p in answers} == {SYN | ACK, RST | ACK} and all(p.forged for p in answers)
    server = capture_packets(world, "billing-br-01", 1000.0, 1020.0)
    assert not [p for p in server if "10.129.1.20" in (p.src, p.dst)]
