"""The world model: validation with clear errors, and answers from first principles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from netghost.errors import LabError
from netghost.lab.world import (
    SCENARIO_DIR,
    World,
    fault_problems,
    load_world,
    scenario_names,
    world_from_yaml,
    world_path,
)
from netghost.lab.world._world import _parse_yaml as parse_yaml

from .conftest import CONFORMANCE_WORLD

ANSWERS = SCENARIO_DIR / "answers"


def _world_dict(name: str = "healthy") -> dict:
    return yaml.safe_load((SCENARIO_DIR / f"{name}.yaml").read_text())


def _load(data: dict) -> World:
    return world_from_yaml(yaml.safe_dump(data))


def test_ten_scenarios_ship_with_answers() -> None:
    names = scenario_names()
    assert len(names) >= 10
    for fault in ("nsg-deny", "udr-dead-appliance", "service-down", "dns-nxdomain", "dns-private-zone-not-linked",
                  "pmtu-blackhole", "path-packet-loss", "middlebox-rst", "peering-disconnected", "healthy"):
        assert fault in names
    readme = (SCENARIO_DIR / "README.md").read_text()
    for name in names:
        answer = json.loads((ANSWERS / f"{name}.json").read_text())
        assert answer["scenario"] == name
        world = load_world(name)
        assert answer["fault_type"] == (world.fault.type if world.fault else "none")
        declared = [f.type for f in world.faults]
        assert [f["fault_type"] for f in answer.get("faults") or []] == (declared if len(declared) > 1 else [])
        assert f"`{name}`" in readme


@pytest.mark.parametrize("name", scenario_names())
def test_scenario_fault_is_coherent_and_the_only_problem(name: str) -> None:
    world = load_world(name)
    assert fault_problems(world) == []
    answer = json.loads((ANSWERS / f"{name}.json").read_text())
    if world.fault is not None:
        assert world.flow_outcome(world.fault.flow).outcome == answer["expected_outcome"]
    else:
        assert all(world.flow_outcome(t).outcome == "delivered" for t in world.spec.traffic if t.expected != "blocked")


def test_incoherent_fault_is_reported() -> None:
    data = _world_dict("nsg-deny")
    nsg = next(n for n in data["nsgs"] if n["name"] == "nsg-data")
    nsg["rules"] = [r for r in nsg["rules"] if r["name"] != "DenyAllFromWebSubnet"]
    problems = fault_problems(_load(data))
    assert problems and "computes delivered" in problems[0]


def test_unknown_field_is_rejected_with_its_location() -> None:
    data = _world_dict()
    data["vms"][0]["powerstate"] = "running"
    with pytest.raises(LabError, match=r"vms\.0\.powerstate: Extra inputs are not permitted"):
        _load(data)


def test_all_broken_references_are_listed_at_once() -> None:
    data = _world_dict()
    data["vnets"][0]["subnets"][0]["nsg"] = "nsg-missing"
    data["vms"][1]["nics"][0]["private_ip"] = "10.9.9.9"
    data["traffic"][0]["server"] = "no-such-vm"
    with pytest.raises(LabError) as info:
        _load(data)
    text = str(info.value)
    assert "NSG 'nsg-missing' is not declared" in text
    assert "10.9.9.9 is outside vnet-prod/data" in text
    assert "'no-such-vm' is neither a declared VM" in text


@pytest.mark.parametrize(("field", "value", "message"), [
    ("storage", "forensics-sa", "3-24 lowercase letters and digits"),
    ("priority", 50, "greater than or equal to 100"),
    ("prefix", "10.1.1.1/24", "not a CIDR prefix"),
])
def test_field_validation(field: str, value: object, message: str) -> None:
    data = _world_dict()
    if field == "storage":
        data["storage_accounts"][0]["name"] = value
    elif field == "priority":
        data["nsgs"][0]["rules"][0]["priority"] = value
    else:
        data["vnets"][0]["subnets"][0]["address_prefix"] = value
    with pytest.raises(LabError, match=message):
        _load(data)


def test_bad_yaml_and_missing_file() -> None:
    with pytest.raises(LabError, match="not valid YAML"):
        world_from_yaml("name: [unclosed")
    # libyaml parses, but a text it refuses is reported with the pure-Python loader's line, column and words
    with pytest.raises(LabError) as caught:
        world_from_yaml("name: a\nvnets: b: c\n")
    try:
        yaml.safe_load("name: a\nvnets: b: c\n")
    except yaml.YAMLError as exc:
        mark = exc.problem_mark  # type: ignore[attr-defined]
        words = " ".join(str(exc.problem).split())  # type: ignore[attr-defined]
    assert f"line {mark.line + 1}, column {mark.column + 1}: {words}" in str(caught.value)
    with pytest.raises(LabError, match="cannot read lab world"):
        load_world(Path("/nonexistent/world.yaml"))


def test_every_shipped_world_parses_as_safe_load_parses_it() -> None:
    """The world loader's libyaml path (when PyYAML has it) reads exactly what ``yaml.safe_load`` reads."""
    for name in scenario_names():
        text = world_path(name).read_text(encoding="utf-8")
        assert parse_yaml(text) == yaml.safe_load(text), name


