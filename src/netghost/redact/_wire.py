"""Span rules for clear-text credentials in decoded captures: what tshark (one-line and ``-V``), ``tshark -z
follow`` streams and ``tcpdump -A``/``-v`` print for FTP, POP3, IMAP, SMTP, Redis, HTTP, SNMP and LDAP.

Protocol commands are matched where a decoder puts them (at the start of a line, after ``Request:``, after
a timestamp), and the value must end the line, so prose (``packets pass through the NSG``) does not match.
SASL mechanism names (``AUTH PLAIN``, ``AUTH LOGIN``) are not secrets; the base64 that follows them is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from netghost.redact._span_rule import Haystack, SpanRule, val

__all__ = ["WIRE_RULES", "cookie_spans", "resp_auth_spans"]

V = val()
_MECHANISMS = frozenset(
    {"plain", "login", "cram-md5", "digest-md5", "xoauth2", "oauthbearer", "gssapi", "ntlm", "external",
     "anonymous", "scram-sha-1", "scram-sha-256", "failed", "required", "ok", "successful", "error", "completed"}
)  # fmt: skip
_B64 = r"[A-Za-z0-9+/]{4,}={0,2}"
_PF_WORDS = frozenset({"in", "out", "all", "quick", "log", "through", "on", "from", "to", "inet", "inet6", "proto"})


def _not_mechanism(match: re.Match[str]) -> bool:
    return match.group("v").lower() not in _MECHANISMS


def _not_path(match: re.Match[str]) -> bool:
    """``PASS  src/app.test.js`` is a test runner's verdict, not an FTP password."""
    value = match.group("v")
    return re.fullmatch(r"[\w.-]*/[\w./-]*\.\w{1,4}", value) is None


def _r(regex: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(regex, flags)


WIRE_RULES: tuple[SpanRule, ...] = (
    SpanRule(
        "password",
        _r(r"(?m)(?:^|(?<=[\s:>.]))PASS[ \t]+(?P<v>[^\s\\]+?)(?:\\r\\n|\.\.)?[ \t]*\r?$"),
        "FTP and POP3 'PASS secret' (tshark 'Request: PASS x', follow streams, tcpdump 'FTP: PASS x', and "
        "tcpdump -A, which prints CR LF as '..')",
        ("pass",),
        check=_not_path,
    ),
    SpanRule(
        "password",
        _r(r"(?m)^[ \t]*pass[ \t]+(?P<v>[^\s\\]+)(?:\\r\\n)?[ \t]*\r?$"),
        "a POP3 client typing 'pass secret' in lower case (not a pf rule 'pass out')",
        ("pass",),
        check=lambda m: m.group("v").lower() not in _PF_WORDS,
    ),
    SpanRule(
        "password",
        _r(r"(?im)Request command:[ \t]*PASS[ \t]*\r?\n[ \t]*Request arg:[ \t]*(?P<v>[^\r\n]+?)[ \t]*\r?$"),
        "tshark -V FTP 'Request command: PASS' / 'Request arg: secret'",
        ("request command: pass",),
        line=False,
        window=1,
    ),
    SpanRule(
        "password",
        _r(
            r"(?m)(?:^[ \t]*|(?<=[\s:]))AUTH[ \t]+(?:(?P<u>[^\s\\]+)[ \t]+)?(?P<v>[^\s\\]+)(?:\\r\\n)?[ \t]*\r?$"
            r"|^[ \t]*auth[ \t]+(?P<v2>[^\s\\]+)[ \t]*\r?$"
        ),
        "Redis 'AUTH [user] password' (a lower-case 'auth' with one argument only: PAM lines have three), "
        "and SMTP 'AUTH PLAIN <base64>' (mechanism names are kept)",
        ("auth",),
        check=lambda m: _not_mechanism(m) and not (m.group("v") or m.group("v2") or "").endswith(".so"),
    ),
    SpanRule(
        "password",
        _r(r"(?m)^[ \t]*(?:requirepass|masterauth)[ \t]+" + V),
        "redis.conf 'requirepass' and 'masterauth'",
        ("requirepass", "masterauth"),
    ),
    SpanRule(
        "password",
        _r(r"(?m)^[ \t]*user[ \t]+\S+[^\r\n]*?[ \t]>(?P<v>\S+)"),
        "Redis ACL 'user NAME on >password ...'",
        ("user",),
    ),
    SpanRule(
        "password",
        _r(r"(?i)\bCredentials:[ \t]*[^\s:]+:(?P<v>[^\s\\]+)"),
        "tshark decodes HTTP Basic into 'Credentials: user:password'",
        ("credentials:",),
    ),
    SpanRule(
        "password",
        _r(
            r"(?m)^[ \t]*(?:(?:\S+[ \t]+){0,2}?LOGIN|(?:[A-Za-z]{0,2}\d+|\.)[ \t]+(?i:login))[ \t]+"
            r"(?:\"[^\"\r\n]*\"|\S+)[ \t]+" + V + r"[ \t]*(?:\\r\\n)?\r?$"
        ),
        "IMAP 'TAG LOGIN user password' (quoted or not; a 'C:' direction mark may come first; a lower-case "
        "'login' only after a tag, so a log line 'Failed login root 10.0.0.4' is not one)",
        ("login",),
        check=_not_mechanism,
    ),
    SpanRule(
        "password",
        _r(r"(?i)334[ \t]+(?:UGFzc3dvcmQ6|cGFzc3dvcmQ6)[ \t]*\r?\n(?P<v>" + _B64 + ")"),
        "SMTP AUTH LOGIN: the base64 line after the server's '334 Password:' prompt",
        ("334",),
        line=False,
        window=1,
    ),
    SpanRule(
        "password",
        _r(
            r"(?im)(?:AUTH[ \t]+PLAIN|AUTHENTICATE[ \t]+(?:PLAIN|LOGIN))[ \t]*\r?\n(?:(?:334|\+)[ \t]*\r?\n)?"
            r"(?P<v>" + _B64 + r")[ \t]*\r?$"
        ),
        "SMTP 'AUTH PLAIN' and IMAP 'AUTHENTICATE PLAIN' with the credentials on the next line",
        ("auth plain", "authenticate plain", "authenticate login"),
        line=False,
        window=2,
    ),
    SpanRule(
        "password",
        _r(r"(?i)\bAUTHENTICATE[ \t]+(?:PLAIN|XOAUTH2|OAUTHBEARER)[ \t]+(?P<v>" + _B64 + ")"),
        "IMAP SASL-IR 'AUTHENTICATE PLAIN <base64>'",
        ("authenticate",),
    ),
    SpanRule(
        "password",
        _r(r"(?m)^[ \t]*simple:[ \t]*(?P<v>[^\r\n]+?)[ \t]*\r?$"),
        "tshark LDAP bindRequest 'simple: password'",
        ("simple:",),
    ),
    SpanRule(
        "password",
        _r(r"(?i)\b(?:NTLMv2 Response|NTProofStr|NTLM Response)[ \t]*:[ \t]*(?P<v>[0-9a-f]{32,})"),
        "NTLM challenge responses decoded by tshark (NetNTLMv2 is cracked offline like a hash)",
        ("ntlm", "ntproofstr"),
    ),
    SpanRule(
        "password",
        _r(r"(?im)^[^\r\n]*\bpassword:[ \t]*\r?\n(?P<v>[^\s]{3,})[ \t]*\r?$"),
        "a follow-stream 'Password:' prompt whose answer is the next line (telnet, FTP servers, login shells)",
        ("password:",),
        line=False,
        window=1,
    ),
    SpanRule(
        "snmp_community",
        _r(r"(?<![\w])C=(?P<vq>\")?(?P<v>(?(vq)[^\"\r\n]+|\S+))(?(vq)\")[ \t]+(?:Get|Set|Trap|Inform|Response|Report|V2Trap)"),
        "tcpdump prints an SNMP community as 'C=\"secret\" GetRequest(28)'",
        ("c=",),
    ),
    SpanRule(
        "snmp_community",
        _r(r"(?im)^[ \t]*community:[ \t]*(?P<v>\S+)[ \t]*\r?$"),
        "tshark -V SNMP 'community: secret'",
        ("community",),
    ),
)

_COOKIE_LINE = re.compile(r"(?im)\b(?:set-)?cookie(?:[ \t]+pair)?[ \t]*:[ \t]*(?P<rest>[^\r\n]*)")
_COOKIE_PAIR = re.compile(r"(?P<name>[^=;,\s]+)=(?P<v>[^;\s\\\"']*)")
_COOKIE_ATTRS = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority", "partitioned", "version",
     "comment"}
)  # fmt: skip


