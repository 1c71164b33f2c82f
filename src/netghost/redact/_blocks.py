"""Secrets known by the block they sit in, not by their own line.

* A Kubernetes ``Secret``: every value under its ``data`` / ``stringData`` is a secret whatever its key
  (``config.json``, ``api``, ``username``), except certificates (``ca.crt``, ``tls.crt``), which are public.
* cloud-init ``chpasswd``: ``list`` lines ``user:password`` (``RANDOM`` asks cloud-init to make one).
* A short value under a secret name (``password: x%.#4``): the value finders need six characters to
  replace a value everywhere; here it is replaced in its place only, when it cannot be a word or a status.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from netghost.redact._json import setting_kind
from netghost.redact._rules import KEY_EXCLUDED_SUFFIX, LINE_ASSIGNMENT, PLACEHOLDER, STRONG_KEY_NAME
from netghost.redact._span_rule import Haystack
from netghost.redact._values import _masked

__all__ = [
    "chpasswd_spans",
    "k8s_spans",
    "line_label_spans",
    "name_value_spans",
    "short_label_spans",
    "xml_setting_spans",
]

_YAML_DATA = re.compile(r"(?m)^(?P<ind>[ \t]*)(?P<dash>-[ \t]+)?(?:data|stringData):[ \t]*\r?$")
_YAML_CHILD = re.compile(r"^(?P<ind>[ \t]+)(?P<k>[^:\s#][^:\r\n]*?):[ \t]*(?P<v>\S[^\r\n]*?)[ \t]*\r?$")
_YAML_KIND = re.compile(r"^[ \t]*(?:-[ \t]+)?kind:[ \t]*[\"']?(?P<kind>\w+)")
_JSON_DATA = re.compile(r"\"(?:data|stringData)\"\s*:\s*\{(?P<body>[^{}]*)\}")
_JSON_PAIR = re.compile(r"\"(?P<k>[^\"\\]+)\"\s*:\s*\"(?P<v>(?:[^\"\\]|\\.)*)\"")
_JSON_KIND = re.compile(r"\"kind\"\s*:\s*\"(?P<kind>\w+)\"")
_PUBLIC_KEY_NAME = re.compile(r"(?i)(?:^|[._-])(?:crt|cert|certificate|pem|pub|ca|ca-bundle)(?:$|[._-])|public")
_CERT_B64 = "LS0tLS1CRUdJTiBDRVJU"  # base64 of "-----BEGIN CERT"
# A name = value assignment, or an option's (``--password=x%.#4``, ``-pass=ab1``): the assignment pattern with the
# option's dashes allowed before the name (they are not part of it; ``foo-password=`` is still not a name).
_SHORT_ASSIGNMENT = re.compile(LINE_ASSIGNMENT.pattern.replace(r"(?<![A-Za-z0-9_.\-])", r"(?<![A-Za-z0-9_.\-])(?:--?)?", 1))
_CHPASSWD = re.compile(r"(?m)^(?P<ind>[ \t]*)chpasswd:")
_CHPASSWD_LINE = re.compile(r"^[ \t]*(?:-[ \t]+)?[\"']?[\w.@-]+:(?P<v>[^\s:'\"]+)[\"']?[ \t]*\r?$")
_NAME_VALUE = re.compile(
    r"(?m)^(?P<ind>[ \t]*)-[ \t]+name:[ \t]*[\"']?(?P<name>[\w.-]+)[\"']?[ \t]*\r?\n[ \t]+value:[ \t]*"
    r"(?P<q>[\"'])?(?P<v>(?(q)[^\"'\r\n]+|[^\s\"']+))"
)
_XML_SETTING = re.compile(
    r"<add\s+(?:key|name)\s*=\s*[\"'](?P<name>[^\"']+)[\"']\s+value\s*=\s*[\"'](?P<v>[^\"'<>]*)[\"']"
    r"|<add\s+value\s*=\s*[\"'](?P<v2>[^\"'<>]*)[\"']\s+(?:key|name)\s*=\s*[\"'](?P<name2>[^\"']+)[\"']",
    re.IGNORECASE,
)
_HINTS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "psk", "community", "sas")
_STOP = frozenset(
    {"basic", "token", "oauth", "none", "local", "ldap", "radius", "bearer", "aad", "msi", "key", "cert", "login",
     "sso", "saml", "oidc", "true", "false", "yes", "no", "on", "off", "auto", "any", "all", "n/a", "null", "nil",
     "unset", "empty", "hidden", "tbd", "todo", "xxx", "***", "md5", "sha1", "sha256", "rsa", "aes", "des", "plain",
     "text", "hash", "file", "env", "vault"}
)  # fmt: skip


def _indent(line: str) -> int:
    """The column where a YAML line's content starts (``- key:`` counts the dash as indentation)."""
    stripped = line.lstrip(" \t")
    ind = len(line) - len(stripped)
    if stripped.startswith("- "):
        ind += 2 + len(stripped[2:]) - len(stripped[2:].lstrip(" \t"))
    return ind


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset, line without its end) for every ``\\n``-separated line, as the regexes' ``^`` sees them."""
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, line.rstrip("\r")))
        pos += len(line) + 1
    return out


