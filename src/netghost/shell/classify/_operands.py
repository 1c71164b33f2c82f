"""What an argv's words are, for the tier-0 rules: option values, operands and write targets.

Why a little grammar instead of per-word regexes: `usermod -aG sudo`, `-aGsudo`, `--groups=sudo`
and `--gro sudo` are one request, and `cp x ~/.bashrc` writes a start-up file while
`cp ~/.bashrc /tmp/x` only reads one. A rule names the options that take a value
(``value_options``); these helpers join each such option with its value (``-G=sudo``) and keep
values out of the operands, and name the files a writer (tee, cp, dd, sed -i ...) writes.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

__all__ = ["WRITERS", "env_command_index", "option_views", "write_targets"]

# How each writer names the files it writes: every operand, the last operand (cp-style: plus
# `-t DIR` / `--target-directory=DIR`, and DIR/<source name> for each source), `of=` (dd), the
# value of an output option (curl, wget, sort, gpg, openssl ...), every operand when editing in place
# (sed -i), the second operand (uniq, xxd), a download named after its URL (curl -O, wget), or every
# name inside an extraction directory (tar -x, unzip).
_EVERY_OPERAND = frozenset({"tee", "truncate", "touch", "shred", "srm", "wipe", "rm", "unlink", "mv", "rmdir"})
_LAST_OPERAND = frozenset({"cp", "install", "ln", "link", "rsync", "scp"})
_TARGET_DIR = ("-t", "--target-directory")
_HAS_TARGET_DIR = frozenset({"cp", "install", "ln"})  # rsync's -t keeps times, scp has none
_OUTPUT_OPTIONS: dict[str, tuple[str, ...]] = {
    "curl": ("-o", "--output", "-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii", "--libcurl",
             "--stderr", "--etag-save", "--hsts", "--alt-svc"),
    "wget": ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "--save-cookies"),
    "sort": ("-o", "--output"), "shuf": ("-o", "--output"), "gpg": ("-o", "--output"), "gpg2": ("-o", "--output"),
    "openssl": ("-out", "--out", "-keyout"), "ssh-keygen": ("-f",), "tcpdump": ("-w",), "tshark": ("-w",),
    "http": ("-o", "--output"), "https": ("-o", "--output"), "xh": ("-o", "--output"),
}  # fmt: skip
_SECOND_OPERAND = frozenset({"uniq", "xxd"})
_IN_PLACE = frozenset({"sed", "gsed", "busybox-sed"})
_EXTRACTORS = frozenset({"tar", "gtar", "bsdtar", "unzip", "7z", "7za"})
WRITERS = (
    _EVERY_OPERAND | _LAST_OPERAND | frozenset(_OUTPUT_OPTIONS) | _IN_PLACE | _SECOND_OPERAND | _EXTRACTORS
    | {"dd", "az", "aria2c"}
)
_ENV_VALUE_OPTIONS = ("-u", "--unset", "-C", "--chdir", "-S", "--split-string")
_HOME_LIKE = re.compile(r"~[A-Za-z0-9_.-]*|\$HOME|\$\{HOME\}|/+root|/+home/+[^/]+|/")
_ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.S)


def _value_option(options: Sequence[str], word: str) -> tuple[str, str | None] | None:
    """The listed option ``word`` spells and its inline value, or None.

    ``--name=v``, ``--nam v`` (a getopt_long abbreviation of 4+ characters), ``-x v``, ``-x v``
    at the end of a short cluster (``-aG v``) and ``-xv`` / ``-aGv`` (the rest of the cluster).
    """
    if word[:1] != "-" or len(word) < 2:
        return None
    return _table_option(_option_table(options), word)


def _table_option(table: _OptionTable, word: str) -> tuple[str, str | None] | None:
    """:func:`_value_option` for an option ``word`` (``-`` and at least one more character) and the
    compiled table of the options: :func:`option_views` looks the table up once per argv, not per word."""
    prefixes, long_set, shorts = table
    if word[1] == "-":
        name, eq, value = word.partition("=")
        if len(name) <= 3:  # too short to abbreviate: only the exact option
            return (name, value if eq else None) if name in long_set else None
        opt = prefixes.get(name)  # the first listed option it spells (exactly, or as a 4+ character prefix)
        return None if opt is None else (opt, value if eq else None)
    for i, ch in enumerate(word[1:], start=1):
        if ch in shorts:
            return "-" + ch, word[i + 1 :] or None
    return None


_OptionTable = tuple[dict[str, str], frozenset[str], frozenset[str]]
_OPTION_TABLES: dict[int, tuple[Sequence[str], _OptionTable]] = {}


def _option_table(options: Sequence[str]) -> _OptionTable:
    """(every 4+ character prefix of a long option -> the first listed long option it begins, the long
    options as a set, the letters of the one-letter options) of ``options``: an abbreviation is one
    dictionary lookup, not a ``startswith`` per listed option.

    Kept per options object (the callers pass fixed tuples), checked by identity so a reused id never
    answers for another tuple: hashing a dozen-option tuple on every word cost more than the lookup."""
    hit = _OPTION_TABLES.get(id(options))
    if hit is not None and hit[0] is options:
        return hit[1]
    longs = tuple(o for o in options if o[:2] == "--")
    prefixes: dict[str, str] = {}
    for o in longs:
        for n in range(4, len(o) + 1):
            prefixes.setdefault(o[:n], o)
    table = (prefixes, frozenset(longs), frozenset(o[1] for o in options if len(o) == 2 and o[0] == "-"))
    if isinstance(options, tuple) and len(_OPTION_TABLES) < 1024:  # a tuple cannot change under the key
        _OPTION_TABLES[id(options)] = (options, table)
    return table


def option_views(options: Sequence[str], args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(``opt=value`` for each listed option given, the operands: non-option words that are no
    listed option's value). Everything after ``--`` is an operand."""
    joined: list[str] = []
    operands: list[str] = []
    table = _option_table(options) if options else None
    i, n = 0, len(args)
    while i < n:
        word = args[i]
        i += 1
        if word == "--":
            operands.extend(args[i:])
            break
        # No listed option spells a non-option word, a lone `-` or `--`: skip the call on the common operand.
        hit = _table_option(table, word) if table is not None and word[:1] == "-" and len(word) > 1 else None
        if hit is not None:
            opt, value = hit
            if value is None and i < n:
                value = args[i]
                i += 1
            if value is not None:
                joined.append(f"{opt}={value}")
        elif word[:1] != "-" or word == "-":
            operands.append(word)
    return joined, operands


