"""The record of a *span rule* and the value shapes the span-rule tables share.

Why spans: a device password (``enable password cisco``), an SNMP community or an FTP ``PASS`` value is
often short and ordinary-looking. The value finders replace *every* occurrence of a value, so they need it
long and specific (six characters or more); a span rule instead names the exact place of the value in the
line (``v`` group), which is replaced there and only there, whatever its length. A long enough value is
then also replaced wherever else it appears, like any other finding.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["BARE", "QUOTED", "TYPE", "Haystack", "Span", "SpanRule", "decode_json_string", "val"]


@dataclass(frozen=True)
class SpanRule:
    """One pattern whose groups ``v`` (and optionally ``v2``) hold secrets, the kind it reports and why.

    ``needles`` are lower-case substrings of which at least one must be in the text for the rule to run;
    with ``line`` set, the pattern is only tried on the lines that hold a needle (it must not span lines),
    which keeps a rule's cost proportional to the lines that can match rather than to the text. ``check``
    rejects a match the regex alone would take (a type-7 value that is not hex, a mechanism name).
    """

    kind: str
    pattern: re.Pattern[str]
    why: str
    needles: tuple[str, ...]
    line: bool = True
    check: Callable[[re.Match[str]], bool] | None = None
    window: int = 0
    """For a rule that spans lines (``line`` unset): how many lines after a needle's line it may reach; 0 means
    the whole text (a block rule, like a FortiOS section)."""
    gate: re.Pattern[str] | None = None
    """A pattern the text must match at its start for the rule to run (an htpasswd listing's first line)."""


@dataclass(frozen=True)
class Span:
    """A secret's place in a text: ``text[start:end]`` is replaced by ``[REDACTED:kind]``; ``value`` is the
    secret as decoded (it differs from the raw slice inside an escaped JSON string)."""

    start: int
    end: int
    kind: str
    value: str


# A value as configurations write it: "double-quoted", 'single-quoted' or one bare token. The groups are
# named after the secret group (``v`` -> ``vq`` for the quote), so a pattern may hold two values.
QUOTED = r"(?P<{q}>[\"'])?(?P<{v}>(?({q})[^\"'\r\n]+|[^\s\"']+))(?({q})(?P={q}))"
BARE = r"(?P<{v}>[^\s\"']+)"
# Cisco/Juniper/Huawei "encryption type" words between a keyword and its value.
TYPE = (
    r"(?:[ \t]+(?:0|4|5|6|7|8|9|10|encrypted|cipher|irreversible-cipher|simple|plain|plaintext|clear|"
    r"ascii-text|hexadecimal|hash|md5|sha|sha1|sha256|sha512|text))?"
)


def val(name: str = "v") -> str:
    """The quoted-or-bare value pattern with group ``name`` (and ``name`` + ``q`` for its quote)."""
    return QUOTED.format(q=f"{name}q", v=name)


class Haystack:
    """A text in lower case (one character per character, so offsets agree) and which needles it holds.

    Checking a needle costs a scan of the whole text; many rules share needles (``password``, ``key``), so
    each is looked for once per text.
    """

    __slots__ = ("_seen", "text")

    def __init__(self, text: str) -> None:
        lowered = text.lower()
        if len(lowered) != len(text):
            lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
        self.text = lowered
        self._seen: dict[str, bool] = {}

    def has(self, needle: str) -> bool:
        found = self._seen.get(needle)
        if found is None:
            found = self._seen[needle] = needle in self.text
        return found

    def any(self, needles: tuple[str, ...] | list[str]) -> bool:
        # the redactor's innermost loop (every rule asks, for every text): written out, not ``any(self.has(...))``
        seen, text = self._seen, self.text
        for needle in needles:
            found = seen.get(needle)
            if found is None:
                found = seen[needle] = needle in text
            if found:
                return True
        return False


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}


_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))", re.DOTALL)


def decode_json_string(body: str, base: int = 0) -> tuple[str, list[int]]:
    """A JSON string's contents decoded, and for each decoded character the raw offset it came from (plus
    one past the end).

    Why by runs: a command's output can hold long JSON strings; the text between two escapes is copied in
    one slice (and its offsets as one range) instead of character by character. A backslash that ends the
    body stays as it is; ``\\u`` without four hex digits decodes as ``u``.
    """
    chars: list[str] = []
    offsets: list[int] = []
    pos = 0
    for match in _ESCAPE.finditer(body):
        start = match.start()
        if start > pos:
            chars.append(body[pos:start])
            offsets.extend(range(base + pos, base + start))
        hexa, esc = match.group(1), match.group(2)
        chars.append(chr(int(hexa, 16)) if hexa is not None else _ESCAPES.get(esc, esc))
        offsets.append(base + start)
        pos = match.end()
    if pos < len(body):
        chars.append(body[pos:])
        offsets.extend(range(base + pos, base + len(body)))
    offsets.append(base + len(body))
    return "".join(chars), offsets
