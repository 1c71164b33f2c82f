"""The environment preflight: before any investigation or capture outside the lab, can ``az`` work here?

Why: every failure of the environment used to surface later as thin evidence (an empty VM list, a
task ``detection_failed``) and end in a confident wrong answer. The preflight asks, in order and
through the Safe-Exec Shell (each question is a SAFE read in the audit trail), what a new user gets
wrong: is ``az`` installed and logged in, to which subscription (``az account show``: exit 127, or
"Please run 'az login'"), does a managed identity login have its endpoint variables, does Azure accept
the login and is the subscription usable (``az provider show -n Microsoft.Network``: the first call
that needs a token, and the provider every diagnostic needs), which CLI version (``az version``), is
Network Watcher enabled in the regions of the VMs the problem statement names, and what roles the
identity holds (read where permitted, never a reason to stop). The first failure is an :class:`EnvironmentStop`: a named reason and the exact
command that fixes it. The lab's simulator needs none of this (the caller skips it there).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from netghost.orchestrator._env_faults import EnvironmentStop, environment_fault, stop_for
from netghost.orchestrator._runtime import parse_json

__all__ = ["TESTED_AZ", "EnvironmentReport", "check_environment", "managed_identity_gap", "named_vms"]

TESTED_AZ = (2, 91)
"""The azure-cli version the product is tested with (CI installs exactly this one)."""
_CAPTURE_ROLES = ("Owner", "Contributor", "Network Contributor", "Network Ghost Agent Investigator")
_NAME = re.compile(r"(?<![\w.:/-])([A-Za-z][A-Za-z0-9_.-]{0,62}[A-Za-z0-9])(?![\w:/-])")
_MAX_NAMES = 8


class _Shell(Protocol):
    def execute(self, request: Mapping[str, Any]) -> dict[str, Any]: ...


@dataclass
class EnvironmentReport:
    """What the preflight found; ``stop`` set means the investigation must not start."""

    stop: EnvironmentStop | None = None
    az_version: str | None = None
    account: dict[str, Any] = field(default_factory=dict)
    regions: dict[str, bool] = field(default_factory=dict)
    """region of a VM the problem statement names -> whether Network Watcher is enabled there."""
    roles: list[str] | None = None
    notes: list[str] = field(default_factory=list)
    audit_ids: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.stop is None


def managed_identity_gap(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """``(missing, present)`` when the managed-identity variables are half set, else None.

    Each hosting service sets its variables together (App Service and Functions: IDENTITY_ENDPOINT +
    IDENTITY_HEADER; Azure Arc: IDENTITY_ENDPOINT + IMDS_ENDPOINT; Service Fabric: both plus
    IDENTITY_SERVER_THUMBPRINT; Azure ML: MSI_ENDPOINT + MSI_SECRET). One without its partner sends the
    token request elsewhere (MSAL falls back to the VM metadata endpoint), so az fails with "The command
    failed with an unexpected error" on every call.
    """
    has = {name for name, value in environ.items() if value}
    if "IDENTITY_HEADER" in has and "IDENTITY_ENDPOINT" not in has:
        return "IDENTITY_ENDPOINT", "IDENTITY_HEADER"
    if "IMDS_ENDPOINT" in has and "IDENTITY_ENDPOINT" not in has:
        return "IDENTITY_ENDPOINT", "IMDS_ENDPOINT"
    if "IDENTITY_ENDPOINT" in has and not {"IDENTITY_HEADER", "IMDS_ENDPOINT"} & has:
        return "IDENTITY_HEADER", "IDENTITY_ENDPOINT"
    if "IDENTITY_SERVER_THUMBPRINT" in has and not {"IDENTITY_ENDPOINT", "IDENTITY_HEADER"} <= has:
        return "IDENTITY_HEADER" if "IDENTITY_ENDPOINT" in has else "IDENTITY_ENDPOINT", "IDENTITY_SERVER_THUMBPRINT"
    if "MSI_SECRET" in has and "MSI_ENDPOINT" not in has:
        return "MSI_ENDPOINT", "MSI_SECRET"
    return None


def named_vms(intent: str) -> list[str]:
    """Words of the problem statement that could be VM names (``web-vm-01``, ``redis_primary2``), at most 8.

    Only words with a letter and a digit, ``-`` or ``_`` (plain words are prose); each is safe inside a
    JMESPath string literal by construction (no quote can appear).
    """
    found: list[str] = []
    for match in _NAME.finditer(intent):
        word = match.group(1)
        if any(c.isdigit() or c in "-_" for c in word) and word not in found:
            found.append(word)
    return found[:_MAX_NAMES]


def _user(account: Mapping[str, Any]) -> dict[str, Any]:
    user = account.get("user")
    return user if isinstance(user, dict) else {}


def _is_managed_identity(account: Mapping[str, Any]) -> bool:
    user = _user(account)
    info = str(user.get("assignedIdentityInfo") or "")
    return info.startswith("MSI") or user.get("name") in ("systemAssignedIdentity", "userAssignedIdentity")


def _assignee(account: Mapping[str, Any]) -> str | None:
    """Who ``role assignment list --assignee`` should ask about: a user's name, an SP's app id, a user-assigned
    identity's client id (a system-assigned identity's object id is not in the profile)."""
    user = _user(account)
    info = str(user.get("assignedIdentityInfo") or "")
    if info.startswith("MSIClient-"):
        return info.removeprefix("MSIClient-")
    if info.startswith("MSIObject-"):
        return info.removeprefix("MSIObject-")
    name = str(user.get("name") or "")
    if _is_managed_identity(account) or not re.fullmatch(r"[A-Za-z0-9@._-]{1,256}", name):
        return None
    return name


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


@dataclass
class _Preflight:
    shell: _Shell
    say: Callable[[str], None]
    report: EnvironmentReport = field(default_factory=EnvironmentReport)

    def run(self, argv: Sequence[str], why: str) -> tuple[dict[str, Any], EnvironmentStop | None]:
        command = shlex.join(argv)
        response = self.shell.execute({"command": command, "reasoning": f"Environment preflight: {why}"})
        if response.get("audit_id"):
            self.report.audit_ids.append(str(response["audit_id"]))
        return response, environment_fault(command, response)

    def note(self, text: str) -> None:
        self.report.notes.append(text)
        self.say(f"[yellow][Preflight] {text}[/]")

    def fail(self, stop: EnvironmentStop) -> EnvironmentReport:
        self.report.stop = stop
        return self.report


def _ok(response: Mapping[str, Any]) -> bool:
    return response.get("status") == "completed" and response.get("exit_code") == 0


def _error_line(response: Mapping[str, Any]) -> str:
    text = str(response.get("stderr") or response.get("denial_reason") or response.get("error") or "")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip() != "ERROR:"]
    return lines[0].removeprefix("ERROR: ")[:300] if lines else f"exit {response.get('exit_code')}"


def check_environment(shell: _Shell, *, intent: str = "", environ: Mapping[str, str] | None = None,
                      say: Callable[[str], None] = lambda _t: None) -> EnvironmentReport:
    """Run the preflight through ``shell``; the report's ``stop`` is the first failure (None: go ahead).

    Args:
        shell: the Safe-Exec Shell (every question is audited).
        intent: the problem statement (the VMs it names decide the regions checked for Network Watcher).
        environ: the environment az runs with (its managed-identity variables are checked).
        say: where progress lines go (rich markup).
    """
    import os  # noqa: PLC0415  the process environment at call time

    env = os.environ if environ is None else environ
    pre = _Preflight(shell, say)
    # The cheapest questions first, so a broken environment stops after one or two az starts: account show
    # answers "is az there" (127) and "is it logged in" from the local profile; provider show is the first
    # call that needs a token. The version and the rest only matter once those pass.
    stop = _account(pre, env)
    if stop is None:
        stop = _provider(pre)
    if stop is None:
        stop = _version(pre)
    if stop is None:
        stop = _watchers(pre, intent)
    if stop is not None:
        return pre.fail(stop)
    _roles(pre)
    return pre.report


def _version(pre: _Preflight) -> EnvironmentStop | None:
    response, stop = pre.run(["az", "version", "-o", "json"], "which version of the Azure CLI is this?")
    if stop is not None:
        return stop
    version = parse_json(str(response.get("output") or "")) if _ok(response) else None
    if not isinstance(version, dict):
        pre.note(f"the Azure CLI's version could not be read ({_error_line(response)})")
        return None
    pre.report.az_version = str(version.get("azure-cli"))
    if _version_tuple(pre.report.az_version) < TESTED_AZ:
        pre.note(f"azure-cli {pre.report.az_version} is older than the tested {'.'.join(map(str, TESTED_AZ))}: "
                 "if a command's syntax is refused, run: az upgrade")
    else:
        pre.say(f"[Preflight] azure-cli {pre.report.az_version}")
    return None


def _account(pre: _Preflight, env: Mapping[str, str]) -> EnvironmentStop | None:
    response, stop = pre.run(["az", "account", "show", "-o", "json"], "is az logged in, and to which subscription?")
    if stop is not None:
        return stop
    account = parse_json(str(response.get("output") or "")) if _ok(response) else None
    if not isinstance(account, dict):
        # not the login message (environment_fault names that one): az runs, but not as it should
        return stop_for("az_not_working", detail=_error_line(response), audit_id=response.get("audit_id"))
    pre.report.account = account
    subscription = f"{account.get('name')} ({account.get('id')})"
    state = str(account.get("state") or "Enabled")
    if state in ("Disabled", "Deleted"):
        return stop_for("subscription_disabled", subscription=subscription, state=state,
                        audit_id=response.get("audit_id"))
    user = _user(account)
    pre.say(f"[Preflight] az logged in as {user.get('name', '?')} ({user.get('type', '?')}), subscription "
            f"{subscription}, state {state}")
    if _is_managed_identity(account):
        gap = managed_identity_gap(env)
        if gap is not None:
            return stop_for("managed_identity_incomplete", missing=gap[0], present=gap[1])
    return None


def _provider(pre: _Preflight) -> EnvironmentStop | None:
    response, stop = pre.run(["az", "provider", "show", "-n", "Microsoft.Network", "--query", "registrationState",
                              "-o", "tsv"], "does Azure accept the login, and is Microsoft.Network registered?")
    if stop is not None:
        return stop
    account = pre.report.account
    if not _ok(response):
        pre.note(f"the Microsoft.Network provider could not be read ({_error_line(response)})")
        return None
    state = str(response.get("output") or "").strip()
    if state and state != "Registered":
        if state == "Registering":
            pre.note("the Microsoft.Network provider is still registering")
            return None
        return stop_for("network_provider_not_registered", state=state, audit_id=response.get("audit_id"),
                        subscription=str(account.get("id") or ""))
    return None


def _watchers(pre: _Preflight, intent: str) -> EnvironmentStop | None:
    names = named_vms(intent)
    if not names:
        pre.say("[Preflight] the problem statement names no VM: Network Watcher is checked per capture")
        return None
    listed = ", ".join(f"'{n}'" for n in names)
    response, stop = pre.run(["az", "vm", "list", "--query", f"[?contains([{listed}], name)].{{name:name, "
                              f"location:location}}", "-o", "json"], "in which regions are the VMs the problem "
                             "statement names?")
    if stop is not None:
        return stop
    vms = parse_json(str(response.get("output") or "")) if _ok(response) else None
    if not isinstance(vms, list):
        pre.note(f"the VMs could not be listed ({_error_line(response)}); Network Watcher is checked per capture")
        return None
    where: dict[str, list[str]] = {}
    for vm in vms:
        if isinstance(vm, dict) and vm.get("location"):
            where.setdefault(str(vm["location"]).lower(), []).append(str(vm.get("name")))
    if not where:
        return None
    response, stop = pre.run(["az", "network", "watcher", "list", "--query", "[].location", "-o", "json"],
                             "is Network Watcher enabled in those regions?")
    if stop is not None:
        return stop
    regions = parse_json(str(response.get("output") or "")) if _ok(response) else None
    if not isinstance(regions, list):
        pre.note(f"Network Watcher could not be listed ({_error_line(response)})")
        return None
    enabled = {str(r).lower() for r in regions}
    pre.report.regions = {region: region in enabled for region in sorted(where)}
    missing = [r for r in sorted(where) if r not in enabled]
    if missing:
        commands = "; ".join(f"az network watcher configure -g NetworkWatcherRG -l {r} --enabled true" for r in missing)
        return stop_for("network_watcher_missing", regions=", ".join(missing), audit_id=response.get("audit_id"),
                        vms=", ".join(v for r in missing for v in where[r]), commands=commands)
    pre.say(f"[Preflight] Network Watcher enabled in {', '.join(sorted(where))}")
    return None


def _roles(pre: _Preflight) -> None:
    """What the identity may do, where that can be read; never a reason to stop."""
    assignee = _assignee(pre.report.account)
    if assignee is None:
        pre.say("[Preflight] the identity's roles are not readable from its profile (a system-assigned managed "
                "identity); Azure will say what it may not do")
        return
    response, stop = pre.run(["az", "role", "assignment", "list", "--assignee", assignee, "--include-inherited",
                              "--query", "[].roleDefinitionName", "-o", "json"],
                             "which roles does the identity hold (what it may do)?")
    roles = parse_json(str(response.get("output") or "")) if _ok(response) and stop is None else None
    if not isinstance(roles, list):
        pre.say(f"[Preflight] the identity's roles could not be read ({_error_line(response)}); Azure will say what "
                "it may not do")
        return
    pre.report.roles = sorted({str(r) for r in roles if r})
    if not pre.report.roles:
        pre.note("no role assignment found for the identity: reads may be refused (AuthorizationFailed)")
    elif not set(pre.report.roles) & set(_CAPTURE_ROLES):
        pre.note(f"roles {', '.join(pre.report.roles)}: packet captures may be refused (docs/azure/"
                 "ghost-agent-role.json lists what they need)")
    else:
        pre.say(f"[Preflight] roles: {', '.join(pre.report.roles)}")
