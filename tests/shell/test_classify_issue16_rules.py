"""Issue 16: the mechanisms behind each class, pinned one by one (the generated corpus in
test_classify_issue16.py covers the spellings)."""

from __future__ import annotations

import pytest

from netghost.shell.classify import classify
from netghost.shell.classify._policy_file import parse_org_policy

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
    assert classify("curl -s -o /dev/null -w '%{http_code}' https://contoso.com").verdict == "SAFE"
    assert classify("curl -s --max-redirs 0 https://contoso.com").verdict == "SAFE"
