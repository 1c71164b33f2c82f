"""The resources of a scenario file: pydantic models of one offline Azure world's parts.

A scenario is declared in YAML and validated with ``extra="forbid"`` so a typo in a field name
fails loudly instead of silently producing a different world. Each model here checks its own
fields; :class:`~netghost.lab.world._spec.WorldSpec` holds them together and checks the cross
references between them.

The models only *declare* the world; :class:`~netghost.lab.world.World` answers questions about it.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from netghost.lab.world._fields import LabModel, check_ip, check_name, check_network

__all__ = [
    "DnsRecord",
    "DnsServerConfig",
    "LocalMachine",
    "ManagedCluster",
    "NetworkWatcherDecl",
    "Nic",
    "Nsg",
    "Peering",
    "PrivateDnsZone",
    "PrivateEndpoint",
    "PublicDnsRecord",
    "ResourceGroup",
    "Route",
    "RouteTable",
    "ScaleSet",
    "SecurityRule",
    "Service",
    "ServiceEndpointPolicy",
    "ServiceEndpointPolicyDefinition",
    "StorageAccount",
    "Subnet",
    "Subscription",
    "TrafficFlow",
    "VNet",
    "VNetLink",
    "Vm",
]

_STORAGE_NAME = re.compile(r"^[a-z0-9]{3,24}$")
_CONTAINER_NAME = re.compile(r"^(?!.*--)[a-z0-9][a-z0-9\-]{1,61}[a-z0-9]$")
PrefixSpec = str | list[str]


class Subscription(LabModel):
    """The one subscription the lab's ``az`` is logged in to (``az account show``)."""

    id: str = "00000000-0000-0000-0000-000000000000"
    name: str = "netghost-lab"
    tenant_id: str = "11111111-1111-1111-1111-111111111111"
    user: str = "ghost-sp"
    user_type: Literal["servicePrincipal", "user"] = "servicePrincipal"
    object_id: str = "aaaaaaaa-0000-0000-0000-000000000001"
    denied_resource_groups: list[str] = Field(
        default_factory=list, description="groups the identity has no RBAC on (AuthorizationFailed)"
    )
    denied_actions: list[str] = Field(
        default_factory=list, description="RBAC actions refused everywhere, e.g. '.../packetCaptures/write'"
    )
    denied_scopes: list[str] = Field(
        default_factory=list, description="scope suffixes refused for every write, e.g. '/packetCaptures/denied_cap'"
    )


class ResourceGroup(LabModel):
    name: str
    location: str

    _n = field_validator("name")(check_name)


class NetworkWatcherDecl(LabModel):
    """A regional Network Watcher; packet capture needs one in the VM's region."""

    location: str
    name: str | None = None
    resource_group: str = "NetworkWatcherRG"

    @property
    def watcher_name(self) -> str:
        return self.name or f"NetworkWatcher_{self.location}"


class Subnet(LabModel):
    name: str
    address_prefix: str
    nsg: str | None = None
    route_table: str | None = None
    nat_gateway: str | None = Field(default=None, description="the NAT gateway its Internet traffic leaves through")
    service_endpoints: list[str] = Field(default_factory=list, description="e.g. Microsoft.Storage, Microsoft.Sql")
    service_endpoint_policies: list[str] = Field(default_factory=list, description="names of service endpoint policies")

    _n = field_validator("name")(check_name)
    _p = field_validator("address_prefix")(check_network)


class Peering(LabModel):
    """One direction of a VNet peering; both directions must be Connected for traffic to flow."""

    name: str
    remote_vnet: str
    state: Literal["Initiated", "Connected", "Disconnected"] = "Connected"
    sync_level: Literal["FullyInSync", "RemoteNotInSync", "LocalNotInSync", "LocalAndRemoteNotInSync"] = (
        "FullyInSync"
    )
    allow_virtual_network_access: bool = True
    allow_forwarded_traffic: bool = True
    allow_gateway_transit: bool = False
    use_remote_gateways: bool = False


class VNet(LabModel):
    name: str
    resource_group: str
    location: str | None = None
    address_prefixes: list[str]
    dns_servers: list[str] = Field(default_factory=list, description="empty = Azure DNS 168.63.129.16")
    subnets: list[Subnet]
    peerings: list[Peering] = Field(default_factory=list)

    _n = field_validator("name")(check_name)

    @field_validator("address_prefixes")
    @classmethod
    def _prefixes(cls, value: list[str]) -> list[str]:
        return [check_network(v) for v in value]


