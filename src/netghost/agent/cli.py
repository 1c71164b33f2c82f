"""``ghost-agent``: the one command line of the product.

Without a subcommand it runs (or ``--resume``s) an investigation: ``ghost-agent [--resume SID]
[--model M] [--audit-dir DIR] [--brain gemini|playbook] [--lab WORLD] [--intent TEXT] [--yes]
[--budget NAME=VALUE]``; ``--help`` prints what its exit codes mean and the budgets.
Subcommands live in the module of the component they belong to and are imported only when
used, so ``ghost-agent audit verify`` never pays for the lab or the PCAP engine. A component
module exposes ``add_arguments(parser)`` and ``run(args) -> int``. ``--lab`` is prepared here
(through :func:`netghost.agent.demo.prepare_lab`): only the CLI's entries may import the lab.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from netghost import __version__
from netghost.agent._exit_codes import ExitCode, describe_exit_codes
from netghost.errors import NetGhostError

__all__ = ["build_parser", "main", "selected_subcommand"]

# name -> (module implementing it, one-line help)
_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("netghost.governance.audit_cli", "verify hash-chained audit, registry and workflow logs"),
    "lab": ("netghost.lab", "list, show and reset the offline Azure lab worlds"),
    "demo": ("netghost.agent.demo", "run an investigation against the offline lab (no cloud, no key)"),
    "mcp": ("netghost.mcp", "serve the governed tools to any MCP client (stdio, or --http on loopback)"),
    "report": ("netghost.agent._report", "write a session's HTML RCA again from its audit trail"),
    "eval": ("netghost.agent.eval", "the diagnosis benchmark: investigate lab worlds and score the diagnoses"),
}


BUDGETS_HELP = """\
budgets (a session never goes past them; raise one with --budget NAME=VALUE or NETGHOST_BUDGETS):
  calls_per_turn, hypotheses_per_session, concurrent_captures, capture_seconds, capture_bytes"""


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """Build the top-level parser; only the subcommand ``argv`` names gets its arguments.

    Why lazily: adding a subcommand's arguments imports its module, and some pull in heavy
    libraries (the demo imports the Gemini SDK and the lab). ``ghost-agent --help``, ``--version`` and
    every other subcommand must not pay for them, so each subcommand is listed by its one-line help
    and its module is imported only when ``argv`` selects it.
    """
    return _parsers(argv)[0]


def _parsers(argv: Sequence[str]) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(
        prog="ghost-agent",
        description="Network Ghost Agent: AI network forensics for Azure through a governed shell.",
        epilog=describe_exit_codes() + "\n\n" + BUDGETS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ghost-agent {__version__}")
    _add_investigation_arguments(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = selected_subcommand(argv)
    subparsers: dict[str, argparse.ArgumentParser] = {}
    for name, (module_name, help_text) in _SUBCOMMANDS.items():
        sp = subparsers[name] = sub.add_parser(name, help=help_text, description=help_text)
        sp.set_defaults(_module=module_name)
        if name != chosen:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            sp.set_defaults(_missing=True)
            continue
        module.add_arguments(sp)
    return parser, subparsers


# The investigation's options that take a value: a subcommand's name given as their value is not a subcommand.
_VALUE_OPTIONS = frozenset({"--resume", "--model", "--audit-dir", "--brain", "--lab", "--intent", "--budget"})


def selected_subcommand(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` runs (the first bare word that names one), or None for an investigation."""
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word == "--":
            return None
        if word.startswith("-"):
            skip = word in _VALUE_OPTIONS or any(word == o[:len(word)] and len(word) > 2 for o in _VALUE_OPTIONS)
            continue
        return word if word in _SUBCOMMANDS else None
    return None


def _add_investigation_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("investigation (no COMMAND)")
    group.add_argument("--resume", metavar="SID", help="continue the session SID (verifies its audit trail first)")
    group.add_argument("--model", metavar="M", help="Gemini model (default: $GHOST_MODEL or gemini-2.5-flash)")
    group.add_argument("--audit-dir", dest="agent_audit_dir", metavar="DIR", default="./audit",
                       help="audit logs, session file and RCA (default: ./audit)")
    group.add_argument("--brain", choices=("gemini", "playbook"), default=None,
                       help="who decides the next step (default: gemini when a key is set, else the offline playbook)")
    group.add_argument("--lab", metavar="WORLD",
                       help="investigate a fresh offline lab world (a shipped name or a YAML path) under DIR/lab")
    group.add_argument("--intent", metavar="TEXT", help="the problem to investigate (instead of the prompt)")
    group.add_argument("--yes", dest="agent_yes", action="store_true",
                       help="approve the lab's simulated RISKY steps without asking (only with --lab; a program "
                            "the lab does not simulate is refused, and the audit names --yes as the approver)")
    group.add_argument("--budget", dest="agent_budget", action="append", default=[], metavar="NAME=VALUE",
                       help="raise (or lower) a session budget, e.g. --budget capture_seconds=3600 (repeatable; "
                            "also $NETGHOST_BUDGETS)")


