"""The shipped az catalogue is exactly what the generator gives for the pinned azure-cli.

Why: the catalogue is data derived from azure-cli 2.91 (its command table, AAZ schemas, SDK request
builders and models); if the generator or its judgements change and the data is not regenerated, the
classifier would judge by stale facts. The generator needs the real azure-cli: CI installs it and
exports ``NETGHOST_REAL_AZ`` (the ``az`` entry point of its venv); the generator runs with the
interpreter beside it, in a child process (loading azure-cli's whole command table takes ~1.7 GB for
a few minutes, and must not stay in the test process).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools" / "az_catalogue" / "generate.py"
AZ = os.environ.get("NETGHOST_REAL_AZ")

pytestmark = [
    pytest.mark.slow,  # the longest test of the suite (about 160 s on CI): it heads a worker's block (tests/_schedule.py)
    pytest.mark.skipif(
        not AZ, reason="NETGHOST_REAL_AZ is not set: regenerating the catalogue needs the pinned azure-cli 2.91 (CI sets it)"
    ),
]


def _az_python() -> Path:
    assert AZ is not None
    az = Path(AZ)
    assert az.is_file(), f"NETGHOST_REAL_AZ={AZ} is not a file"
    python = az.resolve().parent / "python"
    if not python.exists():
        python = az.parent / "python"
    assert python.exists(), f"no python beside {AZ}: the generator runs with azure-cli's own interpreter"
    return python


def test_the_catalogue_regenerates_identically(tmp_path: Path) -> None:
    python = _az_python()
    out = tmp_path / "az_catalogue.json.gz"
    done = subprocess.run(  # our own generator, with azure-cli's interpreter
        [str(python), str(GENERATOR), "--out", str(out)],
        capture_output=True, text=True, timeout=3600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    shipped = ROOT / "src" / "netghost" / "shell" / "classify" / "data" / "az_catalogue.json.gz"
    assert out.read_bytes() == shipped.read_bytes(), (
        f"the shipped catalogue differs from what the generator gives ({done.stderr.strip()[-400:]}); "
        f"regenerate it: {python} {GENERATOR.relative_to(ROOT)}"
    )
