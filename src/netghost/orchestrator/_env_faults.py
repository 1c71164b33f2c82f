"""Tool failures that mean the environment is broken, named with their fix (issue 24, bug 4).

Why: a new user with no ``az`` on PATH, or ``az`` not logged in, got a confident wrong answer ("Could not
identify the client ...") because every failed read became evidence of an empty subscription. A failure
that says the *environment* cannot work (the CLI missing, no login, a login Entra ID refuses, a managed
identity whose endpoint is gone, Azure unreachable, an invalid lab setting) is not evidence about the
network: it stops the run with a named reason and the exact command that fixes it.

Only what the CLI itself writes counts, matched at the start of a line of ``az``'s stderr (``ERROR:
Please run 'az login' ...``, ``ERROR: AADSTS700082: ...``, a traceback through az's credential code):
resource names and ARM messages the model can influence appear inside ``ERROR: (Code) ...`` lines and
never start one. A ``Subscription ... not found`` counts only when the command named no subscription
(``--subscription``, ``--ids``): a mistyped id the model passed is its own mistake, not the
environment's.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ENV_STOP_REASONS", "EnvironmentStop", "environment_fault", "stop_for"]

ENV_STOP_REASONS: Mapping[str, tuple[str, str]] = {
    "az_not_found": ("the Azure CLI (az) is not installed or not on PATH (exit 127)",
                     "install it (https://learn.microsoft.com/cli/azure/install-azure-cli; Debian/Ubuntu: "
                     "curl -sL https://aka.ms/InstallAzureCLIDeb | sudo bash), then run: az login"),
    "az_not_working": ("the Azure CLI (az) is installed but does not answer as it should",
                       "run az account show to see its error; reinstall azure-cli if it keeps failing"),
    "az_not_logged_in": ("az is not logged in (\"Please run 'az login' to setup account.\")",
                         "az login   (a managed identity: az login --identity; a service principal: az login "
                         "--service-principal -u <app-id> --tenant <tenant-id> --certificate <pem>)"),
    "az_login_expired": ("az's login has expired or Microsoft Entra ID refused it", "{login}"),
    "managed_identity_incomplete": ("az is logged in as a managed identity, but {missing} is missing from the "
                                    "environment ({present} is set)",
                                    "export {missing} as the hosting service provides it (App Service and Functions "
                                    "set IDENTITY_ENDPOINT and IDENTITY_HEADER together), then run: az account show"),
    "managed_identity_unavailable": ("az is logged in as a managed identity but could not get a token from its "
                                     "endpoint",
                                     "run the agent where the identity's endpoint is reachable (App Service and "
                                     "Functions: IDENTITY_ENDPOINT and IDENTITY_HEADER set; a VM: the metadata "
                                     "endpoint 169.254.169.254), then check: az login --identity"),
    "subscription_not_found": ("the subscription {subscription} was not found",
                               "az account list -o table, then: az account set --subscription <subscription-id>"),
    "subscription_disabled": ("the subscription {subscription} is {state}",
                              "az account list -o table, then: az account set --subscription <an enabled "
                              "subscription-id>"),
    "network_provider_not_registered": ("the Microsoft.Network resource provider is {state} in subscription "
                                        "{subscription}",
                                        "az provider register --namespace Microsoft.Network --wait"),
    "network_watcher_missing": ("Network Watcher is not enabled in {regions}, where {vms} run",
                                "{commands}"),
    "azure_unreachable": ("az cannot reach Azure (a connection, proxy or TLS failure)",
                          "check HTTPS_PROXY and REQUESTS_CA_BUNDLE (a TLS-intercepting proxy's CA must be in the "
                          "bundle), then run: az account show"),
    "lab_setting_invalid": ("a lab setting is invalid", "fix or unset the variable named above, then run again"),
}
"""name -> (what happened, the fix: the exact command to run); ``{...}`` are filled per case."""


@dataclass(frozen=True)
class EnvironmentStop:
    """Why the environment cannot work, and what to run. ``detail`` is az's own line (already redacted)."""

    reason: str
    what: str
    fix: str
    detail: str = ""
    audit_id: str | None = None

    def lines(self) -> list[str]:
        """What the console prints: the reason, az's words, the fix."""
        out = [f"{self.reason}: {self.what}"]
        if self.detail:
            out.append(f"az said: {self.detail}")
        out.append(f"Fix: {self.fix}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "what": self.what, "fix": self.fix, "detail": self.detail,
                "audit_id": self.audit_id}


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return f"<{key}>"


def stop_for(reason: str, *, detail: str = "", audit_id: str | None = None, **values: str) -> EnvironmentStop:
    """The :class:`EnvironmentStop` of a named reason, its texts filled from ``values``."""
    what, fix = ENV_STOP_REASONS[reason]
    fill = _Blank(values)
    fill.setdefault("login", "az login")
    return EnvironmentStop(reason, what.format_map(fill), fix.format_map(fill), detail, audit_id)


