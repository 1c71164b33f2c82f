"""Finding secrets by their place: the span rules, flags, blocks and command columns, over a text and over
the JSON strings inside it.

A configuration or a decoded capture often reaches the redactor inside a JSON string (``az vm
run-command`` puts the script's output in ``"message": "...\\n..."``), where its lines are joined by
``\\n`` escapes and no line rule can see them. So each escaped JSON string is also decoded with a map from
decoded to raw offsets, scanned like a text, and its spans are mapped back: the replacement lands inside
the JSON string and the document stays valid.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator

from netghost.redact._blocks import (
    chpasswd_spans,
    k8s_spans,
    line_label_spans,
    name_value_spans,
    short_label_spans,
    xml_setting_spans,
)
from netghost.redact._command import bare_spans, column_spans, value_field_spans
from netghost.redact._flags import flag_spans, property_spans
from netghost.redact._gear import GEAR_RULES
from netghost.redact._hashes import HASH_RULES
from netghost.redact._public import is_reference, public_spans
from netghost.redact._rules import PLACEHOLDER
from netghost.redact._span_rule import Haystack, Span, SpanRule, decode_json_string
from netghost.redact._values import _masked
from netghost.redact._wire import WIRE_RULES, cookie_spans, resp_auth_spans

__all__ = ["find_spans", "overlaps", "protected_spans"]

# Looking for a needle costs a scan of the whole text, so rules share a few coarse needles: each rule's
# needles are replaced by the first of these they contain ("snmp-server" -> "snmp", "passwd" -> "pass"). A
# coarse needle sits where the fine one does, so a rule still sees every line it could match (and a few more).
_COARSE = ("password", "pass", "secret", "key", "snmp", "auth", "user", "hash", "psk", "$", "%", "0x", "grub",
           "ntlm", "simple")  # fmt: skip


def _coarsen(rule: SpanRule) -> SpanRule:
    needles = tuple(sorted({next((c for c in _COARSE if c in n), n) for n in rule.needles}))
    return dataclasses.replace(rule, needles=needles)


RULES: tuple[SpanRule, ...] = tuple(_coarsen(rule) for rule in GEAR_RULES + HASH_RULES + WIRE_RULES)
_JSON_STRING = re.compile(r'"(?:[^"\\\r\n]|\\.)*"')
# Finders of spans by context: command-line flags, Kubernetes Secret data, cloud-init chpasswd lists, short
# and whole-line labelled values, YAML name/value settings, cookie values.
_FINDERS: tuple[tuple[Callable[[str, Haystack], Iterable[tuple[int, int]]], str], ...] = (
    (flag_spans, "password"),
    (property_spans, "password"),
    (k8s_spans, "secret"),
    (chpasswd_spans, "password"),
    (short_label_spans, "password"),
    (name_value_spans, "secret"),
    (line_label_spans, "password"),
    (cookie_spans, "cookie"),
    (resp_auth_spans, "password"),
    (xml_setting_spans, "secret"),
)
_SETTINGS_LISTING = re.compile(r"(?i)\b(?:appsettings|app-settings|printenv|env|list-configuration|settings)\b")
_PLACEHOLDER_TOKEN = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
_VAR = re.compile(r"^%\w+%$|^\$\(\w+\)$")


def find_spans(
    text: str, *, command: str | None = None, secret_cmd: bool = False, hay: Haystack | None = None
) -> tuple[list[Span], set[str]]:
    """The secret spans in ``text`` (non-overlapping, in text order, clear of earlier placeholders and of
    public material), and the public values the command's columns hold (never to be replaced anywhere)."""
    found: list[Span] = []
    hay = hay or Haystack(text)
    _scan(text, hay, None, found)
    for decoded, offsets in _escaped_strings(text):
        _scan(decoded, Haystack(decoded), offsets, found)
    public = protected_spans(text, hay)
    public_values: set[str] = set()
    if command:
        secret, more_public = column_spans(text, command)
        found.extend(Span(a, b, "secret", text[a:b]) for a, b in secret)
        public = sorted(public + more_public)
        public_values = {text[a:b] for a, b in more_public}
        if secret_cmd and not _is_json(text):
            found.extend(Span(a, b, "command_secret", text[a:b]) for a, b in bare_spans(text))
        if secret_cmd and not _SETTINGS_LISTING.search(command):  # a settings list names its secrets
            found.extend(Span(a, b, "command_secret", text[a:b]) for a, b in value_field_spans(text))
    return _clean(found, public), public_values


