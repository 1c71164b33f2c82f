"""Parse one command line into an argv with a real shell grammar (tree-sitter-bash).

Why a grammar and not ``shlex``: the shell runs argv with no shell, so anything a shell would
*interpret* (lists, pipes, substitutions, redirections, expansions, assignments) must be refused,
not silently passed through as literal text the AI did not mean. tree-sitter-bash exposes every
such construct as a node type; this module walks the tree, refuses every construct that is not a
plain simple command, and computes the argv exactly as bash would for what remains (quotes
removed, backslash escapes applied).

What tree-sitter does *not* flag (DEPENDENCIES.md §(b)): ``\\rm``, ``r''m``, ``/???/?m``, look-alike
Unicode and zero-width characters. Those are caught here by a byte check (printable ASCII only)
and by requiring the command word to be one plain unquoted word. Unquoted brace and backslash
characters in arguments do not make a command FORBIDDEN, but they are recorded
(``ParsedCommand.unquoted_special``) so the classifier never auto-runs such a command.
"""

from __future__ import annotations

import operator
import re
import threading
from dataclasses import dataclass
from typing import Literal

import tree_sitter_bash as tsb
from tree_sitter import Language, Node, Parser

__all__ = ["MAX_COMMAND_CHARS", "ParseRejection", "ParsedCommand", "parse_command"]

ParseError = Literal["not_a_single_command", "forbidden_command", "parse_error"]

# Node types that reveal a multi-command, an expansion or a shell feature we never emulate.
# The list is DEPENDENCIES.md §4.1, completed with the compound forms tree-sitter-bash knows.
_STRUCTURAL: dict[str, str] = {
    "list": "a command list (&& or ||)",
    "pipeline": "a pipeline (|)",
    "redirected_statement": "a redirection",
    "file_redirect": "a redirection",
    "heredoc_redirect": "a here-document",
    "herestring_redirect": "a here-string",
    "heredoc_body": "a here-document",
    "command_substitution": "a command substitution ($(...) or backticks)",
    "process_substitution": "a process substitution (<(...) or >(...))",
    "expansion": "a parameter expansion (${...})",
    "simple_expansion": "a variable expansion ($VAR)",
    "arithmetic_expansion": "an arithmetic expansion ($((...)))",
    "ansi_c_string": "an ANSI-C string ($'...')",
    "translated_string": "a locale string ($\"...\")",
    "variable_assignment": "a variable assignment",
    "variable_assignments": "a variable assignment",
    "subshell": "a subshell ( ... )",
    "compound_statement": "a command group { ...; }",
    "function_definition": "a function definition",
    "negated_command": "a negated command (!)",
    "declaration_command": "a declaration (export/declare/local/readonly)",
    "unset_command": "an unset command",
    "test_command": "a test expression ([ ] or [[ ]])",
    "brace_expression": "a brace expansion",
    "comment": "a comment",
    "extglob_pattern": "an extended glob",
}
_STATEMENT_SUFFIX = "_statement"  # if_statement, for_statement, while_statement, case_statement ...

# Argument node types whose value we can compute exactly.
_ARG_TYPES = frozenset({"word", "number", "string", "raw_string", "concatenation"})

