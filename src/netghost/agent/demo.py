"""``ghost-agent demo``: run the product against the offline lab, with no cloud and no key."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the demo's options."""
    parser.add_argument("--scenario", default="nsg-deny-redis", help="lab world to investigate")


def run(args: argparse.Namespace) -> int:
    """Run the demo; until the agent loop lands, say so instead of pretending."""
    print(
        "ghost-agent demo: the investigation loop has not landed yet; "
        "the offline lab and the agent arrive in later issues.",
        file=sys.stderr,
    )
    return 2
