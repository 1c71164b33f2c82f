"""The egress policy (issue 28): where a SAFE probe may go (EgressScope), what it may carry, and that the
verdict is a pure function of (command, scope) whatever the cache holds."""

from __future__ import annotations

import json

import pytest

from netghost.shell import EgressScope
from netghost.shell.az_scope import learn_scope
from netghost.shell.classify import classify


def test_default_scope_is_the_private_space_and_private_names() -> None:
    scope = EgressScope()
    for addr in ("10.1.2.3", "172.20.0.1", "192.168.1.1", "100.64.0.9", "fd00::1", "198.51.100.7"):
        assert classify(f"ping -c 1 {addr}").verdict == "SAFE", addr
    for name in ("redis-primary", "db.prod.internal", "printer.local", "nas.home.arpa"):
        assert scope.name_in_scope(name), name
    for host in ("8.8.8.8", "example.com", "attacker.example", "2606:4700::1111", "203.0.114.9"):
        assert classify(f"ping -c 1 {host}").verdict == "RISKY", host


def test_scope_from_a_problem_statement() -> None:
    scope = EgressScope().with_text(
        "web-vm-01 cannot reach redis-primary.prod.internal on 6379; partnersql.database.windows.net and "
        "api.contoso.com time out from 20.30.40.50 and 52.1.0.0/16 (capture: web.pcap)"
    )
    assert scope.name_in_scope("api.contoso.com") and scope.name_in_scope("v2.api.contoso.com")
    assert not scope.name_in_scope("contoso.com") and not scope.name_in_scope("web.pcap")
    assert classify("curl -s https://api.contoso.com/health", scope=scope).verdict == "SAFE"
    assert classify("curl -s https://api.contoso.com/health").verdict == "RISKY"
    assert classify("ping -c 1 20.30.40.50", scope=scope).verdict == "SAFE"
    assert classify("ping -c 1 52.1.9.9", scope=scope).verdict == "SAFE"
    assert classify("ping -c 1 52.2.9.9", scope=scope).verdict == "RISKY"


def test_scope_never_widens_to_everything() -> None:
    scope = EgressScope().with_networks("0.0.0.0/0", "127.0.0.0/8", "169.254.0.0/16", "::/0").with_hosts("com", "windows.net")
    assert scope == EgressScope()
    assert classify("curl -s http://127.0.0.1/", scope=scope).verdict == "RISKY"


def test_the_verdict_is_a_pure_function_of_command_and_scope() -> None:
    """The classify cache is keyed on the scope too: the same command flips with the scope and back."""
    wide = EgressScope().with_hosts("example.com")
    for _ in range(3):
        assert classify("dig +short example.com").verdict == "RISKY"
        assert classify("dig +short example.com", scope=wide).verdict == "SAFE"
        assert classify("dig +short example.com", scope=EgressScope().with_hosts("example.com")).verdict == "SAFE"
    assert hash(wide) == hash(EgressScope().with_hosts("example.com"))


@pytest.mark.parametrize(
    "command",
    ["dig @8.8.8.8 redis.prod.internal", "nslookup redis.prod.internal 1.1.1.1", "host db.corp.internal 9.9.9.9",
     "dig @127.0.0.53 redis.prod.internal", "curl -s --dns-servers 8.8.8.8 http://redis-primary/"],
)  # fmt: skip
def test_an_explicit_dns_server_outside_the_scope_is_risky(command: str) -> None:
    assert classify(command).verdict == "RISKY"


@pytest.mark.parametrize(
    "command",
    ["curl -s http://127.0.0.1:4243/containers/json", "curl -s http://localhost:8200/v1/sys/health",
     "curl -s http://localhost:3500/v1.0/secrets/kv/db", "curl -s http://10.0.0.4/admin/host/keys",
     "curl -s http://10.0.0.4:2375/info", "curl -s http://169.254.169.254/metadata/instance?api-version=2021-02-01",
     "curl -s http://168.63.129.16/machine?comp=goalstate", "curl -s http://168.63.129.16:32526/vmSettings",
     "curl -s 'http://[::1]:8080/'", "curl -s http://0x7f000001/", "curl -s http://2130706433/", "openssl s_client -connect 127.0.0.1:8443"],
)  # fmt: skip
def test_loopback_link_local_and_admin_apis_are_not_safe(command: str) -> None:
    assert classify(command, scope=EgressScope().with_networks("10.0.0.0/8")).verdict != "SAFE"


def test_platform_resolver_and_icmp_stay_safe() -> None:
    assert classify("dig @168.63.129.16 +short kv.privatelink.vaultcore.azure.net").verdict == "SAFE"
    assert classify("ping -c 4 -q 168.63.129.16").verdict == "SAFE"


