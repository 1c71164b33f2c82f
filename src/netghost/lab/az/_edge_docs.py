"""ARM documents of load balancers, NAT gateways, public IP addresses and service endpoint policies, shaped
as azure-cli 2.91 prints them (AAZ-flattened: ``properties`` hoisted, nulls dropped, every object with an ARM
id given its ``resourceGroup``).

Field sets follow the AAZ output schemas of azure-cli 2.91 (``network lb show``/``probe list``/``rule list``/
``address-pool list``/``frontend-ip list``, ``network nat gateway show``, ``network public-ip show``,
``network service-endpoint policy show``; api-version 2025-07-01) and the REST specs' examples. A load
balancer's sub-resources carry back-references the service computes (a probe's ``loadBalancingRules``, a
pool's ``backendIPConfigurations``), so the lab computes them the same way.
"""

from __future__ import annotations

from typing import Any

from netghost.lab.az._arm_docs import etag, guid, ipconfig_id, ref
from netghost.lab.world import LoadBalancer, NatGateway, ServiceEndpointPolicy, World

__all__ = ["lb_doc", "nat_gateway_doc", "public_ip_docs", "service_endpoint_policy_doc"]

_LB = "Microsoft.Network/loadBalancers"


def _child(world: World, lb: LoadBalancer, kind: str, name: str) -> dict[str, Any]:
    rid = f"{world.lb_id(lb)}/{kind}/{name}"
    return {"etag": etag(rid), "id": rid, "name": name, "provisioningState": "Succeeded",
            "resourceGroup": lb.resource_group, "type": f"{_LB}/{kind}"}


def _rule_ref(world: World, lb: LoadBalancer, name: str) -> dict[str, str]:
    return ref(f"{world.lb_id(lb)}/loadBalancingRules/{name}")


def frontend_docs(world: World, lb: LoadBalancer) -> list[dict[str, Any]]:
    out = []
    for fe in lb.frontends:
        doc = _child(world, lb, "frontendIPConfigurations", fe.name)
        doc["loadBalancingRules"] = [_rule_ref(world, lb, r.name) for r in lb.rules if r.frontend == fe.name]
        if fe.private_ip is not None and fe.subnet is not None:
            vnet = world.vnet(fe.subnet.partition("/")[0])
            subnet = next(s for s in vnet.subnets if s.name == fe.subnet.partition("/")[2]) if vnet else None
            doc.update({"privateIPAddress": fe.private_ip, "privateIPAddressVersion": "IPv4",
                        "privateIPAllocationMethod": "Static"})
            if vnet is not None and subnet is not None:
                doc["subnet"] = ref(world.subnet_id(vnet, subnet))
        else:
            pip = fe.public_ip_name or f"{lb.name}-{fe.name}-pip"
            doc["publicIPAddress"] = ref(world.rid(lb.resource_group, "Microsoft.Network/publicIPAddresses", pip))
        out.append(doc)
    return out


def pool_docs(world: World, lb: LoadBalancer) -> list[dict[str, Any]]:
    out = []
    for pool in lb.backend_pools:
        doc = _child(world, lb, "backendAddressPools", pool.name)
        configs = []
        for member in pool.members:
            vm = world.vm(member)
            if vm is not None:
                configs.append(ref(ipconfig_id(world, vm, vm.nics[0])))
        doc["backendIPConfigurations"] = configs
        doc["loadBalancingRules"] = [_rule_ref(world, lb, r.name) for r in lb.rules if r.backend_pool == pool.name]
        out.append(doc)
    return out


def probe_docs(world: World, lb: LoadBalancer) -> list[dict[str, Any]]:
    out = []
    for probe in lb.probes:
        doc = _child(world, lb, "probes", probe.name)
        doc.update({"intervalInSeconds": probe.interval_seconds, "numberOfProbes": probe.number_of_probes,
                    "port": probe.port, "probeThreshold": probe.probe_threshold, "protocol": probe.protocol,
                    "loadBalancingRules": [_rule_ref(world, lb, r.name) for r in lb.rules if r.probe == probe.name]})
        if probe.request_path is not None:
            doc["requestPath"] = probe.request_path
        out.append(doc)
    return out


def rule_docs(world: World, lb: LoadBalancer) -> list[dict[str, Any]]:
    out = []
    lid = world.lb_id(lb)
    for rule in lb.rules:
        doc = _child(world, lb, "loadBalancingRules", rule.name)
        pool = ref(f"{lid}/backendAddressPools/{rule.backend_pool}")
        doc.update({
            "backendAddressPool": pool, "backendAddressPools": [pool], "backendPort": rule.backend_port,
            "disableOutboundSnat": rule.disable_outbound_snat, "enableFloatingIP": rule.enable_floating_ip,
            "enableTcpReset": rule.enable_tcp_reset,
            "frontendIPConfiguration": ref(f"{lid}/frontendIPConfigurations/{rule.frontend}"),
            "frontendPort": rule.frontend_port, "idleTimeoutInMinutes": rule.idle_timeout_in_minutes,
            "loadDistribution": rule.load_distribution, "protocol": rule.protocol,
        })
        if rule.probe is not None:
            doc["probe"] = ref(f"{lid}/probes/{rule.probe}")
        out.append(doc)
    return out


