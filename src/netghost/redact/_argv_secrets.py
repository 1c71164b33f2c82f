"""Secret VALUES in a command line, whatever option or program carries them.

A SAS signature in ``--blob-url``, a JWT in an ``X-ZUMO-AUTH`` header, ``private_token=`` in a query,
``Authorization: SharedKey acct:...``, a storage key after ``-k``: the shell must never run such a command
unasked (it would send or store a credential the model chose) and must never show or audit the value.
Option names cannot be enumerated, so the value is judged: first a cheap gate (one regex per element) picks
the elements that can hold a credential, then the redactor's own detectors (:func:`._find.find_secrets`)
decide, plus three value rules of the ontology (``credentials.toml`` [values]) for credentials that only
their place identifies: a signing or token query parameter, an Authorization scheme, a connection-string
key.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from urllib.parse import unquote

from netghost.redact._credentials import value_rules
from netghost.redact._find import find_secrets
from netghost.redact._values import _usable

__all__ = ["ArgvSecret", "argv_secrets", "mask_argv_secrets"]

# Elements worth the redactor's time: a token prefix, a JWT, PEM, a header line, a secret-sounding label
# before `=` or `:`, a percent-encoding; or a long run of key alphabet (several character classes or hex,
# not a path). Everything else (flags, names, ids, paths, plain URLs, JMESPath) skips the detectors. The
# patterns are case-sensitive literal alternations (labels are matched on the lower-cased element): an
# IGNORECASE alternation is tried at every position and cost ten times more.
_PREFIXES = re.compile(
    "|".join(
        re.escape(p) for p in (
            "eyJ", "-----BEGIN", "LS0tLS1CRUdJT", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
            "gldt-", "glrt-", "xoxb-", "xoxa-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xapp-", "AKIA", "ASIA", "AIza",
            "npm_", "hvs.", "hvb.", "hvr.", "SG.", "ya29.", "Q~", "sk-proj-", "sk-ant-", "%",
        )
    )
)  # fmt: skip
_LABEL = re.compile(r"(?:pass|pwd|secret|token|key|sig|auth|cred|conn|sas|cookie|session|bearer|basic)[a-z0-9_-]{0,40}\s*[=:]")
_HEADER = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}\s*:(?!//)\s*\S")
_RUN = re.compile(r"[A-Za-z0-9+/=_-]{28,}")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{32,}")
# An option whose NAME says its value is a secret (`--password X`, `--sas-token=X`): the redactor reads
# the whole line for those (the value is in the next element).
_SECRET_OPTION = re.compile(r"(?i)^--?[a-z0-9-]*(pass|pwd|secret|token|key|credential|sas|sig)[a-z0-9-]*(=|$)")
_TOKEN_SHAPE = re.compile(r"[0-9+/=_.~-]|[a-z].*[A-Z]|[A-Z].*[a-z]")


@dataclass(frozen=True)
class ArgvSecret:
    """One secret value found in ``argv[index]`` (``value`` is a substring of that element)."""

    index: int
    value: str
    kind: str


def _gated(element: str) -> bool:
    """Whether ``element`` can hold a credential worth the detectors' time."""
    if _PREFIXES.search(element) is not None or _HEADER.match(element) is not None:
        return True
    if ("=" in element or ":" in element) and _LABEL.search(element.lower()) is not None:
        return True
    if len(element) < 28:
        return False
    for m in _RUN.finditer(element):
        run = m.group()
        if run.count("/") > 2:
            continue  # a path (an ARM id, a URL path)
        classes = (any(c.islower() for c in run), any(c.isupper() for c in run), any(c.isdigit() for c in run))
        if all(classes) or _HEX_RUN.search(run):
            return True
    return False


@cache
def _value_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    rules = value_rules()
    params = "|".join(re.escape(p) for p in rules["query_parameters"])
    schemes = "|".join(re.escape(s) for s in rules["auth_schemes"])
    keys = "|".join(re.escape(k) for k in rules["connection_keys"])
    query = re.compile(rf"(?i)(?:^|[?&;#])(?:{params})=(?P<v>[^&#\s]{{6,}})")
    auth = re.compile(rf"(?i)(?:^|[\s:=])(?:{schemes})\s+(?P<v>[A-Za-z0-9+/=._~:%-]{{8,}})")
    conn = re.compile(rf"(?i)(?:^|[;\s])(?:{keys})\s*=\s*(?P<v>[^;\s'\"]{{6,}})")
    return query, auth, conn


def _views(element: str) -> list[str]:
    """The element and its percent-decodings (``sig%3D...`` is ``sig=...`` to the server)."""
    out = [element]
    value = element
    for _ in range(3):
        if "%" not in value:
            break
        value = unquote(value)
        out.append(value)
    return out


def _place_rules(view: str) -> list[tuple[str, str]]:
    query, auth, conn = _value_patterns()
    found: list[tuple[str, str]] = []
    for m in query.finditer(view):
        found.append((m.group("v"), "query_secret"))
    for m in auth.finditer(view):
        if _TOKEN_SHAPE.search(m.group("v")):
            found.append((m.group("v"), "authorization"))
    for m in conn.finditer(view):
        found.append((m.group("v"), "connection_string"))
    return [(v, k) for v, k in found if _usable(v)]


