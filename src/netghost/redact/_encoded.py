"""Base64 that decodes to text: judged by what the text says, not by how the base64 looks.

A random key never decodes to readable text (32 random bytes are all printable with odds of about
1e-14), so a base64 run that does decode to text is an *encoding* of that text: ``Y2xpZW50X3NlY3JldD0...``
is ``client_secret=...`` and is a secret, ``SGVsbG8sIHdvcmxkIQ==`` is ``Hello, world!`` and is not, though
both look like keys to the shape rules. ``docker``'s ``auth`` and HTTP Basic credentials are
``user:password`` in base64, SASL PLAIN (SMTP and IMAP ``AUTH PLAIN``) ``\0user\0password``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

__all__ = ["decoded_text", "find_encoded", "is_secret_text"]

# Runs of standard base64, 16+ characters (a plain class scan: lookarounds here cost more than the
# length and boundary checks done on the few matches).
_RUN = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_USER_PASS = re.compile(r"^[A-Za-z][\w.@+-]{0,63}:(?!\d+$)[^\s:]{4,}$")
_MAX_DECODE = 65_536
_SASL_PLAIN = re.compile(r"^[^\0]*\0[^\0]+\0[^\0]+$")


def decoded_text(value: str) -> str | None:
    """The text ``value`` is the base64 of, or None when it is not base64 of readable UTF-8 text."""
    if len(value) % 4 or len(value) > _MAX_DECODE:
        return None
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _SASL_PLAIN.match(text):  # SASL PLAIN (SMTP/IMAP AUTH): "authzid\0user\0password"
        text = text.split("\0", 1)[1].replace("\0", ":")
    if not text or not all(c.isprintable() or c in "\t\r\n" for c in text):
        return None
    return text if sum(c.isalpha() for c in text) * 4 >= len(text) else None


def find_encoded(
    view: str,
    add: Callable[[str, str], None],
    find: Callable[[str], dict[str, str]],
    is_public: Callable[[str, int, str], bool],
) -> None:
    """Base64 runs that decode to text holding a secret (``find`` judges the text) or to ``user:password``;
    ``is_public`` rules out runs in certificate bodies and DNS records."""
    for match in _RUN.finditer(view):
        value = match.group()
        if len(value) % 4 or view[match.start() - 1 : match.start()] in ("-", "_"):
            continue  # not whole standard base64 (or the tail of a URL-safe token)
        text = decoded_text(value)
        if text is None or is_public(view, match.start(), value):
            continue
        if is_secret_text(text, find):
            add(value, "encoded_secret")


def is_secret_text(text: str, find: Callable[[str], dict[str, str]]) -> bool:
    """Whether decoded text is a credential: ``user:password``, or text in which ``find`` finds one."""
    return _USER_PASS.match(text.strip()) is not None or bool(find(text))
