"""JSON fields whose *name* makes their value a secret: found by position, replaced in place.

``az network vpn-connection show`` prints ``"sharedKey": "abc123"``, ``az functionapp keys list`` prints
``"functionKeys": {"default": "..."}``, ``az webapp config appsettings list`` prints
``{"name": "DB_PASSWORD", "value": "..."}``. Those values are secrets whatever they look like, even short
or low-entropy, so they cannot go through the value finders (which replace every occurrence of a value
and therefore need it long and specific). This module walks the JSON tokens of a text (a whole document
or JSON embedded in other text) and returns the *spans* of those values, which the redactor replaces in
place, leaving the JSON valid and every other field untouched. The names live in
:data:`netghost.redact._rules.JSON_FIELD_RULES`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from netghost.redact._public import is_reference
from netghost.redact._rules import JSON_FIELD_RULES, SECRET_SETTING_NAME

__all__ = ["FieldSecret", "field_kind", "find_field_secrets", "setting_kind"]

_SEP = r"[_.\- ]?"
_RULES = [(re.compile(rule.names.replace("_", _SEP), re.IGNORECASE), rule.kind) for rule in JSON_FIELD_RULES]
# The cheap gate: every secret field name holds one of these words (found with plain ``str.find`` on the
# lower-cased text), and a name/value pair needs a ``"name"``. Most output has neither with a value, and
# skips the token walk entirely.
_NAME_WORDS = ("key", "data", "string", "passw", "credentials", "secure", "protected")
_VALUE_AFTER = re.compile(r'\s*:\s*(?!null\b|true\b|false\b|""|\[\]|\{\})')
_PAIR_VALUE = re.compile(r'\s*:\s*"(?P<v>[^"\\\r\n]{1,128})"')
_TOKEN = re.compile(
    r'(?P<s>"(?:[^"\\\r\n]|\\.)*")|(?P<p>[{}\[\]:,])|(?P<n>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w.])'
    r"|[^\s{}\[\]:,\"]+|\""
)
# What an earlier redaction left: the only values under a secret name that stay (any other value, even
# "none" or "changeme", is what the service returned, so it is the secret).
_MARKER = re.compile(r"(?i)^(?:.*\[REDACTED(?::[a-z0-9_]+)?\].*|<redacted>|\*{3,})$")
# Names inside a secret object that are metadata, not the secret (kept): name, type, id, username ...
_METADATA = re.compile(
    r"(?i)(?:.*(?:id|ids|name|names|type|kind|uri|url|address|server|host|location|endpoint|time|date|"
    r"expiry|version|permissions|state|status|description)|slot_?setting|enabled)"
)


@dataclass(frozen=True)
class FieldSecret:
    """One value to replace: its span in the text (the string's contents without the quotes, or a whole
    number token), its kind, and the decoded value (for replacing its other occurrences too)."""

    start: int
    end: int
    kind: str
    value: str
    quote: bool
    """The span is a bare number: the replacement must add quotes to stay valid JSON."""


@dataclass
class _Frame:
    """One open object or array: the secret kind it inherits, and for objects its direct members."""

    is_object: bool
    kind: str | None
    key: str | None = None  # the last key seen in this object
    members: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # lower key -> (text, start, end)


@functools.lru_cache(maxsize=1024)
def field_kind(name: str) -> str | None:
    """The kind of a JSON field whose value is a secret by its name (``sharedKey`` -> ``shared_key``)."""
    for pattern, kind in _RULES:
        if pattern.fullmatch(name):
            return kind
    return None


@functools.lru_cache(maxsize=1024)
def setting_kind(name: str) -> str | None:
    if "public" in name.lower() or not SECRET_SETTING_NAME.match(name):
        return None
    lowered = name.lower()
    if "pass" in lowered or "pwd" in lowered:
        return "password"
    if "conn" in lowered or lowered == "azurewebjobsstorage":
        return "connection_string"
    return "secret"


def find_field_secrets(text: str) -> list[FieldSecret]:
    """Spans of values under secret-named JSON fields, in text order.

    Tolerant: the walk runs over JSON embedded in any text (a warning line before the document, several
    documents, a log line with one object); stray brackets in prose only add or close empty frames.
    """
    if '"' not in text or not _worth_walking(text):
        return []
    found: dict[tuple[int, int], FieldSecret] = {}
    stack: list[_Frame] = []
    pending_key: str | None = None  # a string token seen in an object, waiting for its ':'
    expect_value_for: str | None = None  # the key whose value comes next

    def add(start: int, end: int, kind: str, raw: str, *, number: bool) -> None:
        value = raw if number else _decode(raw)
        if not value.strip() or _MARKER.match(value.strip()) or is_reference(value):
            return
        found[(start, end)] = FieldSecret(start, end, kind, value, number)

    for match in _TOKEN.finditer(text):
        token = match.group()
        top = stack[-1] if stack else None
        if match.group("s") is not None:
            start, end = match.start() + 1, match.end() - 1
            if expect_value_for is not None and top is not None:
                key = expect_value_for
                top.members[key.lower()] = (token[1:-1], start, end)
                kind = field_kind(key) or (top.kind if not _METADATA.fullmatch(key) else None)
                if kind:
                    add(start, end, kind, token[1:-1], number=False)
                expect_value_for = None
            elif top is not None and not top.is_object and top.kind:
                add(start, end, top.kind, token[1:-1], number=False)  # a string in a secret array
            pending_key = token[1:-1] if top is not None and top.is_object else None
            continue
        if match.group("n") is not None and expect_value_for is not None:
            kind = field_kind(expect_value_for)
            if kind:
                add(match.start(), match.end(), kind, token, number=True)
            expect_value_for = None
            continue
        if token == ":":
            expect_value_for = pending_key
            pending_key = None
            continue
        if token in "{[":
            stack.append(_Frame(is_object=token == "{", kind=_inherited(top, expect_value_for)))
        elif token in "}]" and stack:
            closed = stack.pop()
            if closed.is_object:
                _pair_secrets(closed, add)
        pending_key = None
        expect_value_for = None
    return sorted(found.values(), key=lambda s: s.start)


def _inherited(parent: _Frame | None, key: str | None) -> str | None:
    """The secret kind a new object or array takes: its own field's, else its parent's unless its field
    is metadata (``"subnet": {"id": ...}`` inside a secret stays)."""
    if key is not None:
        if kind := field_kind(key):
            return kind
        if _METADATA.fullmatch(key):
            return None
    return parent.kind if parent is not None else None


def _worth_walking(text: str) -> bool:
    lowered = text.lower()
    for word in _NAME_WORDS:
        at = lowered.find(word)
        while at != -1:
            end = text.find('"', at)
            if end == -1:
                break
            name = text[text.rfind('"', 0, at) + 1 : end]
            if (field_kind(name) or name.lower() == "keyname") and _VALUE_AFTER.match(text, end + 1):
                return True
            at = lowered.find(word, end)
    at = lowered.find('"name"')
    while at != -1:
        pair = _PAIR_VALUE.match(text, at + 6)
        if pair is not None and setting_kind(pair.group("v")):
            return True
        at = lowered.find('"name"', at + 6)
    return False


def _pair_secrets(frame: _Frame, add: Callable[..., None]) -> None:
    """``{"name": "DB_PASSWORD", "value": ...}`` and ``{"keyName": "key1", "value": ...}``: the value is a
    secret because of its sibling."""
    value = frame.members.get("value")
    if value is None:
        return
    kind = None
    if "keyname" in frame.members:
        kind = "access_key"
    elif "name" in frame.members:
        kind = setting_kind(_decode(frame.members["name"][0]))
    if kind:
        raw, start, end = value
        add(start, end, kind, raw, number=False)


def _decode(raw: str) -> str:
    if "\\" not in raw:
        return raw
    try:
        decoded = json.loads(f'"{raw}"')
    except ValueError:
        return raw
    return decoded if isinstance(decoded, str) else raw
