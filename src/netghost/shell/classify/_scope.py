"""EgressScope: where a SAFE network probe may go, as a value the shell holds and the classifier reads.

Why a value and not a rule table: what is "the investigation" changes per session. By default it is the
private address space (RFC 1918, RFC 6598 shared space, IPv6 unique-local, the never-routed documentation
ranges) and the names that resolve
inside it (single-label names, ``.internal``/``.local``/``home.arpa``); the agent adds the hosts and
addresses named in the user's problem statement (:meth:`EgressScope.with_text`), and may add what its az
reads showed (VNet prefixes, private DNS zones: :meth:`with_networks`, :meth:`with_zones`). A probe
anywhere else needs a human: a hostile model reading a password from the intent could otherwise send it
to its own server in a DNS label, a URL path or a header of a "read-only" probe.

The classifier's verdict is a pure function of (command, scope): the scope is frozen and hashable, and
the classify cache is keyed on both.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

__all__ = ["AZURE_SUFFIXES", "EgressScope", "IPNetwork", "azure_endpoint", "parse_address"]

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_PRIVATE = (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",  # RFC 1918
    "100.64.0.0/10",  # RFC 6598 shared address space (Azure VNets and carrier NAT use it)
    "fc00::/7",  # IPv6 unique local
    # Documentation ranges (RFC 5737, RFC 3849): never routed on the internet, so nothing sent there leaves.
    "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32",
)  # fmt: skip
# Names that never leave the private namespace: single labels resolve through the VNet's search domain,
# and these suffixes are reserved for private use (ICANN .internal, mDNS .local, RFC 8375 home.arpa).
_PRIVATE_SUFFIXES = ("internal", "local", "localdomain", "home.arpa")
# Azure's public service endpoints: Microsoft's name servers answer every name below them, so a DNS
# lookup of one reveals nothing to anyone else (a tenant cannot see queries for its own label). An HTTP
# or TLS request is different: the label's owner (a storage account, a web app) sees the request, so
# those may only take shapes that carry no data (see _egress).
AZURE_SUFFIXES = (
    "core.windows.net", "azure.net", "azure.com", "windows.net", "azurecr.io", "azurewebsites.net",
    "cloudapp.net", "trafficmanager.net", "azurefd.net", "azureedge.net", "azure-api.net", "azurestaticapps.net",
    "azmk8s.io", "azure-devices.net", "azuresynapse.net", "azurehdinsight.net", "azure-dns.com", "azure-dns.net",
    "azure-dns.org", "azure-dns.info", "microsoftonline.com", "microsoft.com", "windows.com", "azure.us",
    "usgovcloudapi.net", "chinacloudapi.cn", "azure.cn", "windowsazure.com", "azureml.ms", "msftauth.net",
)  # fmt: skip
_HOST_WORD = re.compile(
    r"(?<![A-Za-z0-9@/_.-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z][A-Za-z0-9-]{0,62}(?![A-Za-z0-9_-])"
)
_IPV4_WORD = re.compile(r"(?<![0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?:/[0-9]{1,2})?(?![0-9])")
_IPV6_WORD = re.compile(r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:/[0-9]{1,3})?(?![0-9A-Fa-f:])")
_FILE_SUFFIX = re.compile(r"\.(?:pcap|pcapng|cap|json|yaml|yml|txt|log|md|html|csv|py|sh|conf|cfg|xml|tar|gz|zip)$", re.I)
_MAX_ENTRIES = 4096


def parse_address(text: str) -> IPAddress | None:
    """A strict IP literal (``[v6]`` brackets and a ``%zone`` allowed), or None."""
    inner = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    inner = inner.split("%", 1)[0]
    try:
        return ipaddress.ip_address(inner)
    except ValueError:
        return None


def _name(host: str) -> str:
    return host.strip().rstrip(".").lower()


def _under(name: str, suffix: str) -> bool:
    return name == suffix or name.endswith("." + suffix)


_AZURE_SUFFIX_SET = frozenset(AZURE_SUFFIXES)


def azure_endpoint(name: str) -> bool:
    """Whether ``name`` is under one of Azure's public service suffixes.

    One set lookup per dot-suffix of the name (``a.b.azure.net``: ``a.b.azure.net``, ``b.azure.net``,
    ``azure.net``, ``net``) instead of an ``endswith`` per suffix: the same answer as ``_under`` for each.
    """
    n = _name(name)
    start = 0
    while True:
        if n[start:] in _AZURE_SUFFIX_SET:
            return True
        dot = n.find(".", start)
        if dot < 0:
            return False
        start = dot + 1


@dataclass(frozen=True)
class EgressScope:
    """The destinations a SAFE probe may contact.

    Attributes:
        networks: address ranges in scope (private space by default, plus VNet prefixes and addresses added).
        hosts: names in scope with every name below them (from the problem statement, or added).
        zones: DNS zones in scope (private DNS zones the subscription owns), with every name below them.
        azure: whether Azure's public service endpoints count (DNS lookups of them, and data-free HTTP shapes).
    """

    networks: tuple[IPNetwork, ...] = field(default_factory=lambda: tuple(ipaddress.ip_network(n) for n in _PRIVATE))
    hosts: frozenset[str] = frozenset()
    zones: frozenset[str] = frozenset()
    azure: bool = True

    @cached_property
    def _hash(self) -> int:
        return hash((self.networks, self.hosts, self.zones, self.azure))

    def __hash__(self) -> int:
        return self._hash

    # -- questions -------------------------------------------------------------------------------------

    def address_in_scope(self, addr: IPAddress) -> bool:
        """Whether an address is in one of the scope's ranges (IPv4-mapped IPv6 counts as its IPv4)."""
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        return any(addr.version == net.version and addr in net for net in self.networks)

    def name_in_scope(self, host: str) -> bool:
        """Whether a DNS name is the investigation's: added hosts and zones (and below), single labels and
        reserved private suffixes. Azure endpoints are not included here (see :func:`azure_endpoint`)."""
        n = _name(host)
        if not n:
            return False
        if "." not in n:
            return True
        if any(_under(n, s) for s in _PRIVATE_SUFFIXES):
            return True
        return any(_under(n, h) for h in self.hosts) or any(_under(n, z) for z in self.zones)

    # -- widening (each returns a new scope) -----------------------------------------------------------

    def with_networks(self, *cidrs: str | IPNetwork) -> EgressScope:
        """The scope plus address ranges (``10.20.0.0/16``, a single address); malformed ones are ignored."""
        nets = list(self.networks)
        for c in cidrs:
            try:
                net = c if isinstance(c, (ipaddress.IPv4Network, ipaddress.IPv6Network)) else ipaddress.ip_network(str(c).strip(), strict=False)
            except ValueError:
                continue
            if net.prefixlen == 0 or net.is_loopback or net.is_link_local or net.is_multicast or net.is_unspecified:
                continue  # never widen to the whole internet, loopback or link-local
            if net not in nets:
                nets.append(net)
        return EgressScope(tuple(nets[:_MAX_ENTRIES]), self.hosts, self.zones, self.azure)

    def with_hosts(self, *names: str) -> EgressScope:
        """The scope plus host names (each with the names below it)."""
        return EgressScope(self.networks, self._merge(self.hosts, names), self.zones, self.azure)

    def with_zones(self, *zones: str) -> EgressScope:
        """The scope plus DNS zones (private DNS zones the subscription owns)."""
        return EgressScope(self.networks, self.hosts, self._merge(self.zones, zones), self.azure)

    @staticmethod
    def _merge(current: frozenset[str], names: Iterable[str]) -> frozenset[str]:
        clean = {_name(n) for n in names if n and "." in _name(n) and not _name(n).endswith(".")}
        # A bare public suffix would put a whole top-level domain in scope.
        clean = {n for n in clean if n.count(".") >= 1 and n not in AZURE_SUFFIXES and len(n) <= 253}
        return frozenset(sorted(current | clean)[:_MAX_ENTRIES])

    def with_text(self, text: str) -> EgressScope:
        """The scope plus every host name, address and CIDR a problem statement names.

        ``"web-vm-01 cannot reach redis-primary.prod.internal on 6379 (10.1.0.4)"`` adds
        ``redis-primary.prod.internal`` and ``10.1.0.4/32``. File names (``capture.pcap``) are skipped.
        """
        hosts = [m.group(0) for m in _HOST_WORD.finditer(text) if not _FILE_SUFFIX.search(m.group(0))]
        addrs = [m.group(0) for m in _IPV4_WORD.finditer(text)]
        addrs += [m.group(0) for m in _IPV6_WORD.finditer(text) if m.group(0).count(":") >= 2]
        hosts = [h for h in hosts if parse_address(h) is None]
        return self.with_hosts(*hosts).with_networks(*addrs)

    def describe(self) -> str:
        """One line for a human: what is in scope."""
        nets = ", ".join(str(n) for n in self.networks[:8]) + (" ..." if len(self.networks) > 8 else "")
        names = sorted(self.hosts | self.zones)
        shown = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
        return f"networks {nets}; names {shown or '(single-label and .internal only)'}; Azure endpoints {'yes' if self.azure else 'no'}"
