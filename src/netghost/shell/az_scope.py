"""What an az read adds to the egress scope: the subscription's own address space and names.

After ``az network vnet list`` the shell knows the VNets' prefixes; after ``az network private-dns zone
list`` the private zones; after ``az network private-endpoint list`` the endpoints' names and addresses;
after ``az network public-ip list`` the subscription's own public addresses; after ``az storage account
list`` its storage endpoints. Probes toward those are the investigation's, so they may run automatically.

Why only bare reads: the model writes the command, and ``--query`` (JMESPath, which can build any string:
``[].{name:'attacker.example'}``) or a non-JSON ``-o`` would let it put any name into the output and so into
the scope. So the output of a read is learned from only when the command has no ``--query`` and prints
JSON, and only the fields that ARM fills from the resources themselves are read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from netghost.shell.classify import EgressScope

__all__ = ["learn_scope"]

_READ_VERBS = frozenset({"list", "show"})
_MAX_OUTPUT = 8_000_000


def _walk(value: Any, path: tuple[str, ...]) -> Iterator[Any]:
    """Every value at ``path`` (keys; lists are entered automatically)."""
    if isinstance(value, list):
        for item in value:
            yield from _walk(item, path)
        return
    if not path:
        yield value
        return
    if isinstance(value, dict) and path[0] in value:
        yield from _walk(value[path[0]], path[1:])


def _strings(value: Any, *paths: str) -> list[str]:
    out: list[str] = []
    for p in paths:
        for v in _walk(value, tuple(p.split("."))):
            if isinstance(v, str):
                out.append(v)
            elif isinstance(v, list):
                out += [x for x in v if isinstance(x, str)]
    return out


def _bare_json_read(argv: Sequence[str]) -> tuple[str, ...] | None:
    """The command group of an az list/show with no --query and JSON output, else None."""
    if not argv or argv[0] != "az":
        return None
    group: list[str] = []
    for word in argv[1:]:
        if word.startswith("-"):
            break
        group.append(word.lower())
    if not group or group[-1] not in _READ_VERBS:
        return None
    for i, word in enumerate(argv):
        name, _, value = word.partition("=")
        if len(name) >= 4 and "--query".startswith(name):
            return None
        if name in ("-o", "--output") or (len(name) >= 5 and "--output".startswith(name)):
            fmt = value or (argv[i + 1] if i + 1 < len(argv) else "")
            if fmt not in ("json", "jsonc"):
                return None
    return tuple(group[:-1])


def learn_scope(scope: EgressScope, argv: Sequence[str], stdout: str) -> EgressScope:
    """``scope`` widened by what a bare az read printed (unchanged for anything else or bad JSON)."""
    group = _bare_json_read(argv)
    if group is None or len(stdout) > _MAX_OUTPUT:
        return scope
    try:
        data = json.loads(stdout)
    except ValueError:
        return scope
    if group in (("network", "vnet"), ("network", "vnet", "subnet")):
        return scope.with_networks(*_strings(data, "addressSpace.addressPrefixes", "subnets.addressPrefix",
                                            "subnets.addressPrefixes", "addressPrefix", "addressPrefixes"))  # fmt: skip
    if group == ("network", "local-gateway"):
        return scope.with_networks(*_strings(data, "localNetworkAddressSpace.addressPrefixes", "gatewayIpAddress"))
    if group == ("network", "private-dns", "zone"):
        return scope.with_zones(*_strings(data, "name"))
    if group == ("network", "private-endpoint"):
        scope = scope.with_hosts(*_strings(data, "customDnsConfigs.fqdn"))
        return scope.with_networks(*_strings(data, "customDnsConfigs.ipAddresses"))
    if group == ("network", "public-ip"):
        return scope.with_networks(*_strings(data, "ipAddress")).with_hosts(*_strings(data, "dnsSettings.fqdn"))
    if group == ("network", "nic"):
        return scope.with_networks(*_strings(data, "ipConfigurations.privateIPAddress",
                                            "ipConfigurations.privateIpAddress"))  # fmt: skip
    if group == ("storage", "account"):
        urls = _strings(data, "primaryEndpoints.blob", "primaryEndpoints.file", "primaryEndpoints.queue",
                        "primaryEndpoints.table", "primaryEndpoints.dfs", "primaryEndpoints.web")  # fmt: skip
        return scope.with_hosts(*(urlsplit(u).hostname or "" for u in urls))
    return scope
