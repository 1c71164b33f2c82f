"""Pure network evaluation: NSG rule matching and effective-route selection.

These follow Azure's documented semantics so that ``test-ip-flow``, ``show-next-hop``,
``list-effective-nsg``, ``show-effective-route-table`` and the synthesized traffic all come from
one computation:

* NSG rules are evaluated by ascending priority, first match wins; custom rules (100-4096) come
  before the six default rules (65000-65500). Inbound traffic meets the subnet NSG first, then the
  NIC NSG; outbound the NIC NSG first, then the subnet NSG. Both must allow.
* Routes are chosen by longest prefix match among *active* routes; a user route whose prefix
  equals a system route's makes the system route ``Invalid`` (as the effective route table shows).
* Azure's platform addresses (168.63.129.16: DNS, the host agent, health probes; 169.254.169.254: IMDS)
  are not the Internet: the NSG overview says platform traffic is not subject to NSGs unless a rule targets
  it by its service tag (``AzureLoadBalancer``, ``AzurePlatformDNS``, ``AzurePlatformIMDS``). So a
  "deny Internet" or "deny *" rule does not stop them; a rule naming the address itself does, and a load
  balancer's health probe (inbound from 168.63.129.16) is matched by ``*`` as the documented "deny all
  inbound blocks the probe" cases show.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Literal

from netghost.lab.world._resources import SecurityRule

__all__ = [
    "AZURE_DNS_IP",
    "DEFAULT_RULES",
    "EffectiveRoute",
    "RuleMatchContext",
    "lookup_route",
    "port_ranges",
    "rule_matches",
]

AZURE_DNS_IP = "168.63.129.16"
IMDS_IP = "169.254.169.254"
PLATFORM_IPS = (AZURE_DNS_IP, IMDS_IP)
_PLATFORM_TAGS = {"AzureLoadBalancer": (AZURE_DNS_IP,), "AzurePlatformDNS": (AZURE_DNS_IP,),
                  "AzurePlatformIMDS": (IMDS_IP,)}
_ANY = ("*", "0.0.0.0/0", "Any")

DEFAULT_RULES: tuple[SecurityRule, ...] = (
    SecurityRule(name="AllowVnetInBound", priority=4096, direction="Inbound", access="Allow",
                 source_address_prefix="VirtualNetwork", destination_address_prefix="VirtualNetwork"),
    SecurityRule(name="AllowAzureLoadBalancerInBound", priority=4096, direction="Inbound", access="Allow",
                 source_address_prefix="AzureLoadBalancer"),
    SecurityRule(name="DenyAllInBound", priority=4096, direction="Inbound", access="Deny"),
    SecurityRule(name="AllowVnetOutBound", priority=4096, direction="Outbound", access="Allow",
                 source_address_prefix="VirtualNetwork", destination_address_prefix="VirtualNetwork"),
    SecurityRule(name="AllowInternetOutBound", priority=4096, direction="Outbound", access="Allow",
                 destination_address_prefix="Internet"),
    SecurityRule(name="DenyAllOutBound", priority=4096, direction="Outbound", access="Deny"),
)
# SecurityRule caps custom priorities at 4096; the real default priorities are reported from here.
DEFAULT_PRIORITIES = {
    "AllowVnetInBound": 65000,
    "AllowAzureLoadBalancerInBound": 65001,
    "DenyAllInBound": 65500,
    "AllowVnetOutBound": 65000,
    "AllowInternetOutBound": 65001,
    "DenyAllOutBound": 65500,
}


@dataclass(frozen=True)
class RuleMatchContext:
    """What the service tags mean for one NIC: its VNet's (and connected peers') address space."""

    virtual_network: tuple[str, ...]
    platform_wildcard: bool = False  # ``*`` matches a platform address (a health probe coming in)

    def prefix_matches(self, prefix: str, ip: str) -> bool:
        """Whether ``ip`` falls in ``prefix`` (a CIDR, an IP, ``*`` or a service tag)."""
        if ip in PLATFORM_IPS:  # platform traffic: only its own tags or its address itself (module docstring)
            if prefix in _PLATFORM_TAGS:
                return ip in _PLATFORM_TAGS[prefix]
            if prefix in _ANY:
                return self.platform_wildcard
            if prefix in ("Internet", "VirtualNetwork") or ("/" in prefix and int(prefix.rsplit("/", 1)[1]) < 8):
                return False
        elif prefix in _PLATFORM_TAGS:
            return False
        if prefix in _ANY:
            return True
        address = ipaddress.IPv4Address(ip)
        if prefix == "VirtualNetwork":
            return any(address in ipaddress.ip_network(p) for p in self.virtual_network)
        if prefix == "Internet":
            return address.is_global
        try:
            return address in ipaddress.ip_network(prefix, strict=False)
        except ValueError:
            return False


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def port_ranges(spec: str | list[str]) -> list[tuple[int, int]]:
    """``"*"`` / ``"443"`` / ``"80-85"`` / lists of those as inclusive integer ranges."""
    out = []
    for item in _as_list(spec):
        if item == "*":
            out.append((0, 65535))
        elif "-" in item:
            low, high = item.split("-", 1)
            out.append((int(low), int(high)))
        else:
            out.append((int(item), int(item)))
    return out


def _port_in(port: int | None, spec: str | list[str]) -> bool:
    if port is None:  # ICMP has no ports; a port-restricted rule still matches "*" only
        return spec in ("*", ["*"])
    return any(low <= port <= high for low, high in port_ranges(spec))


def rule_matches(
    rule: SecurityRule,
    ctx: RuleMatchContext,
    *,
    protocol: str,
    src_ip: str,
    src_port: int | None,
    dst_ip: str,
    dst_port: int | None,
) -> bool:
    """Whether ``rule`` matches the 5-tuple (direction is the caller's concern)."""
    if rule.protocol != "*" and rule.protocol.lower() != protocol.lower():
        return False
    if not any(ctx.prefix_matches(p, src_ip) for p in _as_list(rule.source_address_prefix)):
        return False
    if not any(ctx.prefix_matches(p, dst_ip) for p in _as_list(rule.destination_address_prefix)):
        return False
    return _port_in(src_port, rule.source_port_range) and _port_in(dst_port, rule.destination_port_range)


@dataclass(frozen=True)
class EffectiveRoute:
    """One row of ``az network nic show-effective-route-table``."""

    address_prefixes: tuple[str, ...]
    next_hop_type: str
    next_hop_ips: tuple[str, ...] = ()
    source: Literal["Default", "User", "VirtualNetworkGateway"] = "Default"
    state: Literal["Active", "Invalid"] = "Active"
    name: str | None = None
    route_table: str | None = None
    disable_bgp_route_propagation: bool = False
    extra: dict[str, str] = field(default_factory=dict)


# Azure's tie-break for equal prefixes: a user route, then a gateway (BGP) route, then a system route.
_SOURCE_RANK = {"User": 2, "VirtualNetworkGateway": 1}


def lookup_route(routes: list[EffectiveRoute], dst_ip: str) -> EffectiveRoute | None:
    """Longest-prefix match among active routes; for equal lengths User beats gateway beats Default."""
    address = ipaddress.IPv4Address(dst_ip)
    best: tuple[int, int] | None = None
    chosen = None
    for route in routes:
        if route.state != "Active":
            continue
        for prefix in route.address_prefixes:
            net = ipaddress.ip_network(prefix)
            if address in net:
                rank = (net.prefixlen, _SOURCE_RANK.get(route.source, 0))
                if best is None or rank > best:
                    best, chosen = rank, route
    return chosen