def test_nsg_first_match_by_priority_and_layers() -> None:
    world = load_world("nsg-deny")
    redis = world.vm("redis-primary")
    assert redis is not None
    verdict = world.evaluate_nsg(redis, "Inbound", protocol="Tcp", local_ip="10.1.2.4", local_port=6379,
                                 remote_ip="10.1.1.4", remote_port=50000)
    assert (verdict.access, verdict.rule_name, verdict.nsg) == ("Deny", "securityRules/DenyAllFromWebSubnet", "nsg-data")
    # from the hub (not the web subnet) the custom deny does not match; AllowVnetInBound does
    verdict = world.evaluate_nsg(redis, "Inbound", protocol="Tcp", local_ip="10.1.2.4", local_port=6379,
                                 remote_ip="10.0.100.4", remote_port=50000)
    assert (verdict.access, verdict.rule_name) == ("Allow", "defaultSecurityRules/AllowVnetInBound")
    # the Internet is not VirtualNetwork: DenyAllInBound
    verdict = world.evaluate_nsg(redis, "Inbound", protocol="Tcp", local_ip="10.1.2.4", local_port=6379,
                                 remote_ip="203.0.113.9", remote_port=50000)
    assert verdict.rule_name == "defaultSecurityRules/DenyAllInBound"
    web = world.vm("web-vm-01")
    assert web is not None
    out = world.evaluate_nsg(web, "Outbound", protocol="Tcp", local_ip="10.1.1.4", local_port=None,
                             remote_ip="13.107.21.200", remote_port=80)
    assert out.rule_name == "defaultSecurityRules/AllowInternetOutBound"


def test_effective_routes_user_route_invalidates_system_route() -> None:
    world = world_from_yaml(CONFORMANCE_WORLD.read_text())
    _vm, nic = world.nic("web-vm-01VMNic") or (None, None)
    assert nic is not None
    routes = world.effective_routes(nic)
    internet = next(r for r in routes if r.next_hop_type == "Internet")
    assert internet.state == "Invalid"
    assert world.next_hop(nic, "8.8.8.8").next_hop_type == "VirtualAppliance"
    assert world.next_hop(nic, "10.1.2.5").next_hop_type == "VnetLocal"  # /16 beats the 0/0 UDR
    assert world.next_hop(nic, "10.0.100.4").next_hop_type == "VNetPeering"
    assert world.next_hop(nic, "10.77.0.1").next_hop_type == "None"  # 10/8 system route beats 0/0
    assert world.next_hop(nic, "8.8.8.8").route_table_id.endswith("/routeTables/rt-spoke")
    assert world.next_hop(nic, "10.1.2.5").route_table_id == "System Route"


def test_disconnected_peering_removes_the_route_and_the_tag() -> None:
    world = load_world("peering-disconnected")
    _vm, nic = world.nic("web-vm-01VMNic") or (None, None)
    assert nic is not None
    assert world.next_hop(nic, "10.2.0.4").next_hop_type == "None"
    assert not world.match_context(nic).prefix_matches("VirtualNetwork", "10.2.0.4")
    healthy = load_world("healthy")
    _vm, hub_nic = healthy.nic("web-vm-01VMNic") or (None, None)
    assert hub_nic is not None
    assert healthy.match_context(hub_nic).prefix_matches("VirtualNetwork", "10.0.100.4")


