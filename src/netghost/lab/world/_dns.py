"""Name resolution inside a world: Azure DNS with linked private zones, or the public Internet.

A VM whose VNet has no custom DNS servers asks Azure DNS (168.63.129.16), which answers from the
private DNS zones *linked to that VNet* first; the most specific linked zone is authoritative for
its suffix (a missing record there is NXDOMAIN, with no fallback to public DNS), and everything
else is answered from public DNS. CNAME chains are followed (up to 8 links), which is how a
``privatelink`` name resolves privately only where its zone is linked.
"""

from __future__ import annotations

from netghost.lab.world._answers import DnsAnswer
from netghost.lab.world._netcalc import AZURE_DNS_IP
from netghost.lab.world._resources import VNet
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
    chain: list[str] = []
    current = name.rstrip(".").lower()
    source = "none"
    for _ in range(_MAX_CHAIN):
        answer = _lookup_one(spec, current, vnet)
        if answer is None:
            return DnsAnswer(name, "NXDOMAIN", (), tuple(chain), server, source)
        rtype, values, source = answer
        if rtype == "A":
            return DnsAnswer(name, "NOERROR", tuple(values), tuple(chain), server, source)
        current = values[0].rstrip(".").lower()
        chain.append(current)
    return DnsAnswer(name, "NXDOMAIN", (), tuple(chain), server, source)


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
            record = next((r for r in zone.records if r.name.lower() == label and r.type != "TXT"), None)
            if record is None:
                return None
            return record.type, record.values, f"private-zone:{zone.name}"
    public = next((r for r in spec.public_dns if r.name.rstrip(".").lower() == fqdn and r.type != "TXT"), None)
    if public is None:
        return None
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
