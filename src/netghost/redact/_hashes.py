"""Span rules for password hashes and session keys.

A password hash is a secret: it is cracked offline (``/etc/shadow``, ``.htpasswd``, an LDIF
``userPassword``, a database's user table, a pwdump line). Formats: crypt(3) (``$1$`` md5, ``$5$``/``$6$``
sha, ``$2b$`` bcrypt, ``$y$`` yescrypt, ``$7$`` scrypt, ``$argon2id$``), Apache ``$apr1$`` and ``{SHA}``,
LDAP ``{SSHA}``, Django ``pbkdf2_sha256$``, MySQL ``*HEX``, PostgreSQL ``md5HEX`` and SCRAM, NTLM, GRUB.
A session key decrypts captured traffic: NSS key-log lines (``CLIENT_RANDOM``, TLS 1.3 traffic secrets),
``openssl s_client``'s ``Master-Key``, and ``ip xfrm state`` ESP keys; and the private members of a JWK. Content digests (``sha256sum``,
git, ``Content-MD5``) are not hashes of a secret and have none of these shapes.
"""

from __future__ import annotations

import re

from netghost.redact._span_rule import SpanRule

__all__ = ["HASH_RULES"]

_C = r"[./0-9A-Za-z]"
_LOCKED = re.compile(r"[!*]*(?:LK\*?|NP|x)?")
_WORDY = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*")


def _shadow(match: re.Match[str]) -> bool:
    """A shadow password field that holds a hash: not empty, locked (``!``, ``*``, ``!!``) or ``x``."""
    return _LOCKED.fullmatch(match.group("v")) is None


def _des(match: re.Match[str]) -> bool:
    """A 13-character DES crypt, not a CamelCase word (``Status:Unavailable``)."""
    value = match.group("v")
    return _WORDY.fullmatch(value) is None and not value.isalpha()


