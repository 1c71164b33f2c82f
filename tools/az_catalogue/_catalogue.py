"""Command facts -> the catalogue the classifier ships (a JSON document, deterministic).

Layout (``format`` 1):

* ``ops``: every REST operation any command reaches, once: ``[method, template, read_only,
  secret, why]``; ``secret`` is 0 (none), 1 (hidden: marked secret, az omits it), 2 (shown: the
  response prints a secret), 3 (unknown: the response model could not be read); ``why`` names the
  first secret field or the read-only action's justification.
* ``commands``: per command ``{"k": kind, "a": [effects always], "c": [[[options], [effects]], ...],
  "o": "its option strings", "f": "its short options that take no value", "r": [options that ask for
  secret material], "x": [extension types its code names], "h": 1 if it prints secret-marked fields}``.
  An effect is an operation index, ``"local:<kind>"`` (a process, a file write, a browser, a raw
  request) or ``"unresolved:<call>"`` (a call the analysis could not follow).
* ``global_options``: options every command accepts (``--debug``, ``--output`` ...), listed once.
* ``config_keys``: the ``section.key`` names azure-cli and knack read from their configuration.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from az_catalogue._command import CommandFacts
from az_catalogue._schema import Leaf
from az_catalogue._secrets import leaf_secret, model_secret
from az_catalogue._tables import READ_ONLY_ACTION_SUFFIX, READ_ONLY_ACTIONS, normalise_template

__all__ = ["build_catalogue"]

FORMAT = 1

# Option names that ask a read for secret material, whatever the command: the option's words
# (``--with-secure-properties`` -> with, secure, properties). Checked against every command's own
# option list, so the catalogue lists the exact options (and the classifier their abbreviations).
_REVEAL_VERB = {"show", "include", "with", "expose", "reveal", "return", "get", "list", "export", "print",
                "display", "output", "unmask", "decrypt", "fetch", "retrieve"}  # fmt: skip
_REVEAL_NOUN = {"secret", "secrets", "key", "keys", "credential", "credentials", "password", "passwords", "token",
                "tokens", "sas", "values", "value", "secure", "sensitive", "connection", "user", "kubeconfig",
                "plaintext", "protected", "settings"}  # fmt: skip
_REVEAL_WHOLE = re.compile(r"^--(with-secure-properties|include-user-data|show-values|msbot|expose-token|"
                           r"include-full-endpoint-url|show-secrets?|with-secrets?|include-secrets?|secure)$")  # fmt: skip


def _reveals(option: str) -> bool:
    if _REVEAL_WHOLE.match(option):
        return True
    if not option.startswith("--"):
        return False
    words = option[2:].split("-")
    if words[0] not in _REVEAL_VERB:
        return False
    rest = set(words[1:])
    if "user" in rest and "data" not in rest:
        return False
    if "settings" in rest and "protected" not in rest:
        return False
    return bool(rest & _REVEAL_NOUN)


def _model_secret(model: Any) -> tuple[int, str]:
    """(secret class, why) of an SDK response model: 2 shown, 0 none."""
    why = model_secret(model)
    return (2, why) if why else (0, "")


def _leaves_secret(leaves: Iterable[Leaf], shows_marked: bool) -> tuple[int, str]:
    hidden = ""
    for leaf in leaves:
        if leaf.kind == "unknown":
            return 3, "the response schema could not be built"
        found = leaf_secret(leaf)
        if found is None:
            continue
        if found[0] == "shown" or shows_marked:
            return 2, found[1]
        hidden = hidden or found[1]
    return (1, hidden) if hidden else (0, "")


_SCALAR_RESPONSES = {"none", "expr:str", "expr:bool", "expr:int", "expr:float", "expr:long", "expr:object",
                     "expr:rfc-1123", "expr:iso-8601", "expr:duration", "expr:bytearray", "expr:[str]", "expr:{str}",
                     "expr:unix-time", "expr:date"}  # fmt: skip


def _op_secret(rid: str, response: Any, shows_marked: bool) -> tuple[int, str]:
    if rid.startswith("aaz:"):
        return _leaves_secret(response or (), shows_marked)
    if rid in _SCALAR_RESPONSES:
        return (3, "the response is free-form text") if rid in ("expr:object",) else (0, "")
    if isinstance(response, type):
        return _model_secret(response)
    model = _model_in(response)
    if model is not None:
        return _model_secret(model)
    return 3, f"the response type {rid.removeprefix('expr:')!r} could not be resolved"


def _model_in(t: Any) -> type | None:
    """The model a typing generic response holds (``list[StorageAccount]``, a paged list's element)."""
    import typing

    args = typing.get_args(t)
    if len(args) == 1 and isinstance(args[0], type) and typing.get_origin(t) in (list, tuple, set, frozenset):
        return args[0]
    return None


def _read_only(method: str, template: str) -> tuple[int, str]:
    if method in ("GET", "HEAD"):
        return 1, ""
    if method != "POST":
        return 0, ""
    norm = normalise_template(template)
    why = READ_ONLY_ACTIONS.get(norm)
    if why is not None:
        return 1, why
    last = norm.rstrip("/").rsplit("/", 1)[-1]
    if READ_ONLY_ACTION_SUFFIX.match(last):
        return 1, "a name/availability check"
    return 0, ""


def _template_label(template: str, origin: str) -> str:
    """ARM paths stay as they are; a data-plane request is named by its generated builder."""
    if template.startswith("/"):
        return template
    if template in ("?", ""):
        return "?"
    short = origin.replace("._generated.operations.", ":").replace(".operations.", ":")
    return f"dp:{short}"


def build_catalogue(version: str, facts: dict[str, CommandFacts], config_keys: list[str]) -> dict[str, Any]:
    """The catalogue document for ``facts`` (every command of azure-cli ``version``)."""
    ops: list[list[Any]] = []
    op_index: dict[tuple[str, str, str], int] = {}
    option_sets = [set(f.options) for f in facts.values() if f.options]
    global_options = set.intersection(*option_sets) if option_sets else set()

    def op_id(method: str, template: str, rid: str, response: Any, shows_marked: bool) -> int:
        label = _template_label(template, rid.removeprefix("aaz:") if rid.startswith("aaz:") else rid)
        secret, why = _op_secret(rid, response, shows_marked)
        ro, ro_why = _read_only(method, template)
        key = (method, label, f"{secret}:{why}")
        if key not in op_index:
            op_index[key] = len(ops)
            ops.append([method, label, ro, secret, why or ro_why])
        return op_index[key]

    commands: dict[str, Any] = {}
    for name in sorted(facts):
        f = facts[name]
        always: set[Any] = set()
        conditional: dict[tuple[str, ...], set[Any]] = {}

        def place(effect: Any, conds: set[frozenset[str]], f: CommandFacts = f, always: set[Any] = always,
                  conditional: dict[tuple[str, ...], set[Any]] = conditional) -> None:
            for cond in conds:
                options = sorted({o for dest in cond for o in f.dest_options.get(dest, ())})
                if not cond or not options:
                    always.add(effect)  # unguarded, or guarded by something that is not an option
                else:
                    conditional.setdefault(tuple(options), set()).add(effect)

        for (method, template, rid), conds in sorted(f.effects.ops.items()):
            place(op_id(method, template, rid, f.effects.responses.get(rid), f.shows_marked), conds)
        extensions = sorted({k.split(":", 1)[1] for k in f.effects.local if k.startswith("extension:")})
        for kind, conds in sorted(f.effects.local.items()):
            if not kind.startswith("extension:"):
                place("local:" + kind, conds)
        for call, conds in sorted(f.effects.unresolved.items()):
            place("unresolved:" + call, conds)
        own = sorted(set(f.options) - global_options)
        entry: dict[str, Any] = {"k": f.kind[0], "a": _sorted(always)}
        cond_list = [[list(opts), _sorted(eff - always)] for opts, eff in sorted(conditional.items()) if eff - always]
        if cond_list:
            entry["c"] = cond_list
        entry["o"] = " ".join(own)
        flags = sorted(o for o in f.options if len(o) == 2 and f.options[o][1] == 0)
        if flags:
            entry["f"] = " ".join(flags)
        reveal = sorted(o for o in f.options if _reveals(o))
        if reveal:
            entry["r"] = reveal
        if extensions:
            entry["x"] = extensions
        if f.shows_marked:
            entry["h"] = 1
        commands[name] = entry
    return {
        "format": FORMAT,
        "azure_cli": version,
        "global_options": sorted(global_options),
        "config_keys": sorted(config_keys),
        "ops": ops,
        "commands": commands,
    }


def _sorted(effects: Iterable[Any]) -> list[Any]:
    ints = sorted(e for e in effects if isinstance(e, int))
    strs = sorted(e for e in effects if isinstance(e, str))
    return [*ints, *strs]
