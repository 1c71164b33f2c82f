"""The lab's ``az``: ``python -m netghost.lab.az ARGS`` or, in-process, :func:`main`.

One invocation: find the command by its words, parse its arguments like az (usage errors exit 2),
open the lab state named by ``$NETGHOST_LAB_STATE`` under its lock, let finished captures leave
their blobs (:func:`~netghost.lab.az._capture_store.settle`), run the handler, then print the result
through ``--query`` and ``-o`` and any warnings on stderr. Handlers report failures as
:class:`~netghost.errors.AzError`, which carries az's exact stderr text and exit code.

The lab must exist (``ghost-agent lab reset <scenario>`` creates it); without one the simulator
answers like an az that was never logged in.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import IO

from netghost.errors import LabError
from netghost.lab.az._aks import COMMANDS as AKS_COMMANDS
from netghost.lab.az._args import ParsedArgs, parse_command_args
from netghost.lab.az._capture import COMMANDS as CAPTURE_COMMANDS
from netghost.lab.az._capture_store import settle
from netghost.lab.az._compute import COMMANDS as COMPUTE_COMMANDS
from netghost.lab.az._context import AzContext, Command
from netghost.lab.az._dns import COMMANDS as DNS_COMMANDS
from netghost.lab.az._edge import COMMANDS as EDGE_COMMANDS
from netghost.lab.az._endpoints import COMMANDS as ENDPOINT_COMMANDS
from netghost.lab.az._errors import AzError
from netghost.lab.az._firewall import COMMANDS as FIREWALL_COMMANDS
from netghost.lab.az._network import COMMANDS as NETWORK_COMMANDS
from netghost.lab.az._output import render
from netghost.lab.az._resource import COMMANDS as RESOURCE_COMMANDS
from netghost.lab.az._storage import COMMANDS as STORAGE_COMMANDS
from netghost.lab.az._views import COMMANDS as VIEWS_COMMANDS
from netghost.lab.az._vmss import COMMANDS as VMSS_COMMANDS
from netghost.lab.az._vpn import COMMANDS as VPN_COMMANDS
from netghost.lab.az._watcher import COMMANDS as WATCHER_COMMANDS
from netghost.lab.state import LabState, default_state_dir

__all__ = ["LATENCY_ENV", "REGISTRY", "az_latency", "main", "run_az", "run_az_slowly"]

LATENCY_ENV = "NETGHOST_LAB_AZ_LATENCY_S"
"""Seconds added to every lab ``az`` call (default 0): benchmarks model real ARM latency with it."""
_MAX_LATENCY_S = 120.0

REGISTRY: dict[tuple[str, ...], Command] = {
    cmd.spec.words: cmd
    for commands in (RESOURCE_COMMANDS, COMPUTE_COMMANDS, VMSS_COMMANDS, AKS_COMMANDS, NETWORK_COMMANDS, DNS_COMMANDS,
                     VPN_COMMANDS, WATCHER_COMMANDS, VIEWS_COMMANDS, CAPTURE_COMMANDS, STORAGE_COMMANDS,
                     ENDPOINT_COMMANDS, EDGE_COMMANDS, FIREWALL_COMMANDS)
    for cmd in commands
}
_FOOTER = "\nhttps://aka.ms/cli_ref\nRead more about the command in reference docs\n"


@cache
def _help_texts() -> dict[str, str]:
    text = resources.files("netghost.lab.az").joinpath("help.json").read_text(encoding="utf-8")
    data: dict[str, str] = json.loads(text)
    return data


def _help_for(words: tuple[str, ...]) -> str:
    """The real ``--help`` text when we have it, else a listing built from our declarations."""
    real = _help_texts().get(" ".join(words))
    if real is not None:
        return real
    cmd = REGISTRY.get(words)
    if cmd is not None:
        lines = [f"\nCommand\n    az {' '.join(words)}\n\nArguments"]
        for arg in cmd.spec.args:
            flags = f"{arg.long} {arg.short}" if arg.short else arg.long
            lines.append(f"    {flags}{' [Required]' if arg.required else ''}")
        return "\n".join(lines) + "\n"
    children = sorted({w[len(words)] for w in REGISTRY if w[: len(words)] == words and len(w) > len(words)})
    return f"\nGroup\n    az {' '.join(words)}\n\nCommands:\n" + "".join(f"    {c}\n" for c in children)


def _version(as_json: bool) -> str:
    if as_json:
        return render({"azure-cli": "2.91.0", "azure-cli-core": "2.91.0", "azure-cli-telemetry": "1.1.0",
                       "extensions": {}}, "json")
    return ("azure-cli                         2.91.0\n\ncore                              2.91.0\n"
            "telemetry                          1.1.0\n\nLegal docs and information: aka.ms/AzureCliLegal\n\n\n"
            "Your CLI is up-to-date.\n")


def _split(argv: Sequence[str]) -> tuple[tuple[str, ...], list[str]]:
    """Longest registered command prefix of the leading words, and the remaining tokens."""
    words: list[str] = []
    for token in argv:
        if token.startswith("-"):
            break
        words.append(token)
    for n in range(len(words), 0, -1):
        if tuple(words[:n]) in REGISTRY:
            return tuple(words[:n]), list(argv[n:])
    return tuple(words), list(argv[len(words):])


def run_az(argv: Sequence[str], env: Mapping[str, str], *, cwd: str = "",
           umask: int | None = None) -> tuple[int, str, str]:
    """Run one simulated ``az`` command; returns ``(exit_code, stdout, stderr)``.

    Binary stdout (``storage blob download`` without ``--file``) is decoded with
    ``surrogateescape``; ``out.encode("utf-8", "surrogateescape")`` gives the exact bytes back.
    ``cwd`` and ``umask`` are the caller's (the resident lab answers callers in other processes): a
    file a command writes lands where, and with the mode, the caller's own az would write it.
    """
    if list(argv) in (["--version"], ["version"]):  # needs no login, like the real CLI
        return 0, _version(argv[0] == "version"), ""
    words, rest = _split(argv)
    cmd = REGISTRY.get(words)
    if cmd is None:
        return _not_a_command(words, rest)
    try:
        args = parse_command_args(cmd.spec, rest)
    except AzError as exc:
        return exc.exit_code, "", exc.stderr
    if args["help"]:
        return 0, _help_for(words), ""
    state = LabState(default_state_dir(env))
    if not state.exists:
        return 1, "", "ERROR: Please run 'az login' to setup account.\n"
    return _run_in_lab(cmd, args, state, env, cwd=cwd, umask=umask)


def _not_a_command(words: tuple[str, ...], rest: list[str]) -> tuple[int, str, str]:
    """A group's help listing, or az's "misspelled or not recognized" usage error (exit 2)."""
    is_group = any(w[: len(words)] == words for w in REGISTRY) if words else True
    if is_group and (not rest or rest[0] in ("-h", "--help")):
        return 0, _help_for(words), ""
    bad = next((w for i, w in enumerate(words) if not any(k[: i + 1] == tuple(words[: i + 1]) for k in REGISTRY)),
               words[-1] if words else (rest[0] if rest else ""))
    return 2, "", f"ERROR: '{bad}' is misspelled or not recognized by the system.\n{_FOOTER}"


def _run_in_lab(cmd: Command, args: ParsedArgs, state: LabState, env: Mapping[str, str], *, cwd: str,
                umask: int | None) -> tuple[int, str, str]:
    """Run the handler under the state's lock, then render its result (or az's error text)."""
    warnings = ""
    try:
        with state.locked():
            world = state.world()
            clock = state.clock(env)
            sub = world.spec.subscription
            if args["subscription"] and args["subscription"] not in (sub.id, sub.name):
                raise AzError(1, f"ERROR: Subscription '{args['subscription']}' not found. "
                                 "Check the spelling and casing and try again.\n")
            for other in _foreign_subscriptions(args["ids"] or [], sub.id):  # az switches to an id's subscription
                raise AzError(1, f"ERROR: Subscription '{other}' not found. Check the spelling and casing and try "
                                 "again.\n")
            ctx = AzContext(state, world, clock, env, cwd=cwd, umask=umask)
            settle(state, ctx.now())
            try:
                result = cmd.handler(ctx, args)
                if args["no_wait"]:  # an LRO started with --no-wait prints nothing, whatever it returns
                    result = None
            finally:
                if not args["only_show_errors"]:
                    warnings = "".join(ctx.warnings)
    except AzError as exc:
        return exc.exit_code, "", warnings + exc.stderr
    except LabError as exc:
        return 1, "", f"ERROR: lab: {exc}\n"
    if isinstance(result, bytes):  # blob content for stdout (download without --file): raw, no rendering
        return 0, result.decode("utf-8", "surrogateescape"), warnings
    out = render(result, args.output, args.query, cmd.table)
    return 0, out, warnings


def az_latency(env: Mapping[str, str]) -> float:
    """The latency model: ``$NETGHOST_LAB_AZ_LATENCY_S`` seconds per call (0 when unset).

    Raises:
        LabError: the value is not a number in [0, 120].
    """
    raw = env.get(LATENCY_ENV, "").strip()
    if not raw:
        return 0.0
    try:
        value = float(raw)
    except ValueError as exc:
        raise LabError(f"{LATENCY_ENV}={raw!r} is not a number of seconds") from exc
    if not 0.0 <= value <= _MAX_LATENCY_S:
        raise LabError(f"{LATENCY_ENV}={raw!r} must be in [0, {_MAX_LATENCY_S:g}] seconds")
    return value


def run_az_slowly(argv: Sequence[str], env: Mapping[str, str], *, cwd: str = "", umask: int | None = None,
                  sleep: Callable[[float], None] = time.sleep) -> tuple[int, str, str]:
    """:func:`run_az` after the latency :func:`az_latency` models (what a lab ``az`` program does); an invalid
    latency setting is az's error, exit 1, the command not run."""
    try:
        delay = az_latency(env)
    except LabError as exc:
        return 1, "", f"ERROR: lab: {exc}\n"
    if delay:
        sleep(delay)
    return run_az(argv, env, cwd=cwd, umask=umask)


def _foreign_subscriptions(ids: Sequence[str], own: str) -> list[str]:
    """The subscriptions ``--ids`` name that are not the lab's (az looks each up in its profile)."""
    out = []
    for rid in ids:
        parts = rid.split("/")
        if len(parts) > 2 and parts[1].lower() == "subscriptions" and parts[2].lower() != own.lower():
            out.append(parts[2])
    return out


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
         stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    """Entry point; in-process callers pass argv/env/streams, the launcher passes nothing."""
    code, out, err = run_az_slowly(list(sys.argv[1:] if argv is None else argv), os.environ if env is None else env)
    target = stdout or sys.stdout
    binary = getattr(target, "buffer", None)
    if binary is not None:  # a real stream: write bytes so blob content survives unchanged
        target.flush()
        binary.write(out.encode("utf-8", "surrogateescape"))
        binary.flush()
    else:
        target.write(out)
    (stderr or sys.stderr).write(err)
    return code
