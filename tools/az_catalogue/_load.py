"""Load azure-cli's whole command table, with every command's arguments and argparse parser, offline.

Why the real loader: the catalogue must say what *this* azure-cli does, so it reads the same objects
`az` builds for a command line: ``create_invoker_and_load_cmds_and_args`` (what azure-cli's own help
indexer runs) loads every command module, applies every ``load_arguments``, and builds the argparse
tree, whose per-command ``_option_string_actions`` are exactly the option strings `az` accepts.

Nothing here talks to a network or an account: the configuration directory is a fresh temporary
one, telemetry is off, and the profile's credential lookup is replaced by an object that refuses
to fetch a token. That replacement only lets client factories *construct* SDK clients, so that the
analysis can see which operations class a command's ``client`` is (no request is ever sent).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any

FAKE_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"


class _NoTokenCredential:
    """A credential that never produces a token: constructing clients works, sending cannot."""

    def get_token(self, *_: Any, **__: Any) -> Any:
        raise RuntimeError("the catalogue generator never sends requests")

    def get_token_info(self, *_: Any, **__: Any) -> Any:
        raise RuntimeError("the catalogue generator never sends requests")


@dataclass
class Loaded:
    """What the generator reads: the CLI context, the command table and the argparse parsers."""

    cli: Any
    commands: dict[str, Any]
    parsers: dict[str, Any]
    version: str


def _isolate() -> None:
    os.environ["AZURE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="az-catalogue-")
    os.environ["AZURE_CORE_COLLECT_TELEMETRY"] = "no"
    os.environ["AZURE_CORE_NO_COLOR"] = "true"
    os.environ.pop("AZURE_EXTENSION_DIR", None)
    # no installed extension may add or change commands: the catalogue is core azure-cli only
    os.environ["AZURE_EXTENSION_DIR"] = tempfile.mkdtemp(prefix="az-catalogue-ext-")


def _patch_profile() -> None:
    from azure.cli.core._profile import Profile

    sub = {
        "id": FAKE_SUBSCRIPTION, "tenantId": FAKE_SUBSCRIPTION, "name": "catalogue", "state": "Enabled",
        "isDefault": True, "environmentName": "AzureCloud", "user": {"name": "catalogue", "type": "user"},
    }  # fmt: skip
    Profile.get_login_credentials = lambda self, *a, **k: (_NoTokenCredential(), FAKE_SUBSCRIPTION, FAKE_SUBSCRIPTION)  # type: ignore[method-assign]
    Profile.get_subscription_id = lambda self, *a, **k: FAKE_SUBSCRIPTION  # type: ignore[method-assign]
    Profile.get_subscription = lambda self, *a, **k: sub  # type: ignore[method-assign]


def load() -> Loaded:
    """Load every built-in command of the installed azure-cli with its arguments and parser."""
    _isolate()
    import logging

    logging.disable(logging.WARNING)
    from azure.cli.core import get_default_cli
    from azure.cli.core.file_util import create_invoker_and_load_cmds_and_args

    cli = get_default_cli()
    create_invoker_and_load_cmds_and_args(cli)
    _patch_profile()
    invocation = cli.invocation
    from azure.cli.core import __version__

    return Loaded(
        cli=cli,
        commands=dict(invocation.commands_loader.command_table),
        parsers=dict(invocation.parser.subparser_map),
        version=__version__,
    )