class SecurityRule(LabModel):
    """A custom NSG rule; prefixes may be CIDRs, IPs, ``*`` or the service tags the lab knows."""

    name: str
    priority: int = Field(ge=100, le=4096)
    direction: Literal["Inbound", "Outbound"]
    access: Literal["Allow", "Deny"]
    protocol: Literal["Tcp", "Udp", "Icmp", "Esp", "Ah", "*"] = "*"
    source_address_prefix: PrefixSpec = "*"
    source_port_range: PrefixSpec = "*"
    destination_address_prefix: PrefixSpec = "*"
    destination_port_range: PrefixSpec = "*"
    description: str | None = None

    _n = field_validator("name")(check_name)


class Nsg(LabModel):
    name: str
    resource_group: str
    location: str | None = None
    rules: list[SecurityRule] = Field(default_factory=list)

    _n = field_validator("name")(check_name)

    @model_validator(mode="after")
    def _unique(self) -> Nsg:
        seen: set[tuple[str, int]] = set()
        for rule in self.rules:
            key = (rule.direction, rule.priority)
            if key in seen:
                raise ValueError(f"NSG {self.name}: two {rule.direction} rules share priority {rule.priority}")
            seen.add(key)
        return self


class Route(LabModel):
    name: str
    address_prefix: str
    next_hop_type: Literal["VirtualNetworkGateway", "VnetLocal", "Internet", "VirtualAppliance", "None"]
    next_hop_ip: str | None = None

    _p = field_validator("address_prefix")(check_network)

    @model_validator(mode="after")
    def _hop(self) -> Route:
        if (self.next_hop_type == "VirtualAppliance") != (self.next_hop_ip is not None):
            raise ValueError(f"route {self.name}: next_hop_ip is required exactly for VirtualAppliance")
        if self.next_hop_ip is not None:
            check_ip(self.next_hop_ip)
        return self


class RouteTable(LabModel):
    name: str
    resource_group: str
    location: str | None = None
    disable_bgp_route_propagation: bool = False
    routes: list[Route] = Field(default_factory=list)

    _n = field_validator("name")(check_name)


class Service(LabModel):
    """A process listening on a VM (what ``ss -ltn`` would show there)."""

    port: int = Field(ge=1, le=65535)
    protocol: Literal["Tcp", "Udp"] = "Tcp"
    name: str
    state: Literal["listening", "stopped"] = "listening"
    bind: str = "0.0.0.0"
    http_status: int = Field(default=200, ge=100, le=599,
                             description="what an HTTP health probe of this port gets (a load balancer's probe)")


class DnsServerConfig(LabModel):
    """A VM that serves DNS to the VNets naming it in their DNS servers: where it sends what it cannot answer.

    ``168.63.129.16`` as a forwarder is Azure DNS *as the DNS server's own VNet sees it* (the private zones
    linked to that VNet); any other address is a resolver on the Internet or on premises, which knows public
    names only. ``conditional_forwarders`` send one zone (a suffix) elsewhere; the longest suffix wins.
    """

    forwarders: list[str] = Field(default_factory=list)
    conditional_forwarders: dict[str, list[str]] = Field(default_factory=dict)

    @field_validator("forwarders")
    @classmethod
    def _ips(cls, value: list[str]) -> list[str]:
        return [check_ip(v) for v in value]


class Nic(LabModel):
    name: str | None = Field(default=None, description="default: <vm>VMNic as az vm create names it")
    subnet: str = Field(description="'<vnet>/<subnet>'")
    private_ip: str
    nsg: str | None = None
    ip_forwarding: bool = False
    public_ip: str | None = None

    _ip = field_validator("private_ip")(check_ip)