def test_dns_resolution_from_inside_and_outside() -> None:
    world = load_world("dns-private-zone-not-linked")
    inside = world.resolve("redis-primary.redis.cache.windows.net", "vnet-prod")
    assert inside.addresses == ("52.179.97.10",)
    assert inside.cname_chain == ("redis-primary.privatelink.redis.cache.windows.net",)
    assert inside.server == "168.63.129.16"
    linked = load_world("healthy").resolve("redis-primary.prod.internal", "vnet-prod")
    assert (linked.rcode, linked.addresses, linked.source) == ("NOERROR", ("10.1.2.4",), "private-zone:prod.internal")
    outside = load_world("healthy").resolve("redis-primary.prod.internal")
    assert outside.rcode == "NXDOMAIN" and outside.server == "1.1.1.1"
    nx = load_world("dns-nxdomain").resolve("redis-primary.prod.internal", "vnet-prod")
    assert nx.rcode == "NXDOMAIN"


def test_linking_the_zone_fixes_the_answer() -> None:
    data = _world_dict("dns-private-zone-not-linked")
    zone = next(z for z in data["private_dns_zones"] if z["name"].startswith("privatelink"))
    zone["links"] = [{"name": "link-prod", "vnet": "vnet-prod"}]
    del data["fault"]
    world = _load(data)
    assert world.resolve("redis-primary.redis.cache.windows.net", "vnet-prod").addresses == ("10.1.2.4",)
    assert world.flow_outcome("web-to-redis").outcome == "delivered"


def test_services_and_flows() -> None:
    world = load_world("service-down")
    assert world.service_at("10.1.2.4", 6379) is None
    assert world.service_at("10.1.2.4", 22) is not None
    assert {f.name for f in world.flows_for("web-vm-01")} == {"web-to-redis", "internet-to-web"}
    with pytest.raises(LabError, match="no traffic flow named"):
        world.flow_outcome("nope")


def test_data_plane_faults_carry_parameters() -> None:
    outcome = load_world("pmtu-blackhole").flow_outcome("web-to-redis")
    assert outcome.connects and outcome.impairment == "pmtu-blackhole"
    assert outcome.params["path_mtu"] == 1400
    assert outcome.path == ("10.1.1.4", "10.0.100.4", "10.1.2.4")


def test_a_fault_may_break_several_flows_but_each_must_be_declared() -> None:
    """``also`` names the other flows one fault breaks: declared, they are part of the fault; left out, the
    world is incoherent (a second, undeclared problem); a name that is no flow is refused."""
    from netghost.lab.world import world_from_yaml

    data = yaml.safe_load((SCENARIO_DIR / "udr-dead-appliance-two-tiers.yaml").read_text(encoding="utf-8"))
    world = world_from_yaml(yaml.safe_dump(data))
    assert world.fault is not None and world.fault.flows == ("api-to-sql", "api-to-cache")
    assert fault_problems(world) == []
    data["fault"]["also"] = []
    problems = fault_problems(world_from_yaml(yaml.safe_dump(data)))
    assert len(problems) == 1 and "api-to-cache is not the fault's flow" in problems[0]
    data["fault"]["also"] = ["api-to-nowhere"]
    with pytest.raises(LabError, match="api-to-nowhere"):
        world_from_yaml(yaml.safe_dump(data))


_TELLS = ("nxdomain", "notconnected", "not connected", "black hole", "blackhole", "packet loss", "forges", "injects",
          "shadows", "priority inversion", "is stopped", "has stopped", "not linked", "no route")


@pytest.mark.parametrize("name", scenario_names())
def test_the_description_lab_show_prints_does_not_name_the_fault(name: str) -> None:
    """The description sets the scene; the fault (its type, its resource, its tell-tale symptom) stays in the answer."""
    world = load_world(name)
    text = " ".join(world.spec.description.lower().split())
    answer = json.loads((ANSWERS / f"{name}.json").read_text())
    for fault in answer.get("faults") or ([answer] if answer["resource_id"] else []):
        assert fault["fault_type"] not in text and fault["fault_type"].replace("-", " ") not in text
        resource = fault["resource_id"].rstrip("/").rsplit("/", 1)[-1].lower()
        endpoints = {n.lower() for t in world.spec.traffic for n in (t.client, t.server)}
        # a setting's own name (a rule, a route, a probe ...) is the fault; a VM, an endpoint or a zone is scenery
        setting = any(f"/{kind}/" in fault["resource_id"] for kind in (
            "securityRules", "routes", "ruleCollectionGroups", "probes", "loadBalancingRules", "backendAddressPools",
            "virtualNetworkPeerings", "connections"))
        if setting and resource not in endpoints and resource not in (world.spec.symptom or "").lower():
            assert resource not in text, f"{name}: the description names {resource}"
    assert not [t for t in _TELLS if t in text], name
