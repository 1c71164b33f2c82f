"""The path walk's parts that need no lab: route choice, read recognition, the check table, the walk's order.

The walk itself runs on lab worlds in ``test_heldout_worlds.py`` (worlds the playbook was not written for)
and ``test_eval.py`` (the shipped ones); here are the rules those runs rest on.
"""

from __future__ import annotations

from typing import Any

import pytest

from netghost.agent.brains._protocol import FunctionCall
from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._checks import CHECKS
from netghost.agent.brains.playbook._facts import Facts, Observation
from netghost.agent.brains.playbook._moves import Verdict
from netghost.agent.brains.playbook._path import MAX_HOPS, Check, Fault, Flow, Hop, Need, Next, walk
from netghost.agent.brains.playbook._routes import choose
from netghost.agent.brains.playbook._symptom import parse_symptom

ROUTES: list[dict[str, Any]] = [
    {"prefixes": ["10.1.0.0/16"], "type": "VnetLocal", "source": "Default"},
    {"prefixes": ["10.2.0.0/16"], "type": "VNetPeering", "source": "Default"},
    {"prefixes": ["0.0.0.0/0"], "type": "Internet", "source": "Default"},
    {"prefixes": ["10.0.0.0/8"], "type": "None", "source": "Default"},
    {"prefixes": ["10.2.5.0/24"], "type": "VirtualAppliance", "ips": ["10.9.0.4"], "source": "User", "name": "via-fw"},
    {"prefixes": ["192.168.0.0/22"], "type": "VirtualNetworkGateway", "source": "VirtualNetworkGateway"},
    {"prefixes": ["192.168.0.0/22"], "type": "VirtualAppliance", "ips": ["10.9.0.5"], "source": "User", "name": "onprem"},
]


@pytest.mark.parametrize(("ip", "kind", "name"), [
    ("10.1.7.7", "VnetLocal", None),
    ("10.2.9.9", "VNetPeering", None),
    ("10.2.5.9", "VirtualAppliance", "via-fw"),  # the longer prefix wins
    ("10.3.0.1", "None", None),  # 10/8 beats 0/0
    ("192.168.1.1", "VirtualAppliance", "onprem"),  # same prefix: a user route beats the gateway's
    ("93.184.216.34", "Internet", None),
])
def test_a_packet_takes_the_longest_prefix_then_the_strongest_source(ip: str, kind: str, name: str | None) -> None:
    route = choose(ROUTES, ip)
    assert route is not None and route["type"] == kind and route.get("name") == name


def test_no_route_and_bad_input_choose_nothing() -> None:
    assert choose(ROUTES[:2], "172.16.0.1") is None
    assert choose(ROUTES, "not-an-ip") is None
    assert choose([{"prefixes": ["garbage"], "type": "VnetLocal"}], "10.1.1.1") is None


def test_every_read_is_recognised_from_its_command_line() -> None:
    reads = {
        r.vm_list(): "vms", r.nic_list(): "nics", r.vnet_list(): "vnets", r.vmss_list(): "vmss",
        r.vmss_nics("rg", "ss"): "vmss_nics", r.vmss_instances("rg", "ss"): "vmss_instances",
        r.storage_accounts(): "storage", r.effective_routes("rg", "nic1"): "eff_routes",
        r.effective_nsg_rule("rg", "nic1", "securityRules/x"): "nsg_owner", r.nsg_rules("/x/nsg"): "nsg_rules",
        r.route_table("/x/rt"): "route_table", r.vnet_gateways("rg"): "gateways",
        r.learned_routes("rg", "gw"): "learned_routes", r.vpn_connections("rg"): "vpn_connections",
        r.local_gateways("rg"): "local_gateways", r.private_endpoints(): "endpoints",
        r.private_zone_list(): "zones", r.private_zone_links("rg", "z"): "zone_links",
        r.private_zone_records("rg", "z"): "zone_records", r.dig_short("a.b"): "dig",
        r.test_ip_flow("rg", "vm", "Inbound", "1.1.1.1:1", "2.2.2.2:*"): "flow", r.curl_probe("1.1.1.1", 80): "probe",
    }
    for command, step in reads.items():
        assert r.step_of(command) == step, command
    assert r.step_of("az network nic list-effective-nsg -g rg -n n") == "nsg_owner"
    assert r.step_of("az vmss list-instances -g rg -n s") == "vmss_instances"
    assert r.step_of("rm -rf /") is None and r.step_of("az 'unbalanced") is None


def test_every_hop_a_route_can_lead_to_has_a_row_and_each_row_names_its_evidence() -> None:
    for kind in ("client", "appliance", "peering", "gateway", "noroute", "server", "scale-set", "endpoint",
                 "arrival", "external"):
        assert kind in CHECKS
    for kind, checks in CHECKS.items():
        for check in checks:
            assert check.name and check.evidence and callable(check.run), (kind, check)


