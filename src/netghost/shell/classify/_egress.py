"""The egress policy of network probes: SAFE only toward the investigation, in shapes that carry no chosen data.

Every tier-1 program that contacts a host (ping, traceroute, tracepath, mtr, dig, nslookup, host, curl,
openssl s_client) is checked here after its option table accepted the arguments:

* **Where**: each destination (the host probed, a DNS server given explicitly, the address curl really
  connects to after ``--resolve``/``--connect-to``) must be in the session's :class:`EgressScope`. Loopback
  (local admin APIs: Docker, Vault, Dapr, the Functions host), link-local and metadata addresses never are;
  the WireServer 168.63.129.16 only as the VNet's DNS server or an ICMP target, never over HTTP.
* **What**: nothing the model could have chosen to smuggle out. No long, hex or base64 label in a DNS name;
  no such segment or value in a URL path or query; only standard headers with plain values; no cookies,
  referers or EDNS payloads; toward an Azure endpoint that is not itself in scope (its owner sees the
  request), only a data-free request (``/`` or a fixed health path, no query).

The option tables already refused bodies, uploads, forms, files and redirects; this module only decides
what is left. Every problem is an argument hazard: no organisation prefix rule relaxes it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from urllib.parse import unquote

from netghost.shell.classify._options import ParsedOptions
from netghost.shell.classify._scope import EgressScope, azure_endpoint, parse_address
from netghost.shell.classify._urls import CONTROL_PLANE_PORTS, blocked_address, ipv4_value, url_parts

__all__ = ["ADMIN_PORTS", "EGRESS_CHECKS", "encoded_payload", "host_problem", "name_problem"]

_WIRESERVER = ipaddress.ip_address("168.63.129.16")
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
# Microsoft-operated hosts whose content no tenant controls: any shape-checked path may go there.
_MICROSOFT_HOSTS = frozenset({
    "management.azure.com", "login.microsoftonline.com", "login.windows.net", "graph.microsoft.com",
    "management.core.windows.net", "management.usgovcloudapi.net", "management.chinacloudapi.cn",
})  # fmt: skip
# Paths of a request toward an Azure endpoint outside the scope: a closed set, so they carry no data.
_DATA_FREE_PATHS = frozenset({
    "", "/", "/health", "/healthz", "/healthstatus", "/status", "/ready", "/readyz", "/livez", "/ping",
    "/robots.txt", "/favicon.ico", "/.well-known/openid-configuration",
})  # fmt: skip
# Unauthenticated-by-default admin and secrets APIs, on any host: Functions host admin, Durable webhooks,
# Dapr's secrets/state/invoke API, Vault, Kubernetes and app-server consoles.
_ADMIN_PATH = re.compile(
    r"(?i)/admin/(host|functions|vfs|extensions|warmup)|/runtime/webhooks|"
    r"/v1\.0(-alpha1|-beta1)?/(secrets|state|bindings|invoke|actors|publish|configuration|metadata|shutdown|crypto)|"
    r"/v1/(secret|sys|auth|kv|identity|transit|pki|cubbyhole)|/_api/|/debug/pprof|/actuator|/jolokia|/manager/html|"
    r"/config_dump|/containers/|/secrets(/|$)"
)
ADMIN_PORTS = CONTROL_PLANE_PORTS | {4243, 8200, 8201, 3500, 3501, 50001, 15000, 9901}
_HEX = re.compile(r"[0-9a-fA-F]{16,}")
_RUN = re.compile(r"[A-Za-z0-9+/=_-]{16,}")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]")
# Characters of digit-bearing path segments and query values one URL may carry before it reads as data
# split into small pieces (chunks of hex or base64, a GUID).
_URL_DATA_BUDGET = 32
_HEADER_VALUES: Mapping[str, re.Pattern[str]] = {
    "accept": re.compile(r"[A-Za-z0-9*/+.;=, -]{1,128}"),
    "accept-encoding": re.compile(r"[A-Za-z0-9,;=.* -]{1,64}"),
    "accept-language": re.compile(r"[A-Za-z0-9,;=.* -]{1,64}"),
    "cache-control": re.compile(r"[A-Za-z0-9=, -]{1,64}"),
    "pragma": re.compile(r"no-cache"),
    "connection": re.compile(r"(?i)close|keep-alive"),
    "range": re.compile(r"bytes=[0-9]*-[0-9]*(,[0-9]*-[0-9]*)*"),
    "x-ms-version": re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"),
    "user-agent": re.compile(r"[A-Za-z0-9 ._/()+;:-]{1,64}"),
    "host": re.compile(r"[A-Za-z0-9.:\[\]-]{1,253}"),
}
_DNS_TYPES = frozenset(
    ["a", "aaaa", "any", "axfr", "caa", "cname", "dnskey", "ds", "hinfo", "https", "ixfr", "mx", "naptr", "ns", "nsec", "nsec3", "ptr", "rrsig", "soa", "spf", "srv", "sshfp", "svcb", "tlsa", "txt", "in", "ch", "hs", "chaos", "hesiod", "loc", "cert", "dname", "uri"]
)
# dig's +options that put chosen bytes into the query, with the shortest prefix dig accepts for each (it
# resolves a +word by its first distinguishing letters: `+ednso=` is `+ednsopt=`, `+coo=` is `+cookie=`,
# `+su=` is `+subnet=`), and whether only a given value carries data (a bare +cookie sends a random one).
_DIG_PAYLOAD = (("ednsopt", 5, False), ("ednsflags", 5, False), ("cookie", 3, True), ("subnet", 2, True))


def _dig_payload(option: str) -> bool:
    """Whether a dig ``+option`` (any abbreviation dig accepts) carries chosen bytes."""
    word, eq, value = option[1:].partition("=")
    if word.startswith("no"):
        return False  # +noednsopt, +nocookie, +nosubnet clear what would be sent
    return any(len(word) >= shortest and full.startswith(word) and (not valued or bool(eq and value))
               for full, shortest, valued in _DIG_PAYLOAD)


def encoded_payload(piece: str, *, name: bool = False) -> str | None:
    """Why a piece of a name, path or value looks like data being carried out, or None.

    Long values and hex runs of 16+ characters anywhere. In a DNS label (``name``): base64/base32-like runs
    of 16+ characters mixing upper-case letters and digits, or 20+ mixing letters and digits (Azure
    names such as ``stghostprod2024`` stay names; upper case with digits does not). In a path segment, query value or header: 14+ letters
    and digits once separators are dropped (``a1b2-c3d4_e5f6...`` included), mixing cases or with several
    digits, or 20+ of them, with many distinct characters (``ipconfiguration1`` stays a word).
    """
    if len(piece) > 64:
        return f"a {len(piece)}-character value"
    if _HEX.search(piece):
        return "a hex string"
    if not name:
        compact = _SEPARATORS.sub("", piece)
        digits = sum(c.isdigit() for c in compact)
        varied = _mixed(compact, 3) or (digits >= 2 and _mixed(compact, 2))  # not a word with one number
        long_mixed = len(compact) >= 20 and _mixed(compact, 2)
        if len(compact) >= 14 and (varied or long_mixed) and len(set(compact)) >= 10:
            return "an encoded-looking string"
        return None
    for m in _RUN.finditer(piece):
        run = m.group()
        # Host names are lower case: upper case mixed with digits is typed data, so is a long mixed run.
        upper = any(c.isupper() for c in run)
        if _mixed(run, 2) and (upper or len(run) >= 20) and len(set(run)) >= 10:
            return "a base64 or random-looking string"
    return None


def _mixed(text: str, classes: int) -> bool:
    """Letters and digits, and at least ``classes`` of (lower, upper, digit)."""
    kinds = (any(c.islower() for c in text), any(c.isupper() for c in text), any(c.isdigit() for c in text))
    return kinds[2] and sum(kinds) >= classes


def name_problem(name: str) -> str | None:
    if len(name) > 253:
        return "the name is longer than DNS allows"
    for label in name.split("."):
        if len(label) > 40:
            return f"the DNS label {label[:20]!r}... is {len(label)} characters long (data in a name)"
        why = encoded_payload(label, name=True)
        if why is not None:
            return f"the DNS label {label!r} carries {why} (data in a name reaches its zone's server)"
    return None


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    addr = parse_address(host)
    if addr is not None:
        return addr
    value = ipv4_value(host)
    return ipaddress.IPv4Address(value) if value is not None else None


@lru_cache(maxsize=4096)
def host_problem(host: str, scope: EgressScope, role: str) -> tuple[str | None, str]:
    """(why ``host`` may not be contacted automatically, the kind of destination).

    Args:
        host: a name or address as typed.
        scope: the session's egress scope.
        role: ``probe`` (ICMP/UDP path probes and names looked up), ``dns-server`` (an explicit resolver)
            or ``http`` (a TCP request that carries a path, headers and a TLS name).

    Returns:
        (None, kind) when allowed, kind being ``scope``, ``microsoft`` or ``azure`` (an Azure endpoint not
        in scope: only data-free requests); else (reason, "").

    Memoised on its exact arguments (the scope is immutable and hashed once): the answer depends on
    nothing else, an investigation probes the same few hosts again and again, and parsing an address
    and testing it against every range and metadata rule cost tens of microseconds.
    """
    h = host.strip().strip("[]").rstrip(".").lower()
    if not h:
        return "an empty host", ""
    if h in _LOOPBACK_NAMES or h.endswith(".localhost"):
        return f"{host} is this machine (loopback): local admin and secrets APIs answer there", ""
    addr = _address(h)
    if addr is not None:
        mapped = addr.ipv4_mapped if isinstance(addr, ipaddress.IPv6Address) else None
        addr = mapped or addr
        if addr.is_loopback or addr.is_unspecified:
            return f"{host} is this machine (loopback): local admin and secrets APIs answer there", ""
        if addr.is_multicast or addr == ipaddress.IPv4Address("255.255.255.255"):
            return f"{host} is a broadcast/multicast address", ""
        if addr == _WIRESERVER and role != "http":
            return None, "scope"  # the VNet's DNS server and a standard ICMP target; never its HTTP APIs
        why = blocked_address(str(addr))
        if why is not None:
            return why, ""
        if scope.address_in_scope(addr):
            return None, "scope"
        return f"{host} is outside the investigation's scope (not a private or added address range)", ""
    why = blocked_address(h) or name_problem(host.strip().strip("[]").rstrip("."))  # as typed: case is a signal
    if why is not None:
        return why, ""
    if scope.name_in_scope(h):
        return None, "scope"
    if scope.azure and h in _MICROSOFT_HOSTS:
        return None, "microsoft"
    if scope.azure and azure_endpoint(h):
        return None, "azure"
    return (f"{host} is outside the investigation's scope (only hosts named in the problem, the subscription's "
            "private names and Azure endpoints are probed automatically)"), ""  # fmt: skip


def _dns_names(names: Sequence[str], scope: EgressScope) -> str | None:
    for name in names:  # an address is a reverse lookup: it goes to the address's owner, the same test
        why, _ = host_problem(name, scope, "probe")
        if why is not None:
            return why
    return None


def _servers(servers: Sequence[str], scope: EgressScope) -> str | None:
    for server in servers:
        why, _ = host_problem(server, scope, "dns-server")
        if why is not None:
            return f"DNS server {server}: {why}"
    return None


# --- per program --------------------------------------------------------------------------------------


def _check_path_probe(parsed: ParsedOptions, scope: EgressScope) -> str | None:
    """ping, traceroute, tracepath, mtr: the probed host (a later positional is a packet length)."""
    return _dns_names(parsed.positionals[:1], scope)


def _check_dig(parsed: ParsedOptions, scope: EgressScope) -> str | None:
    for name, _ in parsed.options:
        if name.startswith("+") and _dig_payload(name):
            return f"{name} puts chosen bytes (EDNS options, a cookie, a client subnet) into the query"
    why = _servers(parsed.values("@"), scope)
    if why is not None:
        return why
    names = [p for p in parsed.positionals if p.lower() not in _DNS_TYPES and not p.isdigit()]
    names += parsed.values("-q")
    names += _searched(names, [name.partition("=")[2] for name, _ in parsed.options if _dig_domain(name)])
    for addr in parsed.values("-x"):
        why, _ = host_problem(addr, scope, "probe")
        if why is not None:
            return f"reverse lookup of {addr}: {why}"
    return _dns_names(names, scope)


def _check_nslookup_host(parsed: ParsedOptions, scope: EgressScope) -> str | None:
    """nslookup NAME [SERVER] and host NAME [SERVER]."""
    pos = parsed.positionals
    why = _servers(pos[1:2], scope)
    return why if why is not None else _dns_names([*pos[:1], *_searched(pos[:1], parsed.values("--domain"))], scope)


def _dig_domain(option: str) -> bool:
    """``+domain=NAME`` in any abbreviation dig accepts (``+do=``): a search domain appended to the query."""
    word, eq, value = option[1:].partition("=")
    return option.startswith("+") and len(word) >= 2 and "domain".startswith(word) and bool(eq and value)


def _searched(names: Sequence[str], domains: Sequence[str]) -> list[str]:
    """The names a search domain makes the resolver ask (``redis`` + ``attacker.example``), and the domain:
    a chosen word under an outside domain reaches that domain's servers through an in-scope resolver."""
    return [*(f"{n.rstrip('.')}.{d.strip('.')}" for n in names for d in domains if not n.endswith(".")), *domains]


