"""Tier 0 (FORBIDDEN) rules: loaded from ``rules/tier0.toml`` and matched on a parsed argv.

Why a tiny condition language instead of code per rule: the rules are policy, reviewed as data
with a justification and examples each; the matcher below is the only code, and it understands
combined short flags (``-rf``) and long-option abbreviations (``--recurs``), which a plain
token comparison would miss.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from netghost.redact import (
    PathContext,
    credential_ancestor,
    credential_word,
    persistence_path,
    secret_env_name,
)
from netghost.shell.classify._operands import env_command_index, option_views, write_targets

__all__ = ["Tier0Index", "Tier0Rule", "basename", "compile_tier0", "index_tier0", "match_tier0", "with_path_variants"]

_FIELDS = frozenset({
    "id", "binaries", "binary_regex", "short_flags", "long_flags", "arg_regex", "positional_regex",
    "first_positional", "justification", "advice", "match", "not_match", "value_options", "target_regex",
    "no_positional", "credential_operand", "credential_ancestor", "write_class", "secret_env_operand", "no_command",
    "except_binaries",
})  # fmt: skip
_WRITE_CLASSES = frozenset({"persistence"})


@dataclass(frozen=True)
class Tier0Rule:
    """One FORBIDDEN rule; every condition given must hold."""

    id: str
    justification: str
    advice: str
    binaries: frozenset[str]
    binary_regex: re.Pattern[str] | None
    short_flags: frozenset[str]
    long_flags: tuple[str, ...]
    arg_regex: re.Pattern[str] | None
    positional_regex: re.Pattern[str] | None
    first_positional: frozenset[str]
    match: tuple[str, ...]
    not_match: tuple[str, ...]
    value_options: tuple[str, ...] = ()
    target_regex: re.Pattern[str] | None = None
    no_positional: bool = False
    # Conditions answered by the credential ontology (netghost.redact), with the command's PathContext:
    credential_operand: bool = False  # a word (operand or option value, any spelling) names a credential store
    credential_ancestor: bool = False  # an operand is a directory holding credential stores (/, /etc, a home)
    write_class: str = ""  # "persistence": a written file is a login script, rc file, cron entry, unit, binary ...
    secret_env_operand: bool = False  # an operand names a secret environment variable (printenv NAME)
    no_command: bool = False  # env-style: no program follows the options and NAME=VALUE assignments
    except_binaries: frozenset[str] = frozenset()
    shape: str = field(init=False, compare=False, repr=False)
    """Which single kind of argument condition the rule has besides its binaries, when it has one kind only:
    "targets" (the written files: the writer rules for agent state, devices, logs, persistence), "args"
    (``arg_regex``: the reverse-shell rule every command meets) or "credential" (``credential_operand``:
    the credential rule every command meets); "" for any other rule. :func:`match_tier0` tests those
    rules' conditions directly, without :meth:`matches_args`'s walk over the unset ones."""

    def __post_init__(self) -> None:
        kinds = [
            kind for kind, present in (
                ("targets", self.target_regex is not None or bool(self.write_class)),
                ("args", self.arg_regex is not None and not self.value_options),
                ("credential", self.credential_operand),
                ("other", bool(self.short_flags or self.long_flags or self.value_options or self.no_positional
                               or self.positional_regex is not None or self.first_positional or self.credential_ancestor
                               or self.secret_env_operand or self.no_command)),
            ) if present
        ]  # fmt: skip
        object.__setattr__(self, "shape", kinds[0] if len(kinds) == 1 and kinds[0] != "other" else "")

    def matches(
        self,
        name: str,
        args: Sequence[str],
        raw: Sequence[str] | None = None,
        targets: Callable[[], Sequence[str]] | None = None,
        ctx: PathContext | None = None,
    ) -> bool:
        """True when the rule applies to a command named ``name`` with arguments ``args``.

        ``args`` carries the normalised path spellings appended (``with_path_variants``);
        ``raw`` is the argv as typed, which the option grammar (``value_options``) and the write
        targets are read from (they depend on word order). ``targets`` returns ``write_targets(name,
        raw)``: :func:`match_tier0` passes one that computes it at most once per argv, not once per
        rule (a writer has four rules that read it, and it is the costliest condition).
        """
        if self.binaries or self.binary_regex is not None:
            in_list = name in self.binaries
            if not in_list and not (self.binary_regex is not None and self.binary_regex.fullmatch(name)):
                return False
        return self.matches_args(name, args, raw, targets, ctx)

    def matches_args(
        self,
        name: str,
        args: Sequence[str],
        raw: Sequence[str] | None = None,
        targets: Callable[[], Sequence[str]] | None = None,
        ctx: PathContext | None = None,
    ) -> bool:
        """:meth:`matches` for a ``name`` already known to meet the rule's binary condition (the index's
        :meth:`Tier0Index.for_name` list): the binary regexes are not tried again for every command."""
        if name in self.except_binaries:
            return False
        if (self.short_flags or self.long_flags) and not self._has_flag(args):
            return False
        raw = args if raw is None else raw
        if self.value_options:
            joined, operands = option_views(self.value_options, raw)
            words: Sequence[str] = (*args, *joined)
            positionals = [*operands, *args[len(raw) :]]
        else:
            words = args
            # Only the positional conditions read them; most rules (the write-target ones) have none.
            wanted = self.positional_regex is not None or self.no_positional or self.first_positional
            positionals = [a for a in args if a[:1] != "-" or a == "-"] if wanted else []
        if self.arg_regex is not None and not _any_search(self.arg_regex, words):
            return False
        if self.positional_regex is not None and not any(self.positional_regex.fullmatch(p) for p in positionals):
            return False
        if self.no_positional and positionals:
            return False
        if self.target_regex is not None:
            written = write_targets(name, raw) if targets is None else targets()
            if not any(self.target_regex.fullmatch(t) for t in written):
                return False
        if self.first_positional and not (positionals and positionals[0] in self.first_positional):
            return False
        return self._ontology_holds(name, raw, targets, ctx)  # the costliest conditions last

    def _ontology_holds(
        self, name: str, raw: Sequence[str], targets: Callable[[], Sequence[str]] | None, ctx: PathContext | None
    ) -> bool:
        """The ontology's conditions (all that are set must hold)."""
        if self.credential_operand and credential_word(raw, ctx) is None:
            return False
        if self.credential_ancestor:
            operands = [w for w in raw if w[:1] != "-"]
            if not any(credential_ancestor(w, ctx) is not None for w in operands):
                return False
        if self.write_class:
            written = write_targets(name, raw, ctx.cwd if ctx else None) if targets is None else targets()
            if not any(persistence_path(t, ctx) is not None for t in written):
                return False
        if self.secret_env_operand and not any(secret_env_name(w) for w in raw if w[:1] != "-"):
            return False
        return not self.no_command or env_command_index(raw) is None

    def _has_flag(self, args: Sequence[str]) -> bool:
        for a in args:
            if a[:2] == "--":
                word = a.split("=", 1)[0]
                if len(word) > 3 and any(f == word or f.startswith(word) for f in self.long_flags):
                    return True
            elif a[:1] == "-" and len(a) > 1 and any(c in self.short_flags for c in a[1:]):
                return True
        return False


