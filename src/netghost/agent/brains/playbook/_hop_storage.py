"""The checks of a storage account hop: the complaint's server is a storage account, reached from the client's
subnet through the account's public endpoint.

An account whose network rules deny by default admits a subnet only through that subnet's Microsoft.Storage
service endpoint (without one, the subnet's traffic arrives from a public address and is refused with 403);
a service endpoint policy on the subnet then narrows the endpoint to the accounts its definitions list (any
other account refuses the subnet, whatever its network rules say); and the account must list the subnet
(or the client's public address) among the ones it admits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netghost.agent.brains.playbook import _reads as r
from netghost.agent.brains.playbook._moves import Verdict, shell_call
from netghost.agent.brains.playbook._path import Fault, Hop, Outcome, Walk
from netghost.agent.brains.playbook._routes import subnet_by_id

__all__ = ["storage_endpoint", "storage_network_rules", "storage_policy"]

_SERVICE = "Microsoft.Storage"


def _parts(w: Walk, hop: Hop) -> tuple[Mapping[str, Any], dict[str, Any], str]:
    account = hop.doc.get("account") or {}
    nic = w.facts.nic_of(w.flow.client) or {}
    subnet_id = str(nic.get("subnet") or "")
    return account, subnet_by_id(w.facts, subnet_id) or {}, subnet_id


def _admitted(account: Mapping[str, Any], subnet_id: str) -> bool:
    return any(str(x).lower() == subnet_id.lower() for x in account.get("vnetRules") or [] if x)


def _denies(account: Mapping[str, Any]) -> bool:
    return str(account.get("default") or "").lower() == "deny"


def _evidence(w: Walk, *steps: str) -> list[str]:
    out = []
    for step in steps:
        o = next((x for x in reversed(w.facts.of(step)) if x.ok), None)
        if o is not None and o.audit_id:
            out.append(o.audit_id)
    return out


def _has_endpoint(subnet: Mapping[str, Any]) -> bool:
    return any(str(e).lower().startswith(_SERVICE.lower()) for e in subnet.get("endpoints") or [])


def storage_endpoint(w: Walk, hop: Hop) -> Outcome:
    """An account admitting the client's subnet by rule needs the subnet's Microsoft.Storage service endpoint."""
    account, subnet, subnet_id = _parts(w, hop)
    if not _denies(account) or not _admitted(account, subnet_id) or _has_endpoint(subnet) or not subnet:
        return None
    name = subnet.get("name") or subnet_id.rsplit("/", 1)[-1]
    return Fault(Verdict(
        "route", f"Storage account {account.get('name')} denies by default and admits subnet {name} by a virtual "
                 f"network rule, but {name} has no {_SERVICE} service endpoint: {w.flow.client_name}'s requests reach "
                 "the account from a public address, not from the subnet, and are refused (403).", "high",
        faults=[{"resource_id": subnet_id, "fault_type": "paas-network-rules-deny"}],
        actions=[f"Add the {_SERVICE} service endpoint to subnet {name} (`az network vnet subnet update --ids "
                 f"{subnet_id} --service-endpoints {_SERVICE}`)."],
        evidence=_evidence(w, "storage", "vnets")))


def _covers(resource: object, account_id: str) -> bool:
    """A policy definition's service resource names the account, or the group or subscription holding it."""
    scope = str(resource).lower().rstrip("/")
    aid = account_id.lower()
    return bool(scope) and (aid == scope or aid.startswith(scope + "/"))


def storage_policy(w: Walk, hop: Hop) -> Outcome:
    """A service endpoint policy on the subnet lets the endpoint reach only the accounts it lists."""
    account, subnet, _ = _parts(w, hop)
    policies = [str(p) for p in subnet.get("policies") or [] if p]
    if not policies or not _has_endpoint(subnet):
        return None
    need = w.need("the subnet's service endpoint policies", shell_call(
        r.service_endpoint_policies(), f"Which accounts may {subnet.get('name')}'s service endpoint reach?"))
    if need is not None:
        return need
    listed = {str(p.get("id") or "").lower(): p for p in w.facts.listing("sep")}
    aid = str(account.get("id") or "")
    for pid in policies:
        policy = listed.get(pid.lower())
        if policy is None:
            continue
        resources = [x for d in policy.get("definitions") or [] if isinstance(d, dict)
                     and str(d.get("service") or "").lower() == _SERVICE.lower() for x in d.get("resources") or []]
        if any(_covers(x, aid) for x in resources):
            continue
        return Fault(Verdict(
            "route", f"Subnet {subnet.get('name')} carries service endpoint policy {policy.get('name')}, whose "
                     f"definitions list {len(resources)} storage resource(s) but not {account.get('name')}: through the "
                     f"service endpoint the subnet may reach only the listed accounts, so {account.get('name')} refuses "
                     f"{w.flow.client_name} (403) although its own network rules may admit the subnet.", "high",
            faults=[{"resource_id": str(policy.get("id") or pid), "fault_type": "paas-network-rules-deny"}],
            actions=[f"Add {aid or account.get('name')} to a definition of {policy.get('name')} (`az network "
                     f"service-endpoint policy-definition update ... --service-resources <existing> {aid}`)."],
            evidence=_evidence(w, "sep", "vnets", "storage")))
    return None


def storage_network_rules(w: Walk, hop: Hop) -> Outcome:
    """An account that denies by default must admit the client's subnet."""
    account, subnet, subnet_id = _parts(w, hop)
    if not _denies(account) or _admitted(account, subnet_id) or not subnet:
        return None
    rid = str(account.get("id") or account.get("name"))
    return Fault(Verdict(
        "route", f"Storage account {account.get('name')} denies by default, and no virtual network rule admits "
                 f"{w.flow.client_name}'s subnet {subnet.get('name')}: its requests are refused (403).", "high",
        faults=[{"resource_id": rid, "fault_type": "paas-network-rules-deny"}],
        actions=[f"Add a network rule for subnet {subnet.get('name')} to {account.get('name')} (`az storage account "
                 f"network-rule add --account-name {account.get('name')} --subnet {subnet_id}`)."],
        evidence=_evidence(w, "storage", "vnets")))