def _header_problem(header: str) -> str | None:
    name, sep, value = header.partition(":")
    if not sep:
        return f"header {header!r} is not NAME: VALUE"
    check = _HEADER_VALUES.get(name.strip().lower())
    if check is None:
        return f"the header {name.strip()!r} is not a standard read header (custom headers can carry credentials or data)"
    value = value.strip()
    if not check.fullmatch(value):
        return f"the {name.strip()} header's value is not a plain one"
    return encoded_payload(value) and f"the {name.strip()} header carries {encoded_payload(value)}"


def _resolved(parsed: ParsedOptions) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """curl's ``--resolve`` (host:port -> address) and ``--connect-to`` (host:port -> host2) maps."""
    resolve: dict[tuple[str, str], str] = {}
    for entry in parsed.values("--resolve"):
        body = entry.lstrip("+")
        if body.startswith("-"):
            continue
        host, _, rest = body.partition(":")
        port, _, addrs = rest.partition(":")
        resolve[(host.lower(), port)] = addrs.split(",")[0]
    connect: dict[tuple[str, str], str] = {}
    for entry in parsed.values("--connect-to"):
        m = re.fullmatch(r"(\[[^\]]*\]|[^:]*):([0-9]*):(\[[^\]]*\]|[^:]*):([0-9]*)", entry)
        if m is not None:
            connect[(m.group(1).lower(), m.group(2))] = m.group(3)
    return resolve, connect


