"""``ghost-agent``: the one command line of the product.

Subcommands live in the module of the component they belong to and are imported only when
used, so ``ghost-agent audit verify`` never pays for the lab or the PCAP engine. A component
module exposes ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from netghost import __version__

__all__ = ["build_parser", "main"]

# name -> (module implementing it, one-line help)
_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("netghost.governance.audit_cli", "verify hash-chained audit, registry and workflow logs"),
    "lab": ("netghost.lab", "list, show and reset the offline Azure lab worlds"),
    "demo": ("netghost.agent.demo", "run an investigation against the offline lab (no cloud, no key)"),
}


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser; subcommand arguments are added by their own modules."""
    parser = argparse.ArgumentParser(
        prog="ghost-agent",
        description="Network Ghost Agent: AI network forensics for Azure through a governed shell.",
    )
    parser.add_argument("--version", action="version", version=f"ghost-agent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in _SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        sp.set_defaults(_module=module_name)
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            sp.set_defaults(_missing=True)
            continue
        module.add_arguments(sp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ghost-agent``; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    if getattr(args, "_missing", False):
        print(f"ghost-agent: '{args.command}' is not available in this build yet", file=sys.stderr)
        return 2
    module = importlib.import_module(args._module)
    result: int = module.run(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
