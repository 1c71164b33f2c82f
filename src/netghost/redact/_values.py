"""Value tests for the redactor: is this string worth replacing, does it look machine-made, does its label
make it a secret. Shared by :mod:`netghost.redact._find` and :mod:`netghost.redact._context`.
"""

from __future__ import annotations

import functools
import re

from netghost.redact._public import is_reference
from netghost.redact._rules import (
    KEY_EXCLUDED_SUFFIX,
    PLACEHOLDER,
    STRONG_KEY_NAME,
    UNCONDITIONAL_KEY_NAME,
    WEAK_KEY_NAME,
)

__all__ = [
    "MIN_SECRET_LEN",
    "_HEX",
    "_REPEAT",
    "_classes",
    "_label_kind",
    "_looks_random",
    "_usable",
    "_value_shaped",
]

MIN_SECRET_LEN = 6
_GUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")

_HEX = re.compile(r"^(?:0x)?[0-9a-fA-F]+$")

_REPEAT = re.compile(r"(.)\1{7,}")
_DATA_NAME = re.compile(r"(?:^|[_.-])(?:custom|user)[_-]?data$|^(?:custom|user)data$")
_B64_VALUE = re.compile(r"^[A-Za-z0-9+/]{16,}={0,2}$")
_BGP_COMMUNITY = re.compile(r"^\d+:\d+$")
# Values that name an authentication scheme or a SASL mechanism (AUTH=LOGIN in an IMAP capability line):
# not secrets under a name that only mentions authentication, but under a name that says the value IS
# the password or secret (clientSecret, DB_PASSWORD) they are that secret's value and are replaced.
_SCHEME_WORDS = frozenset(
    {"plain", "login", "basic", "bearer", "digest", "ntlm", "negotiate", "kerberos", "oauth", "oauth2", "xoauth2",
     "oauthbearer", "cram-md5", "digest-md5", "scram-sha-1", "scram-sha-256", "anonymous", "external", "gssapi"}
)  # fmt: skip
_VALUE_NAME = re.compile(r"secret|passw|pwd|token|key")
# Setting states: never a secret's value, whatever the name says (``password: required``).
_MODE_WORDS = frozenset({"required", "optional", "enabled", "disabled", "managedidentity", "serviceprincipal"})
_URL = re.compile(r"^[a-z][a-z0-9+.-]{1,15}://[^@\s?#]*$", re.IGNORECASE)


def _plain_url(value: str) -> bool:
    """A URL with no user info, no query and no long random path segment names an endpoint, not a secret
    (a Slack or Teams webhook carries its credential as a long path segment and stays a secret)."""
    if _URL.match(value) is None:
        return False
    return not any(len(seg) >= 20 and _classes(seg) >= 2 for seg in re.split(r"[/.:]", value))
_MASK_RUN = re.compile(r"([^0-9A-Za-z]|[xX])\1{7,}")

# Letters-only words joined by separators: "ProvisioningState/succeeded", "Microsoft.Network/virtualNetworks".
_WORDS = re.compile(r"^[A-Za-z]{2,}(?:[/_.:+-][A-Za-z]{2,})*$")


@functools.lru_cache(maxsize=4096)
def _name_class(lowered: str) -> str:
    """What a (lower-cased) name says about its value; cached, since output repeats its field names."""
    if UNCONDITIONAL_KEY_NAME.search(lowered):
        return "unconditional"
    if _DATA_NAME.search(lowered):
        return "data"
    if KEY_EXCLUDED_SUFFIX.search(lowered) or "public" in lowered or "ssh" in lowered:
        return "excluded"
    if STRONG_KEY_NAME.search(lowered):
        if lowered.startswith("conn") or "connectionstring" in lowered or "connection_string" in lowered:
            return "connection_string"
        return "password" if re.search(r"pass|pwd", lowered) else "secret"
    return "weak" if WEAK_KEY_NAME.search(lowered) else "plain"


def _label_kind(name: str, value: str, *, secret_cmd: bool) -> str | None:
    """The kind for ``name: value`` if the name marks the value as a secret, else None."""
    lowered = name.lower().strip("_-.")
    cls = _name_class(lowered)
    if cls == "excluded" or (cls == "plain" and not secret_cmd):
        return None
    value = value.strip()
    if not _usable(value) or _masked(value) or is_reference(value):
        return None
    if cls == "unconditional":
        return "secret"
    if cls == "data":  # customData: a base64 script, not a path or an expression
        return "custom_data" if _B64_VALUE.match(value) else None
    if lowered.endswith("community") and _BGP_COMMUNITY.match(value):
        return None
    word = value.strip("[](){};,.\"'").lower()
    if word in _MODE_WORDS or _plain_url(value):
        return None
    if word in _SCHEME_WORDS and not _VALUE_NAME.search(lowered):
        return None
    if secret_cmd and _looks_random(value):
        return "secret"
    if cls in ("connection_string", "password", "secret"):
        return cls
    if cls == "weak" and (secret_cmd or _looks_random(value) or _hex_key(lowered, value)):
        return "secret"
    return None


def _masked(value: str) -> bool:
    """A masked or dummy value (``********``, ``xxxxxxxx-xxxx``, ``sk-xxxxxxxxxx``, the zero GUID), not a run
    of repeated digits inside a real value (``Password=0000000012A``)."""
    return _MASK_RUN.search(value) is not None or len(set(value) - set("-_.:/ ")) <= 1


def _hex_key(name: str, value: str) -> bool:
    """Cognitive Services / APIM keys are 32 hex characters under a ``key``-named field; ExpressRoute
    authorization keys, Maps and Application Insights keys are GUIDs there (a GUID under ``id``,
    ``tenantId``, ``keyId`` ... is an identifier: those names never reach this test)."""
    if not re.search(r"keys?\d*$", name):
        return False
    return (len(value) >= 32 and _HEX.match(value) is not None) or _GUID.match(value) is not None


def _usable(value: str) -> bool:
    """A value worth replacing: long enough, not a placeholder, not all digits."""
    if len(value) < MIN_SECRET_LEN or PLACEHOLDER.match(value) or "[REDACTED" in value:
        return False
    return not value.isdigit()


def _classes(value: str) -> int:
    return sum(
        (any(c.isupper() for c in value), any(c.islower() for c in value), any(c.isdigit() for c in value))
    )


def _looks_random(value: str) -> bool:
    """A machine-made secret: long, one token, several character classes, not an id, hash or path."""
    if len(value) < 16 or re.search(r"\s", value) or len(set(value)) < 10 or _classes(value) < 2:
        return False
    if _GUID.match(value) or _HEX.match(value) or "://" in value or value.startswith(("/", "W/")):
        return False
    if re.match(r"^\d{4}-\d{2}-\d{2}", value) or _WORDS.match(value):
        return False
    if "." in value and "/" not in value and "+" not in value and "=" not in value:
        # Dotted names (hosts, namespaces, versions) are not secrets, but a dotted token with a long
        # random segment is (Direct Line / Bot Framework keys: "NqVwYS81VP7.d7FguoV8FWnF...").
        longest = max(value.split("."), key=len)
        return len(longest) >= 24 and _classes(longest) == 3 and len(set(longest)) >= 16
    return True


def _value_shaped(field: str) -> bool:
    """Under a key-listing command every key-like token is a secret, hex ones included (Cognitive
    Services and Search print 32 hex characters, upper or lower case, with no label in ``-o tsv``)."""
    return len(field) >= 16 and _HEX.match(field) is not None and not field.isdigit()
