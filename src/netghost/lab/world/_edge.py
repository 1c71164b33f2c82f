"""Load balancers and NAT gateways of a scenario: the two kinds of address translation a flow can meet.

Kept apart from :mod:`~netghost.lab.world._resources` because both answer one question, *which address does
the other end see?*, and both change a flow's fate without an NSG or a route saying so:

* a :class:`LoadBalancer` (``Microsoft.Network/loadBalancers``, Standard SKU) answers on its frontend
  address, sends each new connection matching a rule to a **healthy** member of the rule's backend pool
  (health is what the rule's probe finds on the member: a running VM, an NSG that lets the probe source
  168.63.129.16 in, something listening on the probe port), and translates the destination to that
  member and the rule's backend port. No rule for the port, an empty pool or no healthy member: the
  connection is dropped without an answer;
* a :class:`NatGateway` (``Microsoft.Network/natGateways``) gives the subnets that name it their outbound
  Internet address. Each public address gives 64,512 SNAT ports; a workload opening more concurrent
  connections to one destination than the gateway has ports fails a share of its new connections (the
  ``snat-port-exhaustion`` fault declares that share, as config cannot show it).

The models only declare; the cross references (a frontend's subnet, a pool member, a rule's probe) are
checked in :mod:`~netghost.lab.world._spec`, and the verdicts are computed in
:mod:`~netghost.lab.world._hops`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from netghost.lab.world._fields import LabModel, check_ip, check_name

__all__ = ["SNAT_PORTS_PER_IP", "LbBackendPool", "LbFrontend", "LbProbe", "LbRule", "LoadBalancer", "NatGateway"]

SNAT_PORTS_PER_IP = 64512  # what one public address gives a NAT gateway (Azure's documented figure)


class LbFrontend(LabModel):
    """A frontend IP configuration: a private address in a subnet (internal) or a public address."""

    name: str
    private_ip: str | None = None
    subnet: str | None = Field(default=None, description="vnet/subnet of a private frontend")
    public_ip: str | None = None
    public_ip_name: str | None = None

    _n = field_validator("name")(check_name)

    @model_validator(mode="after")
    def _one_kind(self) -> LbFrontend:
        if (self.private_ip is None) == (self.public_ip is None):
            raise ValueError(f"frontend {self.name}: give exactly one of private_ip (with subnet) and public_ip")
        if (self.private_ip is None) != (self.subnet is None):
            raise ValueError(f"frontend {self.name}: a private frontend needs its subnet")
        for ip in (self.private_ip, self.public_ip):
            if ip is not None:
                check_ip(ip)
        return self

    @property
    def address(self) -> str:
        return self.private_ip or self.public_ip or ""


class LbBackendPool(LabModel):
    """A backend address pool; ``members`` name VMs (their first NIC's IP configuration joins the pool)."""

    name: str
    members: list[str] = Field(default_factory=list)

    _n = field_validator("name")(check_name)


class LbProbe(LabModel):
    """A health probe: ``Tcp`` succeeds when the port accepts, ``Http``/``Https`` when the path answers 200."""

    name: str
    protocol: Literal["Tcp", "Http", "Https"] = "Tcp"
    port: int = Field(ge=1, le=65535)
    request_path: str | None = None
    interval_seconds: int = Field(default=5, ge=5)
    number_of_probes: int = Field(default=1, ge=1)
    probe_threshold: int = Field(default=1, ge=1)

    _n = field_validator("name")(check_name)

    @model_validator(mode="after")
    def _path(self) -> LbProbe:
        if (self.protocol == "Tcp") != (self.request_path is None):
            raise ValueError(f"probe {self.name}: request_path is required exactly for Http and Https probes")
        return self


class LbRule(LabModel):
    """A load-balancing rule: frontend:port -> pool:backend_port, health from ``probe``."""

    name: str
    frontend: str
    backend_pool: str
    probe: str | None = None
    protocol: Literal["Tcp", "Udp", "All"] = "Tcp"
    frontend_port: int = Field(ge=0, le=65534)
    backend_port: int = Field(ge=0, le=65535)
    enable_floating_ip: bool = False
    enable_tcp_reset: bool = False
    disable_outbound_snat: bool = False
    idle_timeout_in_minutes: int = Field(default=4, ge=4, le=100)
    load_distribution: Literal["Default", "SourceIP", "SourceIPProtocol"] = "Default"

    _n = field_validator("name")(check_name)


class LoadBalancer(LabModel):
    """A Standard load balancer (internal when its frontends are private)."""

    name: str
    resource_group: str
    location: str | None = None
    sku: Literal["Standard", "Basic"] = "Standard"
    frontends: list[LbFrontend]
    backend_pools: list[LbBackendPool] = Field(default_factory=list)
    probes: list[LbProbe] = Field(default_factory=list)
    rules: list[LbRule] = Field(default_factory=list)

    _n = field_validator("name")(check_name)

    @model_validator(mode="after")
    def _references(self) -> LoadBalancer:
        frontends = {f.name for f in self.frontends}
        pools = {p.name for p in self.backend_pools}
        probes = {p.name for p in self.probes}
        problems = [f"rule {r.name}: frontend {r.frontend!r} is not declared" for r in self.rules
                    if r.frontend not in frontends]
        problems += [f"rule {r.name}: backend pool {r.backend_pool!r} is not declared" for r in self.rules
                     if r.backend_pool not in pools]
        problems += [f"rule {r.name}: probe {r.probe!r} is not declared" for r in self.rules
                     if r.probe is not None and r.probe not in probes]
        if problems:
            raise ValueError(f"load balancer {self.name}: " + "; ".join(problems))
        return self

    def frontend(self, name: str) -> LbFrontend:
        return next(f for f in self.frontends if f.name == name)

    def pool(self, name: str) -> LbBackendPool:
        return next(p for p in self.backend_pools if p.name == name)

    def probe(self, name: str | None) -> LbProbe | None:
        return next((p for p in self.probes if p.name == name), None)


class NatGateway(LabModel):
    """A NAT gateway; subnets name it (``Subnet.nat_gateway``) to send Internet traffic out through it."""

    name: str
    resource_group: str
    location: str | None = None
    public_ips: list[str] = Field(min_length=1, description="its public addresses (64,512 SNAT ports each)")
    public_ip_names: list[str] = Field(default_factory=list, description="default: <name>-pip<N>")
    idle_timeout_in_minutes: int = Field(default=4, ge=4, le=120)
    zones: list[str] = Field(default_factory=list)

    _n = field_validator("name")(check_name)

    @field_validator("public_ips")
    @classmethod
    def _ips(cls, value: list[str]) -> list[str]:
        return [check_ip(v) for v in value]

    def pip_name(self, index: int) -> str:
        if index < len(self.public_ip_names):
            return self.public_ip_names[index]
        return f"{self.name}-pip{index + 1}" if len(self.public_ips) > 1 else f"{self.name}-pip"

    @property
    def snat_ports(self) -> int:
        return SNAT_PORTS_PER_IP * len(self.public_ips)