_LOGIN = re.compile(r"^ERROR: Please run 'az login' to setup account\.\s*$", re.MULTILINE)
_ENTRA = re.compile(r"^ERROR: (?:AADSTS\d{5,}\b|Can't find token from MSAL cache\b|User '[^']*' does not exist in "
                    r"MSAL token cache\b|\((?:ExpiredAuthenticationToken|InvalidAuthenticationToken"
                    r"(?:Tenant|Audience)?)\))", re.MULTILINE)
_REAUTH = re.compile(r"^(?:Run the command below to authenticate interactively;.*|To re-authenticate, please run:|"
                     r"Interactive authentication is needed\. Please run:)\s*\n((?:az (?:login|logout)\b.*\n?)+)",
                     re.MULTILINE)
_CAE = re.compile(r"^Interactive authentication is needed\. Please run:\s*$", re.MULTILINE)
"""azure-cli's answer to a 401 with a claims challenge: Azure revoked the login (``az rest`` to another API
is the model's own request, not the login's state)."""
_TRACEBACK = re.compile(r"^ERROR: The command failed with an unexpected error\. Here is the traceback:", re.MULTILINE)
_MI_FRAME = re.compile(r"^\s*File \"[^\"]*(?:msal[/\\]managed_identity\.py|azure[/\\]cli[/\\]core[/\\]auth[/\\]"
                       r"msal_credentials\.py)\"", re.MULTILINE)
_MI_ERROR = re.compile(r"^(?:msal\.managed_identity\.)?ManagedIdentityError\b", re.MULTILINE)
_SUBSCRIPTION = re.compile(r"^ERROR: (?:Subscription '(?P<a>[^']*)' not found\.|\(SubscriptionNotFound\) The "
                           r"subscription '(?P<b>[^']*)' could not be found\.)", re.MULTILINE)
_AZURE_HOSTS = r"(?:management\.azure\.com|login\.microsoftonline\.com|management\.core\.windows\.net)"
_UNREACHABLE = re.compile(rf"^ERROR: (?:HTTPSConnectionPool\(host='{_AZURE_HOSTS}', port=443\): Max retries exceeded|"
                          rf"<urllib3\.connection\.HTTPSConnection object at 0x[0-9a-f]+>: Failed to "
                          rf"(?:resolve '{_AZURE_HOSTS}'|establish a new connection)|Certificate verification failed\. "
                          rf"This typically happens when using Azure CLI behind a proxy)", re.MULTILINE)
_LAB = re.compile(r"^ERROR: lab: (?P<detail>NETGHOST_LAB_[A-Z_]+=.*)$", re.MULTILINE)


def _program(command: str) -> tuple[str, list[str]]:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return (words[0] if words else ""), words


def _first_error(stderr: str) -> str:
    """az's own words: its first ``ERROR:`` line (past the "unexpected error" header, to the exception itself)."""
    lines = [ln.strip().removeprefix("ERROR: ") for ln in stderr.splitlines() if ln.startswith("ERROR: ")]
    useful = [ln for ln in lines if not ln.startswith("The command failed with an unexpected error")]
    return (useful or lines or [""])[0][:400]


def environment_fault(command: str, response: Mapping[str, Any]) -> EnvironmentStop | None:
    """The environment fault a shell response shows, or None when it is an ordinary result or failure.

    Args:
        command: the command line that ran (its first word decides whose output it is).
        response: the Safe-Exec Shell's response (``status``, ``error``, ``exit_code``, ``stderr``, ``audit_id``).
    """
    program, words = _program(command)
    audit_id = str(response.get("audit_id") or "") or None
    if program != "az" or response.get("action") in ("user_denied", "user_abandoned", "blocked"):
        return None
    if response.get("error") == "command_not_found" or response.get("exit_code") == 127:
        return stop_for("az_not_found", detail=str(response.get("stderr") or "").strip()[:200], audit_id=audit_id)
    if response.get("status") != "completed" or response.get("exit_code") in (0, None):
        return None
    stderr = str(response.get("stderr") or "")
    detail = _first_error(stderr)
    if _LOGIN.search(stderr):
        return stop_for("az_not_logged_in", detail=detail, audit_id=audit_id)
    if _ENTRA.search(stderr) or (_CAE.search(stderr) and words[1:2] != ["rest"]):
        again = _REAUTH.search(stderr)
        login = "; ".join(ln.strip() for ln in again.group(1).splitlines() if ln.strip()) if again else "az login"
        return stop_for("az_login_expired", detail=detail, audit_id=audit_id, login=login)
    if _TRACEBACK.search(stderr) and (_MI_FRAME.search(stderr) or _MI_ERROR.search(stderr)):
        return stop_for("managed_identity_unavailable", detail=detail, audit_id=audit_id)
    found = _SUBSCRIPTION.search(stderr)
    if found and not any(w.split("=", 1)[0] in ("--subscription", "--ids") for w in words):
        return stop_for("subscription_not_found", detail=detail, audit_id=audit_id,
                        subscription=found["a"] or found["b"] or "")
    if _UNREACHABLE.search(stderr):
        return stop_for("azure_unreachable", detail=detail, audit_id=audit_id)
    lab = _LAB.search(stderr)
    if lab:
        return stop_for("lab_setting_invalid", detail=detail, audit_id=audit_id)
    return None