_COMMAND_WORD = re.compile(r"[A-Za-z0-9._/+-]+")
# No diagnostic needs more; a longer string costs the parser and the checks time in proportion
# (a 300 KB argument took ~0.9 s) and cannot be reviewed by a human anyway. Checked first.
MAX_COMMAND_CHARS = 8192
# Unquoted characters that a shell would expand into other words (brace, tilde) or that hide the
# real word (backslash). Glob characters (* ? [ ]) are not among them: no shell runs the command,
# so `--query [].name` reaches the program exactly as classified (a literal argument); a program
# that globs by itself (curl's URL globbing) is checked by that program's own rules.
_UNQUOTED_SPECIAL = re.compile(r"[{}~\\]")
_EXPANDS = re.compile(r"[$`]")
_WORD_NEEDS_CARE = re.compile(r"[$`*?\[\]{}~\\ ]")
_DQ_ESCAPE = re.compile(r'\\([$`"\\])')  # an escape pair inside double quotes -> the character
_DQ_PAIRS = re.compile(r'\\[$`"\\]|([$`])')  # escape pairs, and (group 1) a bare $ or backtick
_UNQUOTED_ESCAPE = re.compile(r"\\(.)", re.S)  # an escaped character of an unquoted word -> the character
_UNQUOTED_PAIRS = re.compile(r"\\.|( )", re.S)  # escape pairs, and (group 1) a space no backslash took
_ESCAPED = operator.itemgetter(1)  # the replacement: group 1, taken in C (a "\\1" template is expanded in Python)
# The longest prefix made of quoted strings, escaped characters and ordinary characters; the
# character after it, if it is an operator, is an operator outside quotes.
# Possessive runs (no backtracking: every alternative starts with a different character, so the greedy
# scan is the only one) instead of one character per iteration: a third of the cost on a long line.
_QUOTED_OR_PLAIN = re.compile(r"""(?:[^'"\\;&|<>]++|'[^']*+'|"(?:[^"\\]++|\\.)*+"|\\.)*+""")
_OPERATORS = frozenset(";&|<>")
# Where bash expands an unquoted tilde in an argument: at the start of the word, and after the
# `=` of a word that looks like an assignment (`foo=~/x`).
_TILDE = re.compile(r"~|[A-Za-z_][A-Za-z0-9_]*=~")

# The plain-command fast path: a line of whole tokens separated by spaces, each a word of
# characters no shell interprets, a single-quoted string, or a double-quoted string with nothing that
# expands or escapes in it. For such a line the argv is the tokens with their quotes removed, exactly
# what the grammar walk below computes (tests compare both on every corpus command and on generated
# lines, and bash itself is the oracle for both). It skips tree-sitter on most diagnostics.
_PLAIN_TOKEN = r"""(?:[A-Za-z0-9_./:=,@%+-]++|'[^']*+'|"[^"$`\\]*+")"""
# Possessive (no backtracking): tokens are separated by spaces no token holds, so a shorter match of a
# word, a quoted string or the spaces can never let the line match where the greedy one did not.
_PLAIN_LINE = re.compile(rf" *+[A-Za-z_./][A-Za-z0-9._/+-]*+(?: ++{_PLAIN_TOKEN})*+ *+")
# The same three token shapes with the quotes outside the groups: one (word, single-quoted, double-quoted)
# triple per token, exactly one of them set.
_PLAIN_PARTS = re.compile(r"""([A-Za-z0-9_./:=,@%+-]+)|'([^']*)'|"([^"$`\\]*)\"""")
# Words the grammar reads as something other than a command name when they come first (reserved
# words, declarations): such lines take the grammar path, which refuses or handles them.
_KEYWORDS = frozenset({
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done",
    "in", "function", "time", "coproc", "export", "declare", "typeset", "local", "readonly", "unset",
})  # fmt: skip

_ADVICE_SINGLE = (
    "Send exactly one simple command per call, with no ; && || | & redirections, substitutions, "
    "variables or here-documents; run the steps as separate commands and filter output with --query "
    "or by reading it yourself."
)


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """A command the grammar accepted as one simple command.

    Attributes:
        argv: The words after quote removal, exactly as ``execve`` would receive them.
        unquoted_special: True when an argument carried an unquoted brace/tilde/backslash
            character; the classifier never auto-runs such a command.
    """

    argv: tuple[str, ...]
    unquoted_special: bool


@dataclass(frozen=True, slots=True)
class ParseRejection:
    """Why a command line is refused before classification (always FORBIDDEN)."""

    error: ParseError
    reason: str


class _Reject(Exception):
    def __init__(self, error: ParseError, reason: str) -> None:
        super().__init__(reason)
        self.error: ParseError = error
        self.reason = reason


