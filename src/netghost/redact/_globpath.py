"""What file a word can name: its spellings, and whether a path (or a glob) can meet a path template.

Why this exists: ``/etc/shadow`` is also ``//etc/./shadow``, ``/tmp/../etc/shadow``, ``/proc/self/root/etc/
shadow``, ``~/../../etc/shadow``, ``shadow`` from ``/etc``, ``/etc/sha*``, ``/etc/sh[a]dow`` and
``/etc/{passwd,shadow}``. No shell runs the command, so none of these is expanded before the program
sees it; but the intent is plain, and a program may expand it itself (tar, rsync, scp, find). So a word
is turned into every path it can stand for (braces expanded, homes, ``$HOME``, ``/proc/<pid>/root`` and the
working directory resolved, ``..`` folded lexically: no symlink is followed), and each is compared with
the ontology's templates segment by segment, a glob in the word meeting a glob in the template when some
file name could match both.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = [
    "GLOB_CHARS",
    "PathContext",
    "Template",
    "compile_template",
    "globs_intersect",
    "literal_run",
    "path_spellings",
    "segment_matches",
    "template_matches",
]

GLOB_CHARS = frozenset("*?[")
_PRINTABLE = frozenset(chr(c) for c in range(32, 127)) - {"/"}
_MAX_ALTERNATIVES = 32
_BRACE = re.compile(r"\{([^{}]*,[^{}]*)\}")
_PROC_ROOT = re.compile(r"^/+proc/+(?:self|thread-self|[0-9]+|[*?\[\]0-9a-z-]+)/+(?:task/+[^/]+/+)?root(?:/+|$)")
_PROC_CWD = re.compile(r"^/+proc/+(?:self|thread-self|[0-9]+|[*?\[\]0-9a-z-]+)/+(?:task/+[^/]+/+)?cwd(?:/+|$)")
_HOME_VAR = re.compile(r"^(?:\$HOME|\$\{HOME\})(?=/|$)")
_ENV_VAR = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))(?=/|$)")
_TILDE = re.compile(r"^~([A-Za-z0-9_.-]*)(?=/|$)")
# Where a home is when the shell's own is not known: root's, and a typical user's (depth matters for `..`).
_HOMES = ("/root", "/home/_")

Token = frozenset[str] | None  # None is `*`; a set is the characters one position takes


@dataclass(frozen=True)
class PathContext:
    """Where a relative path, ``~`` and ``$VAR`` point: the shell's working directory, its home, and the
    environment variables that name credential locations. Empty fields mean "not known": the ontology
    then assumes the worst spelling (any home; a relative path may start anywhere, the root included).

    Attributes:
        cwd: the working directory of the command (absolute), or None.
        home: the home directory ``~`` stands for, or None.
        env: (name, value) pairs of the variables the ontology's templates name.
        path_dirs: the directories of the command's PATH (programs there run when named).
    """

    cwd: str | None = None
    home: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    path_dirs: tuple[str, ...] = ()
    _env_map: dict[str, str] = field(default_factory=dict, compare=False, hash=False, repr=False)
    _hash: int = field(default=0, init=False, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        self._env_map.update(self.env)
        # Hashed once: the ontology's memoised questions are keyed on the context, several per word.
        object.__setattr__(self, "_hash", hash((self.cwd, self.home, self.env, self.path_dirs)))

    def __hash__(self) -> int:
        return self._hash

    def variable(self, name: str) -> str | None:
        """The value of an environment variable the context knows, or None."""
        return self._env_map.get(name)

    @classmethod
    def from_environ(
        cls, environ: Mapping[str, str], names: Sequence[str], *, cwd: str | None = None
    ) -> PathContext:
        """A context from an environment: HOME, PATH and the ``names`` the templates use."""
        env = tuple(sorted((n, environ[n]) for n in names if environ.get(n)))
        path_dirs = tuple(d for d in environ.get("PATH", "").split(":") if d.startswith("/"))
        home = environ.get("HOME") or None
        return cls(cwd=_norm(cwd) if cwd else None, home=_norm(home) if home else None, env=env, path_dirs=path_dirs)


def _norm(path: str) -> str:
    """Lexical normalisation the kernel agrees with: ``//`` is ``/``, ``a/../b`` is ``b`` (no symlinks read)."""
    norm = posixpath.normpath(path)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return norm


