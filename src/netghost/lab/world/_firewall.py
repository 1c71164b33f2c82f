"""Azure Firewall as a resource: its rules (classic collections or a firewall policy), the verdict they give a
flow, and the source address the far end then sees.

How Azure Firewall decides, as its documentation ("Azure Firewall rule processing logic") describes it and as
:func:`firewall_verdict` computes it:

* network rules are processed before application rules, whatever their priorities: first the network rule
  collections (classic) or the network-rule collections of every rule collection group (policy: groups by
  priority, then collections by priority), then the application rule collections in the same order; the
  first rule that matches decides with its collection's action (``Allow`` or ``Deny``);
* application rules match by the name the client asks for (TLS SNI or HTTP Host: the flow's
  ``server_name``) and by protocol and port (``Http:80``, ``Https:443``, ``Mssql:1433``); a flow to a bare
  address never matches one;
* nothing matches: the firewall denies (its default rule, "no rule matched").

SNAT: traffic allowed by a **network** rule keeps its source unless the destination is outside the
firewall's private ranges (IANA RFC 1918 and 100.64.0.0/10 by default); traffic allowed by an **application**
rule is always proxied, so the server sees the firewall's own address. A network-rule deny drops the packets;
an application-rule deny (or the default deny of a flow an application rule could have matched) answers the
client itself: the firewall completes the handshake and resets the connection after the request.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, field_validator, model_validator

from netghost.lab.world._fields import LabModel, check_ip, check_name

__all__ = [
    "APPLICATION_PROTOCOLS",
    "AzureFirewall",
    "FirewallApplicationRule",
    "FirewallNetworkRule",
    "FirewallPolicy",
    "FirewallRuleCollection",
    "FirewallVerdict",
    "RuleCollectionGroup",
    "firewall_verdict",
]

IANA_PRIVATE = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
APPLICATION_PROTOCOLS = {"Http": 80, "Https": 443, "Mssql": 1433}


NetworkProtocol = Literal["TCP", "UDP", "ICMP", "Any"]


def _tcp_only() -> list[NetworkProtocol]:
    return ["TCP"]


class FirewallNetworkRule(LabModel):
    """A network rule: protocols, source and destination addresses (CIDRs, IPs or ``*``), ports."""

    name: str
    protocols: list[NetworkProtocol] = Field(default_factory=_tcp_only)
    source_addresses: list[str] = Field(default_factory=lambda: ["*"])
    destination_addresses: list[str] = Field(default_factory=lambda: ["*"])
    destination_ports: list[str] = Field(default_factory=lambda: ["*"])
    description: str | None = None


class FirewallApplicationRule(LabModel):
    """An application rule: sources, ``Protocol:port`` pairs and the FQDNs (``*.example.com``) it covers."""

    name: str
    source_addresses: list[str] = Field(default_factory=lambda: ["*"])
    protocols: list[str] = Field(default_factory=lambda: ["Https:443"])
    target_fqdns: list[str] = Field(default_factory=list)
    fqdn_tags: list[str] = Field(default_factory=list)
    description: str | None = None

    @field_validator("protocols")
    @classmethod
    def _protocols(cls, value: list[str]) -> list[str]:
        for item in value:
            kind, _, port = item.partition(":")
            if kind not in APPLICATION_PROTOCOLS or not port.isdigit():
                raise ValueError(f"{item!r} is not PROTOCOL:PORT with a protocol of {sorted(APPLICATION_PROTOCOLS)}")
        return value


class FirewallRuleCollection(LabModel):
    """A rule collection: a priority, an action, and rules of one kind (network or application)."""

    name: str
    priority: int = Field(ge=100, le=65000)
    action: Literal["Allow", "Deny"]
    network_rules: list[FirewallNetworkRule] = Field(default_factory=list)
    application_rules: list[FirewallApplicationRule] = Field(default_factory=list)

    _n = field_validator("name")(check_name)

    @model_validator(mode="after")
    def _one_kind(self) -> FirewallRuleCollection:
        if bool(self.network_rules) == bool(self.application_rules):
            raise ValueError(f"rule collection {self.name}: give network_rules or application_rules (one kind)")
        return self

    @property
    def kind(self) -> Literal["network", "application"]:
        return "network" if self.network_rules else "application"


class RuleCollectionGroup(LabModel):
    """A firewall policy's rule collection group (``firewallPolicies/ruleCollectionGroups``)."""

    name: str
    priority: int = Field(ge=100, le=65000)
    collections: list[FirewallRuleCollection] = Field(default_factory=list)

    _n = field_validator("name")(check_name)


class FirewallPolicy(LabModel):
    """A firewall policy (``Microsoft.Network/firewallPolicies``) and its rule collection groups."""

    name: str
    resource_group: str
    location: str | None = None
    sku_tier: Literal["Basic", "Standard", "Premium"] = "Standard"
    threat_intel_mode: Literal["Alert", "Deny", "Off"] = "Alert"
    rule_collection_groups: list[RuleCollectionGroup] = Field(default_factory=list)

    _n = field_validator("name")(check_name)


