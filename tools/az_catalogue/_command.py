"""One command of the table -> its facts: kind, REST operations (with the options that switch them
on), local side effects, unresolved writes, and its argparse option strings.

Three kinds, by how azure-cli registered the command:
* ``aaz``: an ``AAZCommand`` instance (generated; exact operations);
* ``sdk``: a ``CommandOperation`` whose operation path names a generated SDK method (exact);
* ``custom``: a hand-written function, read by the interpreter in ``_flow`` (its client bound to
  what the command's client factory builds).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from az_catalogue._aaz import aaz_class_ops, aaz_shows_secrets
from az_catalogue._flow import Effects, analyse_function, cmd_binding, factory_result
from az_catalogue._rest import sdk_ops

__all__ = ["CommandFacts", "command_facts", "parser_options"]


@dataclass
class CommandFacts:
    """What the generator learnt about one command."""

    name: str
    kind: str
    effects: Effects
    shows_marked: bool = False  # an AAZ command that prints secret-flagged fields
    options: dict[str, tuple[str, int]] = field(default_factory=dict)  # option string -> (dest, nargs: 0 or 1)
    dest_options: dict[str, list[str]] = field(default_factory=dict)  # parameter name -> option strings
    problems: list[str] = field(default_factory=list)


def parser_options(parser: argparse.ArgumentParser) -> dict[str, tuple[str, int]]:
    """Every option string the command's parser accepts, with its destination and whether it takes a
    value (0: a flag, 1: takes one or more values)."""
    out: dict[str, tuple[str, int]] = {}
    for opt, action in parser._option_string_actions.items():
        takes = 0 if action.nargs == 0 else 1
        out[opt] = (action.dest, takes)
    return out


def _closure_operation(handler: Any) -> tuple[Any, Any] | None:
    """(operation function, client factory) of a handler that closes over its operation instead of being a
    ``CommandOperation`` (Key Vault's ``KeyVaultCommandGroup``: its ``keyvault_command_handler`` calls
    ``get_op_handler()`` on the operation path and the command type's ``client_factory``), or None.

    ``get_op_handler`` only imports and looks up the operation; calling it runs no command."""
    code = getattr(handler, "__code__", None)
    cells = getattr(handler, "__closure__", None) or ()
    if code is None or "get_op_handler" not in code.co_freevars:
        return None
    values: dict[str, Any] = {}
    for name, cell in zip(code.co_freevars, cells, strict=False):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    try:
        op = values["get_op_handler"]()
    except Exception:  # noqa: BLE001 - an operation path that does not resolve stays unknown
        return None
    merged = values.get("merged_kwargs") or {}
    command_type = merged.get("command_type")
    settings = getattr(command_type, "settings", None) or {}
    return op, settings.get("client_factory") or merged.get("client_factory")


def _handler_functions(cmd: Any) -> list[tuple[str, Any]]:
    """The functions a CommandOperation runs: (role, function)."""
    op = getattr(cmd.handler, "__self__", None)
    if op is None:
        closed = _closure_operation(cmd.handler)
        return [("handler", cmd.handler if closed is None else closed[0])]
    out = []
    for role, attr in (("op", "op_path"), ("getter", "getter_op_path"), ("setter", "setter_op_path"), ("custom", "custom_function_op_path")):
        path = getattr(op, attr, None)
        if path:
            try:
                out.append((role, op.get_op_handler(path)))
            except Exception:  # noqa: BLE001
                out.append((role, None))
    return out


def _client(cli: Any, cmd: Any) -> Any:
    closed = _closure_operation(cmd.handler) if getattr(cmd.handler, "__self__", None) is None else None
    factory = closed[1] if closed is not None and closed[1] is not None else cmd.command_kwargs.get("client_factory")
    return None if factory is None else factory_result(cli, factory)


def command_facts(cli: Any, name: str, cmd: Any, parser: argparse.ArgumentParser) -> CommandFacts:
    """Analyse one command."""
    from azure.cli.core.aaz import AAZCommand

    options = parser_options(parser)
    dest_options: dict[str, list[str]] = {}
    for opt, (dest, _) in options.items():
        dest_options.setdefault(dest, []).append(opt)
    if isinstance(cmd, AAZCommand):
        effects = Effects()
        for op in aaz_class_ops(type(cmd)):
            effects.add_op(op.method, op.template, "aaz:" + op.origin, op.leaves, frozenset())
        return CommandFacts(name, "aaz", effects, aaz_shows_secrets(type(cmd)), options, dest_options)
    effects = Effects()
    kind = "sdk"
    problems: list[str] = []
    client = None
    client_done = False
    for role, fn in _handler_functions(cmd):
        if fn is None:
            problems.append(f"{role}: operation path does not resolve")
            effects.add_unresolved(f"{role}-unresolved", frozenset())
            continue
        ops = sdk_ops(fn)
        if ops:
            for op in ops:
                rid = _rid(op.response)
                effects.add_op(op.method, op.template, rid, op.response, frozenset())
            continue
        kind = "custom"
        if not client_done:
            client, client_done = _client(cli, cmd), True
        bindings: dict[str, Any] = {"cmd": cmd_binding(cli)}
        if client is not None:
            bindings["client"] = client
            bindings["self"] = client
        sub = analyse_function(cli, fn, bindings)
        _merge(effects, sub)
    return CommandFacts(name, kind, effects, False, options, dest_options, problems)


def _rid(resp: Any) -> str:
    if resp is None:
        return "none"
    if isinstance(resp, type):
        return f"{resp.__module__}.{resp.__qualname__}"
    return "expr:" + str(resp)


def _merge(into: Effects, sub: Effects) -> None:
    for key, conds in sub.ops.items():
        into.ops.setdefault(key, set()).update(conds)
    into.responses.update({k: v for k, v in sub.responses.items() if k not in into.responses})
    for k, conds in sub.local.items():
        into.local.setdefault(k, set()).update(conds)
    for k, conds in sub.unresolved.items():
        into.unresolved.setdefault(k, set()).update(conds)