def _any_search(pattern: re.Pattern[str], words: Sequence[str]) -> bool:
    """Whether ``pattern`` occurs in any word (a plain loop: a generator under ``any()`` cost more)."""
    search = pattern.search
    for word in words:  # noqa: SIM110  (measured: the loop is faster on the hot path)
        if search(word) is not None:
            return True
    return False


def basename(word: str) -> str:
    """The program name the kernel would run: ``/usr/bin/rm`` -> ``rm``."""
    return word.rsplit("/", 1)[-1]


def compile_tier0(raw_rules: Sequence[Mapping[str, Any]]) -> tuple[Tier0Rule, ...]:
    """Compile the ``[[rule]]`` list of ``tier0.toml``.

    Raises:
        ValueError: A rule has an unknown field, no id, no justification or no advice.
    """
    rules: list[Tier0Rule] = []
    seen: set[str] = set()
    for raw in raw_rules:
        unknown = set(raw) - _FIELDS
        rid = str(raw.get("id", ""))
        if unknown or not rid or rid in seen:
            raise ValueError(f"tier0 rule {rid or '?'}: unknown fields {sorted(unknown)} or missing/duplicate id")
        if not str(raw.get("justification", "")).strip() or not str(raw.get("advice", "")).strip():
            raise ValueError(f"tier0 rule {rid}: justification and advice are mandatory")
        seen.add(rid)
        br = raw.get("binary_regex")
        ar = raw.get("arg_regex")
        pr = raw.get("positional_regex")
        tr = raw.get("target_regex")
        rules.append(
            Tier0Rule(
                id=rid,
                justification=raw["justification"],
                advice=raw["advice"],
                binaries=frozenset(raw.get("binaries", ())),
                binary_regex=re.compile(br) if br else None,
                short_flags=frozenset(raw.get("short_flags", ())),
                long_flags=tuple(raw.get("long_flags", ())),
                arg_regex=re.compile(ar) if ar else None,
                positional_regex=re.compile(pr) if pr else None,
                first_positional=frozenset(raw.get("first_positional", ())),
                match=tuple(raw.get("match", ())),
                not_match=tuple(raw.get("not_match", ())),
                value_options=tuple(raw.get("value_options", ())),
                target_regex=re.compile(tr) if tr else None,
                no_positional=bool(raw.get("no_positional", False)),
                credential_operand=bool(raw.get("credential_operand", False)),
                credential_ancestor=bool(raw.get("credential_ancestor", False)),
                write_class=_write_class(rid, raw.get("write_class", "")),
                secret_env_operand=bool(raw.get("secret_env_operand", False)),
                no_command=bool(raw.get("no_command", False)),
                except_binaries=frozenset(raw.get("except_binaries", ())),
            )
        )
    return tuple(rules)


def _write_class(rid: str, value: object) -> str:
    if value and value not in _WRITE_CLASSES:
        raise ValueError(f"tier0 rule {rid}: write_class must be one of {sorted(_WRITE_CLASSES)}")
    return str(value or "")


