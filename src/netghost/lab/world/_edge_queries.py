"""Queries about the translating and filtering resources of a world: load balancers, NAT gateways, Azure
Firewalls and their policies, service endpoint policies, the PaaS endpoints' network rules.

:class:`EdgeQueries` is the base of :class:`~netghost.lab.world._topology.Topology`: it holds the lookups
and resource ids of these kinds and the questions that need nothing else (which firewall owns an address,
which rule of a load balancer takes a port, is a pool member healthy as its probe sees it), so the topology
module keeps to NSGs, routes and DNS.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from netghost.lab.world._edge import LbProbe, LbRule, LoadBalancer, NatGateway
from netghost.lab.world._firewall import AzureFirewall, FirewallPolicy
from netghost.lab.world._resources import ServiceEndpointPolicy, StorageAccount, Subnet, Vm, VNet
from netghost.lab.world._spec import WorldSpec

__all__ = ["PROBE_SOURCE", "EdgeQueries", "LbTarget"]

PROBE_SOURCE = "168.63.129.16"  # where Azure Load Balancer's health probes come from (the AzureLoadBalancer tag)


@dataclass(frozen=True)
class LbTarget:
    """A load balancer frontend address and port, resolved: the rule that takes it (None: no rule)."""

    lb: LoadBalancer
    rule: LbRule | None


class EdgeQueries:
    """Lookups and resource ids of the edge resources; the base of the world's topology."""

    def __init__(self, spec: WorldSpec) -> None:
        self.spec = spec
        self.sub_id = spec.subscription.id
        self._lbs = {lb.name.lower(): lb for lb in spec.load_balancers}
        self._nats = {n.name.lower(): n for n in spec.nat_gateways}
        self._firewalls = {f.name.lower(): f for f in spec.firewalls}
        self._policies = {p.name.lower(): p for p in spec.firewall_policies}
        self._seps = {p.name.lower(): p for p in spec.service_endpoint_policies}
        self._rg_locations = {g.name.lower(): g.location for g in spec.resource_groups}

    def rid(self, rg: str, provider_type: str, name: str) -> str:
        return f"/subscriptions/{self.sub_id}/resourceGroups/{rg}/providers/{provider_type}/{name}"

    def located(self, resource: object) -> str:
        """A resource's region: its own ``location``, else its resource group's."""
        own = getattr(resource, "location", None)
        return str(own or self._rg_locations[str(getattr(resource, "resource_group", "")).lower()])

    # ---- lookups -----------------------------------------------------------------------------
    def load_balancer(self, name: str) -> LoadBalancer | None:
        return self._lbs.get(name.lower())

    def nat_gateway(self, name: str) -> NatGateway | None:
        return self._nats.get(name.lower())

    def firewall(self, name: str) -> AzureFirewall | None:
        return self._firewalls.get(name.lower())

    def firewall_policy(self, name: str) -> FirewallPolicy | None:
        return self._policies.get(name.lower())

    def service_endpoint_policy(self, name: str) -> ServiceEndpointPolicy | None:
        return self._seps.get(name.lower())

    def firewall_by_ip(self, ip: str) -> AzureFirewall | None:
        return next((f for f in self.spec.firewalls if f.private_ip == ip), None)

    def policy_of(self, fw: AzureFirewall) -> FirewallPolicy | None:
        return self._policies.get(fw.policy.lower()) if fw.policy else None

    def storage_by_ip(self, ip: str) -> StorageAccount | None:
        return next((a for a in self.spec.storage_accounts if a.public_ip == ip), None)

    def lb_target(self, ip: str, port: int, protocol: str) -> LbTarget | None:
        """The load balancer answering on ``ip`` and the rule taking ``port`` (None: not a frontend)."""
        for lb in self.spec.load_balancers:
            names = {f.name for f in lb.frontends if f.address == ip}
            if not names:
                continue
            rule = next((r for r in lb.rules if r.frontend in names and r.frontend_port in (port, 0)
                         and r.protocol in (protocol, "All")), None)
            return LbTarget(lb, rule)
        return None

    # ---- resource ids ------------------------------------------------------------------------
    def lb_id(self, lb: LoadBalancer) -> str:
        return self.rid(lb.resource_group, "Microsoft.Network/loadBalancers", lb.name)

    def nat_gateway_id(self, nat: NatGateway) -> str:
        return self.rid(nat.resource_group, "Microsoft.Network/natGateways", nat.name)

    def firewall_id(self, fw: AzureFirewall) -> str:
        return self.rid(fw.resource_group, "Microsoft.Network/azureFirewalls", fw.name)

    def firewall_policy_id(self, policy: FirewallPolicy) -> str:
        return self.rid(policy.resource_group, "Microsoft.Network/firewallPolicies", policy.name)

    def service_endpoint_policy_id(self, sep: ServiceEndpointPolicy) -> str:
        return self.rid(sep.resource_group, "Microsoft.Network/serviceEndpointPolicies", sep.name)

    def storage_id(self, account: StorageAccount) -> str:
        return self.rid(account.resource_group, "Microsoft.Storage/storageAccounts", account.name)

    # ---- PaaS network rules ------------------------------------------------------------------
    def storage_admits(self, account: StorageAccount, vnet: VNet | None, subnet: Subnet | None,
                       public_source: str | None) -> str | None:
        """Why the account refuses a client in ``vnet/subnet`` (or at ``public_source``), None when it admits it.

        With public network access disabled only private endpoints reach it; with ``defaultAction: Deny`` a
        subnet needs a virtual network rule *and* the Microsoft.Storage service endpoint (which also makes
        the account see the private source), else the client's public address needs an IP rule; a subnet's
        service endpoint policy must name the account.
        """
        if account.public_network_access == "Disabled":
            return f"{account.name} has public network access disabled (only its private endpoints reach it)"
        endpoint = subnet is not None and "Microsoft.Storage" in subnet.service_endpoints
        if endpoint and subnet is not None:
            for name in subnet.service_endpoint_policies:
                sep = self.service_endpoint_policy(name)
                allowed = {r.lower() for d in (sep.definitions if sep else []) for r in d.service_resources}
                account_id = self.storage_id(account).lower()
                scopes = {account_id, account_id.split("/providers/")[0], f"/subscriptions/{self.sub_id}".lower()}
                if not allowed & scopes:
                    return f"service endpoint policy {name} on {vnet.name if vnet else ''}/{subnet.name} does " \
                           f"not name {account.name}"
        if account.default_action == "Allow":
            return None
        ref = f"{vnet.name}/{subnet.name}" if vnet is not None and subnet is not None else None
        if endpoint and ref in account.virtual_network_rules:
            return None
        if public_source and any(ipaddress.IPv4Address(public_source) in ipaddress.ip_network(r, strict=False)
                                 for r in account.ip_rules):
            return None
        why = "has no Microsoft.Storage service endpoint" if ref in account.virtual_network_rules else \
            "is not in its virtual network rules"
        return f"{account.name} denies by default and {ref or public_source or 'the client'} {why}"

    # ---- load balancer health ----------------------------------------------------------------
    @staticmethod
    def probe_text(probe: LbProbe | None) -> str:
        if probe is None:
            return "no probe"
        return f"{probe.protocol} {probe.port}{probe.request_path or ''}"

    def probe_listener(self, vm: Vm, probe: LbProbe) -> str | None:
        """Why the member's own service fails ``probe`` (None: the port answers as the probe wants)."""
        if vm.power_state != "running":
            return f"{vm.name} is {vm.power_state}"
        service = next((s for s in vm.services if s.port == probe.port and s.protocol == "Tcp"
                        and s.state == "listening"), None)
        if service is None:
            return f"nothing listens on {vm.name}:{probe.port}"
        if probe.protocol != "Tcp" and service.http_status != 200:
            return f"{vm.name}:{probe.port}{probe.request_path} answers {service.http_status}"
        return None
