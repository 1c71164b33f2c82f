"""Which tool failures mean the environment is broken (issue 24, bug 4), and which never do.

Each class is checked with the CLI's own texts (azure-cli 2.91: ``_profile.py``, ``auth/util.py``,
``util.py``'s ``handle_exception``, ARM's error form) and against look-alikes a model could provoke: an ARM
error quoting a name it chose, a JMESPath error echoing its query, another program's output.
"""

from __future__ import annotations

from typing import Any

import pytest

from netghost.orchestrator import ENV_STOP_REASONS, environment_fault, stop_for
from netghost.orchestrator._environment import managed_identity_gap, named_vms


def _failed(stderr: str, exit_code: int = 1, **extra: Any) -> dict[str, Any]:
    return {"status": "completed", "action": "auto_approved", "exit_code": exit_code, "stderr": stderr,
            "output": "", "error": None, "audit_id": "s_001", **extra}


SUB = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
FAULTS = [
    ("az account show", _failed("ERROR: Please run 'az login' to setup account.\n"), "az_not_logged_in", "az login"),
    ("az vm list", _failed("ERROR: AADSTS700082: The refresh token has expired due to inactivity. Trace ID: x\n"
                           "Run the command below to authenticate interactively; additional arguments may be added "
                           "as needed:\naz login --tenant \"72f988bf\" --scope "
                           "\"https://management.core.windows.net//.default\"\n"),
     "az_login_expired", 'az login --tenant "72f988bf" --scope "https://management.core.windows.net//.default"'),
    ("az vm list", _failed("ERROR: AADSTS7000222: The provided client secret keys for app '1111' are expired.\n"),
     "az_login_expired", "az login"),
    ("az vm list", _failed("ERROR: Can't find token from MSAL cache.\nTo re-authenticate, please run:\naz login\n"),
     "az_login_expired", "az login"),
    ("az vm list", _failed("ERROR: (ExpiredAuthenticationToken) The access token expiry UTC time '1/1/2025' is earlier "
                           "than current UTC time '1/2/2025'.\nCode: ExpiredAuthenticationToken\n"),
     "az_login_expired", "az login"),
    ("az network vnet list", _failed("ERROR: Unauthorized({\"error\":{\"code\":\"InvalidAuthenticationToken\"}})\n"
                                     "Interactive authentication is needed. Please run:\naz logout\naz login\n"),
     "az_login_expired", "az logout; az login"),
    ("az rest --method get --url https://graph.microsoft.com/v1.0/me",
     _failed("ERROR: Unauthorized(...)\nInteractive authentication is needed. Please run:\naz logout\naz login\n"),
     None, ""),
    ("az vm list", _failed("ERROR: The command failed with an unexpected error. Here is the traceback:\n"
                           "ERROR: [Errno 111] Connection refused\nTraceback (most recent call last):\n"
                           '  File "/usr/lib/az/site-packages/msal/managed_identity.py", line 612, in '
                           "_obtain_token_on_app_service\n    resp = http_client.get(\n"),
     "managed_identity_unavailable", "az login --identity"),
    ("az vm list", _failed(f"ERROR: (SubscriptionNotFound) The subscription '{SUB}' could not be found.\n"
                           f"Code: SubscriptionNotFound\n"), "subscription_not_found", "az account set"),
    ("az vm list", _failed(f"ERROR: Subscription '{SUB}' not found. Check the spelling and casing and try again.\n"),
     "subscription_not_found", "az account set"),
    ("az vm list", _failed("ERROR: HTTPSConnectionPool(host='management.azure.com', port=443): Max retries exceeded "
                           "with url: /subscriptions/x (Caused by ProxyError('Unable to connect to proxy'))\n"),
     "azure_unreachable", "HTTPS_PROXY"),
    ("az vm list", _failed("ERROR: Certificate verification failed. This typically happens when using Azure CLI behind "
                           "a proxy that intercepts traffic with a self-signed certificate.\n"),
     "azure_unreachable", "REQUESTS_CA_BUNDLE"),
    ("az vm list", _failed("ERROR: lab: NETGHOST_LAB_CLOCK_SCALE='0.0' must be in (0, 1e6]\n"), "lab_setting_invalid",
     "unset"),
    ("az version", {"status": "error", "error": "command_not_found", "exit_code": 127,
                    "stderr": "az: command not found", "audit_id": "s_001"}, "az_not_found", "install-azure-cli"),
]


@pytest.mark.parametrize(("command", "response", "reason", "fix"), FAULTS,
                         ids=[f"{r or 'none'}-{i}" for i, (_, _, r, _) in enumerate(FAULTS)])
def test_each_class_of_environment_fault_is_named_with_its_fix(command: str, response: dict[str, Any],
                                                              reason: str | None, fix: str) -> None:
    stop = environment_fault(command, response)
    if reason is None:  # az rest to another API: a 401 there is the request's, not the login's
        assert stop is None
        return
    assert stop is not None and stop.reason == reason, stop
    assert fix in stop.fix and stop.audit_id == "s_001"
    assert stop.lines()[0].startswith(f"{reason}: ") and stop.lines()[-1] == f"Fix: {stop.fix}"


