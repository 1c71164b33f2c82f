"""An NSG's verdict for one packet, from its rules as ``az network nsg show`` lists them.

Why the playbook evaluates rules itself here: Network Watcher's test-ip-flow answers only for packets
addressed to or from the VM's own address, and an appliance's NIC filters packets addressed to others
(the traffic it forwards). Azure's rule semantics (lowest priority number wins; a rule matches when
protocol, source and destination prefixes and the destination port all match) are small enough to
apply directly; the default rules are not listed, and for the private traffic an appliance forwards
the defaults allow it (AllowVnetInBound / AllowVnetOutBound).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["deciding_rule"]


def _prefixes(rule: Mapping[str, Any], one: str, many: str) -> list[str]:
    values = [str(v) for v in rule.get(many) or []]
    return values or [str(rule.get(one) or "*")]


def _address_matches(prefix: str, ip: str) -> bool:
    if prefix in ("*", "Any", "0.0.0.0/0"):
        return True
    if prefix == "VirtualNetwork":  # the VNet's space and what it is peered or connected to: private here
        return ipaddress.ip_address(ip).is_private
    if prefix == "Internet":
        return ipaddress.ip_address(ip).is_global
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(prefix, strict=False)
    except ValueError:
        return False  # another service tag: not one this packet can match


def _port_matches(ranges: Iterable[str], port: int | None) -> bool:
    for spec in ranges:
        if spec in ("*", "Any"):
            return True
        low, _, high = spec.partition("-")
        try:
            if port is not None and int(low) <= port <= int(high or low):
                return True
        except ValueError:
            continue
    return False


def deciding_rule(rules: Iterable[Mapping[str, Any]], direction: str, *, protocol: str, src: str, dst: str,
                  port: int | None) -> Mapping[str, Any] | None:
    """The custom rule that decides the packet (lowest priority number among those that match), or None
    when none matches and a default rule decides."""
    matching = [
        r for r in rules
        if str(r.get("direction", "")).lower() == direction.lower()
        and str(r.get("protocol") or "*").lower() in ("*", "any", protocol.lower())
        and any(_address_matches(p, src) for p in _prefixes(r, "src", "srcs"))
        and any(_address_matches(p, dst) for p in _prefixes(r, "dst", "dsts"))
        and _port_matches(_prefixes(r, "port", "ports"), port)
    ]
    return min(matching, key=lambda r: int(r.get("priority") or 65000), default=None)
