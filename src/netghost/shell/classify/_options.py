"""Option parsing the way the real binaries parse, driven by a per-binary spec from ``rules/tier1.toml``.

Why this exists: a token-equality check misses ``-sXPOST`` (combined short flags), ``--data-ra``
(curl and getopt_long accept unique prefixes of long options), ``--output=/etc/x`` (``=``-attached
values) and options placed after positionals (GNU getopt permutes). Each spec lists every option
the binary knows that matters: allowed flags, allowed value options with a value check, and
denied options with the reason. An option the spec does not know is never auto-run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from netghost.shell.classify._values import ValueCheck, compile_check

__all__ = ["OptionSpec", "ParsedOptions", "compile_spec", "parse_options"]


@dataclass(frozen=True)
class OptionSpec:
    """The compiled option table of one binary (see ``rules/tier1.toml`` for the fields)."""

    name: str
    justification: str
    short_flags: frozenset[str]
    short_values: Mapping[str, ValueCheck]
    long_flags: frozenset[str]
    long_values: Mapping[str, ValueCheck]
    deny: Mapping[str, str]
    aliases: Mapping[str, str]
    long_prefix: bool
    long_eq: bool
    long_no: bool
    single_dash_long: bool
    positional: ValueCheck
    min_positional: int
    max_positional: int
    plus_options: re.Pattern[str] | None
    at_server: bool
    require_any: frozenset[str]
    require_reason: str
    match: tuple[str, ...] = ()
    not_match: tuple[str, ...] = ()
    all_long: tuple[str, ...] = field(default=())


@dataclass
class ParsedOptions:
    """What one argv said, in canonical option names, or the first problem found."""

    options: list[tuple[str, str | None]] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)
    problem: str | None = None

    def has(self, *names: str) -> bool:
        return any(n in names for n, _ in self.options)

    def values(self, *names: str) -> list[str]:
        return [v for n, v in self.options if n in names and v is not None]


def compile_spec(name: str, raw: Mapping[str, Any]) -> OptionSpec:
    """Compile one ``[binary.NAME]`` table.

    Raises:
        ValueError: An unknown field or value check (reported as a rule-file error at load).
    """
    known = {
        "justification", "short_flags", "short_values", "long_flags", "long_values", "deny", "aliases",
        "long_prefix", "long_eq", "long_no", "single_dash_long", "positional", "min_positional",
        "max_positional", "plus_options", "at_server", "require_any", "require_reason", "match", "not_match",
    }  # fmt: skip
    unknown = set(raw) - known
    if unknown:
        raise ValueError(f"binary {name}: unknown fields {sorted(unknown)}")
    if not str(raw.get("justification", "")).strip():
        raise ValueError(f"binary {name}: a justification is mandatory")
    short_values = {k: compile_check(v) for k, v in raw.get("short_values", {}).items()}
    long_values = {k: compile_check(v) for k, v in raw.get("long_values", {}).items()}
    long_flags = frozenset(raw.get("long_flags", []))
    deny = dict(raw.get("deny", {}))
    aliases = dict(raw.get("aliases", {}))
    all_long = tuple(sorted({*long_flags, *long_values, *(k for k in deny if k[:2] == "--"), *(k for k in aliases if k[:2] == "--")}))
    plus = raw.get("plus_options")
    return OptionSpec(
        name=name,
        justification=raw["justification"],
        short_flags=frozenset(raw.get("short_flags", "")),
        short_values=short_values,
        long_flags=long_flags,
        long_values=long_values,
        deny=deny,
        aliases=aliases,
        long_prefix=bool(raw.get("long_prefix", True)),
        long_eq=bool(raw.get("long_eq", True)),
        long_no=bool(raw.get("long_no", False)),
        single_dash_long=bool(raw.get("single_dash_long", False)),
        positional=compile_check(raw.get("positional", "any")),
        min_positional=int(raw.get("min_positional", 0)),
        max_positional=int(raw.get("max_positional", 99)),
        plus_options=re.compile(plus) if plus else None,
        at_server=bool(raw.get("at_server", False)),
        require_any=frozenset(raw.get("require_any", [])),
        require_reason=str(raw.get("require_reason", "")),
        match=tuple(raw.get("match", ())),
        not_match=tuple(raw.get("not_match", ())),
        all_long=all_long,
    )


def _resolve_long(spec: OptionSpec, name: str) -> tuple[str | None, str | None]:
    """Map a typed long option to its full name: exact, else a unique prefix (getopt_long rules)."""
    if name in spec.long_flags or name in spec.long_values or name in spec.deny or name in spec.aliases:
        return name, None
    if spec.long_no and name.startswith("--no-"):
        base, _ = _resolve_long(spec, "--" + name[5:])
        if base is not None and base in spec.long_flags:
            return base, None
    if spec.long_prefix and len(name) > 3:
        hits = [n for n in spec.all_long if n.startswith(name)]
        if len(hits) == 1:
            return hits[0], None
        if len(hits) > 1:
            return None, f"{name} is an ambiguous abbreviation ({', '.join(hits[:4])})"
    return None, f"option {name} is not on the {spec.name} allowlist"


def _canon(spec: OptionSpec, name: str) -> str:
    return spec.aliases.get(name, name)


def _accept(spec: OptionSpec, out: ParsedOptions, name: str, value: str | None, typed: str) -> bool:
    canon = _canon(spec, name)
    reason = spec.deny.get(name) or spec.deny.get(canon)
    if reason is not None:
        out.problem = f"{typed}: {reason}"
        return False
    if value is not None:
        check = spec.long_values.get(canon) or spec.short_values.get(canon.lstrip("-")) or spec.long_values.get(name)
        if check is None:
            out.problem = f"{typed} does not take a value"
            return False
        why = check(value)
        if why is not None:
            out.problem = f"{typed}: {why}"
            return False
    out.options.append((canon, value))
    return True


def _takes_value(spec: OptionSpec, name: str) -> bool:
    canon = _canon(spec, name)
    return canon in spec.long_values or name in spec.long_values or (
        len(canon) == 2 and canon[1] in spec.short_values
    )


def parse_options(spec: OptionSpec, args: Sequence[str]) -> ParsedOptions:
    """Parse ``args`` (argv without argv[0]) against ``spec``; stop at the first problem."""
    out = ParsedOptions()
    i = 0
    n = len(args)
    while i < n and out.problem is None:
        a = args[i]
        i += 1
        if a == "--":
            _take_rest(spec, out, args[i:])
            break
        if a[:2] == "--" or (spec.single_dash_long and a[:1] == "-" and len(a) > 2):
            i = _take_long(spec, out, a, args, i)
        elif a[:1] == "-" and a != "-":
            i = _take_short(spec, out, a, args, i)
        else:
            _take_word(spec, out, a)
    if out.problem is None:
        out.problem = _count_problem(spec, out)
    return out


def _take_rest(spec: OptionSpec, out: ParsedOptions, rest: Sequence[str]) -> None:
    """Everything after ``--`` is a positional: it gets exactly the positional check (a URL after
    ``--`` is still a URL), and a word that looks like an option is refused outright (``ss -- -K ...``,
    ``curl -- -x...``): no legitimate probe needs one there."""
    for word in rest:
        why = f"{word!r} after -- looks like an option" if word[:1] == "-" and word != "-" else spec.positional(word)
        if why is not None:
            out.problem = f"argument {word!r}: {why}"
            return
        out.positionals.append(word)


def _take_long(spec: OptionSpec, out: ParsedOptions, a: str, args: Sequence[str], i: int) -> int:
    """One long option ``a`` (``--name``, ``--name=value``, or ``-name`` for single-dash-long
    binaries); ``args[i]`` is the next word, taken as its value when it needs one.

    Returns:
        The index of the next word to parse.
    """
    typed, eq, attached = a.partition("=")
    if eq and not spec.long_eq:
        typed, attached, eq = a, "", ""
    if spec.single_dash_long and typed[:2] != "--":
        typed = "-" + typed  # nslookup style: -type=X is stored as --type
    full, why = _resolve_long(spec, typed)
    if full is None:
        # Denied single letters typed as a long word still explain themselves.
        out.problem = why
        return i
    if _takes_value(spec, full) and not eq and full not in spec.deny:
        if i >= len(args):
            out.problem = f"{typed} needs a value"
            return i
        attached, eq = args[i], "="
        i += 1
    _accept(spec, out, full, attached if eq else None, a)
    return i


def _take_short(spec: OptionSpec, out: ParsedOptions, a: str, args: Sequence[str], i: int) -> int:
    """A word of short options (``-sXPOST``: flags combined, the first value option taking the rest of
    the word or else the next word ``args[i]``).

    Returns:
        The index of the next word to parse.
    """
    j = 1
    while j < len(a) and out.problem is None:
        c = a[j]
        j += 1
        name = "-" + c
        if name in spec.deny:
            out.problem = f"{name}: {spec.deny[name]}"
            break
        if c in spec.short_values:
            value = a[j:]
            if not value:
                if i >= len(args):
                    out.problem = f"{name} needs a value"
                    break
                value = args[i]
                i += 1
            _accept(spec, out, name, value, name)
            break
        if c in spec.short_flags:
            out.options.append((_canon(spec, name), None))
            continue
        out.problem = f"option {name} is not on the {spec.name} allowlist"
    return i


def _take_word(spec: OptionSpec, out: ParsedOptions, a: str) -> None:
    """A word that is not an option: a dig-style ``+query`` option, an ``@server``, or a positional."""
    if spec.plus_options is not None and a.startswith("+"):
        if not spec.plus_options.fullmatch(a):
            out.problem = f"query option {a} is not on the {spec.name} allowlist"
        else:
            out.options.append((a, None))
        return
    if spec.at_server and a.startswith("@"):
        why = compile_check("host")(a[1:])
        if why is not None:
            out.problem = f"server {a}: {why}"
        else:
            out.options.append(("@", a[1:]))  # the egress policy checks where the query goes
        return
    why = spec.positional(a)
    if why is not None:
        out.problem = f"argument {a!r}: {why}"
        return
    out.positionals.append(a)


def _count_problem(spec: OptionSpec, out: ParsedOptions) -> str | None:
    """Why the positionals or the required options of a clean parse are not acceptable, or None."""
    if len(out.positionals) < spec.min_positional:
        return f"{spec.name} needs at least {spec.min_positional} argument(s)"
    if len(out.positionals) > spec.max_positional:
        return f"{spec.name} takes at most {spec.max_positional} argument(s) here"
    if spec.require_any and not out.has(*spec.require_any):
        return spec.require_reason or f"{spec.name} needs one of {sorted(spec.require_any)}"
    return None