class AzureFirewall(LabModel):
    """An Azure Firewall in its VNet's ``AzureFirewallSubnet``; routes reach it as a VirtualAppliance hop at
    ``private_ip``. Rules come from ``policy`` or from the classic collections, never both."""

    name: str
    resource_group: str
    location: str | None = None
    vnet: str
    private_ip: str
    public_ip: str
    public_ip_name: str | None = None
    sku_tier: Literal["Basic", "Standard", "Premium"] = "Standard"
    threat_intel_mode: Literal["Alert", "Deny", "Off"] = "Alert"
    policy: str | None = None
    network_rule_collections: list[FirewallRuleCollection] = Field(default_factory=list)
    application_rule_collections: list[FirewallRuleCollection] = Field(default_factory=list)
    private_ranges: list[str] = Field(default_factory=lambda: ["IANAPrivateRanges"])
    provisioning_state: Literal["Succeeded", "Updating", "Failed"] = "Succeeded"

    _n = field_validator("name")(check_name)
    _ip = field_validator("private_ip", "public_ip")(check_ip)

    @model_validator(mode="after")
    def _rules(self) -> AzureFirewall:
        if self.policy is not None and (self.network_rule_collections or self.application_rule_collections):
            raise ValueError(f"firewall {self.name}: rules come from its policy or its own collections, not both")
        if any(c.kind != "network" for c in self.network_rule_collections):
            raise ValueError(f"firewall {self.name}: network_rule_collections hold network rules only")
        if any(c.kind != "application" for c in self.application_rule_collections):
            raise ValueError(f"firewall {self.name}: application_rule_collections hold application rules only")
        return self

    @property
    def pip_name(self) -> str:
        return self.public_ip_name or f"{self.name}-pip"

    def snats(self, dst_ip: str) -> bool:
        """Whether a network-rule flow to ``dst_ip`` is source-translated (outside the private ranges)."""
        ranges = [r for item in self.private_ranges for r in (IANA_PRIVATE if item == "IANAPrivateRanges" else (item,))]
        address = ipaddress.IPv4Address(dst_ip)
        return not any(address in ipaddress.ip_network(r, strict=False) for r in ranges)


@dataclass(frozen=True)
class FirewallVerdict:
    """What the firewall does with a flow: the action, the deciding collection and rule (empty: default)."""

    action: Literal["Allow", "Deny"]
    kind: Literal["network", "application", "default"]
    collection: str
    rule: str
    group: str | None = None  # the rule collection group (policy), None for classic collections
    snat: bool = False
    reset: bool = False  # an application-level deny: the firewall resets the client after its request


def _ip_in(spec: str, ip: str) -> bool:
    if spec in ("*", "Any", "0.0.0.0/0"):
        return True
    try:
        return ipaddress.IPv4Address(ip) in ipaddress.ip_network(spec, strict=False)
    except ValueError:
        return False


def _port_in(spec: str, port: int | None) -> bool:
    if spec == "*":
        return True
    if port is None:
        return False
    low, _, high = spec.partition("-")
    return int(low) <= port <= int(high or low)


def _fqdn_in(pattern: str, name: str) -> bool:
    pattern, name = pattern.lower().rstrip("."), name.lower().rstrip(".")
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return name.endswith(pattern[1:])
    return name == pattern


def _network_match(rule: FirewallNetworkRule, protocol: str, src: str, dst: str, port: int | None) -> bool:
    proto_ok = "Any" in rule.protocols or protocol.upper() in rule.protocols
    return (proto_ok and any(_ip_in(s, src) for s in rule.source_addresses)
            and any(_ip_in(d, dst) for d in rule.destination_addresses)
            and any(_port_in(p, port) for p in rule.destination_ports))


def _app_match(rule: FirewallApplicationRule, src: str, port: int | None, fqdn: str | None) -> bool:
    if fqdn is None or port is None:
        return False
    ports = {int(p.partition(":")[2]) for p in rule.protocols}
    return (port in ports and any(_ip_in(s, src) for s in rule.source_addresses)
            and any(_fqdn_in(t, fqdn) for t in rule.target_fqdns))


def _ordered(fw: AzureFirewall, policy: FirewallPolicy | None,
             kind: str) -> list[tuple[str | None, FirewallRuleCollection]]:
    if policy is not None:
        out: list[tuple[str | None, FirewallRuleCollection]] = []
        for group in sorted(policy.rule_collection_groups, key=lambda g: g.priority):
            out += [(group.name, c) for c in sorted(group.collections, key=lambda c: c.priority) if c.kind == kind]
        return out
    classic = fw.network_rule_collections if kind == "network" else fw.application_rule_collections
    return [(None, c) for c in sorted(classic, key=lambda c: c.priority)]


def firewall_verdict(fw: AzureFirewall, policy: FirewallPolicy | None, *, protocol: str, src_ip: str,
                     dst_ip: str, dst_port: int | None, fqdn: str | None) -> FirewallVerdict:
    """The firewall's decision on one flow (see the module docstring for the order and the SNAT)."""
    for group, coll in _ordered(fw, policy, "network"):
        for rule in coll.network_rules:
            if _network_match(rule, protocol, src_ip, dst_ip, dst_port):
                return FirewallVerdict(coll.action, "network", coll.name, rule.name, group,
                                       snat=coll.action == "Allow" and fw.snats(dst_ip))
    app_candidate = protocol.upper() == "TCP" and fqdn is not None
    for group, coll in _ordered(fw, policy, "application"):
        for app_rule in coll.application_rules:
            if _app_match(app_rule, src_ip, dst_port, fqdn):
                return FirewallVerdict(coll.action, "application", coll.name, app_rule.name, group,
                                       snat=coll.action == "Allow", reset=coll.action == "Deny")
    return FirewallVerdict("Deny", "default", "", "", None, reset=app_candidate and dst_port in (80, 443, 1433))