_LANGUAGE = Language(tsb.language())
_LOCAL = threading.local()


def _parser() -> Parser:
    """One parser per thread (a tree-sitter Parser is not safe to share): built once, ~5 µs a parse."""
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = Parser(_LANGUAGE)
    return parser


def parse_command(command: str) -> ParsedCommand | ParseRejection:
    """Parse ``command`` into one argv, or say why it is refused.

    Args:
        command: The exact string the AI asked to run.

    Returns:
        A ``ParsedCommand`` for one plain simple command, else a ``ParseRejection`` whose
        ``reason`` tells the AI what to send instead.
    """
    if len(command) > MAX_COMMAND_CHARS:
        return ParseRejection(
            "forbidden_command",
            f"The command is {len(command)} characters long; the limit is {MAX_COMMAND_CHARS}. "
            "Send a shorter command: no diagnostic needs a longer one (put bulk data in a file "
            "a reviewed command reads, or split the work).",
        )
    if not (command.isascii() and command.isprintable()):  # exactly U+0020..U+007E, without a regex scan
        bad = next(c for c in command if not " " <= c <= "~")
        return ParseRejection(
            "forbidden_command",
            f"The command contains the character U+{ord(bad):04X}, which is not printable ASCII "
            "(control, newline, tab, Unicode look-alike or invisible characters are refused). "
            "Retype the command using plain ASCII on a single line.",
        )
    if not command.strip():
        return ParseRejection("parse_error", "The command is empty; send one diagnostic command.")
    plain = _plain_argv(command)
    if plain is not None:
        return ParsedCommand(plain, False)
    return _parse_with_grammar(command)


def _parse_with_grammar(command: str) -> ParsedCommand | ParseRejection:
    """The general path: an unquoted operator is refused at once, anything else goes to tree-sitter."""
    prefix = _QUOTED_OR_PLAIN.match(command)
    stop = prefix.end() if prefix is not None else 0
    if stop < len(command) and command[stop] in _OPERATORS:
        # Fast refusal before the grammar: an operator outside any quotes always means a list,
        # pipeline, background job or redirection (tree-sitter would say the same, slower: some
        # pipelines cost it 100-200 us). Everything not refused here is parsed by tree-sitter.
        return ParseRejection(
            "not_a_single_command",
            f"The command contains an unquoted `{command[stop]}` (a list, pipeline, background job or redirection). "
            + _ADVICE_SINGLE,
        )
    tree = _parser().parse(command.encode("ascii"))
    root = tree.root_node
    try:
        return _walk_program(root, command)
    except _Reject as rej:
        return ParseRejection(rej.error, rej.reason)


def _plain_argv(command: str) -> tuple[str, ...] | None:
    """The argv of a line made only of plain tokens (``_PLAIN_LINE``), or None for any other line.

    Why: tree-sitter's parse and the walk over its nodes were a third of the classifier's cost on
    long diagnostic lines; for this class of input their answer is fixed by the token rules alone.
    """
    if _PLAIN_LINE.fullmatch(command) is None:
        return None
    if "'" in command or '"' in command:
        # One (word, single-quoted inner, double-quoted inner) triple per token, one of the three set:
        # joined in C, they are the argv.
        parts = _PLAIN_PARTS.findall(command)
        if parts[0][0] in _KEYWORDS or ("==", "", "") in parts:  # tree-sitter reads a bare == as a test operator
            return None
        return tuple(map("".join, parts))
    # No quotes: the tokens are the runs of word characters between the line's spaces, i.e. exactly
    # what findall gives, split in C without the per-token pass.
    argv = tuple(command.split())
    if argv[0] in _KEYWORDS or "==" in argv:
        return None
    return argv