def _url_problem(url: str, scope: EgressScope, resolve: Mapping[tuple[str, str], str],
                 connect: Mapping[tuple[str, str], str]) -> str | None:  # fmt: skip
    return _url_problem_of(url, scope, tuple(resolve.items()), tuple(connect.items()))


@lru_cache(maxsize=4096)
def _url_problem_of(url: str, scope: EgressScope, resolve_items: tuple[tuple[tuple[str, str], str], ...],
                    connect_items: tuple[tuple[tuple[str, str], str], ...]) -> str | None:  # fmt: skip
    """:func:`_url_problem` memoised on its exact inputs (the pins as items): pure, and the same URLs recur."""
    resolve, connect = dict(resolve_items), dict(connect_items)
    parts = url_parts(url)
    if parts is None or not parts.hostname:
        return f"{url!r} is not a URL with a host"
    host = parts.hostname.lower()
    port = str(parts.port or (443 if parts.scheme.lower() == "https" else 80))
    if int(port) in ADMIN_PORTS:
        return f"port {port} is an admin or secrets API (Docker, etcd, kubelet, Consul, Vault, Dapr, Envoy)"
    # curl: --resolve HOST:PORT (or *:PORT) pins the address; --connect-to with an empty host or port
    # matches any. The connection goes to that target; the typed name only travels there.
    target = resolve.get((host, port)) or resolve.get(("*", port)) or next(
        (connect[k] for k in ((host, port), (host, ""), ("", port), ("", "")) if connect.get(k)), host
    )
    why, kind = host_problem(target, scope, "http")
    if why is not None:
        return why
    if target != host:
        why = name_problem(host)  # the typed name only travels to `target`, in the Host header and TLS name
        if why is not None:
            return why
    path = unquote(unquote(parts.path))
    if _ADMIN_PATH.search(path):
        return f"{path!r} is an admin or secrets API path (Functions host, Dapr, Vault, container APIs)"
    if kind == "azure":
        if path not in _DATA_FREE_PATHS or parts.query or parts.fragment:
            return (f"{host} is an Azure endpoint outside the scope (its owner sees the request): only `/` or a fixed "
                    "health path with no query runs automatically; add the resource to the scope from an az read")  # fmt: skip
        return None
    query = unquote(unquote(parts.query))
    if len(query) > 256:
        return "the query string is too long to be a plain read"
    pieces = [p for p in path.split("/") if p] + [x for kv in re.split(r"[&;]", query) for x in kv.split("=", 1) if x]
    pieces.append(unquote(parts.fragment))
    for piece in pieces:
        why = encoded_payload(piece)
        if why is not None:
            return f"the URL carries {why} ({piece[:24]!r}...): data in a path or query reaches the server's logs"
    carried = sum(len(_SEPARATORS.sub("", p)) for p in pieces if any(c.isdigit() for c in p))
    if carried >= _URL_DATA_BUDGET:
        return f"the URL's path and query carry {carried} characters of digit-bearing pieces (data split into chunks)"
    return None


