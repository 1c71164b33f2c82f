"""What an argv's words are, for the tier-0 rules: option values, operands and write targets.

Why a little grammar instead of per-word regexes: `usermod -aG sudo`, `-aGsudo`, `--groups=sudo`
and `--gro sudo` are one request, and `cp x ~/.bashrc` writes a start-up file while
`cp ~/.bashrc /tmp/x` only reads one. A rule names the options that take a value
(``value_options``); these helpers join each such option with its value (``-G=sudo``) and keep
values out of the operands, and name the files a writer (tee, cp, dd, sed -i ...) writes.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from functools import lru_cache

__all__ = ["WRITERS", "option_views", "write_targets"]

# How each writer names the files it writes: every operand, the last operand (cp-style: plus
# `-t DIR` / `--target-directory=DIR`, and DIR/<source name> for each source), `of=` (dd), the
# value of an output option (curl, wget), or every operand when editing in place (sed -i).
_EVERY_OPERAND = frozenset({"tee", "truncate", "touch", "shred", "srm", "wipe", "rm", "unlink", "mv", "rmdir"})
_LAST_OPERAND = frozenset({"cp", "install", "ln", "link", "rsync", "scp"})
_TARGET_DIR = ("-t", "--target-directory")
_HAS_TARGET_DIR = frozenset({"cp", "install", "ln"})  # rsync's -t keeps times, scp has none
_OUTPUT_OPTIONS: dict[str, tuple[str, ...]] = {"curl": ("-o", "--output"), "wget": ("-O", "--output-document")}
_IN_PLACE = frozenset({"sed", "gsed", "busybox-sed"})
WRITERS = _EVERY_OPERAND | _LAST_OPERAND | frozenset(_OUTPUT_OPTIONS) | _IN_PLACE | {"dd"}


def _value_option(options: Sequence[str], word: str) -> tuple[str, str | None] | None:
    """The listed option ``word`` spells and its inline value, or None.

    ``--name=v``, ``--nam v`` (a getopt_long abbreviation of 4+ characters), ``-x v``, ``-x v``
    at the end of a short cluster (``-aG v``) and ``-xv`` / ``-aGv`` (the rest of the cluster).
    """
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        for opt in options:
            if opt.startswith("--") and (opt == name or (len(name) > 3 and opt.startswith(name))):
                return opt, value if eq else None
        return None
    if not word.startswith("-") or len(word) < 2:
        return None
    shorts = _short_letters(tuple(options))
    for i, ch in enumerate(word[1:], start=1):
        if ch in shorts:
            return "-" + ch, word[i + 1 :] or None
    return None


@lru_cache(maxsize=256)
def _short_letters(options: tuple[str, ...]) -> frozenset[str]:
    """The letters of the one-letter options among ``options`` (a rule's fixed tuple)."""
    return frozenset(o[1] for o in options if len(o) == 2 and o[0] == "-")


def option_views(options: Sequence[str], args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(``opt=value`` for each listed option given, the operands: non-option words that are no
    listed option's value). Everything after ``--`` is an operand."""
    joined: list[str] = []
    operands: list[str] = []
    i, n = 0, len(args)
    while i < n:
        word = args[i]
        i += 1
        if word == "--":
            operands.extend(args[i:])
            break
        hit = _value_option(options, word) if options else None
        if hit is not None:
            opt, value = hit
            if value is None and i < n:
                value = args[i]
                i += 1
            if value is not None:
                joined.append(f"{opt}={value}")
        elif not word.startswith("-") or word == "-":
            operands.append(word)
    return joined, operands


def _spellings(path: str) -> tuple[str, ...]:
    if "/" not in path or path.startswith("-"):
        return (path,)
    norm = posixpath.normpath(path)
    norm = "/" + norm.lstrip("/") if norm.startswith("//") else norm
    return (path,) if norm == path else (path, norm)


def _in_place(args: Sequence[str]) -> bool:
    for a in args:
        if a.startswith("--in-place") or (a.startswith("--in") and "--in-place".startswith(a.split("=", 1)[0])):
            return True
        if a.startswith("-") and not a.startswith("--"):
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


def write_targets(name: str, args: Sequence[str]) -> tuple[str, ...]:
    """The files the writer ``name`` writes (or removes) given ``args``, each also in its
    normalised spelling (``//dev/sda``, ``/tmp/../etc``); empty for a program that is not a writer."""
    if name in _EVERY_OPERAND or (name in _IN_PLACE and _in_place(args)):
        raw = option_views((), args)[1]
    elif name in _LAST_OPERAND:
        raw = _cp_style(name, args)
    elif name == "dd":
        raw = [a[3:] for a in args if a.startswith("of=")]
    elif name in _OUTPUT_OPTIONS:
        raw = [j.split("=", 1)[1] for j in option_views(_OUTPUT_OPTIONS[name], args)[0]]
    else:
        return ()
    return tuple(s for path in raw for s in _spellings(path))