def _investigate(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from netghost.agent._paths import (  # noqa: PLC0415
        PathProblem,
        audit_dir_problem,
        session_id_problem,
        unknown_session_line,
    )
    from netghost.agent._run import Options, run_agent  # noqa: PLC0415  the agent loads only when it runs
    from netghost.llm import has_credentials, model_environment  # noqa: PLC0415
    from netghost.orchestrator import Budgets  # noqa: PLC0415

    if args.agent_yes and not args.lab:
        parser.error("--yes approves RISKY commands and is refused without --lab")
    try:
        budgets = Budgets.load(os.environ, args.agent_budget)
    except NetGhostError as exc:
        parser.error(str(exc))
    audit_dir = Path(args.agent_audit_dir).expanduser().resolve()
    problem = session_id_problem(args.resume) if args.resume else None
    if problem is None and args.resume and not audit_dir.exists():  # nothing to resume there: create nothing
        problem = PathProblem(ExitCode.ERROR, unknown_session_line(args.resume, audit_dir,
                                                                   command="ghost-agent --resume"))
    problem = problem or audit_dir_problem(audit_dir, create=bool(args.lab))  # the lab's state goes in it
    if problem is not None:
        print(f"ghost-agent: {problem.line}", file=sys.stderr)
        return problem.code
    lab = None
    if args.lab:
        from netghost.agent.demo import prepare_lab  # noqa: PLC0415

        try:
            lab = prepare_lab(args.lab, audit_dir, fresh=not args.resume)
        except NetGhostError as exc:
            print(f"ghost-agent: --lab {args.lab}: {exc}", file=sys.stderr)
            return ExitCode.USAGE
    brain = args.brain or ("gemini" if has_credentials(model_environment()) else "playbook")
    if args.brain is None and brain == "playbook":
        print("ghost-agent: no Gemini key is set: the offline playbook brain investigates "
              "(--brain gemini and GEMINI_API_KEY for Gemini).", file=sys.stderr)
    try:
        return run_agent(Options(audit_dir=audit_dir, resume=args.resume, model=args.model, brain=brain,
                                 intent=args.intent, yes=args.agent_yes, lab=lab, budgets=budgets))
    finally:
        if lab is not None:
            lab.close()


def _mcp_lab(world: str, audit_dir: Path) -> Any:
    """The lab world ``ghost-agent mcp --lab`` serves (a NetGhostError names the world and what is wrong)."""
    from netghost.agent.demo import prepare_lab  # noqa: PLC0415

    try:
        return prepare_lab(world, audit_dir)
    except NetGhostError as exc:
        raise NetGhostError(f"--lab {world}: {exc}") from exc


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ghost-agent``; returns the process exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser, subparsers = _parsers(words)
    args, unknown = parser.parse_known_args(words)
    if unknown:  # the usage of the command that was mistyped, not the top-level one
        (subparsers.get(getattr(args, "command", None) or "") or parser).error(
            f"unrecognized arguments: {' '.join(unknown)}")
    if not getattr(args, "command", None):
        return _investigate(parser, args)
    if getattr(args, "_missing", False):
        print(f"ghost-agent: '{args.command}' is not available in this build yet", file=sys.stderr)
        return 2
    if args.command == "mcp" and args.mcp_lab:  # only the CLI's entries may import the lab
        args.mcp_lab_prepare = functools.partial(_mcp_lab, args.mcp_lab, Path(args.mcp_audit_dir).resolve())
        if args.mcp_http:  # stdio prepares it while it answers initialize (netghost.mcp)
            try:
                args.mcp_lab_setup = args.mcp_lab_prepare()
            except NetGhostError as exc:
                print(f"ghost-agent mcp: {exc}", file=sys.stderr)
                return 2
    module = importlib.import_module(args._module)
    try:
        result: int = module.run(args)
    finally:
        setup = getattr(args, "mcp_lab_setup", None)
        if setup is not None:
            setup.close()
    return result


if __name__ == "__main__":
    raise SystemExit(main())