def _curl_headers(parsed: ParsedOptions, given: set[str]) -> str | None:
    """The first problem of curl's ``-H`` headers and ``-A`` user agent (each read only when given)."""
    for header in parsed.values("-H") if "-H" in given else ():
        why = _header_problem(header)
        if why is not None:
            return why
    for agent in parsed.values("-A") if "-A" in given else ():
        why = _header_problem(f"User-Agent: {agent}")
        if why is not None:
            return why
    return None


def _check_curl(parsed: ParsedOptions, scope: EgressScope) -> str | None:
    # The options given, once: each check below reads its option's values only when it is there (most
    # lines give two or three options, and a pass over them per check cost more than the checks).
    given = {n for n, _ in parsed.options}
    for opt in ("-b", "-e"):
        if opt in given:
            return f"{opt} sends a chosen cookie or referer" if opt == "-b" else "-e sends a chosen referer"
    if "--dns-servers" in given:
        why = _servers([s for v in parsed.values("--dns-servers") for s in v.split(",")], scope)
        if why is not None:
            return why
    why = _curl_headers(parsed, given)
    if why is not None:
        return why
    resolve, connect = _resolved(parsed) if "--resolve" in given or "--connect-to" in given else ({}, {})
    for addr in [*resolve.values(), *connect.values()]:
        if addr:
            why, _ = host_problem(addr, scope, "http")
            if why is not None:
                return f"--resolve/--connect-to target {addr}: {why}"
    for url in parsed.positionals + parsed.values("--url") if "--url" in given else parsed.positionals:
        why = _url_problem(url, scope, resolve, connect)
        if why is not None:
            return why
    return None


EgressCheck = Callable[[ParsedOptions, EgressScope], str | None]
EGRESS_CHECKS: Mapping[str, EgressCheck] = {
    "ping": _check_path_probe, "ping6": _check_path_probe, "traceroute": _check_path_probe,
    "traceroute6": _check_path_probe, "tracepath": _check_path_probe, "tracepath6": _check_path_probe,
    "mtr": _check_path_probe, "dig": _check_dig, "nslookup": _check_nslookup_host, "host": _check_nslookup_host,
    "curl": _check_curl,
}  # fmt: skip
