"""``ghost-agent lab`` and the bin/ launcher, through real subprocesses where it matters."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from netghost.agent.cli import main as ghost_main
from netghost.lab.bin import create_bin_dir, lab_path_env
from netghost.lab.resident import SHIM_PATH


def test_lab_list_show_reset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    assert ghost_main(["lab", "list"]) == 0
    listed = capsys.readouterr().out
    assert "nsg-deny" in listed and "healthy" in listed
    assert ghost_main(["lab", "show", "service-down"]) == 0
    shown = capsys.readouterr().out
    redis_line = next(line for line in shown.splitlines() if line.strip().startswith("vm redis-primary"))
    assert "listening: 22/tcp" in redis_line and "6379" not in redis_line  # redis-server is stopped
    assert ghost_main(["lab", "--state-dir", str(state), "show"]) == 1
    assert "no lab state" in capsys.readouterr().err
    assert ghost_main(["lab", "--state-dir", str(state), "reset", "nsg-deny", "--clock-scale", "50"]) == 0
    assert (state / "bin" / "az").exists()
    assert json.loads((state / "clock.json").read_text())["scale"] == 50
    capsys.readouterr()
    assert ghost_main(["lab", "--state-dir", str(state), "show"]) == 0
    assert "world: nsg-deny" in capsys.readouterr().out
    assert ghost_main(["lab", "--state-dir", str(state), "reset", "no-such-world"]) == 1
    assert ghost_main(["lab"]) == 2


def test_default_state_dir_is_under_the_audit_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert ghost_main(["lab", "--audit-dir", "audit", "reset", "healthy"]) == 0
    assert (tmp_path / "audit" / "lab" / "world.yaml").exists()


@pytest.fixture
def lab_env(tmp_path: Path) -> dict[str, str]:
    state = tmp_path / "lab"
    assert ghost_main(["lab", "--state-dir", str(state), "reset", "healthy"]) == 0
    env = lab_path_env(state, {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)})
    env["NETGHOST_LAB_CLOCK_SCALE"] = "600"
    return env


def _az(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["az", *args], env=env, capture_output=True, text=True, timeout=60, check=False)


def test_launcher_is_found_first_on_path(lab_env: dict[str, str]) -> None:
    assert shutil.which("az", path=lab_env["PATH"]) == str(Path(lab_env["NETGHOST_LAB_STATE"]) / "bin" / "az")
    result = _az(lab_env, "vm", "show", "-g", "prod-rg", "-n", "web-vm-01", "--query", "{id:id, location:location}",
                 "-o", "tsv")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("/virtualMachines/web-vm-01\teastus\n")


def test_subprocess_exit_codes(lab_env: dict[str, str]) -> None:
    missing = _az(lab_env, "vm", "show", "-g", "prod-rg", "-n", "nope-vm")
    assert missing.returncode == 3 and missing.stderr.startswith("ERROR: (ResourceNotFound)")
    usage = _az(lab_env, "network", "watcher", "packet-capture", "show", "-n", "x")
    assert usage.returncode == 2 and "--location/-l" in usage.stderr


def test_capture_round_trip_across_processes(lab_env: dict[str, str], tmp_path: Path) -> None:
    create = _az(lab_env, "network", "watcher", "packet-capture", "create", "-g", "prod-rg", "-n", "ghost_sub",
                 "--vm", "web-vm-01", "--storage-account", "forensicssa", "--storage-path",
                 "https://forensicssa.blob.core.windows.net/captures/ghost_sub.cap", "--time-limit", "60",
                 "--query", "storageLocation.storagePath", "-o", "tsv")
    assert create.returncode == 0, create.stderr
    status = ""
    for _ in range(40):  # 60 lab seconds at x600 is 0.1 s of wall time; each poll is a process
        status = _az(lab_env, "network", "watcher", "packet-capture", "show-status", "-l", "eastus", "-n",
                     "ghost_sub", "--query", "packetCaptureStatus", "-o", "tsv").stdout
        if status == "Stopped\n":
            break
    assert status == "Stopped\n"
    target = tmp_path / "sub.cap"
    download = _az(lab_env, "storage", "blob", "download", "--account-name", "forensicssa", "-c", "captures",
                   "-n", "ghost_sub.cap", "-f", str(target), "--auth-mode", "login", "--no-progress", "-o", "none")
    assert download.returncode == 0, download.stderr
    assert target.read_bytes()[:4] == b"\xd4\xc3\xb2\xa1"


def test_module_entry_point(lab_env: dict[str, str]) -> None:
    result = subprocess.run([sys.executable, "-m", "netghost.lab.az", "account", "show", "--query", "name", "-o", "tsv"],
                            env=lab_env, capture_output=True, text=True, timeout=60, check=False)
    assert (result.returncode, result.stdout) == (0, "netghost-lab\n")


def test_bin_script_pins_interpreter_and_state(tmp_path: Path) -> None:
    bin_dir = create_bin_dir(tmp_path / "s", python="/opt/py/bin/python3")
    script = (bin_dir / "az").read_text()
    # the resident lab's shim client, without site; it falls back to `python -m netghost.lab.az`
    assert f"exec /opt/py/bin/python3 -I -S {SHIM_PATH} az netghost.lab.az" in script
    assert f"NETGHOST_LAB_STATE={tmp_path / 's'}" in script
    assert os.access(bin_dir / "az", os.X_OK)


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


@pytest.mark.parametrize("face", ["netghost.lab", "netghost.lab.world", "netghost.lab.az", "netghost.lab.probes",
                                  "netghost.lab.synth", "netghost.lab.resident", "netghost.lab.arm"])
def test_public_names_are_exported_and_sorted(face: str) -> None:
    module = importlib.import_module(face)
    assert module.__all__ == sorted(module.__all__, key=_isort_key)
    for name in module.__all__:
        assert hasattr(module, name), name


def test_lab_inject_then_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    assert ghost_main(["lab", "--state-dir", str(state), "reset", "healthy"]) == 0
    assert ghost_main(["lab", "--state-dir", str(state), "inject", "poll-transient", "--count", "2"]) == 0
    capsys.readouterr()
    assert ghost_main(["lab", "--state-dir", str(state), "show"]) == 0
    assert "cloud fault poll-transient count=2" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        ghost_main(["lab", "--state-dir", str(state), "inject", "no-such-kind"])


def test_concurrent_dual_end_creates_do_not_lose_a_capture(lab_env: dict[str, str]) -> None:
    procs = [
        subprocess.Popen(["az", "network", "watcher", "packet-capture", "create", "-g", "prod-rg", "-n", f"ghost_{vm}",
                          "--vm", vm, "--storage-account", "forensicssa", "--time-limit", "600", "-o", "none"],
                         env=lab_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for vm in ("web-vm-01", "redis-primary")
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    names = _az(lab_env, "network", "watcher", "packet-capture", "list", "-l", "eastus", "--query", "[].name", "-o", "tsv")
    assert sorted(names.stdout.split()) == ["ghost_redis-primary", "ghost_web-vm-01"]


def test_corrupt_state_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    from netghost.lab.az import run_az
    from netghost.lab.state import init_state

    init_state(tmp_path / "s", "healthy")
    (tmp_path / "s" / "captures.json").write_text("{not json")
    code, out, err = run_az(["network", "watcher", "packet-capture", "list", "-l", "eastus"],
                            {"NETGHOST_LAB_STATE": str(tmp_path / "s")})
    assert (code, out) == (1, "") and err.startswith("ERROR: lab: lab state file") and "corrupt" in err


def test_blob_download_to_stdout_is_raw_bytes(lab_env: dict[str, str], tmp_path: Path) -> None:
    from netghost.lab.az._capture_store import EMPTY_PCAP
    from netghost.lab.state import LabState

    state = LabState(lab_env["NETGHOST_LAB_STATE"])
    body = EMPTY_PCAP + bytes(range(256))
    now = state.clock().now()
    state.put_blob("forensicssa", "captures", "raw.cap", body, created=now, available_at=now)
    result = subprocess.run(["az", "storage", "blob", "download", "--account-name", "forensicssa", "-c", "captures",
                             "-n", "raw.cap", "--auth-mode", "login"], env=lab_env, capture_output=True, timeout=60,
                            check=False)
    assert result.returncode == 0 and result.stdout == body


def test_probe_shims_join_az_in_bin(tmp_path: Path) -> None:
    probes = pytest.importorskip("netghost.lab.probes")
    bin_dir = create_bin_dir(tmp_path / "s")
    for tool in getattr(probes, "SHIMS", {}):
        script = (bin_dir / tool).read_text()
        assert f"{SHIM_PATH} {tool} {probes.SHIMS[tool]} " in script and os.access(bin_dir / tool, os.X_OK)