def _r(regex: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(regex, flags)


HASH_RULES: tuple[SpanRule, ...] = (
    SpanRule(
        "password_hash",
        _r(
            r"(?<![\w$])(?P<v>\$(?:1|5|6|md5|apr1)\$(?:rounds=\d+\$)?" + _C + r"{1,16}\$" + _C + r"{22,86}"
            r"|\$2[abxy]?\$\d\d\$" + _C + r"{53}"
            r"|\$(?:y|gy|7)\$" + _C + r"+\$" + _C + r"+(?:\$" + _C + r"+)?"
            r"|\$[89]\$" + _C + r"{14}\$" + _C + r"{43}"
            r"|\$argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+"
            r"|\$pbkdf2(?:-sha\d+)?\$\d+\$[./0-9A-Za-z+=]+\$[./0-9A-Za-z+=]+"
            r"|\$sha(?:256|512)\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+"
            r"|\$[PH]\$" + _C + r"{31}"
            r"|\$1[a-e]\$[^\s$]{20,}\$"
            r"|\$krb5(?:tgs|asrep|pa)\$[^\s\"']{20,})"
        ),
        "crypt(3), bcrypt, yescrypt, scrypt, argon2, pbkdf2, ASA pbkdf2, phpass, Huawei and Kerberos hashes",
        ("$",),
    ),
    SpanRule(
        "password_hash",
        _r(r"%(?:\^%#|@%@|\$%\$)(?P<v>\S{8,}?)%(?:\^%#|@%@|\$%\$)"),
        "Huawei '%^%#...%^%#' / '%@%@...%@%@' cipher values",
        ("%^%#", "%@%@", "%$%$"),
    ),
    SpanRule(
        "password_hash",
        _r(
            r"(?i)\{(?:SSHA|SHA|SSHA256|SSHA512|SHA256|SHA512|MD5|SMD5|CRYPT|PBKDF2(?:-SHA\d+)?|X-PBKDF2|ARGON2|"
            r"BCRYPT|CLEARTEXT|PLAIN)\}(?P<v>[^\s\"',]{4,})"
        ),
        "LDAP and Apache '{SCHEME}value' passwords (the scheme name is kept)",
        ("}",),
        line=False,
    ),
    SpanRule(
        "password_hash",
        _r(r"(?im)^[ \t]*userPassword::?[ \t]*(?P<v>\S+)"),
        "LDIF userPassword, in clear or as '::' base64",
        ("userpassword",),
    ),
    SpanRule(
        "password_hash",
        _r(
            r"\b(?P<v>(?:pbkdf2_sha(?:1|256)|argon2|bcrypt_sha256|bcrypt|scrypt|unsalted_md5|crypt)\$[^\s\"',]{16,})"
        ),
        "Django password hashes 'algorithm$iterations$salt$hash'",
        ("$",),
    ),
    SpanRule(
        "password_hash",
        _r(r"(?<![\w*])(?P<v>\*[0-9A-F]{40})(?![\w])"),
        "MySQL native password hashes ('*' and 40 upper-case hex)",
        ("*",),
    ),
    SpanRule(
        "password_hash",
        _r(r"\b(?P<v>md5[0-9a-f]{32}|SCRAM-SHA-256\$\d+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+)"),
        "PostgreSQL rolpassword hashes (md5, SCRAM-SHA-256)",
        ("md5", "scram"),
    ),
    SpanRule(
        "password_hash",
        _r(r"(?m)^[^:\s]+:\d+:(?P<v2>[0-9a-fA-F]{32}):(?P<v>[0-9a-fA-F]{32}):::"),
        "pwdump/secretsdump 'user:rid:LM:NT:::' lines",
        (":::",),
    ),
    SpanRule(
        "password_hash",
        _r(r"\b(?P<v>grub\.pbkdf2\.sha512\.\d+\.[0-9A-Fa-f]+\.[0-9A-Fa-f]+)"),
        "GRUB password_pbkdf2 hashes",
        ("grub.pbkdf2",),
    ),
    SpanRule(
        "password_hash",
        _r(r"(?m)^[ \t]*[A-Za-z_][\w.-]*\$?:(?P<v>[^:\s]+):\d*:\d*:\d*:\d*:\d*:\d*:[^:\s]*[ \t]*\r?$"),
        "/etc/shadow lines 'name:HASH:lastchg:min:max:warn:inactive:expire:' (any hash format, DES too)",
        (":::", ":99999:", ":0:"),
        check=_shadow,
    ),
    SpanRule(
        "password_hash",
        _r(r"(?m)^[ \t]*[\w.@-]{1,64}:(?P<v>" + _C + r"{13})[ \t]*\r?$"),
        "htpasswd DES-crypt entries 'user:13 characters', in a text that starts like an htpasswd listing",
        (":",),
        line=False,
        gate=_r(r"\s*[\w.@-]{1,64}:[^\s:]+[ \t]*\r?(?:\n|\Z)"),
        check=_des,
    ),
    # --- session keys ---------------------------------------------------------------------------------
    SpanRule(
        "tls_secret",
        _r(
            r"(?i)\b(?:CLIENT_RANDOM|PMS_CLIENT_RANDOM|CLIENT_EARLY_TRAFFIC_SECRET|CLIENT_HANDSHAKE_TRAFFIC_SECRET|"
            r"SERVER_HANDSHAKE_TRAFFIC_SECRET|CLIENT_TRAFFIC_SECRET_\d+|SERVER_TRAFFIC_SECRET_\d+|"
            r"EARLY_EXPORTER_(?:MASTER_)?SECRET|EXPORTER_(?:MASTER_)?SECRET|ECH_SECRET)[ \t]+[0-9a-fA-F]{16,}[ \t]+"
            r"(?P<v>[0-9a-fA-F]{16,})"
            r"|\bRSA[ \t]+[0-9a-fA-F]{16}[ \t]+(?P<v2>[0-9a-fA-F]{96})"
        ),
        "NSS key-log lines (SSLKEYLOGFILE): the last field decrypts the session; the client random is public",
        ("client_random", "_secret", "rsa"),
    ),
    SpanRule(
        "tls_secret",
        _r(r"(?i)\b(?:Master-Key|Resumption PSK|Early data key)[ \t]*:[ \t]*(?P<v>[0-9A-Fa-f]{32,})"),
        "openssl s_client session 'Master-Key:' and 'Resumption PSK:'",
        ("master-key", "resumption psk", "early data key"),
    ),
    SpanRule(
        "private_key",
        _r(r"\"(?:d|p|q|dp|dq|qi|k|priv)\"\s*:\s*\"(?P<v>[A-Za-z0-9_\-+/=]{8,})\""),
        "the private members of a JSON Web Key (RSA d, p, q, dp, dq, qi; EC d; symmetric k); n, e, x, y are public",
        ('"kty"',),
        line=False,
    ),
    SpanRule(
        "private_key",
        _r(r"\((?P<v>0x[0-9a-fA-F]{32,})\)"),
        "Kerberos keytab keys printed by 'klist -k -K' ('(0x...)' after the encryption type)",
        ("(0x",),
    ),
    SpanRule(
        "session_key",
        _r(r"(?m)^[ \t]*(?:enc|auth|auth-trunc|aead|comp)[ \t]+\S+[ \t]+0x(?P<v>[0-9a-fA-F]{16,})"),
        "ESP keys in 'ip xfrm state' output (enc, auth, auth-trunc, aead)",
        ("0x",),
    ),
)
