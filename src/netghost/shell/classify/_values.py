"""Named value checks used by the option tables in ``rules/*.toml``.

Why named checks: the rule files stay data (``c = "int:1..100"``) while the few checks that
need code (URLs, link-local addresses in their numeric spellings, curl's ``-w`` format) live
here once (the URL and address rules in ``_urls``). A check returns ``None`` when the value is
acceptable, else a short reason.
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from collections.abc import Callable
from functools import cache, lru_cache

from netghost.shell.classify._urls import CONTROL_PLANE_PORTS, blocked_address, check_url

__all__ = ["ValueCheck", "compile_check"]

ValueCheck = Callable[[str], str | None]

# Header names that carry credentials (API keys, tokens, passwords, the IMDS/AWS metadata headers):
# a probe carrying one is a secret on the command line and is never auto-run.
_SECRET_HEADER = re.compile(
    r"\s*(authorization|proxy-authorization|cookie|x-api-key|api-key|apikey|x-functions-key|ocp-apim-subscription-key|"
    r"x-auth-token|x-access-token|x-ms-encryption-key|x-ms-copy-source-authorization|metadata-flavor|x-aws-ec2-metadata-token[a-z-]*|"
    r"[a-z0-9-]*(token|secret|password|passwd|api-?key|session|identity|credential|signature|principal)[a-z0-9-]*)\s*[:;]",
    re.I,
)
# `var(?!/tmp...)`: the lookahead sits after `var`, so `/var/www`, `/var/lib/waagent` and `/var` are refused and
# only `/var/tmp/...` passes (it used to sit after `var/`, which then required another `/`: `/var/<x>` passed).
_PATH_PREFIX_DENY = re.compile(
    r"^(/(etc|bin|sbin|boot|dev|lib|lib32|lib64|proc|root|sys|usr|var(?!/tmp(/|$)))(/|$)|~|/?\.\.(/|$))"
)


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


@lru_cache(maxsize=4096)  # pure in the value; the same URLs, targets and paths recur
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


@lru_cache(maxsize=4096)  # pure in the value; the same URLs, targets and paths recur
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


@lru_cache(maxsize=4096)  # pure in the value; the same URLs, targets and paths recur
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
    if port2 and int(port2) in CONTROL_PLANE_PORTS:
        return f"port {port2} is a container/cluster control-plane API"
    return _target_host(host2, "--connect-to target") if host2 else None


@lru_cache(maxsize=4096)  # pure in the value; the same URLs, targets and paths recur
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


@lru_cache(maxsize=4096)  # pure in the value; the same URLs, targets and paths recur
def _workpath(value: str) -> str | None:
    """Paths a read-mostly tool may name: not system directories, dot-dirs or parent escapes.

    The deny rules run on the normalised path AND the typed one, so neither ``//etc`` nor
    ``/./etc`` nor ``out/../../etc`` slips past a prefix test.
    """
    if not value or value.startswith("-"):
        return f"{value!r} is not a path"
    if "://" in value:  # az://container/..., https://account.blob...: remote storage, read with credentials
        return f"{value!r} is a URL, not a local path (reading remote storage needs approval)"
    for p in (value, _normpath(value)):
        if _PATH_PREFIX_DENY.search(p) or "/.." in p or re.search(r"(^|/)\.[^./]", p):
            return f"path {value!r} points into a system, hidden or parent directory"
    return None


def _outdir(value: str) -> str | None:
    """Where a tool may WRITE: a path that is not a system, hidden or parent directory. Whether it is
    inside the session's own directory (the shell's working directory) is checked with the context
    (``_local.check_forensics_outputs``): the table alone cannot know where the session lives."""
    return _workpath(value)


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