@pytest.mark.parametrize(
    ("command", "verdict"),
    [("curl -sI https://stghost.blob.core.windows.net/", "SAFE"),
     ("curl -s -o /dev/null -w '%{http_code}' https://kv-prod.vault.azure.net/healthstatus", "SAFE"),
     ("curl -s https://stghost.blob.core.windows.net/public/Winter24maple", "RISKY"),
     ("curl -s 'https://stghost.blob.core.windows.net/?comp=list'", "RISKY"),
     ("dig +short Winter24maple.blob.core.windows.net", "SAFE"),  # a lookup is answered by Microsoft alone
     ("curl -s https://management.azure.com/subscriptions?api-version=2022-12-01", "SAFE")],
)  # fmt: skip
def test_azure_endpoints_outside_the_scope_take_data_free_shapes(command: str, verdict: str) -> None:
    assert classify(command).verdict == verdict


def test_an_azure_resource_in_the_scope_takes_any_plain_path() -> None:
    scope = EgressScope().with_hosts("stghost.blob.core.windows.net")
    assert classify("curl -s https://stghost.blob.core.windows.net/captures/web.pcap", scope=scope).verdict == "SAFE"


@pytest.mark.parametrize(
    "command",
    ["curl -s -H 'X-ZUMO-AUTH: abc' http://10.0.0.4/", "curl -s -H 'aeg-sas-key: abc' http://10.0.0.4/",
     "curl -s -H 'Cookie: a=b' http://10.0.0.4/", "curl -s -b 'lang=en' http://10.0.0.4/", "curl -s -e http://x/ http://10.0.0.4/",
     "curl -s -A 'V2ludGVyMjRtYXBsZTg5' http://10.0.0.4/", "curl -s -H 'Accept: 57696e74657232346d61706c65' http://10.0.0.4/",
     "ping -c 1 -p ff 10.0.0.4", "dig +ednsopt=65001:57696e746572 redis.prod.internal", "dig +cookie=0123456789abcdef0123 x.internal",
     "dig +short 57696e74657232346d61706c65.prod.internal", "curl -s http://10.0.0.4/57696e74657232346d61706c65",
     "curl -s 'http://10.0.0.4/?q=V2ludGVyMjRtYXBsZTg5'"],
)  # fmt: skip
def test_shapes_that_carry_chosen_data_are_not_safe(command: str) -> None:
    assert classify(command).verdict != "SAFE"


def test_resolve_and_connect_to_decide_the_destination() -> None:
    assert classify("curl -s --resolve api.contoso.com:443:10.0.0.4 https://api.contoso.com/h").verdict == "SAFE"
    assert classify("curl -s --resolve api.contoso.com:443:8.8.8.8 https://api.contoso.com/h").verdict == "RISKY"
    assert classify("curl -s --connect-to ::10.0.0.4:443 https://api.contoso.com/h").verdict == "SAFE"
    assert classify("curl -s --resolve other.example:443:10.0.0.4 https://api.contoso.com/h").verdict == "RISKY"


# --- what az reads add to the scope --------------------------------------------------------------------------

VNETS = json.dumps([{"name": "hub", "addressSpace": {"addressPrefixes": ["20.40.0.0/16"]},
                     "subnets": [{"name": "a", "addressPrefix": "20.40.1.0/24"}]}])  # fmt: skip
ZONES = json.dumps([{"name": "privatelink.contoso.net", "resourceGroup": "rg"}])


def test_bare_az_reads_widen_the_scope() -> None:
    scope = learn_scope(EgressScope(), ["az", "network", "vnet", "list"], VNETS)
    assert classify("ping -c 1 20.40.7.7", scope=scope).verdict == "SAFE"
    scope = learn_scope(scope, ["az", "network", "private-dns", "zone", "list", "-o", "json"], ZONES)
    assert classify("dig +short db.privatelink.contoso.net", scope=scope).verdict == "SAFE"


@pytest.mark.parametrize(
    "argv",
    [["az", "network", "vnet", "list", "--query", "[].{addressSpace:{addressPrefixes:['8.8.8.0/24']}}"],
     ["az", "network", "vnet", "list", "--quer", "x"], ["az", "network", "vnet", "list", "-o", "tsv"],
     ["az", "network", "vnet", "delete", "-n", "x"], ["curl", "http://10.0.0.4/"]],
)  # fmt: skip
def test_reads_the_model_could_shape_teach_nothing(argv: list[str]) -> None:
    """--query (JMESPath builds any string) or a non-JSON output: the model chose the output's content."""
    assert learn_scope(EgressScope(), argv, VNETS) == EgressScope()
