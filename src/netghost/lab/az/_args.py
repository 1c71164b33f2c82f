"""Argument parsing the way azure-cli 2.91 parses: real long names, short flags, real errors.

Each command's arguments are declared as :class:`Arg` (long name, short flag, required, value
shape, allowed values) copied from its real ``--help`` (tests compare the declarations with the
help texts in ``tests/data/azure/help``). Parsing follows argparse's rules as az uses them: the
missing-required check comes first (exit 2, ``the following arguments are required: --location/-l``
plus examples), then unknown arguments (exit 2, ``unrecognized arguments: --resource-group rg1``).
Enum values are matched case-insensitively and normalised, as az does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import jmespath
from jmespath.exceptions import JMESPathError

from netghost.lab.az._errors import AzError

__all__ = ["GLOBAL_ARGS", "OUTPUT_FORMATS", "Arg", "CommandSpec", "ParsedArgs", "parse_command_args"]

OUTPUT_FORMATS = ("json", "jsonc", "none", "table", "tsv", "yaml", "yamlc")
_FOOTER = "\nhttps://aka.ms/cli_ref\nRead more about the command in reference docs\n"


@dataclass(frozen=True)
class Arg:
    """One command-line argument.

    ``kind``: ``value`` takes one value; ``many`` takes one or more; ``flag`` takes none;
    ``optbool`` takes an optional boolean word (``--no-wait``, ``--overwrite``).
    """

    long: str
    short: str | None = None
    required: bool = False
    kind: Literal["value", "many", "flag", "optbool"] = "value"
    choices: tuple[str, ...] | None = None
    default: Any = None

    @property
    def dest(self) -> str:
        return self.long.lstrip("-").replace("-", "_")

    @property
    def display(self) -> str:
        return f"{self.long}/{self.short}" if self.short else self.long


GLOBAL_ARGS: tuple[Arg, ...] = (
    Arg("--output", "-o", choices=OUTPUT_FORMATS, default="json"),
    Arg("--query"),
    Arg("--subscription"),
    Arg("--only-show-errors", kind="flag"),
    Arg("--debug", kind="flag"),
    Arg("--verbose", kind="flag"),
    Arg("--help", "-h", kind="flag"),
)
POLICY_ARGS: tuple[Arg, ...] = (Arg("--acquire-policy-token", kind="flag"), Arg("--change-reference"))
_BOOL_WORDS = {"0": False, "1": True, "f": False, "false": False, "n": False, "no": False,
               "t": True, "true": True, "y": True, "yes": True}


@dataclass(frozen=True)
class CommandSpec:
    """A leaf command: its words, its own arguments, and the examples az prints on usage errors."""

    words: tuple[str, ...]
    args: tuple[Arg, ...]
    examples: tuple[tuple[str, str], ...] = ()  # (description, command)
    policy: bool = False

    @property
    def name(self) -> str:
        return "az " + " ".join(self.words)

    def all_args(self) -> tuple[Arg, ...]:
        extra = POLICY_ARGS if self.policy else ()
        return (*self.args, *extra, *GLOBAL_ARGS)


@dataclass
class ParsedArgs:
    """Parsed values by ``dest`` plus the global options az handles itself."""

    values: dict[str, Any] = field(default_factory=dict)
    given: set[str] = field(default_factory=set)

    def __getitem__(self, dest: str) -> Any:
        return self.values.get(dest)

    def get(self, dest: str, default: Any = None) -> Any:
        value = self.values.get(dest)
        return default if value is None else value

    @property
    def output(self) -> str:
        return str(self.values.get("output") or "json")

    @property
    def query(self) -> str | None:
        value = self.values.get("query")
        return str(value) if value is not None else None


def _usage_error(spec: CommandSpec, message: str, with_examples: bool) -> AzError:
    text = f"ERROR: {message}\n"
    if with_examples and spec.examples:
        text += "\nExamples from command's help:\n"
        for description, command in spec.examples:
            text += f"{command}\n{description}\n\n"
        text += _FOOTER.lstrip("\n")
    else:
        text += _FOOTER
    return AzError(2, text)


def _normalise_choice(spec: CommandSpec, arg: Arg, value: str) -> str:
    if arg.choices is None:
        return value
    for choice in arg.choices:
        if choice.lower() == value.lower():
            return choice
    allowed = ", ".join(f"'{c}'" for c in arg.choices)
    raise _usage_error(spec, f"argument {arg.display}: invalid choice: '{value}' (choose from {allowed})", False)


def parse_command_args(spec: CommandSpec, tokens: Sequence[str]) -> ParsedArgs:
    """Parse the tokens after the command words.

    Raises:
        AzError: exit 2 with az's usage-error text (missing required, unrecognized, bad choice,
            missing value, invalid ``--query``).
    """
    table: dict[str, Arg] = {}
    for declared in spec.all_args():
        table[declared.long] = declared
        if declared.short:
            table[declared.short] = declared
    parsed = ParsedArgs({a.dest: a.default for a in spec.all_args()})
    unknown: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        inline: str | None = None
        if token.startswith("--") and "=" in token:
            token, inline = token.split("=", 1)
        arg = table.get(token)
        if arg is None:
            unknown.append(tokens[i])
            i += 1
            continue
        parsed.values[arg.dest], i = _take_value(spec, arg, tokens, i + 1, inline)
        parsed.given.add(arg.dest)
    if parsed.values.get("help"):
        return parsed
    _check_complete(spec, parsed, unknown)
    return parsed


def _take_value(spec: CommandSpec, arg: Arg, tokens: Sequence[str], i: int,
                inline: str | None) -> tuple[Any, int]:
    """The value of ``arg`` (given inline after ``=``, or from ``tokens[i:]``) and the next index."""
    if arg.kind == "flag":
        return True, i
    if arg.kind == "optbool":
        word = inline if inline is not None else (tokens[i] if i < len(tokens) else None)
        if word is not None and word.lower() in _BOOL_WORDS:
            return _BOOL_WORDS[word.lower()], i + 1 if inline is None else i
        return True, i
    if arg.kind == "many":
        items = [inline] if inline is not None else []
        while i < len(tokens) and not (tokens[i].startswith("-") and len(tokens[i]) > 1):
            items.append(tokens[i])
            i += 1
        if not items:
            raise _usage_error(spec, f"argument {arg.display}: expected at least one argument", False)
        return items, i
    if inline is None:
        if i >= len(tokens) or (tokens[i].startswith("-") and len(tokens[i]) > 1
                                and not tokens[i][1:2].isdigit()):
            raise _usage_error(spec, f"argument {arg.display}: expected one argument", False)
        inline = tokens[i]
        i += 1
    return _normalise_choice(spec, arg, inline), i


def _check_complete(spec: CommandSpec, parsed: ParsedArgs, unknown: list[str]) -> None:
    """Raise az's usage error for a missing required argument, an unknown one or a bad ``--query``."""
    missing = [a.display for a in spec.args if a.required and a.dest not in parsed.given]
    if missing:
        raise _usage_error(spec, "the following arguments are required: " + ", ".join(missing), True)
    if unknown:
        raise _usage_error(spec, "unrecognized arguments: " + " ".join(unknown), False)
    query = parsed.query
    if query is not None:
        try:
            jmespath.compile(query)
        except JMESPathError as exc:
            raise _usage_error(spec, f"argument --query: invalid jmespath_type value: '{query}'", False) from exc
