"""A sealed lab: during a lab session, only what the lab simulates runs without a person's approval.

Why a mechanism in the shell: the lab simulates ``az`` and a few probes, but every other program a model
names (``rm``, ``bash FILE``, ``cp``, ``python x.py``, ``/usr/bin/...``, ``env``, a wrapper, a program the
lab's PATH does not shadow) would run for real on the engineer's machine. ``--yes`` exists to approve the
*lab's* steps, so the line cannot be drawn in the approver by looking at names: the shell, after it has
classified a command, asks :meth:`LabConfinement.judge` where the command would really go, records the answer in
the audit record (``confinement``), and lets an unsimulated command run only on a person's approval (a
SAFE one is asked too). The MCP server's ``--lab`` gets the same confinement through the same shell.

How a program is recognised: its name is resolved the way the child's ``execve`` will resolve it (the
shell's PATH, relative entries against the shell's working directory), and then

* the lab's own launchers: the resolved file is one the lab wrote in its ``bin/`` (by real path) *and* its
  SHA-256 is the one recorded when the confinement was made (a file written over it is not the lab's any more);
  the local files such a program is given (``programs.toml`` ``[files]``, any ``@path``) must stay inside
  the session's capture directory (for ``@path`` reads: inside the session directory);
* the product's forensics engine: ``pcap-forensics`` beside this interpreter, or this interpreter's
  directory's ``python`` with ``-m netghost.forensics``; every path it is given inside the session
  directory (no URL: a remote source is not the lab);
* a plain reader of the session's own outputs (``cat``, ``head``, ``tail``, ``wc`` with the listed options
  only, called by name, every operand inside the session directory and outside the lab's own state);
* ``rm -f`` of the session's own capture files (the orchestrator's cleanup step).

Anything else is unsimulated, and the reason says which file would run.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from netghost.contracts import Confinement
from netghost.shell.confine._table import ConfinementTable, OptionTable, load_table

__all__ = ["LabConfinement", "resolve_program"]

_HARMLESS = frozenset({"-", "/dev/null", "/dev/stdout", "/dev/stderr"})
"""File arguments that are no file at all (standard streams, the null device)."""


def _sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return "sha256:" + hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def resolve_program(name: str, search_path: str | None, cwd: str) -> str | None:
    """The file ``execve`` will run for ``name`` (absolute, symlinks kept), or None when there is none.

    A name with a ``/`` is a path from ``cwd``; a bare name is looked up in ``search_path`` in order, each
    relative entry (``.``, the empty entry) taken from ``cwd``, as the child resolves it after ``chdir``.
    """
    if not name:
        return None
    if "/" in name:
        candidates: Iterable[str] = [os.path.join(cwd, name)]
    else:
        entries = (search_path if search_path is not None else os.defpath).split(os.pathsep)
        candidates = (os.path.join(cwd, entry or ".", name) for entry in entries)
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    return None


class LabConfinement:
    """What a lab session may run without a person: its launchers, the engine, reads of its own outputs.

    Args:
        scope: names the sealed environment in the audit (``lab:nsg-deny``).
        bin_dir: the lab's ``bin/``; every file in it is recorded (real path and SHA-256) now.
        root: the session directory (the audit dir): readers and the engine stay inside it.
        captures: the session's capture directory: the only place a simulated program may write, and the
            only files ``rm -f`` may remove without a person.
        private: directories inside ``root`` nothing may read or write without a person (the lab's own
            state: its world, its answers, its launchers).
        interpreter: the interpreter whose directory holds the engine (this one by default).
    """

    def __init__(self, scope: str, *, bin_dir: str | os.PathLike[str], root: str | os.PathLike[str],
                 captures: str | os.PathLike[str], private: Sequence[str | os.PathLike[str]] = (),
                 interpreter: str | None = None) -> None:
        self.scope = scope
        self.table: ConfinementTable = load_table()
        self.root = os.path.realpath(root)
        self.captures = os.path.realpath(captures)
        self.private = tuple(os.path.realpath(p) for p in private)
        self.launchers: dict[str, str] = {}
        for entry in sorted(Path(bin_dir).iterdir()):
            digest = _sha256(str(entry)) if entry.is_file() else None
            if digest is not None:
                self.launchers[os.path.realpath(entry)] = digest
        self.engine_dir = os.path.abspath(os.path.dirname(interpreter or sys.executable))

    # -- the one question ------------------------------------------------------------------------------

    def judge(self, argv: Sequence[str], *, search_path: str | None, cwd: str) -> Confinement:
        """Would ``argv`` stay inside the lab? The answer the shell records and enforces."""
        if not argv:
            return self._no("nothing to run", None)
        program = resolve_program(argv[0], search_path, cwd)
        if program is None:
            return self._no(f"`{argv[0]}` is not a program the lab provides (not found on the lab's PATH)", None)
        real = os.path.realpath(program)
        if real in self.launchers:
            return self._launcher(argv, program, real, cwd)
        base = os.path.basename(program)
        if os.path.dirname(program) == self.engine_dir:
            if base == self.table.engine_script:
                return self._engine(argv[1:], program, cwd)
            if base.startswith("python") and list(argv[1:3]) == ["-m", self.table.engine_module]:
                return self._engine(argv[3:], program, cwd)
        if "/" not in argv[0] and not _inside(real, self.root):
            if argv[0] in self.table.readers:
                return self._reader(argv, program, self.table.readers[argv[0]], cwd)
            if argv[0] == self.table.remover:
                return self._remover(argv, program, cwd)
        return self._no(f"the lab does not simulate `{argv[0]}` ({program}): it would run for real on this "
                        f"machine", program)

    # -- verdicts ----------------------------------------------------------------------------------------

    def _no(self, reason: str, program: str | None) -> Confinement:
        return Confinement(scope=self.scope, simulated=False, kind="unsimulated", program=program, reason=reason)

    def _launcher(self, argv: Sequence[str], program: str, real: str, cwd: str) -> Confinement:
        if _sha256(real) != self.launchers[real]:
            return self._no(f"`{argv[0]}` ({program}) is no longer the launcher the lab wrote (its content "
                            f"changed): it would run for real", program)
        name = os.path.basename(real)
        problem = self._file_problem(argv, self.table.files.get(name, frozenset()), cwd)
        if problem:
            return self._no(f"the lab's `{name}` would {problem}", program)
        return Confinement(scope=self.scope, simulated=True, kind="lab_program", program=program,
                           reason=f"`{name}` is the lab's own simulator ({program})")

    def _engine(self, args: Sequence[str], program: str, cwd: str) -> Confinement:
        for word in args:
            value = word.partition("=")[2] if word.startswith("-") else word
            if not value or (word.startswith("-") and "=" not in word):
                continue
            if "://" in value:
                return self._no(f"the forensics engine would reach {value!r}, outside the lab", program)
            if value not in _HARMLESS and not self._readable(self._where(value, cwd)):
                return self._no(f"the forensics engine would use {value!r}, outside the session directory "
                                f"{self.root}", program)
        return Confinement(scope=self.scope, simulated=True, kind="engine", program=program,
                           reason="the product's own forensics engine on the session's files")

    def _reader(self, argv: Sequence[str], program: str, options: OptionTable, cwd: str) -> Confinement:
        operands, problem = _operands(argv, options)
        if problem:
            return self._no(f"`{argv[0]}` {problem}: not a plain read of the session's outputs; it would run for "
                            f"real ({program})", program)
        for operand in operands:
            if operand not in _HARMLESS and not self._readable(self._where(operand, cwd)):
                return self._no(f"`{argv[0]}` would read {operand!r}, outside the session's own outputs "
                                f"({self.root}); it would run for real ({program})", program)
        return Confinement(scope=self.scope, simulated=True, kind="session_read", program=program,
                           reason=f"a read of the session's own outputs under {self.root}")

    def _remover(self, argv: Sequence[str], program: str, cwd: str) -> Confinement:
        operands: list[str] = []
        only = False
        for word in argv[1:]:
            if not only and word == "--":
                only = True
            elif not only and word.startswith("-"):
                if word not in self.table.remover_flags:
                    return self._no(f"`rm {word}` is more than removing the session's capture files; it would run "
                                    f"for real ({program})", program)
            else:
                operands.append(word)
        for operand in operands:
            where = self._where(operand, cwd)
            if not _inside(where, self.captures) or where == self.captures or os.path.isdir(where) or \
                    any(_inside(where, p) for p in self.private):
                return self._no(f"`rm` would remove {operand!r}, which is not one of the session's capture files "
                                f"under {self.captures}; it would run for real ({program})", program)
        if not operands:
            return self._no(f"`rm` with no file to remove would run for real ({program})", program)
        return Confinement(scope=self.scope, simulated=True, kind="session_capture_removal", program=program,
                           reason=f"removes the session's own capture files under {self.captures}")

    # -- paths ---------------------------------------------------------------------------------------------

    @staticmethod
    def _where(value: str, cwd: str) -> str:
        return os.path.realpath(os.path.join(cwd, value))

    def _readable(self, where: str) -> bool:
        return _inside(where, self.root) and not any(_inside(where, p) for p in self.private)

    def _writable(self, where: str) -> bool:
        return _inside(where, self.captures) and not any(_inside(where, p) for p in self.private)

    def _file_problem(self, argv: Sequence[str], options: frozenset[str], cwd: str) -> str | None:
        """What a simulated program would do outside the session, or None when nothing."""
        for value, writes in _file_arguments(argv, options):
            if value in _HARMLESS:
                continue
            where = self._where(os.path.expanduser(value), cwd)
            if writes and not self._writable(where):
                return f"use the local file {value!r}, outside the session's capture directory {self.captures}"
            if not writes and not self._readable(where):
                return f"read the local file {value!r} (@file), outside the session directory {self.root}"
        return None


def _file_arguments(argv: Sequence[str], options: frozenset[str]) -> list[tuple[str, bool]]:
    """``(value, may_write)`` for every local file ``argv`` names: file options' values, and ``@path`` reads.

    Short options are read the getopt way (``-so FILE``, ``-oFILE``): the first letter of a cluster that is
    a file option takes the rest of the cluster, or the next word. Where the cluster is ambiguous this
    reads a file where there may be none, which can only refuse more, never less.
    """
    found: list[tuple[str, bool]] = []
    i = 1
    while i < len(argv):
        word = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        tail = word.split("=", 1)[1] if "=" in word else word  # azure-cli reads `@path` and `key=@path`
        if tail.startswith("@") and len(tail) > 1:
            found.append((tail[1:], False))
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name in options:
                found.append((value if eq else nxt, True))
                i += 0 if eq else 1
        elif word.startswith("-") and len(word) > 1:
            for j in range(1, len(word)):
                if f"-{word[j]}" in options:
                    rest = word[j + 1:]
                    found.append((rest or nxt, True))
                    i += 0 if rest else 1
                    break
        i += 1
    return found


def _operands(argv: Sequence[str], options: OptionTable) -> tuple[list[str], str | None]:
    """A reader's file operands, or why its options are not a plain read."""
    operands: list[str] = []
    only = False
    i = 1
    while i < len(argv):
        word = argv[i]
        if only or word == "-" or not word.startswith("-"):
            operands.append(word)
        elif word == "--":
            only = True
        elif word.startswith("--"):
            name, eq, _ = word.partition("=")
            if name in options.values:
                i += 0 if eq else 1
            elif name not in options.flags or eq:
                return [], f"option {name}"
        else:
            for j in range(1, len(word)):
                opt = f"-{word[j]}"
                if opt in options.values:
                    i += 0 if word[j + 1:] else 1
                    break
                if opt not in options.flags:
                    return [], f"option {opt}"
        i += 1
    return operands, None