def _spellings(path: str) -> tuple[str, ...]:
    if "/" not in path or path[:1] == "-":
        return (path,)
    norm = posixpath.normpath(path)
    norm = "/" + norm.lstrip("/") if norm.startswith("//") else norm
    return (path,) if norm == path else (path, norm)


def _in_place(args: Sequence[str]) -> bool:
    for a in args:
        if a.startswith("--in-place") or (a.startswith("--in") and "--in-place".startswith(a.split("=", 1)[0])):
            return True
        if a[:1] == "-" and a[:2] != "--":
            cluster = a[1:]
            for ch in cluster:
                if ch == "i":
                    return True
                if ch in "efl":  # these take the rest of the cluster as their value
                    break
    return False


def _cp_style(name: str, args: Sequence[str]) -> list[str]:
    joined, operands = option_views(_TARGET_DIR if name in _HAS_TARGET_DIR else (), args)
    dirs = [j.split("=", 1)[1] for j in joined]
    if dirs:
        sources = operands
    elif operands:
        dirs, sources = [operands[-1]], operands[:-1]
    else:
        return []
    out = list(dirs)
    for d in dirs:
        out += [d.rstrip("/") + "/" + posixpath.basename(s.rstrip("/")) for s in sources if s.rstrip("/")]
    return out


def _url_names(urls: Sequence[str], directory: str | None) -> list[str]:
    """The files a download named after its URL writes (``curl -O``, ``wget``): the path's last segment."""
    out = []
    for url in urls:
        try:
            path = urlsplit(url if "://" in url else "http://" + url).path
        except ValueError:
            continue
        base = posixpath.basename(path) or "index.html"
        out.append(f"{directory.rstrip('/')}/{base}" if directory else base)
    return out


def _download_targets(name: str, args: Sequence[str], cwd: str | None) -> list[str]:
    if name == "curl":
        # Every spelling of a remote-name download holds an `O` or `--remote-name`: most lines hold neither.
        line = "\n".join(args)
        remote = ("O" in line or "--remote-name" in line) and any(
            a in ("-O", "--remote-name", "--remote-name-all") or (a[:1] == "-" and a[:2] != "--" and "O" in a[1:]) for a in args
        )
        if not remote:
            return []  # checked first: most curl lines name no remote file, and the option walk below costs more
        joined, operands = option_views(("--output-dir", "--url"), args)
        dirs = [j.split("=", 1)[1] for j in joined if j.startswith("--output-dir=")]
        urls = [u for u in operands if "://" in u or "." in u] + [j.split("=", 1)[1] for j in joined if j.startswith("--url=")]
        return _url_names(urls, dirs[0] if dirs else cwd)
    joined, operands = option_views(("-P", "--directory-prefix", "-O", "--output-document", "-o", "-a", "-e", "-i", "-B"), args)
    if any(j.startswith(("-O=", "--output-document=")) for j in joined):
        return []
    dirs = [j.split("=", 1)[1] for j in joined if j.startswith(("-P=", "--directory-prefix="))]
    return _url_names(operands, dirs[0] if dirs else cwd)


