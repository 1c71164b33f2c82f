"""Where a URL may go without a human: http(s) only, no credentials, no token endpoints, no metadata host.

Why apart from the named value checks (``_values``): this is the part that knows addresses in all their
spellings (inet_aton forms, IPv4-mapped and NAT64 IPv6, link-local names that rebind to IMDS) and the
token endpoints of every cloud; the ``url``, ``host``, ``resolve`` and ``connect_to`` checks all ask it.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from urllib.parse import SplitResult, unquote, urlsplit

__all__ = ["CONTROL_PLANE_PORTS", "blocked_address", "check_url", "ipv4_value", "url_parts"]

# Hosts that answer with credentials or platform secrets: IMDS, the Azure WireServer, and the
# cloud metadata names. Addresses are matched after numeric normalisation (see _ipv4_value).
_BLOCKED_NAMES = frozenset(
    {"metadata", "metadata.azure.internal", "metadata.google.internal", "instance-data", "instance-data.ec2.internal",
     "metadata.internal", "metadata.packet.net"}
)  # `*.internal` in general is a private zone (ICANN reserved it for private use), not a metadata name
_WIRESERVER = ipaddress.ip_address("168.63.129.16")
_NOT_NUMERIC = re.compile(r"[^0-9a-fA-FxX.]")
# Unauthenticated-by-default control planes: a GET there lists containers with their environment
# (secrets), kubelet pods, etcd keys or Consul KV; 32526 is the Azure HostGAPlugin (extension settings).
CONTROL_PLANE_PORTS = frozenset({2375, 2376, 2379, 2380, 4001, 10250, 10255, 8500, 32526})
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(/*)(.*)", re.S)
_KNOWN_SCHEMES = frozenset(
    ["http", "https", "file", "ftp", "ftps", "gopher", "gophers", "dict", "ldap", "ldaps", "imap", "imaps", "pop3", "pop3s", "smtp", "smtps", "rtsp", "rtmp", "scp", "sftp", "smb", "smbs", "telnet", "tftp", "mqtt", "ws", "wss"]
)
# Other clouds' metadata services that are not link-local (Alibaba, Oracle legacy).
_OTHER_METADATA = frozenset({ipaddress.ip_address("100.100.100.200"), ipaddress.ip_address("192.0.0.192")})
_AWS_V6_IMDS = ipaddress.ip_network("fd00:ec2::/64")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_LINK_LOCAL_IN_NAME = re.compile(r"(^|[.-])169[.-]254[.-]|a9fe[0-9a-f]{4}|(^|[.-])168[.-]63[.-]129[.-]16($|[.-])", re.I)
# IMDS paths that are read-only instance facts (never /metadata/identity, which mints tokens).
_IMDS_ALLOWED_PATH = re.compile(
    r"/metadata/instance(/compute/(location|name|vmSize|zone|osType|sku|vmId|resourceGroupName|subscriptionId|azEnvironment|vmScaleSetName|platformFaultDomain|platformUpdateDomain)|/network(/[A-Za-z0-9/]*)?)/?"
)
_IMDS_ALLOWED_QUERY = re.compile(r"(api-version=[0-9-]+|format=(text|json))(&(api-version=[0-9-]+|format=(text|json)))*")
# Query parameters that carry credentials (SAS sig, Functions code, API keys, tokens, passwords):
# a probe carrying one is a secret on the command line and is never auto-run.
_SECRET_PARAM = re.compile(
    r"(^|[?&;])(sig|code|key|token|access_token|id_token|refresh_token|password|passwd|pwd|secret|client_secret|"
    r"api[-_]?key|apikey|subscription[-_]key|auth|authorization|x-api-key|sharedaccesssignature|se?ssion)=",
    re.I,
)
def _ipv4_value(host: str) -> int | None:
    """inet_aton semantics: 1-4 parts, each decimal, octal (0-prefix) or hex (0x-prefix).

    curl and the C library accept ``2852039166``, ``0xa9fea9fe``, ``0251.0376.0251.0376`` and
    ``169.254.43518`` for 169.254.169.254, so a textual comparison is not enough.
    """
    if _NOT_NUMERIC.search(host):
        return None  # a DNS name: cheap exit on the hot path
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    nums: list[int] = []
    for p in parts:
        try:
            if p.lower().startswith("0x"):
                n = int(p[2:] or "0", 16)
            elif len(p) > 1 and p.startswith("0"):
                n = int(p, 8)
            else:
                n = int(p, 10)
        except ValueError:
            return None
        nums.append(n)
    *head, last = nums
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    return (value << (8 * (4 - len(head)))) | last


@lru_cache(maxsize=4096)
def blocked_address(host: str) -> str | None:
    """Say why ``host`` (name or address in any spelling) must not be contacted automatically.

    Memoised on the exact string: pure, and asked for the same hosts by every probe of a session."""
    h = host.strip("[]").lower().rstrip(".")
    if "%" in h:
        h = h.split("%", 1)[0]
    if h in _BLOCKED_NAMES or h.startswith("metadata."):
        return f"{host} is a cloud metadata name (it serves credentials)"
    addr: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    v4 = _ipv4_value(h)
    if v4 is not None:
        addr = ipaddress.IPv4Address(v4)
    elif ":" in h:
        try:
            addr = ipaddress.IPv6Address(h)
        except ValueError:
            addr = None
    if addr is None:
        if _LINK_LOCAL_IN_NAME.search(h):
            return f"{host} embeds a link-local/platform address (DNS rebinding to IMDS)"
        return None
    if isinstance(addr, ipaddress.IPv6Address):
        if addr in _AWS_V6_IMDS:
            return f"{host} is a metadata address"
        mapped = addr.ipv4_mapped or addr.sixtofour
        if mapped is None and ((addr.packed[:12] == bytes(12) and int(addr) > 1) or addr in _NAT64):
            mapped = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)  # ::a.b.c.d (compat) or NAT64
        if mapped is not None:
            addr = mapped
    if addr.is_link_local or addr == _WIRESERVER or addr in _OTHER_METADATA:
        return f"{host} is a link-local/platform address (IMDS or WireServer serve credentials)"
    return None


# Token and identity endpoints, whatever host serves them: the Azure IMDS identity path, Cloud
# Shell (localhost:50342) and Arc (localhost:40342) token servers, App Service's MSI endpoint,
# AAD's OAuth2 endpoints, and the AWS/GCP equivalents. Matched on the decoded, lower-cased path,
# because the host may be a proxy, a DNS rebinding name, or localhost.
_TOKEN_PATH = re.compile(
    r"/oauth2(/|$)|/msi(/|$)|/metadata/identity|/identity/oauth2|/metadata/v1(/|$)|/latest/api/token|"
    r"/meta-data/iam|security-credentials|/computemetadata/|/token(/|$)|/tokens?/|/getaccesstoken|/credentials?(/|$)|"
    # Metadata services reachable through any name that resolves to them (DNS rebinding): AWS
    # IMDSv1 user-data/meta-data, Oracle /opc/, and the Azure WireServer goal state (/machine).
    r"/latest/(meta-data|user-data|dynamic)|/opc/v[12]/|/machine(/|$)"
)
_TOKEN_QUERY = re.compile(
    r"(^|[?&;])((resource|client_id|mi_res_id|msi_res_id|principal_id|scope|grant_type)=|comp=(goalstate|certificates|config|extensionsconfig))",
    re.I,
)


def _looks_like_token_request(path: str, query: str) -> bool:
    """True when the path or query asks for a token, after undoing percent-encoding, backslashes
    and duplicate slashes that a server would undo too."""
    p = path
    for _ in range(3):
        if "%" not in p:
            break
        p = unquote(p)
    if "\\" in p:
        p = p.replace("\\", "/")
    if "//" in p:
        p = re.sub(r"/+", "/", p)
    if "%" in query:
        query = unquote(query)
    return bool(_TOKEN_PATH.search(p.lower()) or (query and _TOKEN_QUERY.search(query)))


def ipv4_value(host: str) -> int | None:
    """The IPv4 address a host string spells in any inet_aton form (``2852039166``, ``0xa9fea9fe``), or None."""
    return _ipv4_value(host.strip("[]").lower().rstrip("."))


@lru_cache(maxsize=4096)  # pure in the URL (a SplitResult is immutable); each probe's URL is read several times
def url_parts(url: str) -> SplitResult | None:
    """The URL as curl will read it (scheme spelled out, 1-3 slashes normalised), or None if malformed."""
    url, why = _as_curl_reads(url)
    if why is not None:
        return None
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return None
    return parts


def check_url(url: str, *, imds_allowed: bool = True) -> str | None:
    """Accept only http(s) URLs to hosts that are not metadata/link-local, with no userinfo."""
    url, why = _as_curl_reads(url)
    if why is not None:
        return why
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        _ = parts.port
    except ValueError:
        return f"{url!r} is not a well-formed URL"
    why = _request_problem(url, parts, host)
    if why is not None:
        return why
    why = blocked_address(host)
    if why is None:
        return None
    if imds_allowed and host == "169.254.169.254" and _IMDS_ALLOWED_PATH.fullmatch(parts.path) and (
        not parts.query or _IMDS_ALLOWED_QUERY.fullmatch(parts.query)
    ):
        return None  # read-only instance facts, explicitly allowlisted
    return why


def _as_curl_reads(url: str) -> tuple[str, str | None]:
    """``url`` with the scheme curl would use spelled out, or why curl would guess a non-HTTP one."""
    m = _SCHEME.match(url)
    if m is not None and (m.group(2) or m.group(1).lower() in _KNOWN_SCHEMES):
        # curl accepts 1-3 slashes after the scheme (`http:/host`, `http:///host`): normalise.
        url = f"{m.group(1)}://{m.group(3)}"
    if "://" not in url:
        first = url.split("/", 1)[0].split(":", 1)[0].lower()
        # curl guesses the protocol from a scheme-less host's first label (ftp., dict., ldap., ...).
        if re.match(r"(ftp|dict|ldap|imap|pop3|smtp|gopher|tftp|telnet|mqtt|rtsp|smb|scp|sftp)\.", first):
            return url, f"scheme-less {url!r} would make curl guess a non-HTTP protocol"
        url = "http://" + url
    return url, None


def _request_problem(url: str, parts: SplitResult, host: str) -> str | None:
    """Why the request itself (scheme, credentials, token endpoints, globbing, port) must not be
    sent automatically, before its host address is looked at; or None."""
    if parts.scheme.lower() not in ("http", "https"):
        return f"only http/https URLs run automatically, not {parts.scheme}://"
    if "@" in parts.netloc:
        return "credentials in the URL (user:password@host) must not be sent automatically"
    if _SECRET_PARAM.search(parts.query):
        return "the URL carries a credential in its query (sig=, code=, key=, token=, ...)"
    if _looks_like_token_request(parts.path, parts.query):
        return "the URL looks like a token/identity endpoint (IMDS, Cloud Shell, Arc, App Service, OAuth2); tokens are never fetched automatically"
    if not host:
        return f"{url!r} has no host"
    if "%" in parts.netloc or "\\" in parts.netloc:
        return "percent-encoding or backslashes in the host hide where the request goes"
    rest = parts.path + parts.query + parts.fragment
    if "{" in url or "}" in url or "[" in rest or "]" in rest:
        return "curl URL globbing ({...} or [...]) expands into many requests"
    if parts.port in CONTROL_PLANE_PORTS:
        return f"port {parts.port} is a container/cluster control-plane API (Docker, kubelet, etcd, Consul)"
    return None
