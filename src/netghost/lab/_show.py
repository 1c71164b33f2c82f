"""What ``ghost-agent lab show`` prints of a world: its inventory, NSG rules and route tables, at 80 columns.

A person reading a world before an investigation wants what Azure would show them: the machines, the
networks, and the two things that decide where a packet goes, the NSG rules (priority, direction,
access, protocol, ports and prefixes) and the route tables (each route's prefix and next hop), with where
each is attached. Never the declared fault or the answers: the lab is for investigating. Every line is
wrapped on word boundaries at ``width`` columns, continuation lines indented under the line's text, so a
long description or prefix list never breaks a word in an 80x24 terminal.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from netghost.lab.world import World

__all__ = ["WIDTH", "inventory"]

WIDTH = 80


def _items(value: str | list[str]) -> str:
    return ",".join(value) if isinstance(value, list) else value


def _wrap(line: str, width: int, indent: int | None = None) -> list[str]:
    """One logical line as terminal lines: broken between words, continuations indented ``indent`` (default:
    two more than the line's own indent)."""
    lead = len(line) - len(line.lstrip(" "))
    hang = " " * (lead + 2 if indent is None else indent)
    return textwrap.wrap(line, width=width, subsequent_indent=hang, break_on_hyphens=False,
                         break_long_words=False) or [""]


def _attachments(world: World) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """NSG name -> where it is attached (subnets, NICs); route table name -> the subnets it serves."""
    nsgs: dict[str, list[str]] = {}
    tables: dict[str, list[str]] = {}
    for vnet in world.spec.vnets:
        for subnet in vnet.subnets:
            if subnet.nsg:
                nsgs.setdefault(subnet.nsg, []).append(f"subnet {vnet.name}/{subnet.name}")
            if subnet.route_table:
                tables.setdefault(subnet.route_table, []).append(f"subnet {vnet.name}/{subnet.name}")
    for vm in world.spec.vms:
        for nic in vm.nics:
            if nic.nsg:
                nsgs.setdefault(nic.nsg, []).append(f"nic {nic.name or vm.name + 'VMNic'} ({vm.name})")
    return nsgs, tables


def _nsg_lines(world: World, width: int) -> Iterable[str]:
    attached, _ = _attachments(world)
    for nsg in world.spec.nsgs:
        where = ", ".join(attached.get(nsg.name, [])) or "nothing"
        yield from _wrap(f"  nsg {nsg.name} ({nsg.resource_group}) on {where}", width)
        rules = sorted(nsg.rules, key=lambda r: (r.direction, r.priority))
        if not rules:
            yield "    no custom rules (Azure's default rules apply)"
            continue
        head = f"    {'prio':<5}{'dir':<4}{'access':<7}{'proto':<6}"
        yield head + "source:ports -> destination:ports (rule)"
        for r in rules:
            fixed = f"    {r.priority:<5}{'in' if r.direction == 'Inbound' else 'out':<4}{r.access:<7}{r.protocol:<6}"
            flow = (f"{_items(r.source_address_prefix)}:{_items(r.source_port_range)} -> "
                    f"{_items(r.destination_address_prefix)}:{_items(r.destination_port_range)} ({r.name})")
            yield from _wrap(fixed + flow, width, indent=len(fixed))
        yield "    then Azure's default rules (65000 and up)"


def _route_lines(world: World, width: int) -> Iterable[str]:
    _, attached = _attachments(world)
    for table in world.spec.route_tables:
        where = ", ".join(attached.get(table.name, [])) or "nothing"
        bgp = ", gateway route propagation off" if table.disable_bgp_route_propagation else ""
        yield from _wrap(f"  route table {table.name} ({table.resource_group}) on {where}{bgp}", width)
        if not table.routes:
            yield "    no routes (the system routes apply)"
            continue
        size = max(len(r.address_prefix) for r in table.routes)
        for route in table.routes:
            hop = route.next_hop_type + (f" {route.next_hop_ip}" if route.next_hop_ip else "")
            fixed = f"    {route.address_prefix:<{size}} -> "
            yield from _wrap(f"{fixed}{hop} ({route.name})", width, indent=len(fixed))


def inventory(world: World, width: int = WIDTH) -> list[str]:
    """The world as ``lab show`` prints it: machines, networks, NSG rules, route tables, the rest."""
    spec = world.spec
    lines = [f"world: {world.name}", *_wrap(f"  {spec.description}", width, indent=2)]
    for vm in spec.vms:
        ips = ", ".join(n.private_ip for n in vm.nics)
        ports = ", ".join(f"{s.port}/{s.protocol.lower()}" for s in world.listening(vm)) or "-"
        lines += _wrap(f"  vm {vm.name:<16} {vm.resource_group:<10} {ips:<12} {vm.power_state:<11} listening: {ports}",
                       width)
    for vnet in spec.vnets:
        lines += _wrap(f"  vnet {vnet.name} {' '.join(vnet.address_prefixes)} subnets: "
                       + ", ".join(f"{s.name} {s.address_prefix}" for s in vnet.subnets), width)
    lines += _nsg_lines(world, width)
    lines += _route_lines(world, width)
    for account in spec.storage_accounts:
        lines += _wrap(f"  storage {account.name} containers: {', '.join(account.containers)}", width)
    rest = [f"  firewall {fw.name} {fw.private_ip} (vnet {fw.vnet})" for fw in spec.firewalls]
    rest += [f"  load balancer {lb.name} frontends: {', '.join(f.address for f in lb.frontends)}"
             for lb in spec.load_balancers]
    rest += [f"  nat gateway {nat.name} public ips: {', '.join(nat.public_ips)}" for nat in spec.nat_gateways]
    rest += [f"  vpn gateway {gw.name} (vnet {gw.vnet})" for gw in spec.vnet_gateways]
    rest.append(f"  network watchers: {', '.join(d.location for d in spec.network_watchers) or 'none'}")
    for line in rest:
        lines += _wrap(line, width)
    return lines
