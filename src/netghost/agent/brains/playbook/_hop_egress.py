"""The check of an address outside Azure: how the client's traffic leaves.

A subnet with a NAT gateway leaves through it: every new connection to one destination address and port takes
one of the gateway's SNAT ports (64,512 per public address), held until the idle timeout after the
connection ends. A fleet that opens more connections than that gets no port for some of them: their SYNs
never leave, while established connections are clean. Nothing in the configuration counts the ports in use,
so the gateway is a suspect the packets settle (handshakes that fail for a fraction of new connections).
"""

from __future__ import annotations

from netghost.agent.brains.playbook._path import Hop, Outcome, Suspect, Walk
from netghost.agent.brains.playbook._routes import subnet_by_id

__all__ = ["nat_egress"]


def nat_egress(w: Walk, hop: Hop) -> Outcome:
    """The client's subnet's NAT gateway, when it has one, is the suspect for failed new connections."""
    if hop.direction != "forward" or w.flow.client is None:
        return None
    nic = w.facts.nic_of(w.flow.client) or {}
    subnet = subnet_by_id(w.facts, str(nic.get("subnet") or "")) or {}
    nat = str(subnet.get("natGateway") or "")
    if not nat:
        return None
    vnets = next((o for o in reversed(w.facts.of("vnets")) if o.ok), None)
    return Suspect(hop, "snat-port-exhaustion", nat,
                   f"{w.flow.client_name}'s subnet {subnet.get('name')} leaves for {hop.ip} through the NAT gateway "
                   f"{nat.rsplit('/', 1)[-1]}, whose SNAT ports for one destination are finite",
                   tuple(a for a in (vnets.audit_id if vnets else None, hop.via.get("audit_id")) if a))