def _facts() -> Facts:
    return Facts(symptom=parse_symptom("a-vm cannot reach b-vm on port 80"))


def _call(n: int) -> FunctionCall:
    return FunctionCall("run_shell_cmd", {"command": f"az network nsg show --ids /n{n}", "reasoning": "x"})


def _verdict(name: str, fault_type: str = "nsg-deny") -> Verdict:
    return Verdict("route", name, "high", faults=[{"resource_id": name, "fault_type": fault_type}])


def _table(order: list[str], fault_type: str) -> dict[str, tuple[Check, ...]]:
    """start a -> (mid b at fault, end c at fault); a needs a read; ``fault_type`` is b's and c's fault."""

    def lead(w: Any, hop: Hop) -> Next:
        order.append(hop.name)
        return Next((Hop("mid", "b"), Hop("end", "c")))

    def needs(w: Any, hop: Hop) -> Need | None:
        order.append(hop.name)
        return w.need("a's read", _call(1))

    def faulty(w: Any, hop: Hop) -> Fault:
        order.append(hop.name)
        return Fault(_verdict(hop.name, fault_type))

    return {"start": (Check("lead", "", "-", lead), Check("read", "", "-", needs)),
            "mid": (Check("bad", fault_type, "-", faulty),), "end": (Check("bad", fault_type, "-", faulty),)}


def _answered(f: Facts) -> Facts:
    f.observations.append(Observation(_call(1), {"status": "completed", "exit_code": 0, "output": "{}", "audit_id": "x"},
                                      "nsg_rules"))
    return f


def test_a_fault_that_ends_the_path_stops_the_walk_and_the_far_end_is_still_checked() -> None:
    """Hop a needs a read, hop b is at fault with a fault that ends the path (a dead next hop): c is never reached,
    the far end z is checked on its own (its own rule is a second fault), and nothing concludes before a's read
    is answered (a may be the real cause)."""
    flow = Flow(client_ip="10.0.0.1", server_ip="10.0.0.2", port=80)
    order: list[str] = []
    table = _table(order, "udr-dead-appliance")
    w = walk(_facts(), flow, [Hop("start", "a")], table, prefetch=[Hop("end", "z")])
    assert order == ["a", "a", "b", "z"]
    assert w.first_fault() is None and [c.args["command"] for c in w.pending()] == ["az network nsg show --ids /n1"]
    w = walk(_answered(_facts()), flow, [Hop("start", "a")], table, prefetch=[Hop("end", "z")])
    fault = w.first_fault()
    assert fault is not None and fault.verdict.summary == "b" and w.pending() == []
    assert [x.verdict.summary for x in w.all_faults()] == ["b", "z"]


def test_a_fault_that_only_filters_the_flow_lets_the_walk_go_on_to_the_next_fault() -> None:
    """A deny rule at b leaves the path as it is: the walk goes on to c, whose fault is a second one to fix."""
    flow = Flow(client_ip="10.0.0.1", server_ip="10.0.0.2", port=80)
    order: list[str] = []
    w = walk(_answered(_facts()), flow, [Hop("start", "a")], _table(order, "nsg-deny"))
    assert order == ["a", "a", "b", "c"]
    assert [x.verdict.summary for x in w.all_faults()] == ["b", "c"] and w.pending() == []


def test_a_default_rule_at_the_far_end_of_a_broken_path_is_not_a_second_fault() -> None:
    """Past a dead next hop the server's VNet no longer reaches the client: a default rule's deny there is the
    broken path's doing."""
    flow = Flow(client_ip="10.0.0.1", server_ip="10.0.0.2", port=80)
    dead = Check("bad", "udr-dead-appliance", "-", lambda w, hop: Fault(_verdict("b", "udr-dead-appliance")))
    default = Check("nsg", "nsg-deny", "-", lambda w, hop: Fault(_verdict("/nsg/defaultSecurityRules/DenyAllInBound")))
    w = walk(_facts(), flow, [Hop("mid", "b")], {"mid": (dead,), "end": (default,)}, prefetch=[Hop("end", "z")])
    assert [x.verdict.summary for x in w.all_faults()] == ["b"]


def test_a_loop_of_appliances_ends_the_walk() -> None:
    flow = Flow(client_ip="10.0.0.1", server_ip="10.0.0.2", port=80)
    table = {"box": (Check("next", "", "-", lambda w, hop: Next((Hop("box", str(int(hop.name) + 1)),))),)}
    w = walk(_facts(), flow, [Hop("box", "0")], table)
    assert len(w.hops) == MAX_HOPS and w.first_fault() is None
