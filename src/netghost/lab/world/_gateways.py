"""The site-to-site VPN resources of a scenario: VPN gateways, local network gateways, connections.

Kept apart from :mod:`~netghost.lab.world._resources` because they change together and answer one
question (how does a VNet reach the on-premises ranges?): a virtual network gateway sits in its
VNet's ``GatewaySubnet``; a local network gateway names the on-premises device's public address
and the ranges behind it; a connection ties the two with a pre-shared key and has a status. Only a
``Connected`` connection gives the VNet's NICs routes to the on-premises ranges (see
:meth:`~netghost.lab.world._topology.Topology.gateway_routes`).

The models only *declare*; the cross references (the gateway's VNet has a ``GatewaySubnet``, a
connection names declared gateways) are checked in :mod:`~netghost.lab.world._spec`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from netghost.lab.world._fields import LabModel, check_ip, check_name, check_network

__all__ = ["GATEWAY_SUBNET", "BgpSettings", "LocalNetworkGateway", "VnetGateway", "VpnConnection"]

GATEWAY_SUBNET = "GatewaySubnet"  # Azure requires exactly this name for a gateway's subnet


class BgpSettings(LabModel):
    """A gateway's BGP speaker: its AS number and the address it peers from."""

    asn: int = Field(default=65515, ge=1, le=4294967295)
    peering_address: str | None = Field(
        default=None, description="the BGP peer address; a VPN gateway's default is its GatewaySubnet's last usable IP")

    @field_validator("peering_address")
    @classmethod
    def _ip(cls, value: str | None) -> str | None:
        return None if value is None else check_ip(value)


class VnetGateway(LabModel):
    """A virtual network gateway of type Vpn (``Microsoft.Network/virtualNetworkGateways``).

    ExpressRoute gateways and policy-based VPNs are not modelled: a route-based VPN gateway is what a
    site-to-site connection to one on-premises device uses.
    """

    name: str
    resource_group: str
    location: str | None = None
    vnet: str = Field(description="the VNet whose GatewaySubnet holds the gateway")
    gateway_type: Literal["Vpn"] = "Vpn"
    vpn_type: Literal["RouteBased"] = "RouteBased"
    sku: Literal["Basic", "VpnGw1", "VpnGw2", "VpnGw3", "VpnGw4", "VpnGw5",
                 "VpnGw1AZ", "VpnGw2AZ", "VpnGw3AZ", "VpnGw4AZ", "VpnGw5AZ"] = "VpnGw1"
    generation: Literal["Generation1", "Generation2"] = "Generation1"
    public_ip: str = Field(description="the gateway's public address (the tunnel's Azure end)")
    public_ip_name: str | None = Field(default=None, description="default: <name>-pip")
    bgp: BgpSettings | None = Field(default=None, description="set: BGP is enabled on the gateway")
    provisioning_state: Literal["Succeeded", "Updating", "Failed"] = "Succeeded"

    _n = field_validator("name")(check_name)
    _ip = field_validator("public_ip")(check_ip)

    @property
    def pip_name(self) -> str:
        return self.public_ip_name or f"{self.name}-pip"


class LocalNetworkGateway(LabModel):
    """The on-premises side (``Microsoft.Network/localNetworkGateways``): the VPN device's public
    address and the on-premises ranges behind it."""

    name: str
    resource_group: str
    location: str | None = None
    gateway_ip_address: str
    address_prefixes: list[str] = Field(description="the on-premises ranges reached through the tunnel")
    bgp: BgpSettings | None = None
    provisioning_state: Literal["Succeeded", "Updating", "Failed"] = "Succeeded"

    _n = field_validator("name")(check_name)
    _ip = field_validator("gateway_ip_address")(check_ip)

    @field_validator("address_prefixes")
    @classmethod
    def _prefixes(cls, value: list[str]) -> list[str]:
        return [check_network(v) for v in value]


class VpnConnection(LabModel):
    """A site-to-site connection (``Microsoft.Network/connections``, type IPsec).

    ``shared_key`` is a secret: ``vpn-connection show/list`` never print it, only
    ``vpn-connection shared-key show`` does, as the real service answers.
    """

    name: str
    resource_group: str
    location: str | None = None
    vnet_gateway: str
    local_gateway: str
    connection_type: Literal["IPsec"] = "IPsec"
    connection_protocol: Literal["IKEv2", "IKEv1"] = "IKEv2"
    status: Literal["Connected", "NotConnected", "Connecting", "Unknown"] = "Connected"
    shared_key: str = Field(min_length=1)
    enable_bgp: bool = False
    routing_weight: int = Field(default=0, ge=0)
    dpd_timeout_seconds: int = Field(default=45, ge=9, le=3600)
    ingress_bytes: int = Field(default=0, ge=0)
    egress_bytes: int = Field(default=0, ge=0)

    _n = field_validator("name")(check_name)