def _expand_braces(word: str) -> list[str]:
    """Brace alternatives (``a{b,c}d`` -> ``abd``, ``acd``), nested, at most 32 spellings."""
    out = [word]
    for _ in range(8):
        nxt: list[str] = []
        changed = False
        for w in out:
            m = _BRACE.search(w)
            if m is None:
                nxt.append(w)
                continue
            changed = True
            nxt.extend(w[: m.start()] + part + w[m.end() :] for part in m.group(1).split(","))
        out = nxt[:_MAX_ALTERNATIVES]
        if not changed:
            break
    return out


def _homes(name: str, ctx: PathContext) -> tuple[str, ...]:
    if name == "root":
        return ("/root",)
    if name:
        return (f"/home/{name}",)
    return (ctx.home,) if ctx.home else _HOMES


def _rooted(path: str, ctx: PathContext) -> list[str]:
    """``path`` with its home, variable and /proc prefixes resolved (several spellings when unknown)."""
    m = _TILDE.match(path) or _HOME_VAR.match(path)
    if m is not None:
        name = m.group(1) if m.re is _TILDE and m.group(1) else ""
        return [home + path[m.end() :] for home in _homes(name, ctx)]
    m = _ENV_VAR.match(path)
    if m is not None:
        value = ctx.variable(m.group(1) or m.group(2))
        return [value + path[m.end() :]] if value else [path]
    return [path]


def path_spellings(word: str, ctx: PathContext) -> tuple[str, ...]:
    """Every normalised path ``word`` can name (absolute where the context allows; relative otherwise).

    A relative path with no known working directory is also tried from the root: `etc/shadow` run from
    ``/`` is ``/etc/shadow``, and ``../../../etc/shadow`` reaches it from anywhere.
    """
    out: list[str] = []
    for alt in _expand_braces(word) if "{" in word else [word]:
        for rooted in _rooted(alt, ctx):
            path = _through_proc(rooted, ctx)
            if not path.startswith("/") and ctx.cwd:
                path = f"{ctx.cwd}/{path}"
            norm = _norm(path)
            out.append(norm)
            if not norm.startswith("/"):
                out.append(_norm("/" + norm))  # `..` above "/" stays at "/"
    return tuple(dict.fromkeys(out))


def _through_proc(path: str, ctx: PathContext) -> str:
    """``/proc/<pid>/root/x`` is ``/x``, ``/proc/<pid>/cwd/x`` is ``x`` in the working directory (repeatedly)."""
    for _ in range(4):
        m = _PROC_ROOT.match(path)
        if m is not None:
            path = "/" + path[m.end() :]
            continue
        m = _PROC_CWD.match(path)
        if m is not None:
            rest = path[m.end() :]
            path = f"{ctx.cwd}/{rest}" if ctx.cwd else (rest or ".")
            continue
        break
    return path


# --- globs ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _tokens(pattern: str) -> tuple[Token, ...]:
    """A one-segment glob as tokens: ``*`` (None), or the set of characters one position takes."""
    out: list[Token] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if not out or out[-1] is not None:
                out.append(None)
        elif c == "?":
            out.append(_PRINTABLE)
        elif c == "[":
            end, chars = _bracket(pattern, i)
            if end < 0:
                out.append(frozenset("["))
            else:
                out.append(chars)
                i = end
        else:
            out.append(frozenset(c))
        i += 1
    return tuple(out)


