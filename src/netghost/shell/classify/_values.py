"""Named value checks used by the option tables in ``rules/*.toml``.

Why named checks: the rule files stay data (``c = "int:1..100"``) while the few checks that
need code (URLs, link-local addresses in their numeric spellings, curl's ``-w`` format) live
here once. A check returns ``None`` when the value is acceptable, else a short reason.
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from collections.abc import Callable
from functools import cache
from urllib.parse import SplitResult, unquote, urlsplit

__all__ = ["ValueCheck", "blocked_address", "check_url", "compile_check"]

ValueCheck = Callable[[str], str | None]

# Hosts that answer with credentials or platform secrets: IMDS, the Azure WireServer, and the
# cloud metadata names. Addresses are matched after numeric normalisation (see _ipv4_value).
_BLOCKED_NAMES = frozenset(
    {"metadata", "metadata.azure.internal", "metadata.google.internal", "instance-data", "instance-data.ec2.internal"}
)
_WIRESERVER = ipaddress.ip_address("168.63.129.16")
_NOT_NUMERIC = re.compile(r"[^0-9a-fA-FxX.]")
# Unauthenticated-by-default control planes: a GET there lists containers with their environment
# (secrets), kubelet pods, etcd keys or Consul KV; 32526 is the Azure HostGAPlugin (extension settings).
_CONTROL_PLANE_PORTS = frozenset({2375, 2376, 2379, 2380, 4001, 10250, 10255, 8500, 32526})
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
# Query parameters and header names that carry credentials (SAS sig, Functions code, API keys,
# tokens, passwords): a probe carrying one is a secret on the command line and is never auto-run.
_SECRET_PARAM = re.compile(
    r"(^|[?&;])(sig|code|key|token|access_token|id_token|refresh_token|password|passwd|pwd|secret|client_secret|"
    r"api[-_]?key|apikey|subscription[-_]key|auth|authorization|x-api-key|sharedaccesssignature|se?ssion)=",
    re.I,
)
_SECRET_HEADER = re.compile(
    r"\s*(authorization|proxy-authorization|cookie|x-api-key|api-key|apikey|x-functions-key|ocp-apim-subscription-key|"
    r"x-auth-token|x-access-token|x-ms-encryption-key|x-ms-copy-source-authorization|metadata-flavor|x-aws-ec2-metadata-token[a-z-]*|"
    r"[a-z0-9-]*(token|secret|password|passwd|api-?key|session|identity|credential|signature|principal)[a-z0-9-]*)\s*[:;]",
    re.I,
)
_PATH_PREFIX_DENY = re.compile(
    r"^(/(etc|bin|sbin|boot|dev|lib|lib32|lib64|proc|root|sys|usr|var/(?!tmp(/|$)))(/|$)|~|/?\.\.(/|$))"
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


def blocked_address(host: str) -> str | None:
    """Say why ``host`` (name or address in any spelling) must not be contacted automatically."""
    h = host.strip("[]").lower().rstrip(".")
    if "%" in h:
        h = h.split("%", 1)[0]
    if h in _BLOCKED_NAMES or h.endswith(".internal"):
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
    if parts.port in _CONTROL_PLANE_PORTS:
        return f"port {parts.port} is a container/cluster control-plane API (Docker, kubelet, etcd, Consul)"
    return None


def _int_range(spec: str, *, real: bool) -> ValueCheck:
    lo_s, hi_s = spec.split("..")
    lo, hi = float(lo_s), float(hi_s)
    pattern = re.compile(r"[0-9]+(\.[0-9]+)?" if real else r"[0-9]+")

    def check(value: str) -> str | None:
        if not pattern.fullmatch(value) or not lo <= float(value) <= hi:
            return f"value {value!r} is outside {spec}"
        return None

    return check


def _regex(pattern: str) -> ValueCheck:
    rx = re.compile(pattern)

    def check(value: str) -> str | None:
        return None if rx.fullmatch(value) else f"value {value!r} is not an accepted form"

    return check


def _enum(options: str, *, fold: bool) -> ValueCheck:
    allowed = frozenset((o.lower() if fold else o) for o in options.split(","))

    def check(value: str) -> str | None:
        v = value.lower() if fold else value
        return None if v in allowed else f"value {value!r} is not one of {options}"

    return check


def _host(value: str) -> str | None:
    """A name or address to probe (ping, dig @server). Link-local is fine here: an ICMP echo or a
    DNS query to 168.63.129.16 is a standard Azure diagnostic and returns no credentials."""
    if not value or value.startswith("-"):
        return f"{value!r} is not a host"
    return None


def _any(value: str) -> str | None:
    return None


def _not_at(value: str) -> str | None:
    return "a value starting with @ makes the program read a file" if value.startswith("@") else None


def _devnull_or_stdout(value: str) -> str | None:
    return None if value in ("/dev/null", "-") else "output may go only to /dev/null or - (stdout)"


def _stdout(value: str) -> str | None:
    return None if value == "-" else "header dump may go only to - (stdout)"


def _writeout(value: str) -> str | None:
    if value.startswith("@"):
        return "-w @file reads the format from a file"
    if "%output{" in value:
        return "-w %output{file} writes a file"
    return None


def _header(value: str) -> str | None:
    if value.startswith("@"):
        return "-H @file reads headers from a file"
    if _SECRET_HEADER.match(value):
        return "the header carries a credential (Authorization, Cookie, API key, token)"
    return None


_BRACKET_SPLIT = re.compile(r"\[[^\[\]]*\]|[^:\[\]]+|:|\[|\]")
_DNS_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.?")
_PORT = re.compile(r"[0-9]{1,5}")


def _colon_fields(value: str) -> list[str] | None:
    """Split on ``:`` outside ``[...]`` (curl's host syntax); None when brackets do not balance."""
    fields = [""]
    for tok in _BRACKET_SPLIT.findall(value):
        if tok == ":":
            fields.append("")
        elif tok in ("[", "]"):
            return None
        else:
            fields[-1] += tok
    return fields  # the alternatives above cover every character, so nothing is skipped


def _literal_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """A strict IP literal (``[v6]``, bare v6, or a dotted quad); None for anything else."""
    inner = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    if "[" in inner or "]" in inner:
        return None
    try:
        return ipaddress.ip_address(inner)
    except ValueError:
        return None


def _target_host(text: str, what: str) -> str | None:
    """A host curl will connect to: a strict IP literal or a plain DNS name, never blocked."""
    ip = _literal_address(text)
    if ip is not None:
        return blocked_address(str(ip))
    if not _DNS_NAME.fullmatch(text):
        return f"{what} {text!r} is not a plain host name or IP address"
    return blocked_address(text)  # also catches inet_aton spellings (2852039166, 0xa9fea9fe)


_COOKIE_SECRET_NAME = re.compile(r"sess|sid|token|auth|jwt|key|secret|pass|login|csrf|xsrf|ident|saml|oidc|aspxauth", re.I)


def _cookie(value: str) -> str | None:
    """curl -b NAME=VALUE[; ...]: a value without ``=`` is a cookie FILE to read, and a cookie whose
    name looks like a session or auth cookie is a credential on the command line."""
    if "=" not in value or value.startswith("@"):
        return "-b without NAME=VALUE reads a cookie file"
    for part in value.split(";"):
        name = part.split("=", 1)[0].strip()
        if _COOKIE_SECRET_NAME.search(name):
            return f"cookie {name!r} looks like a session/auth credential"
    return None


def _resolve_entry(value: str) -> str | None:
    """curl --resolve ``[+]HOST:PORT:ADDR[,ADDR]...`` or ``-HOST:PORT``.

    Fail closed: every address must be a strict IP literal (bracketed or not) that is not
    blocked; anything that does not parse exactly (unbalanced brackets, inet_aton spellings,
    names) is refused rather than guessed at.
    """
    if value.startswith("-"):
        f = _colon_fields(value[1:])
        return None if f is not None and len(f) == 2 and _PORT.fullmatch(f[1]) else f"{value!r} is not -HOST:PORT"
    body = value[1:] if value.startswith("+") else value
    m = re.fullmatch(r"(\*|\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]{1,5}):(.+)", body)
    if m is None:
        return f"{value!r} is not HOST:PORT:ADDRESS"
    for addr in m.group(3).split(","):
        ip = _literal_address(addr)
        if ip is None:
            return f"--resolve address {addr!r} is not an IP address"
        why = blocked_address(str(ip))
        if why:
            return why
    return None


def _connect_to(value: str) -> str | None:
    """curl --connect-to ``HOST1:PORT1:HOST2:PORT2`` (any part may be empty, hosts may be
    ``[v6]``). The target host must be a plain name or strict IP literal that is not blocked,
    and the target port not a control-plane port; anything unparseable is refused."""
    f = _colon_fields(value)
    if f is None or len(f) != 4:
        return f"{value!r} is not HOST1:PORT1:HOST2:PORT2"
    host1, port1, host2, port2 = f
    if any(p and not _PORT.fullmatch(p) for p in (port1, port2)):
        return f"{value!r} has a malformed port"
    if host1 and _literal_address(host1) is None and not _DNS_NAME.fullmatch(host1):
        return f"{value!r} has a malformed source host"
    if port2 and int(port2) in _CONTROL_PLANE_PORTS:
        return f"port {port2} is a container/cluster control-plane API"
    return _target_host(host2, "--connect-to target") if host2 else None


def _url(value: str) -> str | None:
    return check_url(value)


def _normpath(value: str) -> str:
    """The path the kernel will open: ``//etc``, ``/./etc`` and ``a/../../etc`` spelled plainly.

    posixpath.normpath keeps a leading ``//`` (POSIX leaves it implementation-defined; Linux
    treats it as ``/``), so that is collapsed too.
    """
    norm = posixpath.normpath(value)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return norm


def _workpath(value: str) -> str | None:
    """Paths a read-mostly tool may name: not system directories, dot-dirs or parent escapes.

    The deny rules run on the normalised path AND the typed one, so neither ``//etc`` nor
    ``/./etc`` nor ``out/../../etc`` slips past a prefix test.
    """
    if not value or value.startswith("-"):
        return f"{value!r} is not a path"
    for p in (value, _normpath(value)):
        if _PATH_PREFIX_DENY.search(p) or "/.." in p or re.search(r"(^|/)\.[^./]", p):
            return f"path {value!r} points into a system, hidden or parent directory"
    return None


_OUTDIR_ROOTS = ("/tmp", "/var/tmp")


def _outdir(value: str) -> str | None:
    """Where a tool may WRITE: relative paths under the working directory (./audit, out/...),
    or under /tmp and /var/tmp. Any other absolute directory (/etc/cron.d, /home/u/.bashrc.d,
    /srv/www) is a write a human must approve, however it is spelled."""
    why = _workpath(value)
    if why is not None:
        return why
    norm = _normpath(value)
    if norm.startswith("/") and not any(norm == r or norm.startswith(r + "/") for r in _OUTDIR_ROOTS):
        return f"output directory {value!r} is outside the working directory and /tmp"
    return None


_SIMPLE: dict[str, ValueCheck] = {
    "any": _any,
    "host": _host,
    "not_at": _not_at,
    "devnull_or_stdout": _devnull_or_stdout,
    "stdout": _stdout,
    "writeout": _writeout,
    "header": _header,
    "resolve": _resolve_entry,
    "connect_to": _connect_to,
    "cookie": _cookie,
    "url": _url,
    "workpath": _workpath,
    "outdir": _outdir,
}


@cache
def compile_check(spec: str) -> ValueCheck:
    """Turn a check spec from a rule file into a callable.

    Args:
        spec: ``int:LO..HI``, ``num:LO..HI``, ``enum:a,b``, ``ienum:a,b``, ``re:REGEX`` or a
            simple name (``any``, ``host``, ``url``, ``not_at``, ``devnull_or_stdout``, ``stdout``,
            ``writeout``, ``header``, ``resolve``, ``connect_to``, ``workpath``, ``outdir``).

    Raises:
        ValueError: The spec names no known check (a rule-file error, reported at load).
    """
    kind, _, arg = spec.partition(":")
    if kind == "int":
        return _int_range(arg, real=False)
    if kind == "num":
        return _int_range(arg, real=True)
    if kind == "enum":
        return _enum(arg, fold=False)
    if kind == "ienum":
        return _enum(arg, fold=True)
    if kind == "re":
        return _regex(arg)
    if spec in _SIMPLE:
        return _SIMPLE[spec]
    raise ValueError(f"unknown value check {spec!r}")
