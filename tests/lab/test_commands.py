"""Every command the issue lists runs against a scenario world, plus property checks of NSG logic."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netghost.lab.state import init_state

from .conftest import Lab
from .test_consistency import _first_match

VM_ID = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/prod-rg/providers/Microsoft.Compute/virtualMachines/web-vm-01"

COMMANDS = [
    (f"resource show --ids {VM_ID}", {"id", "name", "type", "location", "properties", "resourceGroup"}),
    ("resource show -g prod-rg -n nsg-web --resource-type Microsoft.Network/networkSecurityGroups", {"properties"}),
    ("resource show -g prod-rg -n vnet-prod --namespace Microsoft.Network --resource-type virtualNetworks", {"id"}),
    ("vm show -g prod-rg -n web-vm-01", {"hardwareProfile", "networkProfile", "storageProfile", "vmId"}),
    (f"vm show --ids {VM_ID} -d", {"powerState", "privateIps"}),
    ("vm list -g prod-rg", None),
    ("vm extension list -g prod-rg --vm-name web-vm-01", None),
    ("network nsg list -g prod-rg", None),
    ("network nsg show -g prod-rg -n nsg-data", {"securityRules", "defaultSecurityRules", "subnets"}),
    ("network nsg rule list -g prod-rg --nsg-name nsg-data --include-default", None),
    ("network nic show -g prod-rg -n web-vm-01VMNic", {"ipConfigurations", "macAddress", "virtualMachine"}),
    ("network nic list-effective-nsg -g prod-rg -n web-vm-01VMNic", {"value"}),
    ("network nic show-effective-route-table -g prod-rg -n web-vm-01VMNic", {"value"}),
    ("network route-table list -g prod-rg", None),
    ("network route-table show -g prod-rg -n rt-web", {"routes", "subnets", "disableBgpRoutePropagation"}),
    ("network route-table route list -g prod-rg --route-table-name rt-web", None),
    ("network vnet list -g prod-rg", None),
    ("network vnet show -g prod-rg -n vnet-prod", {"addressSpace", "subnets", "virtualNetworkPeerings"}),
    ("network vnet peering list -g prod-rg --vnet-name vnet-prod", None),
    ("network private-dns zone list", None),
    ("network private-dns record-set a list -g prod-rg -z prod.internal", None),
    ("network private-dns link vnet list -g prod-rg -z prod.internal", None),
    ("network watcher list", None),
    ("network watcher test-ip-flow -g prod-rg --vm web-vm-01 --direction Inbound --protocol TCP "
     "--local 10.1.1.4:443 --remote 203.0.113.10:50000", {"access", "ruleName"}),
    ("network watcher show-next-hop -g prod-rg --vm web-vm-01 --source-ip 10.1.1.4 --dest-ip 10.1.2.4",
     {"nextHopType", "routeTableId"}),
    ("network watcher test-connectivity -g prod-rg --source-resource web-vm-01 --dest-resource redis-primary "
     "--dest-port 6379", {"connectionStatus", "hops", "probesSent", "avgLatencyInMs"}),
    ("network watcher packet-capture list -l eastus", None),
    ("storage container exists --account-name forensicssa -n captures --auth-mode login", {"exists"}),
    ("storage blob list --account-name forensicssa -c captures --auth-mode login", None),
    ("storage blob exists --account-name forensicssa -c captures -n x.cap --auth-mode login", {"exists"}),
    ("storage account show -n forensicssa", {"primaryEndpoints", "name"}),
    ("storage account list --query [0]", {"primaryEndpoints", "name", "resourceGroup", "id"}),
    ("storage account list -g prod-rg --query [0]", {"primaryEndpoints", "name"}),
    ("account show", {"id", "name", "tenantId", "user", "isDefault"}),
]


@pytest.mark.parametrize(("command", "keys"), COMMANDS, ids=[c[0][:60] for c in COMMANDS])
def test_command_runs(make_lab: Callable[..., Lab], command: str, keys: set[str] | None) -> None:
    lab = make_lab("healthy")
    result = lab.az(command)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    if keys is None:
        assert isinstance(doc, list)
    else:
        assert keys <= set(doc), sorted(keys - set(doc))


@pytest.mark.parametrize("command", [
    "network nsg show -g prod-rg -n nope",
    "network nic show -g prod-rg -n nope",
    "network vnet show -g prod-rg -n nope",
    "network route-table route list -g prod-rg --route-table-name nope",
    "network private-dns record-set a list -g prod-rg -z nope.internal",
    f"resource show --ids {VM_ID.replace('web-vm-01', 'nope')}",
    "vm extension list -g prod-rg --vm-name nope",
])
def test_missing_resources_exit_3(make_lab: Callable[..., Lab], command: str) -> None:
    result = make_lab("healthy").az(command)
    assert result.code == 3
    assert result.err.startswith("ERROR: (ResourceNotFound) The Resource '")
    assert "\nCode: ResourceNotFound\nMessage: " in result.err


def test_vm_show_by_several_ids_returns_a_list(make_lab: Callable[..., Lab]) -> None:
    other = VM_ID.replace("web-vm-01", "redis-primary")
    doc = json.loads(make_lab("healthy").az(f"vm show --ids {VM_ID} {other} --query [].name").out)
    assert doc == ["web-vm-01", "redis-primary"]


_OCTET = st.integers(min_value=0, max_value=255)
_SOURCES = st.one_of(
    st.builds(lambda a, b: f"10.1.{a}.{b}", st.sampled_from([1, 2, 3]), _OCTET),
    st.builds(lambda a, b: f"10.0.{a}.{b}", st.sampled_from([0, 100]), _OCTET),
    st.builds(lambda a, b, c: f"{a}.{b}.{c}.7", st.sampled_from([20, 52, 203]), _OCTET, _OCTET),
)


@pytest.fixture(scope="module")
def nsg_lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    root = tmp_path_factory.mktemp("nsg-lab")
    return Lab(init_state(root, "nsg-deny"), {"NETGHOST_LAB_STATE": str(root)})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(src=_SOURCES, port=st.sampled_from([22, 80, 443, 6379, 8080]))
def test_ip_flow_matches_the_effective_rules(nsg_lab: Lab, src: str, port: int) -> None:
    """For random packets into redis-primary, test-ip-flow and a first-match walk agree."""
    lab = nsg_lab
    effective = json.loads(lab.az("network nic list-effective-nsg -g prod-rg -n redis-primaryVMNic").out)
    layers = _first_match(effective, "Inbound", src=src, sport=50000, dst="10.1.2.4", dport=port,
                          vnet_space=["10.1.0.0/16", "10.0.0.0/16"])
    verdict = json.loads(lab.az(f"network watcher test-ip-flow -g prod-rg --vm redis-primary --direction Inbound "
                                f"--protocol TCP --local 10.1.2.4:{port} --remote {src}:50000").out)
    denies = [name for access, name in layers if access == "Deny"]
    assert verdict["access"] == ("Deny" if denies else "Allow")
    if denies:
        assert verdict["ruleName"] == denies[0]


def test_extra_investigator_commands(make_lab: Callable[..., Lab], tmp_path) -> None:
    lab = make_lab("udr-dead-appliance")
    view = json.loads(lab.az("vm get-instance-view -g hub-rg -n fw-vm-01").out)
    codes = [s["code"] for s in view["instanceView"]["statuses"]]
    assert "PowerState/deallocated" in codes
    subnet = json.loads(lab.az("network vnet subnet show -g prod-rg --vnet-name vnet-prod -n web").out)
    assert subnet["routeTable"]["id"].endswith("/routeTables/rt-web")
    assert len(json.loads(lab.az("network vnet subnet list -g prod-rg --vnet-name vnet-prod").out)) == 2
    from netghost.lab.az import run_az

    code, out, _ = run_az(["version"], {"NETGHOST_LAB_STATE": str(tmp_path / "none")})
    assert code == 0 and json.loads(out)["azure-cli"] == "2.91.0"


def test_no_wait_prints_nothing(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("healthy")
    result = lab.az("network nic list-effective-nsg -g prod-rg -n web-vm-01VMNic --no-wait")
    assert (result.code, result.out) == (0, "")


def test_private_dns_record_sets(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("dns-private-zone-not-linked")
    one = json.loads(lab.az("network private-dns record-set a show -g prod-rg -z prod.internal -n redis-primary").out)
    assert one["aRecords"] == [{"ipv4Address": "10.1.2.4"}] and one["fqdn"] == "redis-primary.prod.internal."
    assert lab.az("network private-dns record-set a show -g prod-rg -z prod.internal -n nope").code == 3
    everything = json.loads(lab.az("network private-dns record-set list -g prod-rg -z prod.internal").out)
    assert {r["name"] for r in everything} == {"redis-primary", "web-vm-01"}
    assert lab.az("network private-dns record-set cname list -g prod-rg -z prod.internal").out == "[]\n"


def test_topology_and_security_group_view(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("nsg-deny")
    topo = json.loads(lab.az("network watcher show-topology -g prod-rg").out)
    names = {r["name"] for r in topo["resources"]}
    assert {"vnet-prod", "web", "data", "web-vm-01", "web-vm-01VMNic", "nsg-data"} <= names
    data = next(r for r in topo["resources"] if r["name"] == "data")
    assert data["associations"][0]["resourceId"].endswith("/networkSecurityGroups/nsg-data")
    view = json.loads(lab.az("network watcher show-security-group-view -g prod-rg --vm redis-primary").out)
    assoc = view["networkInterfaces"][0]["securityRuleAssociations"]
    assert [r["name"] for r in assoc["subnetAssociation"]["securityRules"]] == ["DenyAllFromWebSubnet",
                                                                                "AllowRedisFromWeb"]
    assert len(assoc["defaultSecurityRules"]) == 6
    assert assoc["networkInterfaceAssociation"]["securityRules"] == []


def test_login_and_account_list(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("healthy")
    login = lab.az("login --identity")
    assert login.code == 0 and json.loads(login.out)[0]["user"]["name"] == "ghost-sp"
    assert "no credentials were used" in login.err
    assert lab.az("account list --query [].isDefault -o tsv").out == "true\n"


def test_child_resource_show_commands(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("udr-dead-appliance")
    rule = json.loads(lab.az("network nsg rule show -g prod-rg --nsg-name nsg-data -n AllowRedisFromWeb").out)
    assert rule["priority"] == 200
    assert lab.az("network nsg rule show -g prod-rg --nsg-name nsg-data -n Nope").code == 3
    route = json.loads(lab.az("network route-table route show -g prod-rg --route-table-name rt-web -n data-via-fw").out)
    assert route["nextHopIpAddress"] == "10.0.100.4"
    peering = json.loads(lab.az("network vnet peering show -g prod-rg --vnet-name vnet-prod -n prod-to-hub").out)
    assert peering["peeringState"] == "Connected"
    nics = json.loads(lab.az("network nic list -g hub-rg --query [].enableIPForwarding").out)
    assert nics == [True]


def test_storage_account_list_is_every_account_or_one_groups(make_lab: Callable[..., Lab]) -> None:
    lab = make_lab("udr-stopped-appliance")  # its account lives in ci-rg, away from the other groups
    everywhere = json.loads(lab.az("storage account list --query [].{n:name,g:resourceGroup}").out)
    assert everywhere == [{"n": "cicaptures", "g": "ci-rg"}]
    assert json.loads(lab.az("storage account list -g tools-rg").out) == []
    missing = lab.az("storage account list -g no-such-rg")
    assert missing.code == 3 and "Resource group 'no-such-rg' could not be found." in missing.err