def _walk_program(root: Node, src: str) -> ParsedCommand:
    if root.has_error:
        _raise_structural_if_any(root)
        raise _Reject(
            "parse_error",
            "The command does not parse as shell syntax (unbalanced quotes, stray braces or "
            "brackets?). Send one simple command with balanced quotes.",
        )
    children = root.children
    if len(children) != 1:
        _raise_structural_if_any(root)
        raise _Reject("not_a_single_command", "More than one statement was sent. " + _ADVICE_SINGLE)
    top = children[0]
    if top.type != "command":
        _raise_structural_if_any(root)
        raise _Reject("not_a_single_command", f"The input is a {top.type}, not a command. " + _ADVICE_SINGLE)
    # No full-tree walk on the accepting path: _command_argv accepts only a command_name word and
    # word/number/string/raw_string/concatenation arguments, and refuses any $ or backtick that
    # would expand inside them, so every structural node is refused there. The walk runs only to
    # name the construct in the message when something is refused.
    try:
        return _command_argv(top, src)
    except _Reject:
        _raise_structural_if_any(top)
        raise


def _raise_structural_if_any(node: Node) -> None:
    """Refuse the first structural construct found anywhere under ``node`` (iterative walk)."""
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if n.is_missing:
            raise _Reject("parse_error", "The command is incomplete (a quote or bracket is missing).")
        what = _STRUCTURAL.get(t)
        if what is None and t.endswith(_STATEMENT_SUFFIX):
            what = f"a shell control structure ({t.removesuffix(_STATEMENT_SUFFIX)})"
        if what is not None:
            error: ParseError = "forbidden_command" if t == "comment" else "not_a_single_command"
            raise _Reject(error, f"The command contains {what}. " + _ADVICE_SINGLE)
        stack.extend(n.children)


def _gap(src: str, start: int, end: int, allowed: str) -> None:
    """Bytes no node covers must be plain separators: tree-sitter silently skips some (``\\ `` at
    the start of a word), and a byte the grammar skipped is a byte bash would not."""
    if src[start:end].strip(allowed):
        raise _Reject("parse_error", "Part of the command is not a word the grammar recognises (a stray backslash?). " + _ADVICE_SINGLE)


def _command_argv(cmd: Node, src: str) -> ParsedCommand:
    argv: list[str] = []
    special = False
    start, end = cmd.start_byte, cmd.end_byte
    _gap(src, 0, start, " ")
    _gap(src, end, len(src), " ")
    tilde_possible = "~" in src
    prev = start
    for child in cmd.children:
        c_start = child.start_byte
        if c_start != prev:
            if src[prev:c_start].strip(" "):
                _gap(src, prev, c_start, " ")
        elif argv:
            # Two nodes with nothing between them are ONE word to bash ('x'\a is "xa"), but
            # tree-sitter sometimes reports them as two arguments: refuse rather than guess.
            raise _Reject("parse_error", "Adjacent quoted and unquoted parts did not parse as one word; quote the whole argument. " + _ADVICE_SINGLE)
        prev = child.end_byte
        t = child.type
        if argv and t in _ARG_TYPES:
            if tilde_possible and _TILDE.match(src, c_start):
                raise _Reject(
                    "not_a_single_command",
                    "An unquoted ~ would expand to a home directory, but no shell runs this command; "
                    "write the path out in full (or quote the ~ if it is literal).",
                )
            if t == "word":
                value = src[c_start:prev]
                if _WORD_NEEDS_CARE.search(value) is None:
                    argv.append(value)  # the common case, inline: nothing to expand, escape or split
                    continue
                value, sp = _unquoted_word(value)
            else:
                value, sp = _arg_value(child, t, src)
            argv.append(value)
            special = special or sp
            continue
        if t == "command_name" and not argv:
            name = child.children[0] if child.child_count == 1 else None
            text = src[c_start:prev]
            if name is None or name.type != "word" or not _COMMAND_WORD.fullmatch(text):
                raise _Reject(
                    "not_a_single_command",
                    "The command word must be one plain, unquoted program name such as `ping` or `az` "
                    "(no quotes, escapes, globs or variables in it). Retype it plainly.",
                )
            argv.append(text)
            continue
        raise _Reject("not_a_single_command", f"Unexpected {t} in the command. " + _ADVICE_SINGLE)
    if not argv:
        raise _Reject("not_a_single_command", "No command word was found. " + _ADVICE_SINGLE)
    return ParsedCommand(tuple(argv), special)


