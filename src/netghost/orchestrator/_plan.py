"""A capture task's CabinCrew plan: every command it may run, as argv templates, bound by a plan-token.

At creation, before any command runs, the whole plan (detect, verify storage, create, poll,
download, analyse, cleanup) is written down as argv templates. Values only Azure can tell (the
VM's region, the NIC ids, the container and blob of ``storagePath``) are placeholders. The plan is
hashed into the task's plan-token and checked by the preflight policy (Rego, through governance's
:class:`~netghost.governance.PolicyEngine`); a plan that breaks the capture limits is denied before
anything exists. Later, every command must be a *member* of the plan: its argv equals a template
whose placeholders are bound to the record's values. The shell's own plan-tokens cannot be used for
this (they include the audit sequence number), so membership compares argv.

How ``require_approval`` relates to the seed's HITL prompts: the default policy answers
``require_approval`` for any plan that creates cloud resources. That approval is *not* a separate
prompt: it is given step by step by the Safe-Exec Shell's gate, which asks the human about each
RISKY member of the approved plan (create and download on the critical path, one per cleanup
delete). The policy's verdict, its reasons and its hash are stored in the task record; ``deny``
fails the task in DETECTING with nothing created; ``warn`` is kept and the task goes on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import Any

from netghost.contracts import CAPTURE_MAX_DURATION_SECONDS, PolicyEvaluation, StorageAuthMode
from netghost.governance import PolicyEngine, capture_plan_facts, compute_plan_token
from netghost.orchestrator import _commands as cmd

__all__ = [
    "MAX_CAPTURE_BYTES",
    "PlanInputs",
    "bindings",
    "build_plan",
    "compare_order",
    "instance_names",
    "is_member",
    "load_policy",
    "plan_token",
    "preflight",
    "split_blob_url",
    "storage_account_ref",
]

MAX_CAPTURE_BYTES = 1073741824
"""The policy's size cap per capture session (Azure's default ``totalBytesPerSession``, 1 GiB)."""

_PLACEHOLDER = re.compile(
    r"^\{(location|container|blob|blob_prefix|nic_id|subnet_id|nsg_id|instance_blob|instance_local)\}$")
_INSTANCE = re.compile(r"_\d+\.cap$")
_NIC_ID = re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/"
                     r"networkInterfaces/[^/]+$", re.IGNORECASE)
_ARM_IDS = {
    "nic_id": _NIC_ID,
    "subnet_id": re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/"
                            r"virtualNetworks/[^/]+/subnets/[^/]+$", re.IGNORECASE),
    "nsg_id": re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/"
                         r"networkSecurityGroups/[^/]+$", re.IGNORECASE),
}
_BLOB_URL = re.compile(r"^https://(?P<account>[a-z0-9]+)\.blob\.core\.windows\.net/(?P<container>[^/?]+)/"
                       r"(?P<blob>[^?]+)$")


@dataclass(frozen=True)
class PlanInputs:
    """What the plan is computed from (all known at creation)."""

    task_id: str
    target: str
    resource_group: str
    storage_account: str
    container: str
    auth_mode: StorageAuthMode
    duration_s: int
    capture_limit_bytes: int
    local_pcap: str
    out_dir: str
    engine: tuple[str, ...]
    vmss: bool = False
    partner_pcap: str | None = None
    source: bool = True
    """Dual-end: this task is the source end ("A" of "A to B"); the comparison always reads A first."""
    storage_account_id: str | None = None
    """The account's full ARM id when it was given one (it lives outside the target's group): the create
    passes it, since az expands a bare ``--storage-account`` name with the target's ``-g``."""


_STORAGE_ID = re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Storage/"
                         r"storageAccounts/(?P<name>[a-z0-9]{3,24})$", re.IGNORECASE)


def storage_account_ref(value: str) -> tuple[str, str | None]:
    """``(name, full id or None)`` of a capture's ``storage_account``: a bare name, or the account's ARM id.

    ``packet-capture create --storage-account NAME`` is expanded with the *target's* ``-g``
    (docs/design/AZURE.md T3), so an account in another resource group must be passed by its full id; the
    blob commands and URLs take the name. Anything else is taken as a name (Azure judges it).
    """
    match = _STORAGE_ID.match(value.strip())
    return (match["name"].lower(), value.strip()) if match else (value, None)