def lb_doc(world: World, lb: LoadBalancer) -> dict[str, Any]:
    """``az network lb show`` output."""
    lid = world.lb_id(lb)
    return {
        "backendAddressPools": pool_docs(world, lb), "etag": etag(lid),
        "frontendIPConfigurations": frontend_docs(world, lb), "id": lid, "inboundNatPools": [],
        "inboundNatRules": [], "loadBalancingRules": rule_docs(world, lb), "location": world.located(lb),
        "name": lb.name, "outboundRules": [], "probes": probe_docs(world, lb), "provisioningState": "Succeeded",
        "resourceGroup": lb.resource_group, "resourceGuid": guid(lid),
        "sku": {"name": lb.sku, "tier": "Regional"}, "type": _LB,
    }


def nat_gateway_doc(world: World, nat: NatGateway) -> dict[str, Any]:
    """``az network nat gateway show`` output: its public addresses and the subnets that name it."""
    nid = world.nat_gateway_id(nat)
    subnets = [world.subnet_id(v, s) for v in world.spec.vnets for s in v.subnets if s.nat_gateway == nat.name]
    doc: dict[str, Any] = {
        "etag": etag(nid), "id": nid, "idleTimeoutInMinutes": nat.idle_timeout_in_minutes,
        "location": world.located(nat), "name": nat.name, "provisioningState": "Succeeded",
        "publicIpAddresses": [ref(world.rid(nat.resource_group, "Microsoft.Network/publicIPAddresses",
                                            nat.pip_name(i))) for i in range(len(nat.public_ips))],
        "resourceGroup": nat.resource_group, "resourceGuid": guid(nid), "sku": {"name": "Standard"},
        "subnets": [ref(s) for s in subnets], "type": "Microsoft.Network/natGateways",
    }
    if nat.zones:
        doc["zones"] = list(nat.zones)
    return doc


def _pip(world: World, rg: str, name: str, address: str, *, location: str, owner: str | None) -> dict[str, Any]:
    pid = world.rid(rg, "Microsoft.Network/publicIPAddresses", name)
    doc: dict[str, Any] = {
        "ddosSettings": {"protectionMode": "VirtualNetworkInherited"}, "etag": etag(pid), "id": pid,
        "idleTimeoutInMinutes": 4, "ipAddress": address, "ipTags": [], "location": location, "name": name,
        "provisioningState": "Succeeded", "publicIPAddressVersion": "IPv4", "publicIPAllocationMethod": "Static",
        "resourceGroup": rg, "resourceGuid": guid(pid), "sku": {"name": "Standard", "tier": "Regional"},
        "type": "Microsoft.Network/publicIPAddresses",
    }
    if owner is not None:
        doc["ipConfiguration" if "/natGateways/" not in owner else "natGateway"] = ref(owner)
    return doc


def public_ip_docs(world: World) -> list[dict[str, Any]]:
    """Every public IP address resource the world's gateways, NAT gateways, firewalls and public load
    balancer frontends hold (``az network public-ip list``)."""
    out = []
    for gw in world.spec.vnet_gateways:
        out.append(_pip(world, gw.resource_group, gw.pip_name, gw.public_ip, location=world.location_of(gw),
                        owner=f"{world.vnet_gateway_id(gw)}/ipConfigurations/default"))
    for nat in world.spec.nat_gateways:
        out.extend(_pip(world, nat.resource_group, nat.pip_name(i), ip, location=world.located(nat),
                        owner=world.nat_gateway_id(nat))
                   for i, ip in enumerate(nat.public_ips))
    for fw in world.spec.firewalls:
        out.append(_pip(world, fw.resource_group, fw.pip_name, fw.public_ip, location=world.located(fw),
                        owner=f"{world.firewall_id(fw)}/azureFirewallIpConfigurations/{fw.name}-ipconfig"))
    for lb in world.spec.load_balancers:
        out.extend(_pip(world, lb.resource_group, fe.public_ip_name or f"{lb.name}-{fe.name}-pip", fe.public_ip,
                        location=world.located(lb), owner=f"{world.lb_id(lb)}/frontendIPConfigurations/{fe.name}")
                   for fe in lb.frontends if fe.public_ip is not None)
    return out


def service_endpoint_policy_doc(world: World, sep: ServiceEndpointPolicy) -> dict[str, Any]:
    """``az network service-endpoint policy show`` output."""
    sid = world.service_endpoint_policy_id(sep)
    subnets = [world.subnet_id(v, s) for v in world.spec.vnets for s in v.subnets
               if sep.name in s.service_endpoint_policies]
    definitions = []
    for d in sep.definitions:
        did = f"{sid}/serviceEndpointPolicyDefinitions/{d.name}"
        item: dict[str, Any] = {"etag": etag(did), "id": did, "name": d.name, "provisioningState": "Succeeded",
                                "resourceGroup": sep.resource_group, "service": d.service,
                                "serviceResources": list(d.service_resources),
                                "type": "Microsoft.Network/serviceEndpointPolicies/serviceEndpointPolicyDefinitions"}
        if d.description:
            item["description"] = d.description
        definitions.append(item)
    return {
        "contextualServiceEndpointPolicies": [], "etag": etag(sid), "id": sid, "location": world.located(sep),
        "name": sep.name, "provisioningState": "Succeeded", "resourceGroup": sep.resource_group,
        "resourceGuid": guid(sid), "serviceEndpointPolicyDefinitions": definitions,
        "subnets": [ref(s) for s in subnets], "type": "Microsoft.Network/serviceEndpointPolicies",
    }