def _arg_value(node: Node, t: str, src: str) -> tuple[str, bool]:
    """Return (value after quote removal, had unquoted special characters)."""
    text = src[node.start_byte : node.end_byte]
    if t in ("word", "number"):
        return _unquoted_word(text)
    if t == "raw_string":
        return text[1:-1], False
    if t == "string":
        return _double_quoted(text[1:-1]), False
    if t == "concatenation":
        parts: list[str] = []
        special = False
        prev = node.start_byte
        for c in node.children:
            _gap(src, prev, c.start_byte, "")
            prev = c.end_byte
            ct = c.type
            if ct not in _ARG_TYPES or ct == "concatenation":
                raise _Reject("not_a_single_command", f"Unexpected {ct} inside a word. " + _ADVICE_SINGLE)
            v, sp = _arg_value(c, ct, src)
            parts.append(v)
            special = special or sp
        return "".join(parts), special
    raise _Reject("not_a_single_command", f"Unexpected {t} as an argument. " + _ADVICE_SINGLE)


def _unquoted_word(text: str) -> tuple[str, bool]:
    if _WORD_NEEDS_CARE.search(text) is None:
        return text, False  # the common case: nothing to expand, escape or split
    if _EXPANDS.search(text):
        raise _Reject("not_a_single_command", "An unquoted $ or backtick would expand. " + _ADVICE_SINGLE)
    if "\\" not in text:
        if " " in text:
            _refuse_split_word()
        return text, _UNQUOTED_SPECIAL.search(text) is not None
    # Left to right, a backslash takes the next character whatever it is; a space no backslash took splits
    # the word (refused). The regexes pair each backslash as a character loop would, in C.
    if " " in text and any(m.group(1) for m in _UNQUOTED_PAIRS.finditer(text)):
        _refuse_split_word()
    return _UNQUOTED_ESCAPE.sub(_ESCAPED, text), True


def _refuse_split_word() -> None:
    """tree-sitter sometimes reports `] ]` as ONE word; bash splits at an unescaped space."""
    raise _Reject("parse_error", "A word contains an unescaped space the grammar did not split; quote the argument. " + _ADVICE_SINGLE)


def _double_quoted(inner: str) -> str:
    """Bash double-quote rules: backslash escapes only $ ` " \\ (expansions were refused)."""
    if "\\" not in inner:
        if _EXPANDS.search(inner):
            _refuse_dq_expansion(inner)
        return inner
    # Left to right, a backslash before $ ` " \\ is an escape pair; any other $ or backtick is bare. The
    # regexes pair each backslash as a character loop would, in C.
    if any(m.group(1) for m in _DQ_PAIRS.finditer(inner)):
        _refuse_dq_expansion(inner)
    return _DQ_ESCAPE.sub(_ESCAPED, inner)


def _refuse_dq_expansion(inner: str) -> None:
    """A bare ``$`` or backtick left in a double-quoted string after tree-sitter's pass.

    Tree-sitter turns real expansions into nodes we already refused; what reaches here is a ``$``
    it judged literal (e.g. ``"a$"``). Bash agrees for a trailing ``$`` or ``$`` before a
    non-name character; anything else is refused as an expansion to fail closed.
    """
    for m in _EXPANDS.finditer(inner):
        nxt = inner[m.end() : m.end() + 1]
        if m.group() == "`" or (nxt and (nxt.isalnum() or nxt in "_{(@*#?$!-")):
            raise _Reject("not_a_single_command", "A $ or backtick inside double quotes would expand. " + _ADVICE_SINGLE)
