"""Fixtures of the fleet tests: one real Dask LocalCluster (processes) per test module, and a real Blob
endpoint (Azurite, the npm package, started on loopback from ./node_modules or PATH).

Azurite missing skips the Blob tests with the reason, except under CI (``CI`` set), where .ci/run
installs it, so its absence is a failure there.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Azurite's well-known development account (public, documented; not a secret)
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def azurite_binary() -> str | None:
    """``azurite-blob`` from the repository's node_modules, else from PATH."""
    local = REPO / "node_modules" / ".bin" / "azurite-blob"
    if local.exists():
        return str(local)
    return shutil.which("azurite-blob")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"azurite exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"azurite did not listen on 127.0.0.1:{port} within {timeout} s")


@pytest.fixture(scope="module")
def azurite_or_none(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """A running Azurite Blob service on loopback (its connection string), None when not installed."""
    exe = azurite_binary()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("azurite is not installed (.ci/run installs it with npm install azurite)")
        yield None
        return
    with running_azurite(exe, tmp_path_factory.mktemp("azurite")) as conn:
        yield conn


@contextmanager
def running_azurite(exe: str, where: Path, tries: int = 3) -> Iterator[str]:
    """Run Azurite's Blob service on a free loopback port with its data under ``where``; yields the
    connection string (also used by bench/fleet_bench.py). A port taken between the probe and the
    start (another process on the machine) is retried on a fresh one."""
    for attempt in range(tries):
        port = _free_port()
        proc = subprocess.Popen([exe, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(where),
                                 "--silent", "--skipApiVersionCheck", "--loose"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            _wait_port(port, proc, timeout=60.0)
        except RuntimeError:
            _stop(proc)
            if attempt == tries - 1:
                raise
            continue
        try:
            yield (f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
                   f"BlobEndpoint=http://127.0.0.1:{port}/{AZURITE_ACCOUNT};")
        finally:
            _stop(proc)
        return


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def azurite(azurite_or_none: str | None) -> str:
    """Azurite's connection string; skips the test when Azurite is not installed."""
    if azurite_or_none is None:
        pytest.skip("azurite is not installed: `npm install --no-save azurite` in the repository (or on PATH) runs these tests")
    return azurite_or_none


@pytest.fixture(scope="module")
def cluster(azurite_or_none: str | None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fleet's LocalCluster of 2 worker processes, shared by the module; yields the scheduler's address.

    The workers inherit an environment holding only Azurite's connection string as Azure settings
    (they read blobs as a real fleet's workers do: from their own environment).
    """
    from netghost.forensics.fleet import dask_client

    mp = pytest.MonkeyPatch()
    for name in list(os.environ):
        if name.startswith(("AZURE_", "GEMINI_", "GOOGLE_")):
            mp.delenv(name)
    if azurite_or_none is not None:
        mp.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite_or_none)
    mp.setenv("HOME", str(tmp_path_factory.mktemp("worker-home")))
    try:
        with dask_client(None, 2) as client:  # the local cluster --fleet starts, shared through its address
            yield str(client.scheduler.address)
    finally:
        mp.undo()
