"""Fake ``az`` programs for the environment preflight: each prints what azure-cli 2.91 prints in one situation.

The texts come from the real CLI (docs/design/AZURE.md §4 and the azure-cli 2.91 source:
``azure/cli/core/_profile.py`` "Please run 'az login' to setup account.", ``auth/util.py``'s
``aad_error_handler`` recommendation, ``util.py``'s ``handle_exception`` for an unexpected error, ARM's
three-line error form). A fake answers the preflight's reads and, for anything else, what a logged-in CLI
would answer about an empty subscription (``[]``), so a run that got past the preflight shows it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SUB = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
USER = {"name": "ghost@contoso.com", "type": "user"}
MSI_USER = {"assignedIdentityInfo": "MSI", "name": "systemAssignedIdentity", "type": "servicePrincipal"}
VERSION = {"azure-cli": "2.91.0", "azure-cli-core": "2.91.0", "azure-cli-telemetry": "1.1.0", "extensions": {}}

NOT_LOGGED_IN = "ERROR: Please run 'az login' to setup account.\n"
EXPIRED = ("ERROR: AADSTS700082: The refresh token has expired due to inactivity. The token was issued on "
           "2025-01-06T09:12:41.5880000Z and was inactive for 90.00:00:00. Trace ID: 6b8e2c1a-3f0d-4f6e-9a57-1c2d3e4f5a6b "
           "Correlation ID: 0c9b8a7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d Timestamp: 2025-04-07 10:02:11Z\n"
           "Run the command below to authenticate interactively; additional arguments may be added as needed:\n"
           'az login --scope "https://management.core.windows.net//.default"\n')
MSI_TRACEBACK = (
    "ERROR: The command failed with an unexpected error. Here is the traceback:\n"
    "ERROR: HTTPConnectionPool(host='169.254.169.254', port=80): Max retries exceeded with url: "
    "/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https%3A%2F%2Fmanagement.core.windows.net%2F "
    "(Caused by ConnectTimeoutError(<urllib3.connection.HTTPConnection object at 0x7f1e2d3c4b50>, 'Connection to "
    "169.254.169.254 timed out. (connect timeout=None)'))\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/az/lib/python3.12/site-packages/knack/cli.py", line 233, in invoke\n'
    "    cmd_result = self.invocation.execute(args)\n"
    '  File "/opt/az/lib/python3.12/site-packages/azure/cli/core/auth/msal_credentials.py", line 177, in '
    "acquire_token\n"
    "    result = self._msal_client.acquire_token_for_client(resource=scopes_to_resource(scopes))\n"
    '  File "/opt/az/lib/python3.12/site-packages/msal/managed_identity.py", line 284, in acquire_token_for_client\n'
    "    result = _obtain_token(\n"
    "requests.exceptions.ConnectTimeout: HTTPConnectionPool(host='169.254.169.254', port=80): Max retries exceeded\n"
    "To check existing issues, please visit: https://github.com/Azure/azure-cli/issues\n")
SUBSCRIPTION_GONE = (f"ERROR: (SubscriptionNotFound) The subscription '{SUB}' could not be found.\n"
                     f"Code: SubscriptionNotFound\nMessage: The subscription '{SUB}' could not be found.\n")
FORBIDDEN_ROLES = ("ERROR: (AuthorizationFailed) The client 'ghost@contoso.com' with object id "
                   "'9a8b7c6d-5e4f-3a2b-1c0d-9e8f7a6b5c4d' does not have authorization to perform action "
                   "'Microsoft.Authorization/roleAssignments/read' over scope '/subscriptions/" + SUB + "' or the scope "
                   "is invalid. If access was recently granted, please refresh your credentials.\n"
                   "Code: AuthorizationFailed\nMessage: The client 'ghost@contoso.com' ...\n")


def account(user: dict[str, Any] = USER, state: str = "Enabled") -> dict[str, Any]:
    return {"environmentName": "AzureCloud", "homeTenantId": TENANT, "id": SUB, "isDefault": True,
            "managedByTenants": [], "name": "Contoso Production", "state": state, "tenantId": TENANT, "user": user}


def answers(situation: str) -> dict[str, tuple[int, str, str]]:
    """``"az words" prefix -> (exit code, stdout, stderr)`` for a situation (``ok`` answers everything)."""
    ok: dict[str, tuple[int, str, str]] = {
        "version": (0, json.dumps(VERSION, indent=2) + "\n", ""),
        "account show": (0, json.dumps(account(), indent=2) + "\n", ""),
        "provider show": (0, "Registered\n", ""),
        "vm list": (0, json.dumps([{"name": "web-vm-01", "location": "eastus"},
                                   {"name": "redis-primary", "location": "eastus"}]) + "\n", ""),
        "network watcher list": (0, '[\n  "eastus",\n  "westeurope"\n]\n', ""),
        "network watcher packet-capture list": (0, "[]\n", ""),
        "role assignment list": (0, '[\n  "Network Ghost Agent Investigator"\n]\n', ""),
    }
    changes: dict[str, dict[str, tuple[int, str, str]]] = {
        "ok": {},
        "not_logged_in": {k: (1, "", NOT_LOGGED_IN) for k in ok if k != "version"},
        "expired": dict.fromkeys(("provider show", "vm list", "network watcher list", "role assignment list"),
                                 (1, "", EXPIRED)),
        "msi_half_set": {"account show": (0, json.dumps(account(MSI_USER), indent=2) + "\n", "")},
        "msi_unreachable": {"account show": (0, json.dumps(account(MSI_USER), indent=2) + "\n", ""),
                            "provider show": (1, "", MSI_TRACEBACK)},
        "subscription_gone": {"provider show": (1, "", SUBSCRIPTION_GONE)},
        "subscription_disabled": {"account show": (0, json.dumps(account(state="Disabled"), indent=2) + "\n", "")},
        "provider_unregistered": {"provider show": (0, "NotRegistered\n", "")},
        "no_watcher": {"vm list": (0, json.dumps([{"name": "web-vm-01", "location": "westus2"}]) + "\n", "")},
        "roles_forbidden": {"role assignment list": (1, "", FORBIDDEN_ROLES)},
    }
    return {**ok, **changes[situation]}


_SCRIPT = """#!{python}
import json, sys
ANSWERS = json.loads({answers!r})
words = " ".join(a for a in sys.argv[1:] if not a.startswith("-"))
with open({log!r}, "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
for prefix, (code, out, err) in ANSWERS.items():
    if words.startswith(prefix):
        sys.stdout.write(out)
        sys.stderr.write(err)
        sys.exit(code)
sys.stdout.write("[]\\n")
"""


def install(bin_dir: Path, situation: str) -> Path:
    """Write a fake ``az`` for ``situation`` into ``bin_dir``; returns the log of the argvs it was called with."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    log = bin_dir / "az.calls"
    log.write_text("")
    script = bin_dir / "az"
    script.write_text(_SCRIPT.format(python=sys.executable, answers=json.dumps(answers(situation)), log=str(log)))
    script.chmod(0o755)
    return log
