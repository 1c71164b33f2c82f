"""Real-CLI conformance: every argv the builders can produce goes through the REAL azure-cli parser.

Which ``az``: ``NETGHOST_REAL_AZ=/path/to/az`` (CI's ``.ci/run`` installs azure-cli into its own venv,
``.venv-az``, apart from the project's pins, and sets it), else ``az`` on PATH; skipped with the reason
when neither exists (a NETGHOST_REAL_AZ that names no file fails: a CI that meant to run this must not
skip it silently). On the build machine azure-cli 2.91 installs in ~3 min into 733 MB. Each command runs with an empty ``AZURE_CONFIG_DIR`` and no network: argparse
(and the argument validators it runs) decide before any request, so a usage error is exit 2 and
anything accepted fails later with exit 1 ("Please run 'az login'") or, against the loopback ARM
mock of ../shared/azure/mock-arm/ (``NETGHOST_AZ_MOCK_ENV=/path/env.sh`` sourced by the caller),
succeeds. The test fails on any exit 2. A key-mode storage command that passed the parser goes to the
storage data plane, whose SDK retries an unreachable endpoint for ~85 s: a command still running after
``PARSE_WINDOW_S`` (the parser answers in under 4 s here, 10 s leaves room for a loaded machine) has been accepted and is stopped. The same argvs parse in the lab simulator in test_commands.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from netghost.orchestrator import _commands as cmd

from .test_commands import all_builder_argvs

AZ = os.environ.get("NETGHOST_REAL_AZ") or shutil.which("az")
PARSE_WINDOW_S = 10.0
"""A usage error is reported within seconds of start; past this, the command is waiting on the network."""
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(AZ is None, reason="azure-cli (`az`) is not installed and NETGHOST_REAL_AZ is unset")]


def _extra_argvs() -> list[list[str]]:
    """Variants only the lifecycle produces: the engine is not az; rm is not az."""
    return [cmd.capture_create("prod-rg", "ghost_web-vm-01_20250115T143200", "/subscriptions/0/resourceGroups/prod-rg/"
                               "providers/Microsoft.Compute/virtualMachines/web-vm-01", "forensicssa",
                               cmd.blob_url("forensicssa", "captures", "ghost_x.cap"), 300, 1073741824)]


@pytest.mark.parametrize("argv", all_builder_argvs() + _extra_argvs(), ids=lambda a: " ".join(a[1:5]))
def test_builder_argv_is_accepted_by_the_real_az_parser(argv: list[str], tmp_path: Path) -> None:
    assert AZ is not None and Path(AZ).is_file(), f"NETGHOST_REAL_AZ={AZ} is not a file"
    env = {**os.environ, "AZURE_CONFIG_DIR": str(tmp_path / "azcfg"), "AZURE_CORE_COLLECT_TELEMETRY": "false",
           "AZURE_CORE_NO_COLOR": "true"}
    if not os.environ.get("NETGHOST_AZ_MOCK_ENV"):
        # never leave the machine: every request goes to a dead loopback proxy (both spellings: the
        # lower-case one wins in urllib), and no host is exempt from it
        dead = "http://127.0.0.1:9"
        env.update(HTTPS_PROXY=dead, HTTP_PROXY=dead, https_proxy=dead, http_proxy=dead, ALL_PROXY=dead,
                   all_proxy=dead, NO_PROXY="", no_proxy="")
    try:
        proc = subprocess.run([AZ or "az", *argv[1:]], capture_output=True, text=True, env=env,
                              timeout=PARSE_WINDOW_S, check=False)
    except subprocess.TimeoutExpired:
        return  # past the parser (it accepted the syntax), retrying an unreachable storage endpoint
    assert proc.returncode != 2, f"real az rejected the syntax of: {cmd.render(argv)}\n{proc.stderr}"