LOOK_ALIKES = [
    # an ARM error quoting a name the model chose
    ("az vm show -g rg -n x", _failed("ERROR: (ResourceNotFound) The Resource 'Microsoft.Compute/virtualMachines/"
                                      "Please run 'az login' to setup account.' under resource group 'rg' was not "
                                      "found.\n", 3)),
    ("az vm show -g rg -n x", _failed("ERROR: (ResourceNotFound) The Resource 'Microsoft.Compute/virtualMachines/"
                                      "AADSTS700082' under resource group 'rg' was not found.\n", 3)),
    # a JMESPath error echoing the model's query
    ("az vm list --query x", _failed("ERROR: Invalid jmespath query supplied for `--query`: HTTPSConnectionPool(host="
                                     "'management.azure.com', port=443): Max retries exceeded\n")),
    # a subscription the model named itself
    (f"az vm list --subscription {SUB}", _failed(f"ERROR: Subscription '{SUB}' not found. Check the spelling and "
                                                 "casing and try again.\n")),
    (f"az vm show --ids /subscriptions/{SUB}/resourceGroups/r/providers/Microsoft.Compute/virtualMachines/v",
     _failed(f"ERROR: Subscription '{SUB}' not found. Check the spelling and casing and try again.\n")),
    # the data plane of one storage account, not Azure
    ("az storage blob list", _failed("ERROR: <urllib3.connection.HTTPSConnection object at 0x7f2c>: Failed to resolve "
                                     "'nosuchsa.blob.core.windows.net' ([Errno -2] Name or service not known)\n")),
    # an unexpected error outside az's credential code
    ("az network nic list", _failed("ERROR: The command failed with an unexpected error. Here is the traceback:\n"
                                    "ERROR: 'NoneType' object has no attribute 'id'\nTraceback (most recent call "
                                    "last):\n  File \"/usr/lib/az/site-packages/azure/cli/command_modules/network/"
                                    "custom.py\", line 10, in list_nics\n")),
    # another program printing the same text, or missing
    ("curl -s http://10.0.0.4/", _failed("ERROR: Please run 'az login' to setup account.\n")),
    ("dig redis.internal", {"status": "error", "error": "command_not_found", "exit_code": 127, "stderr": ""}),
    # a human denied the az call: nothing ran
    ("az vm list", {"status": "denied", "action": "user_denied", "exit_code": None, "stderr": ""}),
    # the login text in stdout (a resource's tag, a blob's content) is data
    ("az vm list", {"status": "completed", "exit_code": 0, "stderr": "",
                    "output": "ERROR: Please run 'az login' to setup account.\n"}),
]


@pytest.mark.parametrize(("command", "response"), LOOK_ALIKES, ids=[str(i) for i in range(len(LOOK_ALIKES))])
def test_look_alikes_a_model_can_provoke_are_ordinary_failures(command: str, response: dict[str, Any]) -> None:
    assert environment_fault(command, response) is None


def test_every_reason_fills_its_texts() -> None:
    for reason in ENV_STOP_REASONS:
        stop = stop_for(reason)
        assert stop.what and stop.fix and "{" not in stop.what + stop.fix


@pytest.mark.parametrize(("environ", "gap"), [
    ({"IDENTITY_ENDPOINT": "http://127.0.0.1:41741/msi/token"}, ("IDENTITY_HEADER", "IDENTITY_ENDPOINT")),
    ({"IDENTITY_HEADER": "h"}, ("IDENTITY_ENDPOINT", "IDENTITY_HEADER")),
    ({"MSI_SECRET": "s"}, ("MSI_ENDPOINT", "MSI_SECRET")),
    ({"IMDS_ENDPOINT": "http://localhost:40342"}, ("IDENTITY_ENDPOINT", "IMDS_ENDPOINT")),
    ({"IDENTITY_ENDPOINT": "e", "IDENTITY_SERVER_THUMBPRINT": "t"}, ("IDENTITY_HEADER", "IDENTITY_ENDPOINT")),
    ({"IDENTITY_ENDPOINT": "e", "IDENTITY_HEADER": "h"}, None),  # App Service, Functions
    ({"IDENTITY_ENDPOINT": "e", "IMDS_ENDPOINT": "i"}, None),  # Azure Arc
    ({"MSI_ENDPOINT": "m"}, None),  # Cloud Shell
    ({"MSI_ENDPOINT": "m", "MSI_SECRET": "s"}, None),  # Azure ML
    ({}, None),  # a VM: the metadata endpoint, no variable
])
def test_a_half_set_managed_identity_is_found(environ: dict[str, str], gap: tuple[str, str] | None) -> None:
    assert managed_identity_gap(environ) == gap


def test_vm_names_in_a_problem_statement() -> None:
    assert named_vms("web-vm-01 cannot reach redis-primary on port 6379") == ["web-vm-01", "redis-primary"]
    assert named_vms("VMs in prod-subnet cannot reach Redis at 10.0.2.4:6379 (see https://x.example/a-b)") == [
        "prod-subnet"]
    assert named_vms("api_gw2 times out; api_gw2 again") == ["api_gw2"]
    assert all("'" not in n and '"' not in n for n in named_vms("o'brien-vm1 \"x-1\" y']-2"))