def protected_spans(text: str, hay: Haystack | None = None) -> list[tuple[int, int]]:
    """Placeholders already in the text and public values: never replaced."""
    spans = [(m.start(), m.end()) for m in _PLACEHOLDER_TOKEN.finditer(text)] if "[REDACTED:" in text else []
    spans.extend(public_spans(text, hay or Haystack(text)))
    for decoded, offsets in _escaped_strings(text):
        spans.extend((offsets[a], offsets[b]) for a, b in public_spans(decoded, Haystack(decoded)))
    return sorted(spans)


def _escaped_strings(text: str) -> Iterator[tuple[str, list[int]]]:
    """Each JSON string in ``text`` that holds escaped lines, decoded, with its offset map."""
    if "\\n" not in text and "\\t" not in text:
        return
    for match in _JSON_STRING.finditer(text):
        body = match.group()[1:-1]
        if "\\n" in body or "\\t" in body:
            yield decode_json_string(body, match.start() + 1)


def overlaps(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(a < end and start < b for a, b in spans)


def _scan(text: str, hay: Haystack, offsets: list[int] | None, out: list[Span]) -> None:
    def emit(start: int, end: int, kind: str) -> None:
        value = text[start:end]
        if offsets is None and "\\" in value:  # an escaped line end or quote ends the value: the JSON
            cut = re.search(r"\\[nrt]|\\$", value)  # string is scanned decoded as well
            if cut is not None:
                end = start + cut.start()
                value = text[start:end]
        if _acceptable(value):
            if offsets is None:
                out.append(Span(start, end, kind, value))
            else:
                out.append(Span(offsets[start], offsets[end], kind, value))

    for rule in RULES:
        if not hay.any(rule.needles):
            continue
        for match in _matches(rule, text, hay):
            if rule.check is not None and not rule.check(match):
                continue
            for group in ("v", "v2"):
                if group in rule.pattern.groupindex and match.group(group) is not None:
                    emit(match.start(group), match.end(group), rule.kind)
    for finder, kind in _FINDERS:
        for start, end in finder(text, hay):
            emit(start, end, kind)


def _matches(rule: SpanRule, text: str, hay: Haystack) -> Iterator[re.Match[str]]:
    """The rule's matches: over the whole text, or only on the lines that hold one of its needles."""
    if rule.gate is not None and rule.gate.match(text) is None:
        return
    if not rule.line and not rule.window:
        yield from rule.pattern.finditer(text)
        return
    if not rule.line:
        yield from _window_matches(rule, text, hay)
        return
    starts: set[int] = set()
    lowered = hay.text
    for needle in rule.needles:
        if not hay.has(needle):
            continue
        at = lowered.find(needle)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end == -1 else end
            if start not in starts:
                starts.add(start)
                yield from rule.pattern.finditer(text, start, end)
            at = lowered.find(needle, end)


def _window_matches(rule: SpanRule, text: str, hay: Haystack) -> Iterator[re.Match[str]]:
    """Matches of a multi-line rule that start on a needle's line and end within ``rule.window`` lines."""
    lowered = hay.text
    last_end = -1
    for needle in rule.needles:
        if not hay.has(needle):
            continue
        at = lowered.find(needle)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            end = at
            for _ in range(rule.window + 1):
                end = text.find("\n", end + 1)
                if end == -1:
                    end = len(text)
                    break
            if start >= last_end:
                yield from rule.pattern.finditer(text, start, end)
                last_end = end
            at = lowered.find(needle, at + 1)


def _acceptable(value: str) -> bool:
    """A value worth replacing: not empty, not a placeholder, a mask, a reference or a variable."""
    value = value.strip()
    if not value or "[REDACTED" in value or PLACEHOLDER.match(value) or is_reference(value):
        return False
    if (len(value) > 2 and _masked(value)) or not any(c.isalnum() for c in value):
        return False
    return _VAR.match(value) is None


def _is_json(text: str) -> bool:
    stripped = text.strip()
    return stripped[:1] in "{[" and stripped[-1:] in "}]"


def _clean(found: list[Span], public: list[tuple[int, int]]) -> list[Span]:
    """Sorted, without overlaps (the earliest, then longest, span wins) and clear of protected spans."""
    out: list[Span] = []
    for span in sorted(found, key=lambda s: (s.start, -(s.end - s.start))):
        if span.end <= span.start or (out and span.start < out[-1].end):
            continue
        if overlaps(span.start, span.end, public):
            continue
        out.append(span)
    return out
