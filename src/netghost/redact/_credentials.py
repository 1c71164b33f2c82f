"""The credential ontology: which files, directories and environment variables hold credentials, and which
files run what is written onto them. One table (``credentials.toml``), asked by every tier of the shell.

Questions it answers, for a word of a command line however it is spelled (see :mod:`._globpath`):

* :func:`credential_path`: does the word name (or reach through an option's value: ``--file=X``, ``-fX``,
  ``if=X``, ``@X``, ``file://X``, ``host:X``) a credential store? Tier 0 forbids giving one to any program.
* :func:`persistence_path`: is a path a login script, rc file, authorized_keys, cron entry, systemd unit,
  program or library directory on PATH (the product's own included)? Tier 0 forbids writing onto one.
* :func:`credential_ancestor`: does a directory contain a credential store (``/``, ``/etc``, a home)?
  A recursive reader (``grep -r``, ``tar c``, ``cp -r``) given one reads the credentials inside.
* :func:`secret_env_name`: does an environment variable's name say its value is a secret?

Why in :mod:`netghost.redact`: that package imports nothing and everyone may import it, so the shell's
tiers, the az rules and the redactor share one definition instead of three regexes.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from netghost.redact._globpath import (
    GLOB_CHARS,
    PathContext,
    Template,
    compile_template,
    globs_intersect,
    literal_run,
    path_spellings,
    segment_matches,
    template_matches,
)

__all__ = [
    "CredentialHit",
    "credential_ancestor",
    "credential_context",
    "credential_path",
    "credential_word",
    "ontology_variables",
    "persistence_path",
    "secret_env_name",
    "value_rules",
]

_VAR = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_FILE_URL = re.compile(r"(?i)file://(?:localhost)?")
# A word whose spelling may hide a path from a plain substring test: globs, braces, parents, doubled or
# dotted slashes, homes, variables, /proc indirection.
_TRICKY = re.compile(r"[*?\[{~$]|\.\.|//|/\./|/proc/|^\./")
_SPLIT = re.compile(r"[=,:@]")
_NOT_A_PATTERN = re.compile(r"[\s'\"()|;<>:=@]|\[\?")


@dataclass(frozen=True)
class CredentialHit:
    """Why a word names a credential store (or a persistence target).

    Attributes:
        entry: the ontology entry's id (``ssh``, ``azure-cli``, ``login-scripts`` ...).
        why: the entry's justification.
        path: the spelling of the word that matched (normalised).
        template: the template it matched.
    """

    entry: str
    why: str
    path: str
    template: str


@dataclass(frozen=True)
class _Entry:
    id: str
    why: str
    paths: tuple[str, ...]
    excepts: tuple[str, ...]


@dataclass(frozen=True)
class _Compiled:
    """One category's templates for one context, with the substring needles that pre-filter words."""

    templates: tuple[tuple[_Entry, Template], ...]
    needles: re.Pattern[str] | None
    anchored_dirs: frozenset[str]
    hot: re.Pattern[str]
    """One search that every word naming a template must hit: a needle, a tricky spelling or a file URL."""
    runs: tuple[str, ...] = ()
    """Each template's longest literal run (:func:`literal_run`), in the order of ``templates``."""
    shapes: tuple[_Shape, ...] = ()
    """Each template's segment shape (:func:`_shape`), in the order of ``templates``."""
    words: dict[str, CredentialHit | None] = field(default_factory=dict, compare=False, hash=False)
    """:func:`credential_word`'s answers per word, for this category and context (bounded by ``_WORD_MEMO``)."""

    def plausible(self, spelling: str) -> list[tuple[_Entry, Template]]:
        """The templates that can name ``spelling``: for a glob-free path, only those whose literal run it
        holds (one substring test each, instead of a full match against every template); for a glob, all."""
        if GLOB_CHARS & set(spelling):
            # A glob matches segment by segment (``**`` in a template spans any depth, in a path it is one
            # segment): a template with more fixed segments than the path, or another count and no ``**``,
            # cannot meet it; nor an anchored one whose literal first segment differs from the path's; nor
            # one whose last segment no name of the path's last segment can be.
            segs = [x for x in spelling.split("/") if x and x != "."]
            first = segs[0] if segs and spelling.startswith("/") and not GLOB_CHARS & set(segs[0]) else None
            last = ("*" if segs[-1] == "**" else segs[-1]) if segs else "*"
            count = len(segs)
            return [pair for pair, shape in zip(self.templates, self.shapes, strict=True)
                    if _could_meet(shape, count, first, last)]  # fmt: skip
        return [pair for pair, run in zip(self.templates, self.runs, strict=True) if run in spelling]


