"""An Azure Firewall's verdict for one flow, from its rules as ``az network firewall list`` (classic rule
collections) or ``az network firewall policy rule-collection-group list`` (a policy's) print them.

Why the playbook evaluates the rules itself: Azure has no test-ip-flow for a firewall, and its processing
order is documented and small (Azure Firewall "rule processing logic"): network rules first, then, for
HTTP(S) and MSSQL, application rules; within a kind, rule collection groups by priority, then collections by
priority; the first matching rule decides (its collection's action); nothing matching is denied. A flow an
application rule allows is source-translated to the firewall's own address (the server sees the firewall,
not the client); a network rule translates only destinations outside the private ranges.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["FirewallVerdict", "firewall_verdict"]


@dataclass(frozen=True)
class FirewallVerdict:
    """The decision: the action, the kind of rule that decided (``default``: none matched), the deciding
    collection's resource id (or name), its rule's name, the group it sits in (a policy's), and whether the
    server sees the firewall's address as the source."""

    action: Literal["Allow", "Deny"]
    kind: Literal["network", "application", "default"]
    collection: str = ""
    collection_id: str = ""
    rule: str = ""
    group: str = ""
    group_id: str = ""
    snat: bool = False


def _ip_in(spec: object, ip: str) -> bool:
    text = str(spec)
    if text in ("*", "Any", "0.0.0.0/0"):
        return True
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False


def _port_in(spec: object, port: int | None) -> bool:
    text = str(spec)
    if text == "*":
        return True
    if port is None:
        return False
    low, _, high = text.partition("-")
    try:
        return int(low) <= port <= int(high or low)
    except ValueError:
        return False


def _fqdn_in(pattern: object, name: str) -> bool:
    p, n = str(pattern).lower().rstrip("."), name.lower().rstrip(".")
    return p in ("*", n) or (p.startswith("*.") and n.endswith(p[1:]))


def _network_match(rule: Mapping[str, Any], protocol: str, src: str, dst: str, port: int | None) -> bool:
    protocols = [str(p).upper() for p in rule.get("ipProtocols") or rule.get("protocols") or []]
    return (("ANY" in protocols or protocol.upper() in protocols)
            and any(_ip_in(s, src) for s in rule.get("sourceAddresses") or [])
            and any(_ip_in(d, dst) for d in rule.get("destinationAddresses") or [])
            and any(_port_in(p, port) for p in rule.get("destinationPorts") or []))


def _app_ports(rule: Mapping[str, Any]) -> set[int]:
    out: set[int] = set()
    for p in rule.get("protocols") or []:
        raw = p.get("port") if isinstance(p, Mapping) else str(p).partition(":")[2]
        try:
            out.add(int(str(raw)))
        except ValueError:
            continue
    return out


def _app_match(rule: Mapping[str, Any], src: str, dst: str, port: int | None, fqdn: str | None) -> bool:
    if port is None or port not in _app_ports(rule) or not any(_ip_in(s, src) for s in rule.get("sourceAddresses") or []):
        return False
    if fqdn and any(_fqdn_in(t, fqdn) for t in rule.get("targetFqdns") or []):
        return True
    return any(_ip_in(d, dst) for d in rule.get("destinationAddresses") or [])


def _is_app(rule: Mapping[str, Any]) -> bool:
    return str(rule.get("ruleType") or "") == "ApplicationRule" or "targetFqdns" in rule


def _collections(classic: Mapping[str, Any], groups: Sequence[Mapping[str, Any]],
                 app: bool) -> Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]]:
    """The collections of one kind in processing order, each with its group (None: classic)."""
    if groups:
        for g in sorted(groups, key=lambda x: int(x.get("priority") or 65000)):
            for c in sorted((c for c in g.get("ruleCollections") or g.get("collections") or [] if isinstance(c, Mapping)),
                            key=lambda x: int(x.get("priority") or 65000)):
                if any(_is_app(r) == app for r in c.get("rules") or [] if isinstance(r, Mapping)):
                    yield c, g
        return
    key = "application" if app else "network"
    for c in sorted((c for c in classic.get(key) or [] if isinstance(c, Mapping)),
                    key=lambda x: int(x.get("priority") or 65000)):
        yield c, None


def _action(c: Mapping[str, Any]) -> Literal["Allow", "Deny"]:
    a = c.get("action")
    text = str(a.get("type") if isinstance(a, Mapping) else a or "")
    return "Deny" if text.lower() == "deny" else "Allow"


def firewall_verdict(classic: Mapping[str, Any], groups: Sequence[Mapping[str, Any]], *, protocol: str, src: str,
                     dst: str, port: int | None, fqdn: str | None) -> FirewallVerdict:
    """The firewall's decision on one flow (see the module docstring). ``classic`` holds the firewall's own
    ``network``/``application`` collections, ``groups`` its policy's rule collection groups (when it has one,
    they are its rules)."""
    private = ipaddress.ip_address(dst).is_private if _valid(dst) else True
    for app in (False, True):
        if app and protocol.upper() != "TCP":
            break
        for c, g in _collections(classic, groups, app):
            for rule in c.get("rules") or []:
                if not isinstance(rule, Mapping) or _is_app(rule) != app:
                    continue
                hit = (_app_match(rule, src, dst, port, fqdn) if app
                       else _network_match(rule, protocol, src, dst, port))
                if hit:
                    action = _action(c)
                    return FirewallVerdict(action, "application" if app else "network", str(c.get("name") or ""),
                                           str(c.get("id") or ""), str(rule.get("name") or ""),
                                           str((g or {}).get("name") or ""), str((g or {}).get("id") or ""),
                                           snat=action == "Allow" and (app or not private))
    return FirewallVerdict("Deny", "default")


def _valid(ip: str) -> bool:
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        return False
    return True
