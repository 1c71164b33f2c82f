"""Public material that looks like secrets: found first, and never replaced.

A WireGuard or SSH public key, a certificate, a JWK modulus, a thumbprint, an ARM ``$skipToken`` or a Key
Vault reference has the shape of a key (long base64, 40 hex) or sits under a secret-sounding name
(``"value": "@Microsoft.KeyVault(...)"`` of ``DB_PASSWORD``). Replacing them destroys what an engineer
needs (which key a peer uses, which certificate expired, where the next page is) and hides nothing.
:func:`public_spans` returns their places; the redactor skips every replacement that overlaps one.
Each span covers the public *value* only, never its line, so a secret beside it is still found.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from netghost.redact._span_rule import Haystack

__all__ = ["is_reference", "public_spans"]

_KEY_LABEL = re.compile(
    r"(?i)(?:\bpublic[ _-]?key\w*|\bpubkey|\bpeer|\[wireguard-peer\.|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|"
    r"sk-[\w-]+@openssh\.com))[\"']?[ \t]*[:=]?[ \t]*[\"']?(?P<v>[A-Za-z0-9+/]{40,}={0,2})(?![A-Za-z0-9+/=])"
)
_JWK_MEMBER = re.compile(r"\"(?:n|e|x|y|kid|x5t|x5t#S256|x5u|crv|kty|alg|use)\"\s*:\s*\"(?P<v>[^\"\\]+)\"")
_JWK_X5C = re.compile(r"\"x5c\"\s*:\s*\[(?P<v>[^\]]*)\]")
_PAGING = re.compile(
    r"(?i)(?:\$?skip_?token|continuation_?token|next_?marker|next[ _]?link|odata\.nextlink|x-ms-continuation|"
    r"next marker)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<v>[^\"'\s,}]+)"
    r"|[?&](?:%24|\$)?skip_?token=(?P<v2>[^&\"'\s]+)"
)
_KV_REFERENCE = re.compile(r"@Microsoft\.KeyVault\((?P<v>[^)\r\n\"]*)\)")
_THUMBPRINT = re.compile(
    r"(?i)(?:thumbprint\w*|x5t(?:#S256)?|(?:sha-?(?:1|256)|md5)?[ _-]?fingerprint|customKeyIdentifier|"
    r"keyIdentifier)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<v>[A-Fa-f0-9:]{32,}|[A-Za-z0-9_\-+/]{20,}={0,2})"
)
_CERT_FIELD = re.compile(
    r"(?i)[\"']?(?:cer|x5c|certificate|cert|certdata|publicKeyCertificate|public_?key|keydata|"
    r"certificate-authority-data|client-certificate-data|caBundle|ca\.crt|tls\.crt)[\"']?[ \t]*[:=][ \t]*\[?"
    r"\s*[\"']?(?P<v>[A-Za-z0-9+/]{40,}={0,2})"
)
_PEM_PUBLIC = re.compile(
    r"-----BEGIN (?P<label>CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|X509 CRL|CERTIFICATE REQUEST|NEW CERTIFICATE "
    r"REQUEST|TRUSTED CERTIFICATE|PGP PUBLIC KEY BLOCK|SSH2 PUBLIC KEY)-----(?:[A-Za-z0-9+/=\s:,.\-\"]|\\[nr])*?"
    r"-----END (?P=label)-----"
)
_REFERENCE = re.compile(
    r"(?i)^(?:@Microsoft\.KeyVault\(.*\)|\[(?:parameters|reference|variables|listKeys|listSecrets)\(.*\)\]|"
    r"secretref:\S+|keyvaultref:\S+|kv://\S+|vault:\S+|\$\(\w+\)|#\{\w+\}#?)$"
)


def is_reference(value: str) -> bool:
    """A value that names where a secret is (Key Vault reference, ARM expression, ``secretref:``)."""
    return _REFERENCE.match(value.strip()) is not None


def _der_is_public(value: str) -> bool:
    """A base64 DER value that is a certificate or a public key, not a PKCS#12 bundle or a private key."""
    data = value[:16]
    try:
        head = base64.b64decode(data + "=" * (-len(data) % 4))
    except (binascii.Error, ValueError):
        return False
    if len(head) < 8 or head[0] != 0x30:
        return False
    body = head[2 + (head[1] & 0x7F if head[1] & 0x80 else 0) :]
    return body[:1] == b"\x30"  # a certificate or SPKI opens with a SEQUENCE; PKCS#12/PKCS#8 with INTEGER


def public_spans(text: str, hay: Haystack) -> list[tuple[int, int]]:
    """Sorted (start, end) of the public values in ``text``."""
    spans: list[tuple[int, int]] = []
    spans.extend(_matches(_KEY_LABEL, text, ("public", "pubkey", "peer", "ssh-", "ecdsa-", "sk-"), hay))
    if hay.has('"kty"'):
        spans.extend(_matches(_JWK_MEMBER, text, ('"',), hay))
        spans.extend(_matches(_JWK_X5C, text, ('"x5c"',), hay))
    spans.extend(
        _matches(_PAGING, text, ("skip", "continuation", "marker", "nextlink", "next_link", "next link"), hay)
    )
    spans.extend(_matches(_KV_REFERENCE, text, ("@microsoft.keyvault(",), hay))
    spans.extend(_matches(_THUMBPRINT, text, ("thumbprint", "x5t", "fingerprint", "keyidentifier"), hay))
    for start, end in _matches(_CERT_FIELD, text, ("cer", "x5c", "cert", "public", "keydata", "cabundle", "crt"), hay):
        if _der_is_public(text[start:end]) or text.startswith("LS0tLS1CRUdJTiBDRVJU", start):
            spans.append((start, end))
    if hay.has("-----begin "):
        spans.extend((m.start(), m.end()) for m in _PEM_PUBLIC.finditer(text))
    return sorted(spans)


def _matches(
    pattern: re.Pattern[str], text: str, needles: tuple[str, ...], hay: Haystack
) -> Iterator[tuple[int, int]]:
    if not hay.any(needles):
        return
    for match in pattern.finditer(text):
        for group in ("v", "v2"):
            if group in pattern.groupindex and match.group(group) is not None:
                yield match.start(group), match.end(group)