@dataclass(frozen=True)
class Tier0Index:
    """Rules indexed by binary name, so a command is checked only against rules that can apply.

    Rules with a binary regex or no binary condition are checked for every command, in file
    order after the named ones; file order decides among the rules of one binary.
    """

    by_name: Mapping[str, tuple[Tier0Rule, ...]]
    generic: tuple[Tier0Rule, ...]
    rules: tuple[Tier0Rule, ...]
    _for_name: dict[str, tuple[Tier0Rule, ...]] = field(default_factory=dict, compare=False, repr=False)

    def for_name(self, name: str) -> tuple[Tier0Rule, ...]:
        """The rules whose binary condition ``name`` meets, in checking order (named rules, then the
        generic ones). Memoised per name, up to 4,096 names: the regex binaries (``mkfs.*``,
        ``python3.11``) were otherwise tried on every command."""
        hit = self._for_name.get(name)
        if hit is None:
            generic = [r for r in self.generic if _binary_applies(r, name)]
            named = self.by_name.get(name, ())
            hit = (*named, *(r for r in generic if r not in named))
            if len(self._for_name) < 4096:
                self._for_name[name] = hit
        return hit


def _binary_applies(rule: Tier0Rule, name: str) -> bool:
    if not rule.binaries and rule.binary_regex is None:
        return True
    return name in rule.binaries or (rule.binary_regex is not None and rule.binary_regex.fullmatch(name) is not None)


def index_tier0(rules: Sequence[Tier0Rule]) -> Tier0Index:
    """Build the by-binary index of ``rules``."""
    by_name: dict[str, list[Tier0Rule]] = {}
    generic: list[Tier0Rule] = []
    for r in rules:
        if r.binary_regex is not None or not r.binaries:
            generic.append(r)
        for b in r.binaries:
            by_name.setdefault(b, []).append(r)
    return Tier0Index({k: tuple(v) for k, v in by_name.items()}, tuple(generic), tuple(rules))


_NEEDS_NORM = re.compile(r"//|/\.|^\.\.?/|/$")


def _normalise_path(path: str) -> str:
    norm = posixpath.normpath(path)
    return "/" + norm.lstrip("/") if norm.startswith("//") else norm


def with_path_variants(args: Sequence[str]) -> tuple[str, ...]:
    """``args`` plus the normalised spelling of each path-like argument (``//dev/sda``,
    ``/./etc``, ``/tmp/../etc``, ``of=//dev/sda``), appended at the end.

    Why appended rather than replaced: the rules' regexes were written for the plain spelling,
    and a rule that matches either spelling must fire (the kernel resolves ``//`` and ``..``
    the same way). Appending keeps option order and the first positional unchanged.
    """
    extra: list[str] = []
    for a in args:
        if "/" not in a:
            continue  # the hot path: most arguments are not paths
        key, eq, value = a.partition("=")
        if not eq or "/" in key:
            key, eq, value = "", "", a
        if not _NEEDS_NORM.search(value) or value[:1] == "-":
            continue
        norm = _normalise_path(value)
        if norm != value:
            extra.append(f"{key}={norm}" if eq else norm)
    return (*args, *extra) if extra else tuple(args)


def match_tier0(index: Tier0Index, argv: Sequence[str], ctx: PathContext | None = None) -> Tier0Rule | None:
    """The first rule that forbids ``argv``, or None.

    Args:
        index: the compiled rules.
        argv: the command.
        ctx: where relative paths, ``~`` and variables point (the shell's working directory, home and
            environment), for the credential ontology's conditions; None when unknown.
    """
    name = basename(argv[0])
    raw = argv[1:]
    args = with_path_variants(raw)
    written: tuple[str, ...] | None = None  # write_targets(), computed at most once, on first need

    def targets() -> tuple[str, ...]:
        nonlocal written
        if written is None:
            written = write_targets(name, raw, ctx.cwd if ctx else None)
        return written

    for rule in index.for_name(name):
        shape = rule.shape
        if shape == "targets":
            # The conditions matches_args() would test for this rule, without its walk over the unset ones
            # (and a rule about written files cannot apply to a command that writes none).
            written = targets() if written is None else written
            if written and name not in rule.except_binaries and _targets_hold(rule, written, ctx):
                return rule
            continue
        if (rule.target_regex is not None or rule.write_class) and not targets():
            continue
        if not shape:
            if rule.matches_args(name, args, raw, targets, ctx):  # for_name() applied the binary condition
                return rule
        elif name in rule.except_binaries:
            continue
        elif shape == "args":
            if rule.arg_regex is not None and _any_search(rule.arg_regex, args):
                return rule
        elif credential_word(raw, ctx) is not None:  # shape == "credential"
            return rule
    return None


def _targets_hold(rule: Tier0Rule, written: Sequence[str], ctx: PathContext | None) -> bool:
    """:meth:`Tier0Rule.matches_args` for a rule whose only conditions are on the written files."""
    if rule.target_regex is not None:
        fullmatch = rule.target_regex.fullmatch
        if not any(fullmatch(t) for t in written):
            return False
    return not rule.write_class or any(persistence_path(t, ctx) is not None for t in written)