def _sibling_kind(lines: list[tuple[int, str]], index: int, ind: int) -> str | None:
    """The ``kind:`` beside the mapping key on line ``index`` (same indentation, same list item)."""
    for i in range(index, -1, -1):
        line = lines[i][1]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        here = _indent(line)
        if here < ind:
            break
        if here == ind and (m := _YAML_KIND.match(line)):
            return m.group("kind")
        if line.lstrip().startswith("- ") and here == ind:
            break  # the start of this list item
    for i in range(index + 1, len(lines)):
        line = lines[i][1]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        here = _indent(line)
        if here < ind or (line.lstrip().startswith("- ") and here == ind):
            break  # the parent, or the next list item
        if here == ind and (m := _YAML_KIND.match(line)):
            return m.group("kind")
    return None


def k8s_spans(text: str, hay: Haystack) -> Iterator[tuple[int, int]]:
    """The values of ``data`` / ``stringData`` in Kubernetes Secrets (YAML and JSON)."""
    if not hay.has("secret") or not hay.has("data"):
        return
    lines: list[tuple[int, str]] | None = None
    for match in _YAML_DATA.finditer(text):
        lines = lines or _lines(text)
        index = next((i for i, (at, _) in enumerate(lines) if at == match.start()), None)
        if index is None:
            continue
        ind = _indent(lines[index][1])
        if _sibling_kind(lines, index, ind) != "Secret":
            continue
        for at, line in lines[index + 1 :]:
            if line.strip() and _indent(line) <= ind:
                break
            child = _YAML_CHILD.match(line)
            if child is None:
                continue
            value = child.group("v").strip("\"'")
            if _PUBLIC_KEY_NAME.search(child.group("k")) or value.startswith(_CERT_B64) or value in ("|", ">"):
                continue
            start = at + child.start("v") + child.group("v").index(value)
            yield start, start + len(value)
    for match in _JSON_DATA.finditer(text):
        kinds = [(abs(k.start() - match.start()), k.group("kind")) for k in _JSON_KIND.finditer(text)]
        if not kinds or min(kinds)[1] != "Secret":
            continue
        for pair in _JSON_PAIR.finditer(text, match.start("body"), match.end("body")):
            value = pair.group("v")
            if value and not _PUBLIC_KEY_NAME.search(pair.group("k")) and not value.startswith(_CERT_B64):
                yield pair.start("v"), pair.end("v")


def chpasswd_spans(text: str, hay: Haystack) -> Iterator[tuple[int, int]]:
    """Passwords in cloud-init ``chpasswd`` lists (``user:password`` lines under ``chpasswd:``)."""
    if not hay.has("chpasswd"):
        return
    for match in _CHPASSWD.finditer(text):
        ind = len(match.group("ind"))
        pos = text.find("\n", match.end())
        while pos != -1:
            end = text.find("\n", pos + 1)
            line = text[pos + 1 : end if end != -1 else len(text)]
            if line.strip() and _indent(line) <= ind:
                break
            found = _CHPASSWD_LINE.match(line)
            if found and found.group("v").upper() not in ("RANDOM", "R"):
                yield pos + 1 + found.start("v"), pos + 1 + found.end("v")
            pos = end