def _locate(element: str, value: str) -> str | None:
    """``value`` as it is spelled inside ``element`` (raw, or percent-encoded there), or None."""
    if value in element:
        return value
    for spelled in (value.replace("=", "%3D").replace("+", "%2B").replace("/", "%2F"),):
        for variant in (spelled, spelled.lower().replace("%3d", "%3D")):
            if variant in element:
                return variant
    low = element.lower()
    i = low.find(value.lower()) if "%" not in value else -1
    return element[i : i + len(value)] if i >= 0 else None


def argv_secrets(argv: Sequence[str]) -> tuple[ArgvSecret, ...]:
    """Every secret value in ``argv[1:]``, whatever option or program carries it.

    Args:
        argv: the parsed command (``argv[0]`` is the program and is not judged).

    Returns:
        The secrets found, by element; empty for an ordinary command (the common case costs one memo
        lookup per element, see :func:`_element_secrets`).
    """
    answers = list(map(_element_secrets, argv[1:]))
    if answers.count(_CLEAN) == len(answers):
        return ()  # the common case, decided in C: no element is a secret-named option or holds a secret
    found: dict[tuple[int, str], str] = {}
    for i, (secret_option, secrets) in enumerate(answers, start=1):
        for spelled, kind in secrets:
            found.setdefault((i, spelled), kind)
        if secret_option:
            # `--password X`, `--sas-token X Y`: the label is one element, its values the ones after it.
            end = _values_end(argv, i)
            for value, kind in _option_secrets(tuple(argv[i:end])):
                for j in range(i, end):
                    if value in argv[j]:
                        found.setdefault((j, value), kind)
    if not found:
        return ()  # the common case: no sort, no generator
    return tuple(ArgvSecret(i, v, k) for (i, v), k in sorted(found.items()))


# _element_secrets' answer for an element that is no secret-named option and holds no secret.
_CLEAN: tuple[bool, tuple[tuple[str, str], ...]] = (False, ())

# How many values after a secret-named option are read with it: an option takes one value, a few take a
# list (`--secrets a b`); a longer run is still judged element by element by the gate.
_MAX_OPTION_VALUES = 8


def _values_end(argv: Sequence[str], i: int) -> int:
    """The index just past the values of the option at ``argv[i]`` (the elements up to the next option)."""
    if "=" in argv[i]:
        return i + 1
    end = i + 1
    while end < len(argv) and end <= i + _MAX_OPTION_VALUES and not argv[end].startswith("-"):
        end += 1
    if end == i + 1 and end < len(argv):
        end += 1  # a value that itself starts with "-" (`--password -Xy7...`) is still the option's value
    return end


@lru_cache(maxsize=4096)
def _option_secrets(span: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The secrets the redactor finds in a secret-named option read with its values.

    Only the option and its own values are read, never the whole line: the label gives the value its
    meaning (`--password hunter2`), and the rest of the line is judged element by element already. A whole
    line costs the detectors about ten times more (issue 28's p99: `--assignee` holds "sig"). Memoised on
    the exact span, as the elements are: an investigation repeats its options and names.
    """
    return tuple(find_secrets(shlex.join(span), secret_cmd=False).items())


@lru_cache(maxsize=8192)
def _element_secrets(element: str) -> tuple[bool, tuple[tuple[str, str], ...]]:
    """(whether ``element`` is an option whose name says its value is a secret, the (value as spelled in
    ``element``, kind) pairs it holds in the detectors' order).

    Memoised on the exact element: the answer depends on nothing else, and an investigation repeats its
    words (options, resource groups, names, ARM ids) across commands; the gate's regexes alone cost
    about a microsecond per element, the detectors tens.
    """
    secret_option = element[:1] == "-" and _SECRET_OPTION.match(element) is not None
    if not _gated(element):
        return secret_option, ()
    out: list[tuple[str, str]] = []
    for view in _views(element):
        for value, kind in _place_rules(view):
            spelled = _locate(element, value)
            if spelled is not None:
                out.append((spelled, kind))
        for value, kind in find_secrets(view, secret_cmd=False).items():
            spelled = _locate(element, value)
            if spelled is not None:
                out.append((spelled, kind))
    return secret_option, tuple(out)


def mask_argv_secrets(argv: Sequence[str], secrets: Sequence[ArgvSecret] | None = None) -> list[str]:
    """``argv`` with every secret value replaced by ``[REDACTED:<kind>]`` (the program name is kept)."""
    out = list(argv)
    found = secrets if secrets is not None else argv_secrets(argv)
    for s in sorted(found, key=lambda f: len(f.value), reverse=True):  # a longer value first: it may hold a shorter one
        if s.index < len(out) and s.value in out[s.index]:
            out[s.index] = out[s.index].replace(s.value, f"[REDACTED:{s.kind}]")
    return out
