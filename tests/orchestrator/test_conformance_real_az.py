"""Real-CLI conformance: every argv the builders can produce goes through the REAL azure-cli parser.

Which ``az``: ``NETGHOST_REAL_AZ=/path/to/az`` (CI's ``.ci/run`` installs azure-cli into its own venv,
``.venv-az``, apart from the project's pins, and sets it), else ``az`` on PATH; skipped with the reason
when neither exists (a NETGHOST_REAL_AZ that names no file fails: a CI that meant to run this must not
skip it silently). On the build machine azure-cli 2.91 installs in ~3 min into 733 MB. Each command runs with an empty ``AZURE_CONFIG_DIR`` and no network: argparse
(and the argument validators it runs) decide before any request, so a usage error is exit 2 and
anything accepted fails later with exit 1 ("Please run 'az login'") or, against the loopback ARM
mock of ../shared/azure/mock-arm/ (``NETGHOST_AZ_MOCK_ENV=/path/env.sh`` sourced by the caller),
succeeds. The test fails on any exit 2.

Without the mock, every request az tries goes to a loopback port that answers nothing (its proxy): a
connection there that names the command's service (ARM, the storage account) means the command got past
the parser and its validators, so it was accepted, and it is stopped at once. (A key-mode storage command goes to the storage data plane, whose SDK would retry
an unreachable endpoint for ~85 s; no timing window is needed to tell "accepted" from "still parsing".)
The same argvs parse in the lab simulator in test_commands.
"""

from __future__ import annotations

import os
import selectors
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from netghost.orchestrator import _commands as cmd

from .test_commands import all_builder_argvs

AZ = os.environ.get("NETGHOST_REAL_AZ") or shutil.which("az")
PARSE_WINDOW_S = 10.0
"""Against the mock: a usage error is reported within seconds of start; past this, the command is waiting on
the network (a storage data-plane retry)."""
HANG_S = 120.0
"""Without the mock: a command that neither exits nor tries to send a request in this long is a defect."""
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
    if os.environ.get("NETGHOST_AZ_MOCK_ENV"):
        try:
            proc = subprocess.run([AZ or "az", *argv[1:]], capture_output=True, text=True, env=env,
                                  timeout=PARSE_WINDOW_S, check=False)
        except subprocess.TimeoutExpired:
            return  # past the parser (it accepted the syntax), retrying an unreachable storage endpoint
        assert proc.returncode != 2, f"real az rejected the syntax of: {cmd.render(argv)}\n{proc.stderr}"
        return
    code, stderr = _parse_offline(argv, env, tmp_path)
    assert code != 2, f"real az rejected the syntax of: {cmd.render(argv)}\n{stderr}"


SERVICE_HOSTS = ("management.azure.com", "forensicssa.blob.core.windows.net")
"""Where the builders' commands send their requests: ARM, and the storage account's Blob endpoint. (az also
fetches its own indexes from ``azcliprod.blob.core.windows.net`` at start-up, before it parses: not a sign.)"""


def _parse_offline(argv: list[str], env: dict[str, str], tmp_path: Path) -> tuple[int | None, str]:
    """Run the real az with every request sent to a loopback port that answers nothing; (exit code, stderr),
    or (None, stderr) when it tried to reach the service the command addresses (it got past the parser and
    its validators: stopped there).

    Never leaves the machine: the port is az's proxy in both spellings (the lower-case one wins in urllib),
    no host is exempt from it, and each connection is closed after its first line."""
    with socket.create_server(("127.0.0.1", 0)) as door, selectors.DefaultSelector() as knock:
        proxy = f"http://127.0.0.1:{door.getsockname()[1]}"
        env = {**env, "HTTPS_PROXY": proxy, "HTTP_PROXY": proxy, "https_proxy": proxy, "http_proxy": proxy,
               "ALL_PROXY": proxy, "all_proxy": proxy, "NO_PROXY": "", "no_proxy": ""}
        knock.register(door, selectors.EVENT_READ)
        err = tmp_path / "az.stderr"
        with err.open("w") as sink:
            proc = subprocess.Popen([AZ or "az", *argv[1:]], stdout=subprocess.DEVNULL, stderr=sink, env=env)
            deadline = time.monotonic() + HANG_S
            try:
                while proc.poll() is None:
                    assert time.monotonic() < deadline, f"az neither exited nor sent a request: {cmd.render(argv)}"
                    if knock.select(timeout=0.05) and _host_asked(door) in SERVICE_HOSTS:
                        return None, err.read_text()  # a request to the service: the syntax was accepted
            finally:
                proc.kill()
                proc.wait()
        return proc.returncode, err.read_text()


def _host_asked(door: socket.socket) -> str:
    """Accept one connection to the proxy port and return the host its ``CONNECT host:port`` names ("" if none)."""
    conn, _ = door.accept()
    with conn:
        conn.settimeout(5)
        try:
            first = conn.recv(1024).split(b"\r\n", 1)[0].decode("ascii", "replace").split()
        except OSError:
            return ""
    return first[1].rsplit(":", 1)[0] if len(first) >= 2 and first[0] == "CONNECT" else ""
