"""The check table: for each kind of hop, the questions the walk asks it, in order.

Each row names the check, the fault type it would prove (empty for a step that only leads on), the evidence
it reads, and its function. The walk (:func:`~netghost.agent.brains.playbook._path.walk`) knows nothing of
Azure: a new hop type is a new key here, a new fault shape on a known hop a new row.
"""

from __future__ import annotations

from netghost.agent.brains.playbook import _hop_appliance as appliance
from netghost.agent.brains.playbook import _hop_egress as egress
from netghost.agent.brains.playbook import _hop_ends as ends
from netghost.agent.brains.playbook import _hop_firewall as firewall
from netghost.agent.brains.playbook import _hop_gateway as gateway
from netghost.agent.brains.playbook import _hop_lb as lb
from netghost.agent.brains.playbook import _hop_route as route
from netghost.agent.brains.playbook import _hop_sites as sites
from netghost.agent.brains.playbook import _hop_storage as storage
from netghost.agent.brains.playbook._path import Check, Table

__all__ = ["CHECKS"]

CHECKS: Table = {
    "client": (
        Check("nsg-out", "nsg-deny", "test-ip-flow Outbound at the client; the NIC's effective NSGs on a Deny",
              ends.client_nsg_out),
        Check("route", "", "the client NIC's effective routes", ends.client_route),
    ),
    "appliance": (
        Check("alive", "udr-dead-appliance", "vm list (power), nic list (who holds the address)", appliance.appliance_alive),
        Check("forwarding", "nva-ip-forwarding-off", "nic list (enableIPForwarding)", appliance.appliance_forwarding),
        Check("nsgs", "nsg-deny", "nsg show of the appliance NIC's and subnet's NSGs, evaluated for the packet",
              appliance.appliance_nsgs),
        Check("route", "", "the appliance NIC's effective routes", appliance.appliance_route),
    ),
    "firewall": (
        Check("rules", "firewall-deny", "firewall list (classic collections), policy rule-collection-group list",
              firewall.firewall_rules),
        Check("route", "", "the firewall VNet's system routes (local, peering)", firewall.firewall_route),
    ),
    "peering": (
        Check("connected", "peering-disconnected", "vnet list (both sides' peering state)", route.peering_connected),
    ),
    "gateway": (
        Check("tunnel", "vpn-connection-down", "local-gateway list, vpn-connection list (RISKY: shared key), "
              "vnet-gateway list (the gateway's subnet)", gateway.tunnel_up),
    ),
    "site": (
        Check("tunnel", "vpn-connection-down", "local-gateway list, vpn-connection list, vnet-gateway list",
              gateway.site_tunnel),
    ),
    "gwsubnet": (
        Check("nsg", "gateway-subnet-misconfigured", "nsg show of the GatewaySubnet's NSG, evaluated both ways",
              gateway.gateway_subnet_nsg),
        Check("route", "gateway-subnet-misconfigured", "route-table show of the GatewaySubnet's route table",
              gateway.gateway_subnet_route),
    ),
    "noroute": (
        Check("peering", "peering-disconnected", "vnet list (the peering towards the address's VNet)",
              sites.no_route_peering),
        Check("site", "vpn-connection-down, bgp-propagation-disabled", "local-gateway list, route-table show, "
              "vpn-connection list", sites.no_route_site),
        Check("unexplained", "", "what was read", sites.no_route_unexplained),
    ),
    "scale-set": (
        Check("instances", "service-down", "vmss list-instances --expand instanceView", ends.instances_running),
    ),
    "server": (
        Check("running", "service-down", "vm list (power)", ends.server_running),
        Check("nsg-in", "nsg-deny", "test-ip-flow Inbound at the server (an instance's NSGs evaluated)",
              ends.server_nsg_in),
        Check("probe", "", "a LOCAL connect probe", ends.server_probe),
        Check("return-route", "", "the server NIC's effective routes towards the client", ends.server_return_route),
    ),
    "endpoint": (
        Check("frontend", "", "lb list (frontend addresses)", lb.lb_frontend),
        Check("approved", "private-endpoint-not-approved", "private-endpoint list", ends.endpoint_approved),
    ),
    "lb": (
        Check("rule", "lb-rule-port-mismatch", "lb list (rules by frontend and port)", lb.lb_rule),
        Check("pool", "lb-backend-pool-empty", "lb list (pool members)", lb.lb_pool),
        Check("probe", "lb-health-probe-failing, lb-rule-port-mismatch", "lb list (probe and backend ports), the "
              "complaint (reset or silence)", lb.lb_probe),
        Check("members", "", "nic list (the pool's NICs)", lb.lb_members),
    ),
    "storage": (
        Check("endpoint", "paas-network-rules-deny", "storage account list (network rules), vnet list (the subnet's "
              "service endpoints)", storage.storage_endpoint),
        Check("policy", "paas-network-rules-deny", "service-endpoint policy list", storage.storage_policy),
        Check("rules", "paas-network-rules-deny", "storage account list (default action, subnets admitted)",
              storage.storage_network_rules),
    ),
    "arrival": (
        Check("symmetric", "asymmetric-routing", "the two directions' appliances", ends.paths_symmetric),
        Check("listens", "service-down", "the LOCAL probe refused", ends.server_listens),
    ),
    "external": (
        Check("nat", "snat-port-exhaustion", "vnet list (the client subnet's NAT gateway)", egress.nat_egress),
    ),
}
"""Hop kind -> its checks, in the order a packet meets what they check."""