def split_blob_url(url: str) -> tuple[str, str, str] | None:
    """``(account, container, blob)`` of a blob URL, or None when it is not one."""
    match = _BLOB_URL.match(url.strip())
    return (match["account"], match["container"], match["blob"]) if match else None


def build_plan(p: PlanInputs) -> list[list[str]]:
    """Every argv the task may run, in lifecycle order (templates with placeholders).

    The target's kind is only known in DETECTING (``vm show`` answers ResourceNotFound for a scale
    set, then ``vmss show`` resolves it; neither: ``aks show`` detects a cluster, which ends the task),
    so the plan holds both paths: the VM's (extension and NSG
    checks, ``--vm`` create, one blob) and the scale set's (``--target-type AzureVMSS`` create, one
    ``<stem>_<instanceId>.cap`` blob per instance, listed by prefix, each downloaded, analysed and
    deleted). ``p.vmss`` only says which path comes first.
    """
    blob = f"{p.task_id}.cap"
    url = cmd.blob_url(p.storage_account, p.container, blob)
    vm = [cmd.vm_show(p.resource_group, p.target), cmd.extension_list(p.resource_group, p.target),
          cmd.nic_effective_nsg("{nic_id}")]
    vmss = [cmd.vmss_show(p.resource_group, p.target), cmd.vmss_instances(p.resource_group, p.target),
            cmd.vmss_extension_list(p.resource_group, p.target), cmd.subnet_nsg("{subnet_id}"),
            cmd.nsg_outbound_rules("{nsg_id}")]
    detect = [*(vmss + vm if p.vmss else vm + vmss), cmd.aks_show(p.resource_group, p.target), cmd.watcher_list(),
              cmd.storage_account_show(p.storage_account, p.storage_account_id),
              cmd.container_exists(p.storage_account, p.container, p.auth_mode)]
    creates = [cmd.capture_create(p.resource_group, p.task_id, p.target, p.storage_account_id or p.storage_account,
                                  url, p.duration_s,
                                  p.capture_limit_bytes, vmss=flag) for flag in (p.vmss, not p.vmss)]
    analyse = [cmd.engine_run(p.engine, p.local_pcap, p.out_dir), cmd.engine_run(p.engine, "{instance_local}",
                                                                                    p.out_dir),
               cmd.engine_fleet(p.engine, p.local_pcap, p.out_dir)]
    if p.partner_pcap is not None:  # the source end's capture is A, whichever end runs the comparison
        first, second = (p.local_pcap, p.partner_pcap) if p.source else (p.partner_pcap, p.local_pcap)
        analyse.append(cmd.engine_run(p.engine, first, p.out_dir, compare=second))
    return [
        *detect,
        *creates,
        cmd.capture_show("{location}", p.task_id),
        cmd.capture_status("{location}", p.task_id),
        cmd.blob_show(p.storage_account, "{container}", "{blob}", p.auth_mode),
        cmd.blob_download(p.storage_account, "{container}", "{blob}", p.local_pcap, p.auth_mode),
        cmd.blob_show(p.storage_account, "{container}", "{instance_blob}", p.auth_mode),
        cmd.blob_list(p.storage_account, "{container}", "{blob_prefix}", p.auth_mode),
        cmd.blob_download(p.storage_account, "{container}", "{instance_blob}", "{instance_local}", p.auth_mode),
        *analyse,
        cmd.capture_delete("{location}", p.task_id),
        cmd.blob_exists(p.storage_account, "{container}", "{blob}", p.auth_mode),
        cmd.blob_delete(p.storage_account, "{container}", "{blob}", p.auth_mode),
        cmd.blob_delete(p.storage_account, "{container}", "{instance_blob}", p.auth_mode),
        cmd.remove_file(p.local_pcap),
        cmd.remove_file("{instance_local}"),
    ]


