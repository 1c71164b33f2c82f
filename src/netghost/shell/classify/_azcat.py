"""The catalogue of azure-cli's commands and what each one calls (``data/az_catalogue.json.gz``).

Why a catalogue: judging an az command by its verb (``show`` is a read) let through reads whose
answer is a secret and options that ask for one. The catalogue is generated from the pinned
azure-cli itself (``tools/az_catalogue/generate.py``): for every command, the REST operations it
can call (method, URL template; for hand-written commands, the options that switch operations on),
whether each operation is read-only and whether its response can carry a secret, the local side
effects of its code, and its option strings (azure-cli accepts unambiguous prefixes of long options:
argparse's ``allow_abbrev``, on by default and left on by knack and azure-cli 2.91).

Loaded once per process; a command's entry is compiled on first use (its watched options and their
prefixes), so classifying is dictionary and set lookups.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from netghost.errors import PolicyError
from netghost.shell.classify._armpath import ArmIndex

__all__ = ["Catalogue", "Entry", "Op", "load_catalogue"]

_DATA = ("data", "az_catalogue.json.gz")
_MAX_COMMAND_WORDS = 7


@dataclass(frozen=True)
class Op:
    """One REST operation: method, URL template (``dp:...`` for a data-plane request), whether it
    only reads, and its response's secret class (0 none, 1 marked secret and omitted by az,
    2 printed, 3 not known)."""

    method: str
    template: str
    read_only: bool
    secret: int
    why: str


Effect = int | str  # an operation index, "local:<kind>" or "unresolved:<call>"


@dataclass(frozen=True)
class Entry:
    """One command, compiled for classification."""

    name: str
    kind: str  # aaz | sdk | custom
    always: tuple[Effect, ...]
    conditional: tuple[tuple[frozenset[str], tuple[Effect, ...]], ...]
    options: frozenset[str]
    reveal: frozenset[str]
    extensions: frozenset[str]
    watch: dict[str, str]  # prefix (lower case) of a watched option -> the option
    flags0: frozenset[str]  # short options that take no value (a cluster continues after them)
    memo: dict[tuple[Effect, ...], Any] = field(default_factory=dict, compare=False, repr=False)
    """What the classifier derives from this command's operations alone, per set of effects (kept with the
    entry, so no other catalogue's answer can be taken for it)."""

    def present(self, args: Sequence[str]) -> set[str]:
        """The watched options ``args`` use, abbreviations and ``-abc`` clusters resolved as argparse
        resolves them (compared in lower case, so a case change never hides one)."""
        found: set[str] = set()
        watch = self.watch
        for a in args:
            if a[:1] != "-" or a == "-":
                continue
            name = (a.partition("=")[0] if "=" in a else a).lower()
            hit = watch.get(name)
            if hit is not None:
                found.add(hit)
                continue
            if name[1:2] != "-" and len(name) > 2:  # a short-option cluster: -ux, -uo json (`-u` alone was looked up)
                for ch in name[1:]:
                    short = "-" + ch
                    hit = watch.get(short)
                    if hit is not None:
                        found.add(hit)
                    if short not in self.flags0:
                        break
        return found

    def effects(self, present: set[str]) -> list[Effect]:
        """What the command may do with these options: its unconditional effects and those guarded
        by a present option."""
        out = list(self.always)
        for opts, effs in self.conditional:
            if opts & present:
                out.extend(effs)
        return out


def _prefixes(option: str) -> list[str]:
    """``--debug`` -> ``--d``, ``--de``, ... ``--debug``; a short option is only itself."""
    if not option.startswith("--"):
        return [option.lower()]
    return [option[:n].lower() for n in range(3, len(option) + 1)]