_Shape = tuple[int, bool, str | None, str | None, bool]
"""A template's fixed segment count, whether it has ``**``, its literal anchored head (None: any), its last
segment (None: ``**``) and whether that last segment is a glob."""


def _shape(tmpl: Template) -> _Shape:
    segments = tmpl.segments
    head = segments[0] if segments else "**"
    literal_head = None if tmpl.floating or head == "**" or GLOB_CHARS & set(head) else head
    tail = segments[-1] if segments and segments[-1] != "**" else None
    return (sum(1 for seg in segments if seg != "**"), "**" in segments, literal_head, tail,
            bool(tail and GLOB_CHARS & set(tail)))


def _could_meet(shape: _Shape, count: int, first: str | None, last: str) -> bool:
    fixed, spans, head, tail, tail_glob = shape
    if fixed > count or (fixed < count and not spans):
        return False
    if first is not None and head is not None and head != first:
        return False
    if tail is None:
        return True
    return globs_intersect(last, tail) if tail_glob else segment_matches(last, tail)


@cache
def _data() -> dict[str, Any]:
    source = resources.files("netghost.redact").joinpath("credentials.toml")
    return tomllib.loads(source.read_text(encoding="utf-8"))


def _entries(kind: str) -> tuple[_Entry, ...]:
    return tuple(
        _Entry(str(e["id"]), str(e["why"]), tuple(e["paths"]), tuple(e.get("except", ()))) for e in _data()[kind]
    )


@cache
def ontology_variables() -> tuple[str, ...]:
    """The environment variables the templates name (the shell snapshots them into its PathContext)."""
    names = {m.group(1) for kind in ("credential", "persistence") for e in _entries(kind) for p in e.paths
             if (m := _VAR.match(p))}  # fmt: skip
    return tuple(sorted(names | {"HOME", "PATH"}))


def credential_context(environ: Mapping[str, str], *, cwd: str | None = None) -> PathContext:
    """The :class:`PathContext` of a shell running in ``cwd`` with ``environ`` (its HOME, PATH and the
    variables that name credential locations, such as AZURE_CONFIG_DIR and NETGHOST_AUDIT_KEY)."""
    return PathContext.from_environ(environ, ontology_variables(), cwd=cwd)


_PRODUCT = str(Path(__file__).resolve().parents[1])


def _substitute(text: str, ctx: PathContext) -> list[str]:
    if text.startswith("@product"):
        return [_PRODUCT + text[len("@product") :]]
    if text.startswith("@prefix"):
        return [p + text[len("@prefix") :] for p in dict.fromkeys((sys.prefix, sys.base_prefix))]
    m = _VAR.match(text)
    if m is None:
        return [text]
    value = ctx.variable(m.group(1))
    if not value:
        return []
    return [v + text[m.end() :] for v in value.split(":") if v.startswith("/")]


def _needle(text: str) -> str:
    """The longest glob-free run of a template (``/etc/shadow`` -> ``etc/shadow``, ``**/*.key`` -> ``.key``)."""
    body = text[2:] if text.startswith("~/") else text
    runs = re.split(r"[*?\[\]]+", body)
    return max(runs, key=len).strip("/")


@lru_cache(maxsize=64)
def _compiled(kind: str, ctx: PathContext) -> _Compiled:
    pairs: list[tuple[_Entry, Template]] = []
    needles: set[str] = set()
    anchored: set[str] = set()
    for entry in _entries(kind):
        for raw in entry.paths:
            for text in _substitute(raw, ctx):
                tmpl = compile_template(text)
                pairs.append((entry, tmpl))
                needle = _needle(("~/" if tmpl.floating else "/") + "/".join(tmpl.segments))  # normalised: no `..`
                if needle:
                    needles.add(needle)
                if not tmpl.floating:
                    fixed: list[str] = []
                    for seg in tmpl.segments:
                        if seg == "**" or GLOB_CHARS & set(seg):
                            break
                        fixed.append(seg)
                    anchored.update("/" + "/".join(fixed[:i]) for i in range(len(fixed)))
    if kind == "persistence":
        for d in ctx.path_dirs:
            tmpl = compile_template(d.rstrip("/") + "/**")
            pairs.append((_Entry("programs-on-path", "A directory on the shell's PATH: a file written there runs "
                                 "when its name is called.", (d,), ()), tmpl))
            needles.add(d.strip("/"))
    alternatives = "|".join(re.escape(n) for n in sorted(needles, key=len, reverse=True))
    pattern = re.compile(alternatives) if needles else None
    hot = re.compile(f"{alternatives}|{_TRICKY.pattern}|(?i:file:)" if needles else f"{_TRICKY.pattern}|(?i:file:)")
    # Anchored templates first: `/etc/sha*` is reported as /etc/shadow, not as a floating `*.tfstate`.
    pairs.sort(key=lambda pair: pair[1].floating)
    return _Compiled(tuple(pairs), pattern, frozenset(anchored), hot, tuple(literal_run(t) for _, t in pairs),
                     tuple(_shape(t) for _, t in pairs))


