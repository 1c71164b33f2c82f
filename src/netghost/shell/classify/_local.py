"""Tier 1 checks that need more than an option table: ``ip`` object/command grammar, the
forensics engine spellings (``python pcap_forensics.py``, ``python -m netghost.forensics``) and
curl's cross-option rules.

Why separate from the tables: ``ip`` takes single-dash long options with its own prefix
matching (``-br`` = ``-brief``, ``-b`` = ``-batch``) and then an OBJECT and a COMMAND, where only
``show``/``list``/``get`` forms are read-only; python is an interpreter where only two exact
entry points are the forensics engine.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence

from netghost.shell.classify._options import OptionSpec, ParsedOptions, parse_options

__all__ = ["check_curl", "check_forensics_outputs", "check_ip", "check_python", "is_forensics_call"]

# Exact spellings only: iproute2 resolves prefixes in code order, so -b means -batch (reads a
# file), -n means -netns and -f may be -force. Anything not listed here is not auto-run.
_IP_OPTIONS = frozenset({
    "-4", "-6", "-0", "-br", "-brief", "-s", "-stats", "-statistics", "-d", "-details", "-o", "-oneline",
    "-r", "-resolve", "-c", "-color", "-color=auto", "-color=never", "-color=always", "-j", "-json", "-p",
    "-pretty", "-h", "-human", "-human-readable", "-iec", "-t", "-timestamp", "-ts", "-tshort", "-a", "-all",
    "-N", "-Numeric", "-V", "-Version",
})  # fmt: skip
_METADATA_HEADER = re.compile(r"\s*metadata\s*[:;]", re.I)
# A URL naming IMDS literally; its path/query are vetted by check_url's instance allowlist.
_IMDS_INSTANCE_URL = re.compile(r"(https?://)?169\.254\.169\.254(:80)?/metadata/instance[^?#]*(\?[^#]*)?", re.I)
_IP_FAMILIES = frozenset({"inet", "inet6", "link", "bridge", "mpls"})
_IP_OBJECTS = {
    "a": "address", "addr": "address", "address": "address", "l": "link", "link": "link", "r": "route",
    "ro": "route", "route": "route", "ru": "rule", "rule": "rule", "n": "neigh", "neigh": "neigh",
    "neighbor": "neigh", "neighbour": "neigh", "maddr": "maddress", "maddress": "maddress",
    "mroute": "mroute", "netconf": "netconf", "ntable": "ntable", "tunnel": "tunnel", "tun": "tunnel",
    "tcp_metrics": "tcp_metrics", "tcpmetrics": "tcp_metrics", "vrf": "vrf", "nexthop": "nexthop",
    "nh": "nexthop", "stats": "stats", "token": "token", "netns": "netns",
}  # fmt: skip
_IP_READ_COMMANDS = frozenset({"show", "list", "lst"})
_IP_GET_OBJECTS = frozenset({"route", "neigh", "nexthop"})
_IP_DENIED_OBJECTS = {
    "xfrm": "ip xfrm state prints IPsec keys",
    "monitor": "ip monitor never terminates",
    "mptcp": "not a diagnostic object",
}


def check_ip(args: Sequence[str]) -> str | None:
    """Return why ``ip ARGS`` is not a read-only show/list/get form, or None when it is."""
    # iproute2 strips one dash from a double-dash option (`--json` is `-json`).
    args = [a[1:] if a.startswith("--") and len(a) > 2 else a for a in args]
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-f", "-family") and i + 1 < len(args) and args[i + 1] in _IP_FAMILIES:
            i += 2
            continue
        if args[i] not in _IP_OPTIONS:
            return f"ip option {args[i]} is not on the allowlist (-b/-batch reads a file, -n/-netns switches namespace, -force)"
        i += 1
    if i >= len(args):
        return "ip needs an object (address, link, route, ...)"
    word = args[i]
    obj = _IP_OBJECTS.get(word)
    if obj is None:
        return _IP_DENIED_OBJECTS.get(word, f"ip object {word!r} is not on the allowlist")
    rest = args[i + 1 :]
    if not rest:
        return None  # `ip OBJECT` alone means show/list
    cmd = rest[0]
    if cmd in _IP_READ_COMMANDS or (cmd == "get" and obj in _IP_GET_OBJECTS):
        bad = [a for a in rest[1:] if a.startswith("-") or a in ("exec", "add", "delete", "del", "set", "flush", "change", "replace")]
        return None if not bad else f"ip {obj} {cmd}: unexpected argument {bad[0]!r}"
    if obj != "netns" and cmd in ("dev", "to", "table", "scope", "up", "label", "type", "vrf", "from"):
        return None if all(not a.startswith("-") and a not in ("exec", "add", "delete", "set", "flush") for a in rest) else "ip: unexpected argument"
    return f"`ip {obj} {cmd}` is not a show/list form (it may change the network configuration)"


def is_forensics_call(args: Sequence[str]) -> bool:
    """True when python ``args`` name the forensics engine (so its arguments get checked)."""
    return (len(args) >= 1 and args[0] == "pcap_forensics.py") or tuple(args[:2]) == ("-m", "netghost.forensics")


def check_python(args: Sequence[str], forensics: OptionSpec, cwd: str | None = None) -> str | None:
    """Only the forensics engine is SAFE under python: ``pcap_forensics.py`` or ``-m netghost.forensics``
    (the shell runs the installed engine for either spelling, never a file of that name)."""
    if len(args) >= 1 and args[0] == "pcap_forensics.py":
        return _forensics(args[1:], forensics, cwd)
    if len(args) >= 2 and args[0] == "-m" and args[1] == "netghost.forensics":
        return _forensics(args[2:], forensics, cwd)
    return "python runs only the forensics engine automatically (pcap_forensics.py or -m netghost.forensics)"


def _forensics(args: Sequence[str], spec: OptionSpec, cwd: str | None) -> str | None:
    parsed = parse_options(spec, args)
    return parsed.problem or check_forensics_outputs(parsed, cwd)


_ENGINE_OUTPUTS = ("--out", "--report-dir", "--semantic-dir")


def check_forensics_outputs(parsed: ParsedOptions, cwd: str | None) -> str | None:
    """The engine writes only inside the session's own directory (the shell's working directory): a
    relative path without ``..``, or an absolute one under ``cwd``. Anywhere else (the product's source
    tree, /tmp, a home) is a write a human approves."""
    for opt in _ENGINE_OUTPUTS:
        for value in parsed.values(opt):
            if not value.startswith("/"):
                continue  # relative: the option table refused `..`, hidden and system paths
            norm = posixpath.normpath(value)
            norm = "/" + norm.lstrip("/") if norm.startswith("//") else norm
            base = posixpath.normpath(cwd) if cwd else None
            if base is None or not (norm == base or norm.startswith(base.rstrip("/") + "/")):
                where = f"the session directory {base}" if base else "the session directory (a relative path)"
                return f"{opt} {value!r} writes outside {where}"
    return None


def _require_read_file(parsed: ParsedOptions) -> str | None:
    """tcpdump/tshark run automatically only in their read shape: ``-r FILE`` (never a live capture)."""
    if not parsed.has("-r"):
        return "only reading a capture file (-r FILE) runs automatically; a live capture needs approval"
    return None


def check_curl(parsed: ParsedOptions) -> str | None:
    """Cross-option rules that no single value check can see.

    - At least one URL.
    - (Redirects are never followed: ``-L`` and its relatives are denied in the option table, since
      a redirect goes wherever the server points, past every check on the typed URL.)
    - The ``Metadata`` header is the key to IMDS: it is allowed only towards the allowlisted
      read-only instance paths on 169.254.169.254 itself (each URL is also checked on its own),
      never with --resolve/--connect-to, which could point any name at the token endpoint.
    """
    urls = parsed.positionals + parsed.values("--url")
    if not urls:
        return "curl needs a URL"
    headers = parsed.values("-H")
    if any(_METADATA_HEADER.match(h) for h in headers):
        if parsed.has("--resolve", "--connect-to"):
            return "the Metadata header must not be combined with --resolve/--connect-to"
        if not all(_IMDS_INSTANCE_URL.fullmatch(u) for u in urls):
            return "the Metadata header may only go to the read-only IMDS instance paths on 169.254.169.254"
    return None


LocalCheck = Callable[[ParsedOptions], str | None]
POST_CHECKS: Mapping[str, LocalCheck] = {"curl": check_curl, "tcpdump": _require_read_file, "tshark": _require_read_file}
