"""Credentials by program: the environment each program the shell runs gets (``child_env.toml``).

Why per program: ``az`` cannot act without the Azure identity's variables (a managed identity's
``IDENTITY_ENDPOINT``/``IDENTITY_HEADER``, a service principal's ``AZURE_CLIENT_*``, its own
``AZURE_CONFIG_DIR``), and no other program may ever see them: the model chooses what ``curl`` or
``dig`` is asked, and an identity header in their environment is one redirect away from a token.
Stripping them from every child (the shell's first rule) broke managed identity completely; handing them
to every child would leak them. So the classes of credential variables and the programs that need each
class are data, in one place (``child_env.toml``), and :class:`ChildEnvironments` builds each
program's environment from it: the scrubbed common environment (:func:`._run.scrub_env`) for
everyone, plus the classes listed for that program.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["ChildEnvironments", "EnvClass", "class_of", "env_classes", "program_classes"]


@dataclass(frozen=True)
class EnvClass:
    """One class of credential variables: exact ``names``, name ``prefixes``, and why it exists.

    ``shared_scrubbed``: the variables stay in the common environment in their scrubbed form (a proxy
    URL without its password); the programs given the class get them unchanged.
    """

    name: str
    why: str
    names: frozenset[str]
    prefixes: tuple[str, ...] = ()
    shared_scrubbed: bool = False

    def holds(self, variable: str) -> bool:
        """Whether ``variable`` belongs to this class."""
        return variable in self.names or variable.startswith(self.prefixes)


@cache
def _table() -> dict[str, Any]:
    text = resources.files("netghost.shell.exec").joinpath("child_env.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@cache
def env_classes() -> tuple[EnvClass, ...]:
    """The credential classes of ``child_env.toml``, in file order (a variable joins the first that holds it)."""
    return tuple(
        EnvClass(name, str(spec["why"]), frozenset(spec.get("names", ())), tuple(spec.get("prefixes", ())),
                 bool(spec.get("shared_scrubbed", False)))
        for name, spec in _table()["classes"].items()
    )


@cache
def program_classes() -> Mapping[str, tuple[str, ...]]:
    """program name -> the classes it is given (every name is checked against the classes at load)."""
    known = {c.name for c in env_classes()}
    programs = {str(p): tuple(str(c) for c in classes) for p, classes in _table()["programs"].items()}
    for program, classes in programs.items():
        unknown = sorted(set(classes) - known)
        if unknown:
            raise ValueError(f"child_env.toml: program {program!r} is given unknown classes {unknown}")
    return programs


def class_of(variable: str) -> EnvClass | None:
    """The credential class ``variable`` belongs to, or None (then only the common scrub applies)."""
    return next((c for c in env_classes() if c.holds(variable)), None)


@dataclass(frozen=True)
class ChildEnvironments:
    """The common environment every program gets, and the credential classes held back from it.

    Build it with :func:`netghost.shell.exec.child_environments`; ask :meth:`for_program` for the
    environment of one argv.
    """

    common: Mapping[str, str]
    held: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """class name -> the variables of that class found in the source environment."""

    def for_program(self, argv: Sequence[str] | str) -> dict[str, str]:
        """The environment of the program ``argv`` runs: the common one plus its classes' variables.

        Only a bare program name is matched (``az``, not ``/tmp/x/az``): the shell resolves a bare name
        on its own PATH, while a path is whatever file sits there.
        """
        program = argv if isinstance(argv, str) else (argv[0] if argv else "")
        env = dict(self.common)
        if os.sep in program:
            return env
        for name in program_classes().get(program, ()):
            env.update(self.held.get(name, {}))
        return env