def _extraction_targets(name: str, args: Sequence[str], cwd: str | None) -> list[str]:
    """Every name an extraction can create: ``DIR/*`` and ``DIR/.*`` (dotfiles too) of its directory."""
    if name == "unzip":
        joined, _ = option_views(("-d",), args)
        dirs = [j.split("=", 1)[1] for j in joined]
    elif name in ("7z", "7za"):
        if not args or args[0] not in ("x", "e"):
            return []
        dirs = [a[2:] for a in args if a.startswith("-o") and len(a) > 2]
    else:
        first = args[0] if args else ""
        extract = any(a in ("--extract", "--get") for a in args) or (
            (first[:1] == "-" and first[:2] != "--" and "x" in first) or (first and first[0] == "x")
        )
        joined, _ = option_views(("-C", "--directory", "-f", "--file"), args)
        if not extract:  # create/append: the archive itself is the written file
            create = any(a in ("--create", "--append", "--update") for a in args) or (bool(first) and (
                any(c in first.lstrip("-") for c in "cru") and first[:2] != "--"
            ))
            if not create:
                return []
            archives = [j.split("=", 1)[1] for j in joined if j.startswith(("-f=", "--file="))]
            if first and first[:1] != "-" and "f" in first and len(args) > 1:
                archives.append(args[1])  # old-style `tar czf ARCHIVE ...`
            return archives
        dirs = [j.split("=", 1)[1] for j in joined if j.startswith(("-C=", "--directory="))]
    if not dirs:
        dirs = [cwd] if cwd else ["."]
    # `DIR/*` names every file an archive can create there; dot files (`.bashrc`, `.ssh/`) only count in a
    # home, where they are start-up files (`~/.bashrc` is a template under any directory).
    out = [f"{d.rstrip('/')}/*" for d in dirs] + list(dirs)
    out += [f"{d.rstrip('/')}/.*" for d in dirs if _HOME_LIKE.fullmatch(d.rstrip("/") or "/")]
    return out


_AZ_WRITE_VERBS = frozenset({"download", "download-batch", "export", "get-credentials", "save", "get-default-config"})


def _az_targets(args: Sequence[str]) -> list[str]:
    """Files az writes: a download's or export's ``--file``/``-f``, a batch download's ``--destination``."""
    if _AZ_WRITE_VERBS.isdisjoint(map(str.lower, args)):
        return []  # (an option word starts with `-`, so it is never one of the verbs)
    joined, _ = option_views(("-f", "--file", "-d", "--destination", "--output-file", "--path"), args)
    return [j.split("=", 1)[1] for j in joined]


def env_command_index(args: Sequence[str]) -> int | None:
    """The index of the program ``env ARGS`` runs (after its options and NAME=VALUE assignments), or None
    when it runs none: then ``env`` prints the whole environment."""
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a == "--":
            i += 1
            break
        if a == "-":
            i += 1
            continue
        if a[:1] == "-":
            hit = _value_option(_ENV_VALUE_OPTIONS, a)
            i += 2 if hit is not None and hit[1] is None else 1
            continue
        break
    while i < n and _ENV_ASSIGNMENT.fullmatch(args[i]):
        i += 1
    return i if i < n else None


def write_targets(name: str, args: Sequence[str], cwd: str | None = None) -> tuple[str, ...]:
    """The files the writer ``name`` writes (or removes) given ``args``, each also in its
    normalised spelling (``//dev/sda``, ``/tmp/../etc``); empty for a program that is not a writer.

    ``cwd`` (the command's working directory, when known) is where a download named after its URL or an
    extraction without a directory lands."""
    if name not in WRITERS:
        return ()  # one set lookup for the common case, not the whole chain below
    if name in _EVERY_OPERAND or (name in _IN_PLACE and _in_place(args)):
        raw = option_views((), args)[1]
    elif name in _LAST_OPERAND:
        raw = _cp_style(name, args)
    elif name == "dd":
        raw = [a[3:] for a in args if a.startswith("of=")]
    elif name in _SECOND_OPERAND:
        raw = option_views(("-c", "-s", "-l", "-o", "-g", "-C", "-n", "-f", "-w"), args)[1][1:2]
    elif name in _EXTRACTORS:
        raw = _extraction_targets(name, args, cwd)
    elif name == "az":
        raw = _az_targets(args)
    elif name == "aria2c":
        joined = option_views(("-d", "--dir", "-o", "--out"), args)[0]
        dirs = [j.split("=", 1)[1] for j in joined if j.startswith(("-d=", "--dir="))] or [cwd or "."]
        names = [j.split("=", 1)[1] for j in joined if j.startswith(("-o=", "--out="))] or ["*"]
        raw = [f"{d.rstrip('/')}/{n}" for d in dirs for n in names] + [n for n in names if n.startswith("/")]
    elif name in _OUTPUT_OPTIONS:
        raw = [j.split("=", 1)[1] for j in option_views(_OUTPUT_OPTIONS[name], args)[0]]
        if name in ("curl", "wget"):
            raw += _download_targets(name, args, cwd)
    else:
        return ()
    out: list[str] = []
    for path in raw:
        out.extend(_spellings(path))
    return tuple(out)
