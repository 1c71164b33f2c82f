"""Site-to-site VPN in the lab: the az commands' shapes and errors, the routes a Connected connection
gives, the secret that only ``shared-key show`` prints, and the flow to an on-premises address."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from netghost.errors import LabError
from netghost.lab.world import SCENARIO_DIR, World, fault_problems, world_from_yaml

from .conftest import Lab

WORLD = "vpn-connection-down"
KEY = "Dub-7fQ2-kx9W-ERP-s2s"
ONPREM = "192.168.41.15"
GW_IP = "203.0.113.77"
HUB = "-g net-hub-rg"
CONN_ID = ("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/net-hub-rg/providers/"
           "Microsoft.Network/connections/cn-hub-to-dublin")


def _data() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((SCENARIO_DIR / f"{WORLD}.yaml").read_text(encoding="utf-8"))
    return data


def _connected(data: dict[str, Any] | None = None) -> dict[str, Any]:
    """The shipped world with its connection Connected (and so, no fault)."""
    data = data or _data()
    data["vpn_connections"][0]["status"] = "Connected"
    del data["fault"]
    return data


def _world(data: dict[str, Any]) -> World:
    return world_from_yaml(yaml.safe_dump(data))


def _lab(make_lab: Callable[..., Lab], tmp_path: Path, data: dict[str, Any]) -> Lab:
    path = tmp_path / "variant.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return make_lab(path)


def _json(lab: Lab, command: str) -> Any:
    result = lab.az(command)
    assert result.code == 0, f"az {command}\n{result.err}"
    return json.loads(result.out)


def _app_nic(world: World) -> Any:
    vm = world.vm("erp-app-01")
    assert vm is not None
    return vm.nics[0]


# ---- the commands ---------------------------------------------------------------------------------
def test_gateway_and_local_gateway_documents(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab(WORLD)
    gateways = _json(lab, f"network vnet-gateway list {HUB}")
    assert [g["name"] for g in gateways] == ["vgw-hub-neu"]
    gw = _json(lab, f"network vnet-gateway show {HUB} -n vgw-hub-neu")
    assert gw == gateways[0]
    assert (gw["gatewayType"], gw["vpnType"], gw["sku"]["name"], gw["vpnGatewayGeneration"]) == \
        ("Vpn", "RouteBased", "VpnGw2AZ", "Generation2")
    assert gw["ipConfigurations"][0]["subnet"]["id"].endswith("/virtualNetworks/vnet-hub-neu/subnets/GatewaySubnet")
    assert gw["bgpSettings"]["bgpPeeringAddresses"][0]["tunnelIpAddresses"] == [GW_IP]
    assert gw["bgpSettings"]["bgpPeeringAddress"] == "10.80.255.30"  # the GatewaySubnet's last usable address
    lng = _json(lab, f"network local-gateway show {HUB} -n lng-dublin-dc")
    assert lng["gatewayIpAddress"] == "198.51.100.20"
    assert lng["localNetworkAddressSpace"] == {"addressPrefixes": ["192.168.40.0/22"]}
    assert _json(lab, f"network local-gateway list {HUB}") == [lng]
    assert _json(lab, "network vnet-gateway list -g erp-rg") == []


def test_connection_document_names_both_gateways_and_its_status(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab(WORLD)
    conn = _json(lab, f"network vpn-connection show {HUB} -n cn-hub-to-dublin")
    assert conn["id"] == CONN_ID
    assert (conn["connectionStatus"], conn["connectionType"]) == ("NotConnected", "IPsec")
    assert conn["virtualNetworkGateway1"]["id"].endswith("/virtualNetworkGateways/vgw-hub-neu")
    assert conn["localNetworkGateway2"]["id"].endswith("/localNetworkGateways/lng-dublin-dc")
    assert (conn["ingressBytesTransferred"], conn["egressBytesTransferred"]) == (0, 0)
    assert _json(lab, f"network vpn-connection list {HUB}") == [conn]
    shown = _json(lab, f"resource show --ids {CONN_ID}")
    assert shown["type"] == "Microsoft.Network/connections"
    assert shown["properties"]["connectionStatus"] == "NotConnected"


@pytest.mark.parametrize("command", [
    f"network vpn-connection show {HUB} -n cn-hub-to-dublin",
    f"network vpn-connection show --ids {CONN_ID}",
    f"network vpn-connection list {HUB}",
    f"network vpn-connection list {HUB} -o table",
    f"network vpn-connection list {HUB} -o tsv",
    f"resource show --ids {CONN_ID}",
])
def test_show_and_list_never_print_the_shared_key(make_lab: Callable[..., Lab], command: str) -> None:
    result = make_lab(WORLD).az(command)
    assert result.code == 0, result.err
    assert KEY not in result.out and "sharedKey" not in result.out


def test_shared_key_show_returns_the_key(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab(WORLD)
    assert _json(lab, f"network vpn-connection shared-key show {HUB} --connection-name cn-hub-to-dublin") == \
        {"id": "", "value": KEY}
    assert _json(lab, f"network vpn-connection shared-key show --ids {CONN_ID}")["value"] == KEY


@pytest.mark.parametrize(("command", "code", "text"), [
    (f"network vpn-connection show {HUB} -n nope", 3,
     "(ResourceNotFound) The Resource 'Microsoft.Network/connections/nope' under resource group 'net-hub-rg'"),
    ("network vpn-connection shared-key show -g net-hub-rg --connection-name nope", 3, "(ResourceNotFound)"),
    ("network vnet-gateway show -g erp-rg -n vgw-hub-neu", 3,  # it lives in net-hub-rg
     "'Microsoft.Network/virtualNetworkGateways/vgw-hub-neu' under resource group 'erp-rg'"),
    ("network local-gateway list -g no-such-rg", 3, "(ResourceGroupNotFound) Resource group 'no-such-rg'"),
    ("network vnet-gateway list-learned-routes -g no-such-rg -n vgw-hub-neu", 3, "(ResourceGroupNotFound)"),
    ("network vpn-connection list", 2, "the following arguments are required: --resource-group/-g"),
    ("network vpn-connection shared-key show -g net-hub-rg", 2, "(--resource-group --connection-name | --ids)"),
    ("network vnet-gateway show -n vgw-hub-neu", 2, "(--resource-group --name | --ids) are required"),
    ("network vpn-connection shared-key show -g net-hub-rg -n cn-hub-to-dublin", 2, "unrecognized arguments: -n"),
])
def test_errors_are_the_real_cli_s(make_lab: Callable[..., Lab], command: str, code: int, text: str) -> None:
    result = make_lab(WORLD).az(command)
    assert (result.code, result.out) == (code, "")
    assert result.err.startswith("ERROR: ") and text in result.err


# ---- routes and flows: Connected vs NotConnected ---------------------------------------------------
def test_connected_gives_the_spoke_gateway_routes_and_the_flow_is_delivered(
        make_lab: Callable[..., Lab], tmp_path: Path) -> None:
    lab = _lab(make_lab, tmp_path, _connected())
    routes = _json(lab, "network nic show-effective-route-table -g erp-rg -n erp-app-01VMNic")["value"]
    gateway = [r for r in routes if r["source"] == "VirtualNetworkGateway"]
    assert gateway == [{"addressPrefix": ["192.168.40.0/22"], "nextHopIpAddress": [GW_IP],
                        "nextHopType": "VirtualNetworkGateway", "source": "VirtualNetworkGateway",
                        "state": "Active"}]
    hop = _json(lab, f"network watcher show-next-hop -g erp-rg --vm erp-app-01 --source-ip 10.81.1.10 "
                     f"--dest-ip {ONPREM}")
    assert (hop["nextHopType"], hop["nextHopIpAddress"], hop["routeTableId"]) == \
        ("VirtualNetworkGateway", GW_IP, "System Route")
    learned = _json(lab, f"network vnet-gateway list-learned-routes {HUB} -n vgw-hub-neu")["value"]
    assert {(r["network"], r["origin"]) for r in learned} == {
        ("10.80.0.0/16", "Network"), ("10.81.0.0/16", "Network"), ("192.168.40.0/22", "Network")}
    assert all(r["weight"] == 32768 and r["sourcePeer"] == "10.80.255.30" for r in learned)
    world = lab.state.world()
    outcome = world.flow_outcome("erp-to-onprem-oracle")
    assert outcome.outcome == "delivered"
    assert outcome.next_hop is not None and outcome.next_hop.next_hop_type == "VirtualNetworkGateway"


def test_not_connected_withdraws_the_routes_and_the_flow_has_no_route(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab(WORLD)
    routes = _json(lab, "network nic show-effective-route-table -g erp-rg -n erp-app-01VMNic")["value"]
    assert not [r for r in routes if r["source"] == "VirtualNetworkGateway"]
    hop = _json(lab, f"network watcher show-next-hop -g erp-rg --vm erp-app-01 --source-ip 10.81.1.10 "
                     f"--dest-ip {ONPREM}")
    assert hop == {"nextHopType": "None", "routeTableId": "System Route"}  # 192.168.0.0/16 -> None
    learned = _json(lab, f"network vnet-gateway list-learned-routes {HUB} -n vgw-hub-neu")["value"]
    assert "192.168.40.0/22" not in {r["network"] for r in learned}
    table = lab.az(f"network vnet-gateway list-learned-routes {HUB} -n vgw-hub-neu -o table").out
    assert table.splitlines()[0].split() == ["Network", "Origin", "SourcePeer", "AsPath", "Weight", "NextHop"]
    world = lab.state.world()
    assert world.flow_outcome("erp-to-onprem-oracle").outcome == "no-route"
    assert world.flow_outcome("erp-to-cache").outcome == "delivered"  # inside Azure nothing is wrong
    assert fault_problems(world) == []


def test_the_shipped_fault_needs_a_not_connected_connection() -> None:
    data = _data()
    data["vpn_connections"][0]["status"] = "Connected"
    problems = fault_problems(_world(data))
    assert any("computes delivered" in p for p in problems)
    assert "fault vpn-connection-down but no VPN connection is NotConnected" in problems


def test_gateway_transit_needs_both_peering_flags() -> None:
    data = _connected()
    data["vnets"][0]["peerings"][0]["allow_gateway_transit"] = False
    world = _world(data)
    assert world.next_hop(_app_nic(world), ONPREM).next_hop_type == "None"
    assert world.flow_outcome("erp-to-onprem-oracle").outcome == "no-route"


def test_a_route_table_that_stops_gateway_propagation_drops_the_routes() -> None:
    data = _connected()
    data["route_tables"] = [{"name": "rt-app", "resource_group": "erp-rg", "disable_bgp_route_propagation": True}]
    data["vnets"][1]["subnets"][0]["route_table"] = "rt-app"
    world = _world(data)
    assert not [r for r in world.effective_routes(_app_nic(world)) if r.source == "VirtualNetworkGateway"]


def test_a_user_route_of_the_same_prefix_outranks_the_gateway_route() -> None:
    data = _connected()
    data["route_tables"] = [{"name": "rt-app", "resource_group": "erp-rg", "routes": [
        {"name": "dublin-blackhole", "address_prefix": "192.168.40.0/22", "next_hop_type": "None"}]}]
    data["vnets"][1]["subnets"][0]["route_table"] = "rt-app"
    world = _world(data)
    gateway = [r for r in world.effective_routes(_app_nic(world)) if r.source == "VirtualNetworkGateway"]
    assert [r.state for r in gateway] == ["Invalid"]
    assert world.next_hop(_app_nic(world), ONPREM).route_name == "dublin-blackhole"
    assert world.flow_outcome("erp-to-onprem-oracle").outcome == "no-route"


def test_the_on_premises_ranges_count_as_virtual_network_for_nsg_tags() -> None:
    world = _world(_data())  # NotConnected: the tag follows configuration, the route does not
    vm = world.vm("erp-app-01")
    assert vm is not None
    decision = world.evaluate_nsg(vm, "Outbound", protocol="Tcp", local_ip="10.81.1.10", local_port=49152,
                                  remote_ip="192.168.42.1", remote_port=22)
    assert (decision.access, decision.rule_name) == ("Allow", "defaultSecurityRules/AllowVnetOutBound")


# ---- validation -------------------------------------------------------------------------------------
def test_a_gateway_needs_a_gateway_subnet_and_connections_declared_gateways() -> None:
    data = _data()
    data["vnets"][0]["subnets"] = [s for s in data["vnets"][0]["subnets"] if s["name"] != "GatewaySubnet"]
    data["vpn_connections"][0]["local_gateway"] = "lng-nowhere"
    with pytest.raises(LabError) as info:
        _world(data)
    text = str(info.value)
    assert "VNet vnet-hub-neu has no subnet named GatewaySubnet" in text
    assert "local network gateway 'lng-nowhere' is not declared" in text


def test_no_vm_in_the_gateway_subnet_and_no_overlap_with_the_vnet() -> None:
    data = _data()
    data["vms"][0]["nics"][0] = {"subnet": "vnet-hub-neu/GatewaySubnet", "private_ip": "10.80.255.4"}
    data["local_network_gateways"][0]["address_prefixes"].append("10.80.0.0/24")
    with pytest.raises(LabError) as info:
        _world(data)
    text = str(info.value)
    assert "no VM may sit in a GatewaySubnet" in text
    assert "10.80.0.0/24 overlaps VNet vnet-hub-neu's address space" in text


def test_the_shared_key_is_required_and_fields_are_checked() -> None:
    data = _data()
    del data["vpn_connections"][0]["shared_key"]
    data["vnet_gateways"][0]["vpn_type"] = "PolicyBased"
    with pytest.raises(LabError) as info:
        _world(data)
    assert "vpn_connections.0.shared_key" in str(info.value)
    assert "vnet_gateways.0.vpn_type" in str(info.value)


def test_a_bgp_site_s_ranges_are_learned_from_its_peer(make_lab: Callable[..., Lab], tmp_path: Path) -> None:
    data = _connected()
    data["local_network_gateways"][0]["bgp"] = {"asn": 65050, "peering_address": "192.168.40.1"}
    data["vpn_connections"][0]["enable_bgp"] = True
    lab = _lab(make_lab, tmp_path, data)
    learned = _json(lab, f"network vnet-gateway list-learned-routes {HUB} -n vgw-hub-neu")["value"]
    site = next(r for r in learned if r["network"] == "192.168.40.0/22")
    assert site == {"asPath": "65050", "localAddress": "10.80.255.30", "network": "192.168.40.0/22",
                    "nextHop": "192.168.40.1", "origin": "EBgp", "sourcePeer": "192.168.40.1", "weight": 32768}
    assert _json(lab, f"network local-gateway show {HUB} -n lng-dublin-dc")["bgpSettings"] == \
        {"asn": 65050, "bgpPeeringAddress": "192.168.40.1", "peerWeight": 0}
    data["vnet_gateways"][0].pop("bgp")
    with pytest.raises(LabError, match="enable_bgp needs bgp settings on both gateways"):
        _world(data)