class Vm(LabModel):
    name: str
    resource_group: str
    location: str | None = None
    os: Literal["Linux", "Windows"] = "Linux"
    size: str = "Standard_D2s_v3"
    power_state: Literal["running", "stopped", "deallocated"] = "running"
    extensions: list[str] = Field(
        default_factory=lambda: ["NetworkWatcherAgentLinux"],
        description="extension names; NetworkWatcherAgentLinux/Windows enable packet capture",
    )
    nics: list[Nic]
    services: list[Service] = Field(default_factory=list)
    mtu: int = 1500
    role: str | None = None
    tags: dict[str, str] = Field(default_factory=dict, description="resource tags as `az vm show/list` print them")
    stateful: bool = Field(default=False, description=(
        "an appliance that tracks connections (a firewall NVA): it drops packets of a connection whose opening "
        "it did not see, so a path that bypasses it one way breaks"))
    dns_server: DnsServerConfig | None = Field(default=None, description="the VM answers DNS on 53 (a custom DNS "
                                                                         "server VNets may name)")
    scale_set: str | None = Field(default=None, description="the VM is instance `instance_id` of this scale set")
    instance_id: str | None = Field(default=None, description="its instance id in the scale set ('0', '1', ...)")

    _n = field_validator("name")(check_name)

    @model_validator(mode="after")
    def _default_nic_names(self) -> Vm:
        if not self.nics:
            raise ValueError(f"VM {self.name} needs at least one NIC")
        for index, nic in enumerate(self.nics):
            if nic.name is None:
                nic.name = f"{self.name}VMNic" if index == 0 else f"{self.name}VMNic{index}"
        return self


class ScaleSet(LabModel):
    """A virtual machine scale set (uniform orchestration).

    Its instances are declared as VMs with ``scale_set: <name>`` and ``instance_id``, named
    ``<name>_<instance_id>`` as ARM names them, so they carry traffic, services and NSG verdicts
    like any VM; ``az vm list``/``vm show`` do not show them, as the real CLI does not for a uniform set.
    """

    name: str
    resource_group: str
    location: str | None = None
    os: Literal["Linux", "Windows"] = "Linux"
    size: str = "Standard_D2s_v3"
    orchestration_mode: Literal["Uniform", "Flexible"] = Field(default="Uniform", description=(
        "Flexible: the instances are ordinary virtual machines (vm show, test-ip-flow --vm and the VM's own id "
        "work); Uniform: they exist only under the scale set"))
    extensions: list[str] = Field(
        default_factory=lambda: ["NetworkWatcherAgentLinux"],
        description="extension names of the scale-set model; NetworkWatcherAgentLinux/Windows enable capture",
    )

    _n = field_validator("name")(check_name)


class ManagedCluster(LabModel):
    """An AKS cluster (``Microsoft.ContainerService/managedClusters``): it exists, ``az aks show`` and
    ``az resource show`` answer for it. Its nodes are not modelled (no traffic, no capture): the lab
    holds one so a capture request can *detect* a cluster target, which Network Watcher's VM capture
    does not cover."""

    name: str
    resource_group: str
    location: str | None = None
    kubernetes_version: str = "1.30.6"
    node_count: int = Field(default=3, ge=1)
    node_vm_size: str = "Standard_D4ds_v5"

    _n = field_validator("name")(check_name)


class DnsRecord(LabModel):
    name: str
    type: Literal["A", "CNAME", "TXT"] = "A"
    values: list[str]
    ttl: int = 10

    @model_validator(mode="after")
    def _values(self) -> DnsRecord:
        if self.type == "A":
            for value in self.values:
                check_ip(value)
        elif self.type == "TXT":
            pass  # free text (SPF, site verification ... or whatever someone wrote there)
        elif len(self.values) != 1:
            raise ValueError(f"CNAME {self.name} must have exactly one target")
        return self


class VNetLink(LabModel):
    name: str
    vnet: str
    registration_enabled: bool = False


class PrivateDnsZone(LabModel):
    name: str
    resource_group: str
    records: list[DnsRecord] = Field(default_factory=list)
    links: list[VNetLink] = Field(default_factory=list)


class PublicDnsRecord(LabModel):
    """A record on the public Internet (what 1.1.1.1 answers); names are FQDNs."""

    name: str
    type: Literal["A", "CNAME", "TXT"] = "A"
    values: list[str]


class PrivateEndpoint(LabModel):
    """A private endpoint: a NIC in a subnet with ``private_ip`` that carries traffic to one PaaS resource
    (``target``, its ARM id; ``group_id`` the sub-resource: ``redisCache``, ``sqlServer``, ``blob`` ...).

    Traffic flows only while its connection is ``Approved``: a connection to a resource in another tenant or
    subscription waits ``Pending`` for the owner's manual approval, and packets to the address go nowhere.
    """

    name: str
    resource_group: str
    subnet: str = Field(description="vnet/subnet")
    private_ip: str
    target: str = Field(description="ARM id of the resource behind the endpoint")
    group_id: str
    fqdn: str | None = Field(default=None, description="the service's name (customDnsConfigs)")
    status: Literal["Approved", "Pending", "Rejected", "Disconnected"] = "Approved"
    manual: bool = Field(default=False, description="a manual-approval connection (manualPrivateLinkServiceConnections)")
    location: str | None = None

    _n = field_validator("name")(check_name)
    _ip = field_validator("private_ip")(check_ip)


