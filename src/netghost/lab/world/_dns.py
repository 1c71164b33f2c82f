"""Name resolution inside a world: Azure DNS with linked private zones, or the public Internet.

A VM whose VNet has no custom DNS servers asks Azure DNS (168.63.129.16), which answers from the
private DNS zones *linked to that VNet* first; the most specific linked zone is authoritative for
its suffix (a missing record there is NXDOMAIN, with no fallback to public DNS), and everything
else is answered from public DNS. CNAME chains are followed (up to 8 links), which is how a
``privatelink`` name resolves privately only where its zone is linked.

A VNet with custom DNS servers (``dhcpOptions.dnsServers``) asks its first server instead. A VM of the
world declared as a DNS server (``dns_server``) answers by its forwarders: ``168.63.129.16`` is Azure DNS
*from the DNS server's own VNet* (its linked zones), any other forwarder a resolver that knows public names
only; conditional forwarders send one zone elsewhere. A server that is not such a VM (an on-premises
resolver) knows public names only. So a custom DNS server that does not forward to 168.63.129.16 loses
every private zone, as "Name resolution for resources in Azure virtual networks" warns.

A name that exists with other record types only (a TXT record) answers an A lookup ``NOERROR`` with no
address (NODATA), not ``NXDOMAIN``.
"""

from __future__ import annotations

from netghost.lab.world._answers import DnsAnswer
from netghost.lab.world._netcalc import AZURE_DNS_IP
from netghost.lab.world._resources import Vm, VNet
from netghost.lab.world._spec import WorldSpec

__all__ = ["resolve_name", "txt_values"]

_MAX_CHAIN = 8


def resolve_name(spec: WorldSpec, name: str, from_vnet: str | None) -> DnsAnswer:
    """See :meth:`netghost.lab.world.World.resolve`.

    Takes the declared world, not the :class:`~netghost.lab.world.World` that asks, so the world's
    queries can call it without the two modules importing each other.
    """
    vnet = _find_vnet(spec, from_vnet) if from_vnet else None
    if vnet is not None:
        server = vnet.dns_servers[0] if vnet.dns_servers else AZURE_DNS_IP
    else:
        server = spec.local_machine.resolver
    view = _resolver_view(spec, vnet, name.rstrip(".").lower())
    chain: list[str] = []
    current = name.rstrip(".").lower()
    source = "none"
    for _ in range(_MAX_CHAIN):
        answer = _lookup_one(spec, current, view)
        if answer is None:
            return DnsAnswer(name, "NXDOMAIN", (), tuple(chain), server, source)
        rtype, values, source = answer
        if rtype == "NODATA":
            return DnsAnswer(name, "NOERROR", (), tuple(chain), server, source)
        if rtype == "A":
            return DnsAnswer(name, "NOERROR", tuple(values), tuple(chain), server, source)
        current = values[0].rstrip(".").lower()
        chain.append(current)
    return DnsAnswer(name, "NXDOMAIN", (), tuple(chain), server, source)


def _dns_vm(spec: WorldSpec, ip: str) -> Vm | None:
    return next((vm for vm in spec.vms if vm.dns_server is not None and vm.power_state == "running"
                 and any(n.private_ip == ip for n in vm.nics)), None)


def _resolver_view(spec: WorldSpec, vnet: VNet | None, fqdn: str) -> VNet | None:
    """The VNet whose linked private zones answer ``fqdn`` for a client in ``vnet`` (None: public names only).

    Azure DNS answers from the client's own VNet; a custom DNS server from wherever its forwarders lead.
    """
    if vnet is None or not vnet.dns_servers:
        return vnet
    return _server_view(spec, vnet.dns_servers[0], fqdn, 0)


def _server_view(spec: WorldSpec, ip: str, fqdn: str, depth: int) -> VNet | None:
    server = _dns_vm(spec, ip)
    if server is None or server.dns_server is None or depth > 3:
        return None  # an on-premises or Internet resolver: public names only
    config = server.dns_server
    zones = [z for z in config.conditional_forwarders
             if fqdn == z.lower().rstrip(".") or fqdn.endswith("." + z.lower().rstrip("."))]
    forwarders = config.conditional_forwarders[max(zones, key=len)] if zones else config.forwarders
    for target in forwarders:
        if target == AZURE_DNS_IP:
            return _find_vnet(spec, server.nics[0].subnet.partition("/")[0])
        if _dns_vm(spec, target) is not None:
            return _server_view(spec, target, fqdn, depth + 1)
    return None


def _find_vnet(spec: WorldSpec, name: str) -> VNet | None:
    return next((v for v in spec.vnets if v.name.lower() == name.lower()), None)


def _lookup_one(spec: WorldSpec, fqdn: str, vnet: VNet | None) -> tuple[str, list[str], str] | None:
    if vnet is not None:
        linked = [
            z for z in spec.private_dns_zones
            if any(link.vnet.lower() == vnet.name.lower() for link in z.links)
            and (fqdn == z.name.lower() or fqdn.endswith("." + z.name.lower()))
        ]
        if linked:
            zone = max(linked, key=lambda z: len(z.name))
            label = fqdn[: -len(zone.name) - 1] if fqdn != zone.name.lower() else "@"
            named = [r for r in zone.records if r.name.lower() == label]
            record = next((r for r in named if r.type != "TXT"), None)
            if record is None:
                return ("NODATA", [], f"private-zone:{zone.name}") if named else None
            return record.type, record.values, f"private-zone:{zone.name}"
    named_public = [r for r in spec.public_dns if r.name.rstrip(".").lower() == fqdn]
    public = next((r for r in named_public if r.type != "TXT"), None)
    if public is None:
        return ("NODATA", [], "public") if named_public else None
    return public.type, public.values, "public"


def txt_values(spec: WorldSpec, name: str, from_vnet: str | None) -> list[str]:
    """The TXT strings a resolver returns for ``name`` (a linked private zone's, else public ones)."""
    fqdn = name.rstrip(".").lower()
    vnet = _find_vnet(spec, from_vnet) if from_vnet else None
    for zone in spec.private_dns_zones:
        linked = vnet is not None and any(link.vnet.lower() == vnet.name.lower() for link in zone.links)
        if linked and (fqdn == zone.name.lower() or fqdn.endswith("." + zone.name.lower())):
            label = fqdn[: -len(zone.name) - 1] if fqdn != zone.name.lower() else "@"
            return [v for r in zone.records if r.type == "TXT" and r.name.lower() == label for v in r.values]
    return [v for r in spec.public_dns if r.type == "TXT" and r.name.rstrip(".").lower() == fqdn for v in r.values]