def cookie_spans(text: str, hay: Haystack) -> Iterator[tuple[int, int]]:
    """Every cookie value in ``Cookie:``, ``Set-Cookie:``, tshark ``Cookie pair:`` and HTTP/2 ``cookie:``
    headers, from four characters on (``lang=en``, ``x=1`` are preferences); cookie names and attributes (``Path``, ``Expires``) are kept, and a
    ``--flag=value`` is not a cookie (a header hiding a curl option must stay visible)."""
    if not hay.has("cookie"):
        return
    for line in _COOKIE_LINE.finditer(text):
        for pair in _COOKIE_PAIR.finditer(text, line.start("rest"), line.end("rest")):
            name, value = pair.group("name"), pair.group("v")
            if len(value) >= 4 and not name.startswith("-") and name.lower() not in _COOKIE_ATTRS:
                yield pair.start("v"), pair.end("v")


_RESP_AUTH = re.compile(r"\*(?P<n>[23])(?P<sep>\r?\n|\.\.)\$4(?P=sep)(?i:auth)(?P=sep)")
_RESP_LEN = re.compile(r"\$(?P<len>\d{1,4})(?:\r?\n|\.\.)")


def resp_auth_spans(text: str, hay: Haystack) -> Iterator[tuple[int, int]]:
    """Redis ``AUTH [user] password`` in RESP framing (``*2 $4 AUTH $n secret``), as a follow stream prints it
    (CR LF) or as ``tcpdump -A`` does (``..``); the ``$n`` length says exactly where the password ends."""
    if not hay.has("auth") or not hay.has("*"):
        return
    for match in _RESP_AUTH.finditer(text):
        pos = match.end()
        for arg in range(int(match.group("n")) - 1):
            size = _RESP_LEN.match(text, pos)
            if size is None:
                break
            start, end = size.end(), size.end() + int(size.group("len"))
            if arg == int(match.group("n")) - 2 and end <= len(text):
                yield start, end
            pos = end + len(match.group("sep"))