class StorageAccount(LabModel):
    name: str
    resource_group: str
    location: str | None = None
    containers: list[str] = Field(default_factory=lambda: ["captures"])
    data_plane_rbac: bool = Field(default=True, description="False: --auth-mode login is refused")
    allow_shared_key_access: bool = True
    public_ip: str | None = Field(default=None, description="the blob endpoint's public address (traffic flows to it)")
    public_network_access: Literal["Enabled", "Disabled"] = "Enabled"
    default_action: Literal["Allow", "Deny"] = Field(default="Allow", description="networkRuleSet.defaultAction")
    virtual_network_rules: list[str] = Field(default_factory=list, description="'vnet/subnet' allowed through their "
                                                                                  "Microsoft.Storage service endpoint")
    ip_rules: list[str] = Field(default_factory=list, description="public addresses or prefixes allowed")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _STORAGE_NAME.match(value):
            raise ValueError(
                f"storage account name {value!r} is invalid: Azure requires 3-24 lowercase letters and digits"
            )
        return value

    @field_validator("containers")
    @classmethod
    def _containers(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _CONTAINER_NAME.match(name):
                raise ValueError(f"container name {name!r} is invalid (3-63 of [a-z0-9-])")
        return value


class ServiceEndpointPolicyDefinition(LabModel):
    """One definition of a service endpoint policy: the service and the resources it lets the subnet reach."""

    name: str
    service: Literal["Microsoft.Storage"] = "Microsoft.Storage"
    service_resources: list[str] = Field(default_factory=list, description="ARM ids (accounts, groups, subscription)")
    description: str | None = None


class ServiceEndpointPolicy(LabModel):
    """A service endpoint policy (``Microsoft.Network/serviceEndpointPolicies``): a subnet that carries it reaches
    through its Microsoft.Storage service endpoint only the storage accounts its definitions name."""

    name: str
    resource_group: str
    location: str | None = None
    definitions: list[ServiceEndpointPolicyDefinition] = Field(default_factory=list)

    _n = field_validator("name")(check_name)


class TrafficFlow(LabModel):
    """Application traffic the world carries: ``client`` talks to ``server:port``.

    ``client``/``server`` name a VM or give a literal IPv4 address (an Internet client, a PaaS
    endpoint). ``server_name`` is the DNS name the client resolves first, if any. An ``Icmp`` flow is
    ping (echo requests, one per "request", answered by any running host the NSGs let it reach); it
    has no port.
    """

    name: str
    client: str
    server: str
    port: int = Field(default=0, ge=0, le=65535, description="required for Tcp and Udp; none for Icmp")
    protocol: Literal["Tcp", "Udp", "Icmp"] = "Tcp"
    server_name: str | None = None
    app: Literal["http", "https", "redis", "sql", "dns", "generic"] = "generic"
    requests_per_minute: float = Field(default=30.0, gt=0)
    request_bytes: int = Field(default=200, ge=0)
    response_bytes: int = Field(default=1200, ge=0)
    response_header: str | None = Field(
        default=None, description="http(s): one extra response header line ('X-Note: ...') the server sends")
    expected: Literal["delivered", "blocked"] = Field(default="delivered", description=(
        "blocked: the flow fails by design (a ping the NSGs deny on purpose); it is not a fault to find"))

    @model_validator(mode="after")
    def _port_for_transport(self) -> TrafficFlow:
        if self.protocol == "Icmp" and self.port:
            raise ValueError(f"flow {self.name}: an Icmp flow (ping) has no port")
        if self.protocol != "Icmp" and not self.port:
            raise ValueError(f"flow {self.name}: a {self.protocol} flow needs a port (1-65535)")
        return self


class LocalMachine(LabModel):
    """Where the engineer's own machine sits; by default outside every VNet (a laptop)."""

    inside_vnet: str | None = None
    ip: str = "192.168.1.23"
    resolver: str = "1.1.1.1"
