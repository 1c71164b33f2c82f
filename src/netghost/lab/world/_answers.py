"""The answers a :class:`~netghost.lab.world.World` gives: plain frozen records.

Kept in their own module, below everything that computes them, so the DNS resolver, the topology
queries and the flow walk all return them without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["DnsAnswer", "FlowOutcome", "NextHop", "NsgDecision"]


@dataclass(frozen=True)
class NsgDecision:
    """The verdict of NSG evaluation at one VM for one direction (``test-ip-flow``'s answer)."""

    access: Literal["Allow", "Deny"]
    rule_name: str  # "securityRules/<n>" or "defaultSecurityRules/<n>", "" when no NSG applies
    nsg: str | None  # the NSG holding the deciding rule
    level: Literal["subnet", "nic", "none"]


@dataclass(frozen=True)
class NextHop:
    """``show-next-hop``'s answer."""

    next_hop_type: str
    next_hop_ip: str | None
    route_table_id: str  # "System Route" when no user route matched
    route_name: str | None = None


@dataclass(frozen=True)
class DnsAnswer:
    """What a resolver returns for a name; ``source`` says which zone or server answered."""

    name: str
    rcode: Literal["NOERROR", "NXDOMAIN"]
    addresses: tuple[str, ...]
    cname_chain: tuple[str, ...]
    server: str
    source: str  # "private-zone:<zone>", "public", "none"


@dataclass(frozen=True)
class FlowOutcome:
    """End-to-end verdict for one traffic flow, as the packets would experience it.

    ``outcome`` is one of: ``delivered``, ``nsg-denied-outbound``, ``nsg-denied-inbound``,
    ``nsg-denied-at-appliance`` (an NSG of the appliance the route goes through; ``nsg_direction`` says
    which way), ``no-route`` (next hop None, e.g. a disconnected peering or a VPN connection that is down),
    ``appliance-down``, ``service-down`` (RST from the port), ``host-down``, ``dns-nxdomain``,
    ``dns-public-answer`` (the private name resolved to a public address), ``private-endpoint-not-approved``.
    ``impairment`` carries a data-plane fault that config cannot show (``pmtu-blackhole``,
    ``path-packet-loss``, ``middlebox-rst``; ``pmtud`` when PMTU discovery copes) with its ``params``.
    """

    flow: str
    outcome: str
    reason: str
    client_ip: str
    server_ip: str | None
    port: int
    protocol: str
    dns: DnsAnswer | None = None
    next_hop: NextHop | None = None
    nsg: NsgDecision | None = None
    nsg_direction: Literal["Inbound", "Outbound"] | None = None
    path: tuple[str, ...] = ()
    impairment: str | None = None
    params: dict[str, object] = field(default_factory=dict)

    @property
    def connects(self) -> bool:
        """Whether a TCP handshake would complete (impairments may still hurt the data)."""
        return self.outcome == "delivered"