def name_value_spans(text: str, hay: Haystack) -> Iterator[tuple[int, int]]:
    """YAML ``- name: DB_PASSWORD`` / ``value: ...`` pairs (Kubernetes and container app ``env``), the YAML
    twin of the JSON ``{"name": ..., "value": ...}`` settings."""
    if not hay.has("name:") or not hay.has("value:"):
        return
    for match in _NAME_VALUE.finditer(text):
        if setting_kind(match.group("name")):
            yield match.start("v"), match.end("v")


_WHOLE_LINE = re.compile(
    r"(?m)^[ \t]*(?:export[ \t]+|ENV[ \t]+|set[ \t]+)?(?P<name>[A-Za-z_][\w.-]{1,80})[ \t]*[=:][ \t]*"
    r"(?P<v>[^\s\"'\[{][^\s]*?)[ \t]*\r?$"
)
_LIST_VALUE = re.compile(r"\w+=[^;]*;\s*\w+=")


def line_label_spans(text: str, hay: Haystack) -> Iterator[tuple[int, int]]:
    """A whole-line ``NAME=value`` / ``name: value`` under a secret name whose value holds ``,``, ``&`` or
    ``;`` (``secret = Vm,Ja&Wi=x``): the in-line rules stop there, as in a URL or a connection string, but
    a line with nothing after the value has no such delimiter."""
    for word in _HINTS:
        if not hay.has(word):
            continue
        for match in _WHOLE_LINE.finditer(text):
            value, name = match.group("v"), match.group("name").lower().strip("_-.")
            if not any(c in value for c in ",&;") or _LIST_VALUE.search(value) or name.startswith("conn"):
                continue
            if KEY_EXCLUDED_SUFFIX.search(name) or "public" in name or not STRONG_KEY_NAME.search(name):
                continue
            if not PLACEHOLDER.match(value) and "[REDACTED" not in value:
                yield match.start("v"), match.end("v")
        return


def xml_setting_spans(text: str, hay: Haystack) -> Iterator[tuple[int, int]]:
    """``web.config`` / ``app.config`` ``<add key="DbPassword" value="..."/>``: the value is a secret when the
    key names one, like the JSON ``{"name": ..., "value": ...}`` settings."""
    if not hay.has("<add"):
        return
    for match in _XML_SETTING.finditer(text):
        name, group = (match.group("name"), "v") if match.group("name") else (match.group("name2"), "v2")
        if match.group(group) and setting_kind(name):
            yield match.start(group), match.end(group)


def short_label_spans(text: str, hay: Haystack) -> Iterator[tuple[int, int]]:
    """Values of three to five characters under a secret name (``password=x%.#4``): too short for the value
    finders, so replaced in place; words and statuses (``auth: basic``, ``secret: none``) are kept."""
    seen: set[int] = set()
    lowered = hay.text
    for word in _HINTS:
        if not hay.has(word):
            continue
        at = lowered.find(word)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end == -1 else end
            if start not in seen:
                seen.add(start)
                yield from _short_in_line(text, start, end)
            at = lowered.find(word, end)


def _password_like(value: str) -> bool:
    """A short value that reads as a password: letters with digits or symbols; not a size, a duration or a
    version (``30d``, ``10ms``, ``4.5s``, ``v2.1``)."""
    if re.fullmatch(r"[\d.,:/-]+[A-Za-z]{0,3}|[vV]?\d+(?:\.\d+)*", value):
        return False
    has_alpha = any(c.isalpha() for c in value)
    return has_alpha and (any(c.isdigit() for c in value) or any(not c.isalnum() for c in value))


def _short_in_line(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    pos = start
    while (match := _SHORT_ASSIGNMENT.search(text, pos, end)) is not None:
        pos = match.start("v")  # a value may itself hold "name=value" ($env:NAME = x)
        value = match.group("v").strip()
        if not match.group("q"):
            value = value.rstrip("}]),")  # "signIn": true}} is a JSON literal closing its objects
        if not 3 <= len(value) <= 5 or value.lower() in _STOP or not _password_like(value):
            continue
        if PLACEHOLDER.match(value) or _masked(value) or "[REDACTED" in value or value[0] in "{[(<$%":
            continue
        name = match.group("name").lower().strip("_-.")
        if KEY_EXCLUDED_SUFFIX.search(name) or "public" in name or "ssh" in name:
            continue
        if STRONG_KEY_NAME.search(name):
            yield match.start("v"), match.start("v") + len(value)
