"""Context for the redactor: values whose *place* decides whether they are secret.

A base64 run of 88 characters ending in ``==`` is a storage key in ``az storage account keys list`` and an
ECDSA signature in ``dig +dnssec``; a key wrapped at 76 columns is a secret though no single line looks
like one. These finders look at what surrounds a value: DNS record types, DKIM tags, PEM headers, public-key
DER prefixes, token claims, and line wrapping.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from netghost.redact._rules import HASH_CONTEXT
from netghost.redact._values import _classes

__all__ = ["_B64_KINDS", "_find_wrapped", "_public_context"]

_WRAPPED = re.compile(
    r"(?m)^[ \t]*(?:[A-Za-z0-9+/]{76}|[A-Za-z0-9+/]{64})[ \t]*\r?\n"
    r"(?:[ \t]*[A-Za-z0-9+/]{64,76}[ \t]*\r?\n){0,200}[ \t]*[A-Za-z0-9+/]{1,76}={0,2}[ \t]*$"
)
# DER prefixes of public keys in base64: RSA/EC/Ed25519 SubjectPublicKeyInfo, PKCS#1 RSA public keys,
# X.509 certificates (MII... then the SEQUENCE of a certificate is too varied; certificates are caught by
# their PEM header instead), DNSSEC RSA keys (AwEAA = exponent 65537).
# DER prefixes of public keys in base64: RSA/EC/Ed25519 SubjectPublicKeyInfo, PKCS#1 RSA public keys,
# X.509 certificates (MII... then the SEQUENCE of a certificate is too varied; certificates are caught by
# their PEM header instead), DNSSEC RSA keys (AwEAA = exponent 65537).
_PUBLIC_PREFIXES = (
    "MIIBIjANBgkqhkiG9w0BAQEFAAOC", "MIICIjANBgkqhkiG9w0BAQEFAAOC", "MIIBojANBgkqhkiG9w0BAQEFAAOC",
    "MIGfMA0GCSqGSIb3DQEBAQUAA4GN", "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE", "MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE",
    "MCowBQYDK2VwAyEA", "MIIBCgKCAQEA", "MIICCgKCAgEA", "AwEAA",
)  # fmt: skip
# DNS records whose base64 data is a public key or a signature (RFC 4034/5155/6698/4255/7929/...).
_DNS_PUBLIC_RECORD = re.compile(
    r"\bIN\s+(?:RRSIG|SIG|DNSKEY|CDNSKEY|KEY|DS|CDS|DLV|NSEC3PARAM|NSEC3|TLSA|SMIMEA|SSHFP|OPENPGPKEY|"
    r"IPSECKEY|DHCID|CERT|ZONEMD|HIP|TA)\s"
)
_DKIM = re.compile(r"(?i)\bv=DKIM1\b|\bk=(?:rsa|ed25519)\s*;")
_PUBLIC_CLAIM = re.compile(
    r"[\"'](?:aio|rh|uti|puid|nonce|at_hash|c_hash|s_hash|xms_[a-z_]+)[\"']\s*:\s*[\"']$"
)
_B64_KINDS = frozenset({"azure_storage_key", "azure_key", "base64_blob"})
# DNS records whose base64 data is a public key or a signature (RFC 4034/5155/6698/4255/7929/...).


def _find_wrapped(
    view: str, add: Callable[[str, str], None], judge_text: Callable[[str], bool | None]
) -> None:
    """A key or blob wrapped at 64 or 76 columns (``base64``, MIME, PEM bodies): judged as one value.

    Each line alone is too short or unpadded for the shape rules, so the lines are joined, judged like an
    unwrapped value (88 chars ending ``==``: storage key; padded 40+: key; 200+: blob), and every line of
    a secret is then replaced. Certificates and public keys (PEM ``CERTIFICATE``/``PUBLIC KEY`` bodies,
    SPKI ``MII...`` prefixes) are not secrets and are kept. ``judge_text`` decides base64 of readable
    text (None: not text; True: text holding a secret, every line replaced; False: kept).
    """
    for match in _WRAPPED.finditer(view):
        pieces = match.group().split()
        width = len(pieces[0])
        if any(len(p) != width for p in pieces[:-1]) or len(pieces[-1]) > width:
            continue
        joined = "".join(pieces)
        before = view[max(0, match.start() - 300) : match.start()]
        if _public_block(joined, before) or _public_context(view, match.start(), joined):
            continue
        if HASH_CONTEXT.search(before[-48:]):
            continue
        verdict = judge_text(joined)
        if verdict is not None:
            for piece in pieces if verdict else ():
                add(piece, "encoded_secret")
            continue
        if len(joined) == 88 and joined.endswith("=="):
            kind = "azure_storage_key"
        elif 40 <= len(joined) <= 86 and joined.endswith("="):
            kind = "azure_key"
        elif len(joined) >= 200:
            kind = "base64_blob"
        else:
            continue
        if _classes(joined) < 2 or len(set(joined)) < 16:
            continue
        for piece in pieces:
            add(piece, kind)


def _public_block(joined: str, before: str) -> bool:
    """Whether a base64 value is a certificate, a public key or a DNS record's key/signature."""
    if joined.startswith(_PUBLIC_PREFIXES):
        return True
    begin = before.rfind("-----BEGIN ")
    return begin != -1 and "PRIVATE" not in before[begin : begin + 40] and "-----END" not in before[begin:]


def _public_context(view: str, start: int, value: str) -> bool:
    """Whether a base64 value at ``start`` is public by context: a DNSSEC key or signature, a DKIM key.

    ``dig +dnssec`` prints RRSIG signatures and DNSKEY keys (88 characters with ``==`` for ECDSA P-256,
    exactly like a storage key), ``dig TXT`` prints DKIM public keys after ``p=``, and Entra ID tokens
    carry opaque non-secret claims (``aio``, ``rh``, ``uti``). Removing them makes DNS answers useless.
    """
    if _public_block(value, view[max(0, start - 8_000) : start]):  # public-key prefix or PEM cert body
        return True
    line_start = view.rfind("\n", 0, start) + 1
    line = view[line_start:start]
    if _DNS_PUBLIC_RECORD.search(line) or _DKIM.search(line) or _PUBLIC_CLAIM.search(line[-40:]):
        return True
    window = view[max(0, start - 2_000) : start]
    opened = window.rfind("(")
    if opened != -1 and ")" not in window[opened:]:  # inside a dig +multiline record
        record_line = window[window.rfind("\n", 0, opened) + 1 : opened + 1]
        return _DNS_PUBLIC_RECORD.search(record_line) is not None
    return False
