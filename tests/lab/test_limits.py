"""What the lab could not express before, each now expressed and checked: two faults in one world, an MTU
problem where ICMP is allowed (see test_new_faults), a ping failing by design in a healthy world, platform
traffic exempt from Internet rules, test-ip-flow on scale-set instances as azure-cli 2.91 allows it, an
appliance's capture that matches what the appliance did, test-connectivity's last hop at a private endpoint,
NODATA for a name with only a TXT record, and on-premises clients behind a tunnel that is down.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from netghost.errors import LabError
from netghost.lab import load_world
from netghost.lab.probes import run_probe
from netghost.lab.synth import capture_packets
from netghost.lab.world import SCENARIO_DIR, World, fault_problems, world_from_yaml

from .conftest import Lab

SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"


def _data(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((SCENARIO_DIR / f"{name}.yaml").read_text())
    return data


def _load(data: dict[str, Any]) -> World:
    return world_from_yaml(yaml.safe_dump(data))


def test_two_faults_with_different_causes_in_one_world() -> None:
    world = load_world("two-faults-dns-and-nsg")
    assert [f.type for f in world.faults] == ["dns-nxdomain", "nsg-deny"]
    assert fault_problems(world) == []
    assert world.flow_outcome("web-to-orders").outcome == "dns-nxdomain"
    assert world.flow_outcome("web-to-cache").outcome == "nsg-denied-inbound"
    data = _data("two-faults-dns-and-nsg")
    data["faults"][0]["flow"] = "web-to-orders"  # one flow, two faults: refused
    with pytest.raises(LabError, match="claimed by two faults"):
        _load(data)


def test_a_ping_blocked_by_design_is_not_a_fault() -> None:
    world = load_world("healthy-edge-ping-blocked")
    assert world.faults == [] and fault_problems(world) == []
    assert world.flow_outcome("fe-ping-api").outcome == "nsg-denied-inbound"
    data = _data("healthy-edge-ping-blocked")
    next(n for n in data["nsgs"] if n["name"] == "nsg-noe-api")["rules"].pop()  # the ping now works
    assert fault_problems(_load(data)) == ["flow fe-ping-api is blocked by design but the world delivers it"]
    data = _data("healthy-edge-ping-blocked")
    data["traffic"][-1].pop("expected")  # undeclared: a failing flow with no fault is a problem
    assert "is not the fault's flow" in fault_problems(_load(data))[0]


def test_platform_traffic_is_not_the_internet(make_lab: Callable[..., Lab]) -> None:
    """A deny-Internet outbound rule neither stops the capture agent (168.63.129.16) nor DNS; a rule naming
    the address does (the wireserver-blocked cloud fault), and so does a platform tag."""
    data = _data("nat-snat-exhaustion")
    nsg = data["nsgs"][0]
    nsg["rules"].append({"name": "deny-internet", "priority": 4000, "direction": "Outbound", "access": "Deny",
                         "protocol": "*", "destination_address_prefix": "Internet"})
    world = _load(data)
    vm = world.vm("ingest-w3-04")
    assert vm is not None
    nic = vm.nics[0]
    verdict = world.evaluate_nsg(vm, "Outbound", protocol="Tcp", local_ip=nic.private_ip, local_port=None,
                                 remote_ip="168.63.129.16", remote_port=80, nic=nic)
    assert verdict.access == "Allow"
    assert world.evaluate_nsg(vm, "Outbound", protocol="Tcp", local_ip=nic.private_ip, local_port=None,
                              remote_ip="93.184.216.34", remote_port=443, nic=nic).access == "Deny"
    path = Path(make_lab().state.root) / "internet-denied.yaml"
    path.write_text(yaml.safe_dump(data))
    lab = make_lab(path)
    created = lab.az("network watcher packet-capture create -g w3-ingest-rg --vm ingest-w3-04 -n cap1 "
                     "--storage-account w3captures")
    assert created.code == 0, created.err
    show = json.loads(lab.az("network watcher packet-capture show-status -l westus3 -n cap1").out)
    assert show["packetCaptureStatus"] in ("Running", "NotStarted"), show
    nsg["rules"][-1]["destination_address_prefix"] = "AzurePlatformDNS"
    assert _load(data).evaluate_nsg(vm, "Outbound", protocol="Udp", local_ip=nic.private_ip, local_port=None,
                                    remote_ip="168.63.129.16", remote_port=53, nic=nic).access == "Deny"


def test_test_ip_flow_on_scale_set_instances(make_lab: Callable[..., Lab], tmp_path: Path) -> None:
    """A Flexible set's instances are VMs: by name and by id they work. A Uniform set's are not, and
    azure-cli 2.91 reads the id's top-level name (the set) for the VM it looks up: ResourceNotFound for
    ``virtualMachines/<set>``, exactly what the real az prints."""
    data = _data("vmss-one-instance-down")
    data["vm_scale_sets"][0]["orchestration_mode"] = "Flexible"
    path = tmp_path / "flex.yaml"
    path.write_text(yaml.safe_dump(data))
    lab = make_lab(path)
    args = "--direction Inbound --protocol TCP --local 10.60.8.5:8443 --remote 10.60.1.4:50000"
    by_name = lab.az(f"network watcher test-ip-flow -g orders-rg --vm orders-vmss_1 {args}")
    assert by_name.code == 0, by_name.err
    assert json.loads(by_name.out)["access"] == "Allow"
    vm_id = f"{SUB}/resourceGroups/orders-rg/providers/Microsoft.Compute/virtualMachines/orders-vmss_1"
    by_id = lab.az(f"network watcher test-ip-flow -g orders-rg --vm {vm_id} {args}")
    assert by_id.code == 0 and json.loads(by_id.out) == json.loads(by_name.out)
    shown = json.loads(lab.az("vm show -g orders-rg -n orders-vmss_1").out)
    assert shown["virtualMachineScaleSet"]["id"].endswith("/virtualMachineScaleSets/orders-vmss")
    uniform = make_lab("vmss-one-instance-down")
    instance = f"{SUB}/resourceGroups/orders-rg/providers/Microsoft.Compute/virtualMachineScaleSets/orders-vmss/" \
               "virtualMachines/1"
    refused = uniform.az(f"network watcher test-ip-flow -g orders-rg --vm {instance} {args}")
    assert refused.code == 3 and "Microsoft.Compute/virtualMachines/orders-vmss'" in refused.err


def test_appliance_capture_shows_what_the_appliance_did() -> None:
    """The reset injector's eaten segment is not forwarded; an outbound NSG's drop is seen leaving."""
    world = load_world("ids-rst-one-host")
    fault = world.fault
    assert fault is not None
    appliance = str(fault.params["injector_ip"])
    pkts = capture_packets(world, world.vm_by_ip(appliance)[0].name, 1000.0, 1120.0)  # type: ignore[index]
    eaten = [p for p in pkts if p.via == appliance and p.hop_t is not None and p.arrive is None and not p.forged
             and p.proto == 6 and len(p.l4) > 60]
    assert eaten and not any(p.hop_fwd for p in eaten)
    data = _data("nsg-deny-at-appliance")
    nsg = next(n for n in data["nsgs"] if n["name"] == "nsg-hub-fw")
    rule = next(r for r in nsg["rules"] if r["name"] == "DenySpokeToData")
    rule.update(direction="Outbound", destination_address_prefix="10.90.2.0/24")
    nsg["rules"][0]["direction"] = "Inbound"
    world = _load(data)
    out = world.flow_outcome("reports-to-postgres")
    assert (out.outcome, out.nsg_direction) == ("nsg-denied-at-appliance", "Outbound")
    seen = [p for p in capture_packets(world, "fw-hub-01", 1000.0, 1030.0) if p.via == "10.10.0.4"]
    assert seen and all(p.hop_t is not None and p.hop_fwd and p.arrive is None for p in seen)


def test_test_connectivity_to_a_private_endpoint_names_it(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("custom-dns-no-forwarder")
    result = lab.az("network watcher test-connectivity -g ch-app-rg --source-resource docapp-ch-01 "
                    "--dest-address 10.101.9.4 --dest-port 443")
    doc = json.loads(result.out)
    assert doc["connectionStatus"] == "Reachable"
    last = doc["hops"][-1]
    assert last["type"] == "PrivateEndpoint" and last["address"] == "10.101.9.4"
    nic = json.loads(lab.az("network private-endpoint show -g ch-app-rg -n pe-chdocs-blob").out)["networkInterfaces"][0]
    assert last["resourceId"].startswith(nic["id"] + "/ipConfigurations/")


def test_a_name_with_only_a_txt_record_is_nodata(make_lab: Callable[..., Lab]) -> None:
    world = load_world("two-faults-dns-and-nsg")
    answer = world.resolve("orders-api.svc.kr.internal", "vnet-kr-app")
    assert (answer.rcode, answer.addresses) == ("NOERROR", ())
    assert world.resolve("nothing-here.svc.kr.internal", "vnet-kr-app").rcode == "NXDOMAIN"
    lab = make_lab("healthy-edge-ping-blocked")
    code, out, _ = run_probe("dig", ["_dmarc.booking.example", "A"], lab.env)
    assert code == 0 and "status: NOERROR" in out and "ANSWER: 0" in out
    code, out, _ = run_probe("dig", ["_dmarc.booking.example", "TXT", "+short"], lab.env)
    assert "v=DMARC1" in out


def test_on_premises_clients_need_a_connected_tunnel() -> None:
    data = _data("vpn-mss-clamping")
    data.pop("fault")
    assert _load(data).flow_outcome("scanner-ping").outcome == "delivered"
    data["vpn_connections"][0]["status"] = "NotConnected"
    out = _load(data).flow_outcome("scanner-ping")
    assert out.outcome == "no-route" and "NotConnected" in out.reason
    assert not out.connects


def test_nslookup_says_no_answer_for_a_txt_only_name(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("healthy-edge-ping-blocked")
    _code, out, _ = run_probe("nslookup", ["_dmarc.booking.example"], lab.env)
    assert "*** Can't find _dmarc.booking.example: No answer" in out and "NXDOMAIN" not in out
    _code, out, _ = run_probe("nslookup", ["nothing.booking.example"], lab.env)
    assert "NXDOMAIN" in out