def _split_outside_braces(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` where it is not inside ``{...}`` (``a,{b,c}`` -> ``a``, ``{b,c}``)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "{") - (ch == "}")
        if ch == sep and depth <= 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _word_paths(word: str) -> Iterator[str]:
    """The paths a word of a command line can name: itself, an option's value (``--file=X``, ``-fX``,
    ``if=X``), an ``@file``, a ``file://`` URL's path, a remote ``host:path``'s path, a list's members
    (``src=X,dst=Y``; braces are not lists)."""
    if _URL.search(word):
        m = _FILE_URL.search(word)
        if m is not None:
            yield word[m.end() :] or "/"
        return  # any other URL names a remote resource, not a local file
    yield word
    if word.startswith("-") and not word.startswith("--") and len(word) > 2:
        yield word[2:]  # `-fFILE`: the first short option's attached value
    if not _SPLIT.search(word):
        return
    for item in _split_outside_braces(word, ","):
        _, eq, value = item.partition("=")
        for part in (item, value if eq else ""):
            if not part or part.startswith("-"):
                continue
            if part != word:
                yield part
            if part.startswith("@") and len(part) > 1:
                yield part[1:]
            if ":" in part:  # `host:/path`, `src:dst[:opts]` volume pairs
                yield from (p for p in _split_outside_braces(part, ":") if p and p != part)


def _candidates(word: str, ctx: PathContext, compiled: _Compiled) -> Iterator[str]:
    """Spellings of the paths in ``word`` worth matching (a substring pre-filter skips the rest)."""
    for path in _word_paths(word):
        if not path:
            continue
        if _NOT_A_PATTERN.search(path) and (GLOB_CHARS & set(path) or "{" in path):
            continue  # an expression (SQL, JMESPath, a filter), not a file glob: `SELECT * FROM x`
        if not _TRICKY.search(path):
            probe = path if path.startswith("/") or not ctx.cwd else f"{ctx.cwd}/{path}"
            if compiled.needles is None or compiled.needles.search(probe) is None:
                continue
        yield from path_spellings(path, ctx)


def _excluded(path: str, entry: _Entry) -> bool:
    if not entry.excepts:
        return False
    last = path.rsplit("/", 1)[-1]
    if GLOB_CHARS & set(last):
        return False  # a glob may still name a file the exception does not cover
    return any(template_matches(last, compile_template(f"**/{e}")) for e in entry.excepts)


_NO_CONTEXT = PathContext()


def _match(kind: str, word: str, ctx: PathContext | None) -> CredentialHit | None:
    return _match_in(kind, word, ctx or _NO_CONTEXT)


@lru_cache(maxsize=16384)
def _match_in(kind: str, word: str, ctx: PathContext) -> CredentialHit | None:
    """:func:`_match` memoised on its exact inputs: the answer depends on the word, the context (hashed
    by value) and the static ontology only. Tier 0 asks it once per rule for the same words, and a glob
    (``./*``, ``/etc/ssl/private/*.key``) meets tens of templates at ~10 us each."""
    compiled = _compiled(kind, ctx)
    if compiled.hot.search(word) is None and (
        ctx.cwd is None or word.startswith("/") or compiled.hot.search(f"{ctx.cwd}/{word}") is None
    ):
        return None  # the hot path: a word no template can name
    for spelling in _candidates(word, ctx, compiled):
        hits = [(entry, tmpl) for entry, tmpl in compiled.plausible(spelling)
                if template_matches(spelling, tmpl) and not _excluded(spelling, entry)]  # fmt: skip
        if hits:
            # The most specific template names the store (`~/.ssh/*` is ssh, not a `msal_token_cache.*`).
            segs = set(spelling.split("/"))
            entry, tmpl = max(hits, key=lambda hit: sum(1 for seg in hit[1].segments if seg in segs))
            return CredentialHit(entry.id, entry.why, spelling, tmpl.text)
    return None


def credential_path(word: str, ctx: PathContext | None = None) -> CredentialHit | None:
    """The credential store ``word`` names, directly or as an option's value, in any spelling; or None.

    Args:
        word: one argv element (``~/.azure/msal_token_cache.json``, ``--key-file=/etc/ssl/private/x``,
            ``if=/proc/1/environ``, ``@/home/u/.ssh/id_rsa`` ...).
        ctx: where relative paths, ``~`` and variables point (None: unknown, so every spelling is tried).
    """
    return _match("credential", word, ctx)


def credential_word(words: Sequence[str], ctx: PathContext | None = None) -> tuple[str, CredentialHit] | None:
    """The first of ``words`` that names a credential store (with what it names), or None.

    The same answer as :func:`credential_path` on each word in turn, memoised per word in the context's
    compiled ontology: the context is hashed once per command, not once per word (hashing it for every
    word's memo lookup was a tenth of the classifier's time).
    """
    if ctx is None:
        ctx, memo = _NO_CONTEXT, _default_words()
    else:
        memo = _compiled("credential", ctx).words
    for word in words:
        hit = memo.get(word, _MISSING)
        if hit is _MISSING:
            hit = _match_in("credential", word, ctx)
            if len(memo) < _WORD_MEMO:
                memo[word] = hit
        if hit is not None:
            return word, hit
    return None


@cache
def _default_words() -> dict[str, CredentialHit | None]:
    """:func:`credential_word`'s memo for the unknown context, found once: tier 0 asks on every command, and
    finding it through :func:`_compiled` hashes the context each time. (Should ``_compiled`` drop and rebuild
    that context's tables, this memo stays right: its answers depend on the word and the ontology alone.)"""
    return _compiled("credential", _NO_CONTEXT).words


_MISSING: Any = object()
_WORD_MEMO = 16384


def persistence_path(path: str, ctx: PathContext | None = None) -> CredentialHit | None:
    """The persistence target a file the command WRITES is (login script, rc file, authorized_keys, cron,
    systemd unit, a program or library directory), in any spelling; or None."""
    return _match("persistence", path, ctx)


def credential_ancestor(path: str, ctx: PathContext | None = None) -> str | None:
    """The normalised spelling of ``path`` when it is a directory that holds credential stores (the root,
    ``/etc``, ``/var/lib``, a home, ``/home``), so that a recursive read of it reads them; else None."""
    ctx = ctx or _NO_CONTEXT
    compiled = _compiled("credential", ctx)
    for spelling in path_spellings(path, ctx):
        if not spelling.startswith("/"):
            continue
        parts = [p for p in spelling.split("/") if p]
        if spelling in compiled.anchored_dirs or spelling == "/" or (parts[:1] in (["home"], ["root"]) and len(parts) <= 2):
            return spelling
        if ctx.home and (ctx.home == spelling or ctx.home.startswith(spelling.rstrip("/") + "/")):
            return spelling
        if any(GLOB_CHARS & set(p) for p in parts) and len(parts) <= 2:
            return spelling  # `/*`, `/home/*`: any top directory, any home
    return None


@cache
def _secret_name() -> re.Pattern[str]:
    return re.compile(str(_data()["environment"]["secret_name"]))


def secret_env_name(name: str) -> bool:
    """Whether an environment variable called ``name`` holds a secret (``AZURE_CLIENT_SECRET``,
    ``IDENTITY_HEADER``, ``MYSQL_PWD``, ``GITHUB_TOKEN``, ``*_PAT``, ``*_KEY`` ...)."""
    return name.upper() in unconditional_names() or _secret_name().fullmatch(name) is not None


@cache
def unconditional_names() -> frozenset[str]:
    """Names whose value is a secret though their last word reads as metadata (``IDENTITY_HEADER``): the
    redactor's label rule and :func:`secret_env_name` both read them from here."""
    return frozenset(str(n).upper() for n in _data()["environment"].get("unconditional", ()))


@cache
def value_rules() -> Mapping[str, tuple[str, ...]]:
    """The value table: secret query parameters, Authorization schemes and connection-string keys."""
    values = _data()["values"]
    return {k: tuple(str(x).lower() for x in values[k]) for k in ("query_parameters", "auth_schemes", "connection_keys")}