def _bracket(pattern: str, start: int) -> tuple[int, frozenset[str]]:
    """(index of the closing ``]``, the characters the class takes), or (-1, empty) when it does not close."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    chars: set[str] = set()
    first = True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            picked = frozenset(_PRINTABLE - chars) if negate else frozenset(chars & _PRINTABLE)
            return i, picked
        if i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            chars.update(chr(x) for x in range(ord(c), ord(pattern[i + 2]) + 1))
            i += 3
        else:
            chars.add(c)
            i += 1
        first = False
    return -1, frozenset()


@lru_cache(maxsize=16384)
def globs_intersect(a: str, b: str) -> bool:
    """Whether some file name matches both one-segment globs ``a`` and ``b`` (literals are globs too)."""
    if not (GLOB_CHARS & set(a)) and not (GLOB_CHARS & set(b)):
        return a == b
    ta, tb = _tokens(a), _tokens(b)
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        hit = memo.get(key)
        if hit is not None:
            return hit
        if i == len(ta) and j == len(tb):
            res = True
        elif i < len(ta) and ta[i] is None:
            res = go(i + 1, j) or (j < len(tb) and go(i, j + 1))
        elif j < len(tb) and tb[j] is None:
            res = go(i, j + 1) or (i < len(ta) and go(i + 1, j))
        elif i == len(ta) or j == len(tb):
            res = False
        else:
            left, right = ta[i], tb[j]
            res = left is not None and right is not None and bool(left & right) and go(i + 1, j + 1)
        memo[key] = res
        return res

    return go(0, 0)


# --- templates ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """One compiled path template: its segments (``**`` for any depth) and whether it floats (``~/``)."""

    text: str
    segments: tuple[str, ...]
    floating: bool


def compile_template(text: str) -> Template:
    """``~/x`` floats (matches under any directory), ``/x`` is anchored at the root (after normalisation)."""
    floating = text.startswith(("~/", "**/"))
    body = text[2:] if text.startswith("~/") else text
    norm = _norm(body) if body.startswith("/") else body
    segs = tuple(s for s in norm.split("/") if s)
    if floating and segs[:1] != ("**",):
        segs = ("**", *segs)
    return Template(text=text, segments=segs, floating=floating)


_PURE_WILDCARD = re.compile(r"[*?]+")


def _segments_match(path: tuple[str, ...], tmpl: tuple[str, ...], floating: bool) -> bool:
    """Segment-wise match, ``**`` spanning any depth. A path segment that is nothing but wildcards (``*``)
    does not meet a floating template's name (``**/id_rsa``, ``**/*.key``): `grep x /srv/app/*` names every
    file there, which is no evidence of a key; an anchored location (``/etc/*`` holds /etc/shadow) is."""
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        hit = memo.get(key)
        if hit is not None:
            return hit
        if j == len(tmpl):
            res = i == len(path)
        elif tmpl[j] == "**":
            res = any(go(k, j + 1) for k in range(i, len(path) + 1))
        elif i == len(path):
            res = False
        else:
            seg = "*" if path[i] == "**" else path[i]
            # A shell glob never matches a leading dot by `*`, `?` or `[...]` (no dotglob): `~/.ssh/*` is
            # not `~/.ssh/.azure`. The templates' own globs do match dot files (`**/*.key`).
            hidden = tmpl[j].startswith(".") and seg[:1] in GLOB_CHARS
            vague = floating and _PURE_WILDCARD.fullmatch(seg) is not None
            res = not hidden and not vague and globs_intersect(seg, tmpl[j]) and go(i + 1, j + 1)
        memo[key] = res
        return res

    return go(0, 0)


@lru_cache(maxsize=4096)
def _literal_regex(segments: tuple[str, ...]) -> re.Pattern[str]:
    """The template as one regex over a glob-free path written ``seg/seg/.../`` (each segment followed by a
    slash): ``**`` any number of whole segments, each glob token a character class that never spans a
    segment. The same answers as :func:`_segments_match` for a path without wildcards, in one C call
    instead of a Python recursion per template (the FORBIDDEN path checked every template so)."""
    parts: list[str] = []
    for seg in segments:
        if seg == "**":
            parts.append("(?:[^/]+/)*")
            continue
        for token in _tokens(seg):
            if token is None:
                parts.append("[^/]*")
            elif len(token) == 1:
                parts.append(re.escape(next(iter(token))))
            else:
                chars = sorted(token - {"/"})
                parts.append("[" + "".join(re.escape(c) for c in chars) + "]" if chars else "(?!)")
        parts.append("/")
    return re.compile("".join(parts), re.DOTALL)


def literal_run(tmpl: Template) -> str:
    """The longest run of literal characters inside one of the template's segments: a glob-free path the
    template names contains it verbatim, so a path without it needs no closer look."""
    best = ""
    for seg in tmpl.segments:
        run = ""
        for token in _tokens(seg) if seg != "**" else ():
            if token is not None and len(token) == 1:
                run += next(iter(token))
                best = max(best, run, key=len)
            else:
                run = ""
    return best


def segment_matches(glob: str, name: str) -> bool:
    """Whether the one-segment ``glob`` matches the glob-free file ``name`` (one regex call)."""
    return _literal_regex((glob,)).fullmatch(name + "/") is not None


def template_matches(spelling: str, tmpl: Template) -> bool:
    """Whether the normalised path ``spelling`` can be a file the template names."""
    absolute = spelling.startswith("/")
    if not tmpl.floating and not absolute:
        return False
    segs = tuple(s for s in spelling.split("/") if s and s != ".")
    if not GLOB_CHARS & set(spelling):  # a plain path: the template's regex decides
        return _literal_regex(tmpl.segments).fullmatch("".join(s + "/" for s in segs)) is not None
    return _segments_match(segs, tmpl.segments, tmpl.floating)
