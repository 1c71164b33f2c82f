"""``openssl s_client`` as a network probe: a TLS handshake toward a host in the egress scope.

Why apart from ``_egress``: openssl has its own single-dash option grammar (``-connect``, ``-servername``),
and only the one subcommand is a probe. The shell gives it no standard input, so after the handshake it
sends nothing and exits; the options that read secrets (``-cert``, ``-key``, ``-pass``, ``-psk``), write files
(``-sess_out``, ``-keylogfile``), go through a proxy or wait for input (``-quiet``, ``-ign_eof``) are not
on the allowlist, and the TLS name it sends (SNI) must be in scope like the host.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from netghost.shell.classify._egress import ADMIN_PORTS, host_problem, name_problem
from netghost.shell.classify._scope import EgressScope

__all__ = ["check_openssl"]

_S_CLIENT_FLAGS = frozenset({
    "-showcerts", "-brief", "-verify_return_error", "-tls1", "-tls1_1", "-tls1_2", "-tls1_3", "-no_tls1",
    "-no_tls1_1", "-no_tls1_2", "-no_tls1_3", "-no_ssl3", "-status", "-msg", "-state", "-debug", "-crlf",
    "-prexit", "-reconnect", "-no_ticket", "-4", "-6", "-nbio", "-ct", "-noct", "-no_check_time", "-strict",
    "-x509_strict", "-partial_chain", "-legacy_renegotiation", "-no_legacy_server_connect", "-help",
    "-verify_quiet", "-nocommands", "-noservername", "-dtls", "-dtls1_2", "-tlsextdebug", "-trace",
})  # fmt: skip
_S_CLIENT_VALUES: Mapping[str, re.Pattern[str]] = {
    "-connect": re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253}):[0-9]{1,5}"),
    "-servername": re.compile(r"[A-Za-z0-9.-]{1,253}"),
    "-verify_hostname": re.compile(r"[A-Za-z0-9.*-]{1,253}"),
    "-verify": re.compile(r"[0-9]{1,2}"),
    "-verify_depth": re.compile(r"[0-9]{1,2}"),
    "-cipher": re.compile(r"[A-Za-z0-9:+!_-]{1,400}"),
    "-ciphersuites": re.compile(r"[A-Za-z0-9:_-]{1,400}"),
    "-sigalgs": re.compile(r"[A-Za-z0-9:+_-]{1,200}"),
    "-groups": re.compile(r"[A-Za-z0-9:_-]{1,200}"),
    "-curves": re.compile(r"[A-Za-z0-9:_-]{1,200}"),
    "-alpn": re.compile(r"(h2|http/1\.1|http/1\.0|h3)(,(h2|http/1\.1|http/1\.0|h3))*"),
    "-starttls": re.compile(r"smtp|pop3|imap|ftp|xmpp|xmpp-server|telnet|irc|postgres|mysql|lmtp|nntp|sieve|ldap"),
    "-port": re.compile(r"[0-9]{1,5}"),
    "-host": re.compile(r"[A-Za-z0-9.-]{1,253}"),
    "-timeout": re.compile(r"[0-9]{1,3}"),
}


def _options(args: Sequence[str]) -> dict[str, str] | str:
    """The valued options of ``s_client ARGS`` (flags checked and dropped), or why they are not allowed."""
    values: dict[str, str] = {}
    i = 1
    while i < len(args):
        a = args[i]
        name, eq, attached = a.partition("=")
        if name.startswith("--"):
            name = name[1:]  # openssl accepts --opt for -opt
        if name in _S_CLIENT_FLAGS and not eq:
            i += 1
            continue
        check = _S_CLIENT_VALUES.get(name)
        if check is None:
            return (f"openssl s_client option {a} is not on the allowlist (-cert/-key/-pass/-psk read secrets, "
                    "-sess_out/-keylogfile write files, -proxy and -quiet change where or how long it talks)")  # fmt: skip
        value = attached if eq else (args[i + 1] if i + 1 < len(args) else None)
        if value is None or not check.fullmatch(value):
            return f"openssl s_client {name}: value {value!r} is not an accepted form"
        values[name] = value
        i += 1 if eq else 2
    return values


def check_openssl(args: Sequence[str], scope: EgressScope) -> str | None:
    """``openssl s_client`` as a TLS handshake probe (no stdin is given, so it sends nothing after the
    handshake and exits), toward a host in scope; any other openssl command is not a tier-1 read."""
    if not args or args[0] != "s_client":
        return "only `openssl s_client` (a TLS handshake probe) runs automatically"
    values = _options(args)
    if isinstance(values, str):
        return values
    target = values.get("-connect")
    if target is None:
        host = values.get("-host")
        if host is None:
            return "openssl s_client needs -connect HOST:PORT"
        target = f"{host}:{values.get('-port', '443')}"
    host, _, port = target.rpartition(":")
    if int(port) in ADMIN_PORTS:
        return f"port {port} is an admin or secrets API"
    why, kind = host_problem(host, scope, "http")
    if why is not None:
        return why
    for name in ("-servername", "-verify_hostname"):
        sni = values.get(name)
        if sni is not None and sni.lower() != host.strip("[]").lower():
            why, _ = host_problem(sni, scope, "probe") if kind != "scope" else (name_problem(sni), "")
            if why is not None:
                return f"TLS name {sni}: {why}"
    return None