class Catalogue:
    """The loaded catalogue: operations, commands (compiled lazily), the ARM template index."""

    def __init__(self, raw: dict[str, Any]) -> None:
        try:
            self.version = str(raw["azure_cli"])
            self.ops = tuple(Op(str(m), str(t), bool(ro), int(sec), str(why)) for m, t, ro, sec, why in raw["ops"])
            self._raw: dict[str, dict[str, Any]] = dict(raw["commands"])
            self.global_options = frozenset(raw["global_options"])
            self.config_keys = frozenset(k.lower() for k in raw["config_keys"])
        except (KeyError, TypeError, ValueError) as exc:
            raise PolicyError(f"the az catalogue is malformed: {exc}") from exc
        self._entries: dict[str, Entry] = {}
        self._groups = frozenset(" ".join(n.split()[:i]) for n in self._raw for i in range(1, len(n.split()) + 1))
        self._arm: ArmIndex | None = None

    def __len__(self) -> int:
        return len(self._raw)

    def names(self) -> list[str]:
        """Every command name, sorted."""
        return sorted(self._raw)

    def known_group(self, words: Sequence[str]) -> bool:
        """True when ``words`` is a command or a command group of azure-cli."""
        return " ".join(words) in self._groups

    def lookup(self, words: Sequence[str]) -> Entry | None:
        """The command named by the longest run of ``words`` that is one (argparse routes the words
        after a command to it as arguments), or None."""
        for n in range(min(len(words), _MAX_COMMAND_WORDS), 0, -1):
            name = " ".join(words[:n])
            entry = self._entries.get(name)
            if entry is not None:
                return entry
            raw = self._raw.get(name)
            if raw is not None:
                entry = self._compile(name, raw)
                self._entries[name] = entry
                return entry
        return None

    def _compile(self, name: str, raw: dict[str, Any]) -> Entry:
        always = tuple(raw.get("a", ()))
        conditional = tuple((frozenset(opts), tuple(effs)) for opts, effs in raw.get("c", ()))
        options = frozenset(raw.get("o", "").split()) | self.global_options
        reveal = frozenset(raw.get("r", ()))
        every = list(always) + [e for _, effs in conditional for e in effs]
        watched = set(reveal) | {o for opts, _ in conditional for o in opts}
        if any(isinstance(e, int) and self.ops[e].secret == 1 for e in every):
            watched.add("--debug")  # it logs raw response bodies, secret-marked fields included
        watched |= {o for o in options if o.startswith(("--endpoint-", "--suffix-", "--cloud-config"))}
        watch: dict[str, str] = {}
        for o in sorted(watched):
            for p in _prefixes(o):
                watch.setdefault(p, o)
        kinds = {"a": "aaz", "s": "sdk", "c": "custom"}
        return Entry(
            name=name, kind=kinds.get(str(raw.get("k")), "custom"), always=always, conditional=conditional,
            options=options, reveal=reveal, extensions=frozenset(raw.get("x", ())), watch=watch,
            flags0=frozenset(raw.get("f", "").split()),
        )  # fmt: skip

    def arm(self) -> ArmIndex:
        """The template index of every GET/HEAD ARM operation (built on first use)."""
        if self._arm is None:
            self._arm = ArmIndex([(i, op.template) for i, op in enumerate(self.ops)
                                  if op.method in ("GET", "HEAD") and op.template.startswith("/")])  # fmt: skip
        return self._arm


@cache
def load_catalogue() -> Catalogue:
    """The packaged catalogue (read and parsed once per process).

    Raises:
        PolicyError: The file is missing or malformed.
    """
    source = resources.files("netghost.shell.classify").joinpath(*_DATA)
    try:
        raw = json.loads(gzip.decompress(source.read_bytes()))
    except (OSError, ValueError, EOFError) as exc:
        raise PolicyError(f"the az catalogue {'/'.join(_DATA)} cannot be read: {exc}", path=str(source)) from exc
    return Catalogue(raw)


_SEGMENT = re.compile(r"\{\*?[^}]*\}")


@cache
def normalised(template: str) -> str:
    """Lower case with every ``{param}`` as ``{}`` (how templates are compared); memoised, the
    catalogue's templates are a fixed set of a few thousand."""
    return _SEGMENT.sub("{}", template).lower()