def compare_order(plan: Sequence[Sequence[str]] | None) -> tuple[str, str] | None:
    """The planned comparison's ``(capture A, capture B)``: A is the source end of a dual-end pair."""
    for step in plan or []:
        if "--compare" in step:
            at = list(step).index("--compare")
            return step[at - 1], step[at + 1]
    return None


def instance_names(blob: str, local: str | None, instance: str) -> tuple[str, str | None]:
    """A scale-set instance's blob and local file: ``<stem>_<instanceId>.cap`` next to the announced ones."""
    stem = blob.removesuffix(".cap")
    return f"{stem}_{instance}.cap", (f"{local.removesuffix('.cap')}_{instance}.cap" if local else None)


def plan_token(task_id: str, plan: Sequence[Sequence[str]]) -> str:
    """The task's plan-token: SHA-256 of the canonical ``{task_id, steps}``."""
    return compute_plan_token({"task_id": task_id, "steps": [list(s) for s in plan]})


def bindings(
    task_id: str, location: str | None, storage_path: str | None, default_container: str,
    local_pcap: str | None = None,
) -> dict[str, str | None]:
    """Placeholder values from the record: the region once known, container and blob of ``storagePath``,
    and the stems a scale-set instance's blob and local file must start with."""
    container, blob = default_container, f"{task_id}.cap"
    parts = split_blob_url(storage_path) if storage_path else None
    if parts is not None:
        container, blob = parts[1], parts[2]
    stem = blob.removesuffix(".cap")
    return {"location": location, "container": container, "blob": blob, "blob_prefix": f"{stem}_",
            "instance_blob": f"{stem}_", "instance_local": local_pcap.removesuffix(".cap") + "_" if local_pcap else None}


def _token_matches(template: str, actual: str, bound: Mapping[str, str | None]) -> bool:
    match = _PLACEHOLDER.match(template)
    if match is None:
        return template == actual
    name = match.group(1)
    if name in _ARM_IDS:  # an id Azure answered in DETECTING: any id of that kind
        return bool(_ARM_IDS[name].match(actual))
    value = bound.get(name)
    if name.startswith("instance_"):  # <stem>_<instanceId>.cap, nothing else
        return value is not None and actual.startswith(value) and bool(_INSTANCE.search(actual)) and \
            actual[len(value):].removesuffix(".cap").isdigit()
    return actual == value if value is not None else bool(actual)


def is_member(argv: Sequence[str], plan: Sequence[Sequence[str]], bound: Mapping[str, str | None]) -> bool:
    """True when ``argv`` is one of the plan's templates with its placeholders bound."""
    return any(
        len(t) == len(argv) and all(_token_matches(a, b, bound) for a, b in zip(t, argv, strict=True))
        for t in plan
    )


def load_policy() -> PolicyEngine:
    """Governance's default preflight policy plus the orchestrator's capture limits (``policies/``)."""
    root = resources.files("netghost.orchestrator").joinpath("policies")
    sources = sorted((f"orchestrator/{e.name}", e.read_text(encoding="utf-8"))
                     for e in root.iterdir() if e.name.endswith(".rego"))
    return PolicyEngine(sources=sources)


def preflight(
    engine: PolicyEngine, plan: Sequence[Sequence[str]], p: PlanInputs, *, max_capture_bytes: int, now: datetime,
    budgets: Mapping[str, Mapping[str, Any]],
) -> PolicyEvaluation:
    """Evaluate the plan against the policies (limits and the session's capture budgets) once, at creation.

    Args:
        budgets: each capture budget's ``limit``, ``count`` (this capture included) and refusal ``message``
            (``capture_budget_facts``).

    Raises:
        PolicyError: the policies failed to evaluate.
    """
    facts: dict[str, Any] = capture_plan_facts(plan, capture_duration_s=p.duration_s)
    facts.update(capture_limit_bytes=p.capture_limit_bytes, max_duration_s=CAPTURE_MAX_DURATION_SECONDS,
                 max_capture_bytes=max_capture_bytes, budgets={k: dict(v) for k, v in budgets.items()})
    return engine.evaluate(facts, now=now)
