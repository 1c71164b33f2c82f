"""The resident lab: the shims answer through one process per lab state, exactly as the per-process
simulator would, in parallel too; it starts on demand, its owner stops it, and it never outlives its
owner or its idle timeout; when it cannot start, everything still works, one process per call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from netghost.agent.demo import prepare_lab
from netghost.lab import LabState, create_bin_dir, init_state, start_resident
from netghost.lab.resident import SOCKET_NAME, Resident

WEB = ("-g", "prod-rg", "-n", "web-vm-01")
READS = [
    ["vm", "show", *WEB, "-o", "json"],
    ["network", "nic", "show", "-g", "prod-rg", "-n", "web-vm-01VMNic", "-o", "json"],
    ["network", "watcher", "test-ip-flow", "-g", "prod-rg", "--vm", "web-vm-01", "--direction", "Outbound",
     "--protocol", "TCP", "--local", "10.1.1.4:*", "--remote", "10.1.2.4:6379", "-o", "tsv"],
    ["vm", "show", "-g", "prod-rg", "-n", "nope", "-o", "json"],  # exit 3, ARM's three-line error
    ["network", "watcher", "packet-capture", "show", "-n", "x"],  # exit 2, a usage error
    ["storage", "container", "exists", "--account-name", "forensicssa", "-n", "captures", "-o", "json"],  # a warning
    ["--version"],
]


def _wait_until(check: Callable[[], bool], what: str, limit_s: float = 30.0) -> None:
    """Poll ``check`` (a process's fate, not a duration: nothing here asserts how long it took)."""
    deadline = time.monotonic() + limit_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Is ``pid`` a live process (a zombie waiting for its parent's wait is gone as far as anyone can tell)?"""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[LabState, Path]]:
    state = init_state(tmp_path / "lab", "nsg-deny", scale=600)
    yield state, create_bin_dir(state.root)


def _run(bin_dir: Path, argv: list[str], cwd: Path | None = None, **env: str) -> tuple[int, bytes, bytes]:
    tool = argv[0] if argv[0] in ("ping", "dig", "curl", "nslookup", "traceroute", "ss", "netstat") else "az"
    args = argv[1:] if tool != "az" else argv
    proc = subprocess.run([str(bin_dir / tool), *args], capture_output=True, timeout=120, check=False, cwd=cwd,
                          env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ["HOME"], **env},
                          stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.slow
def test_shim_answers_through_the_resident_lab_exactly_as_the_per_process_path(lab: tuple[LabState, Path]) -> None:
    state, bin_dir = lab
    probes = [["dig", "+short", "redis-primary.internal.contoso.com"], ["ping", "-c", "2", "10.1.2.4"],
              ["curl", "-sS", "-m", "2", "http://10.1.2.4:6379/"]]
    calls = [*READS, *probes]
    old = [_run(bin_dir, argv) for argv in calls]
    with start_resident(state.root) as resident:
        assert resident.running and resident.owned, resident.problem
        new = [_run(bin_dir, argv) for argv in calls]
        served = resident.control("status")
    assert new == old
    assert {code for code, _, _ in new} >= {0, 2, 3}
    assert served["pid"] == resident.pid
    assert not (state.root / SOCKET_NAME).exists() and not _alive(resident.pid or 0)


def test_a_download_lands_in_the_callers_directory_with_the_callers_umask(lab: tuple[LabState, Path],
                                                                         tmp_path: Path) -> None:
    state, bin_dir = lab
    body = b"\xd4\xc3\xb2\xa1" + bytes(range(256)) * 4
    now = state.clock().now()
    state.put_blob("forensicssa", "captures", "x.cap", body, created=now, available_at=now)
    caller = tmp_path / "caller"
    caller.mkdir()
    download = ["storage", "blob", "download", "--account-name", "forensicssa", "-c", "captures", "-n", "x.cap",
                "-f", "out/x.cap", "--auth-mode", "login", "--no-progress", "-o", "none"]
    (caller / "out").mkdir()
    stdout_download = ["storage", "blob", "download", "--account-name", "forensicssa", "-c", "captures", "-n", "x.cap",
                       "--auth-mode", "login"]
    with start_resident(state.root):
        code = subprocess.run(["/bin/sh", "-c", 'umask 027 && exec "$0" "$@"', str(bin_dir / "az"), *download],
                              cwd=caller, capture_output=True, timeout=60, check=False,
                              env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ["HOME"]})
        raw = _run(bin_dir, stdout_download)
    assert code.returncode == 0, code.stderr
    target = caller / "out" / "x.cap"
    assert target.read_bytes() == body
    assert target.stat().st_mode & 0o777 == 0o640  # 0666 & ~027, as the caller's own az would create it
    assert not (Path("/") / "out" / "x.cap").exists()
    assert raw == (0, body, b"")  # binary stdout byte for byte


def test_parallel_calls_answer_as_serial_ones_and_no_capture_is_lost(lab: tuple[LabState, Path]) -> None:
    state, bin_dir = lab
    serial = {tuple(argv): _run(bin_dir, argv) for argv in READS[:3]}
    creates = [["network", "watcher", "packet-capture", "create", "-g", "prod-rg", "-n", f"ghost_p{i}", "--vm", vm,
                "--storage-account", "forensicssa", "--time-limit", "600", "-o", "none"]
               for i, vm in enumerate(["web-vm-01", "redis-primary"] * 3)]
    work = [argv for argv in READS[:3] for _ in range(4)] + creates
    with start_resident(state.root), ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda argv: (argv, _run(bin_dir, argv)), work))
    for argv, result in results:
        if argv in creates:
            assert result[0] == 0, result
        else:
            assert result == serial[tuple(argv)]
    assert sorted(state.captures()) == sorted(f"eastus/ghost_p{i}" for i in range(6))


def test_the_latency_setting_reaches_the_resident_lab(lab: tuple[LabState, Path]) -> None:
    """An invalid NETGHOST_LAB_AZ_LATENCY_S is az's error, through the server as through the process path."""
    state, bin_dir = lab
    argv = ["vm", "show", *WEB, "-o", "json"]
    old = _run(bin_dir, argv, NETGHOST_LAB_AZ_LATENCY_S="soon")
    with start_resident(state.root):
        new = _run(bin_dir, argv, NETGHOST_LAB_AZ_LATENCY_S="soon")
        fine = _run(bin_dir, argv, NETGHOST_LAB_AZ_LATENCY_S="0")
    assert new == old and new[0] == 1 and b"NETGHOST_LAB_AZ_LATENCY_S='soon'" in new[2]
    assert fine[0] == 0


def test_a_second_starter_shares_the_running_lab_and_cannot_stop_it(lab: tuple[LabState, Path]) -> None:
    state, _bin = lab
    with start_resident(state.root) as first:
        second = start_resident(state.root)
        assert second.running and not second.owned and second.pid == first.pid
        second.stop()
        assert _alive(first.pid or 0)
        info = json.loads((state.root / ".resident.json").read_text())
        assert info["pid"] == first.pid and info["owner"] == os.getpid()
    assert not _alive(first.pid or 0) and not (state.root / ".resident.json").exists()


def test_idle_timeout_stops_the_server(lab: tuple[LabState, Path]) -> None:
    state, bin_dir = lab
    resident = start_resident(state.root, idle_s=0.5)
    assert resident.running
    _wait_until(lambda: not _alive(resident.pid or 0), "the idle server stopped")
    assert not (state.root / SOCKET_NAME).exists()
    assert _run(bin_dir, ["vm", "show", *WEB, "--query", "name", "-o", "tsv"])[:2] == (0, b"web-vm-01\n")  # fallback
    resident.stop()


_OWNER = """
import sys, time
from netghost.lab import start_resident
r = start_resident(sys.argv[1])
print(r.pid, flush=True)
time.sleep(600)
"""


def test_the_server_stops_when_its_owner_is_killed(lab: tuple[LabState, Path]) -> None:
    state, _bin = lab
    owner = subprocess.Popen([sys.executable, "-c", _OWNER, str(state.root)], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    pid = int(owner.stdout.readline())
    assert _alive(pid)
    owner.send_signal(signal.SIGKILL)  # no atexit, no finally: only the server's own watch can notice
    owner.wait()
    owner.stdout.close()
    _wait_until(lambda: not _alive(pid), "the orphaned server stopped")
    assert not (state.root / SOCKET_NAME).exists()


def test_a_server_killed_mid_call_fails_that_call_and_later_calls_fall_back(lab: tuple[LabState, Path]) -> None:
    state, bin_dir = lab
    resident = start_resident(state.root)
    slow = subprocess.Popen([str(bin_dir / "az"), "vm", "show", *WEB, "-o", "json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "NETGHOST_LAB_AZ_LATENCY_S": "30"})
    _wait_until(lambda: resident.control("status")["busy"] >= 1, "the slow call reached the server")
    os.kill(resident.pid or 0, signal.SIGKILL)
    out, err = slow.communicate(timeout=60)
    assert slow.returncode == 1 and b"resident lab stopped during the call" in err and out == b""
    code, out, _err = _run(bin_dir, ["vm", "show", *WEB, "--query", "name", "-o", "tsv"])
    assert (code, out) == (0, b"web-vm-01\n")  # the dead server's socket is refused: per-process path
    resident.stop()


def test_a_lab_under_a_deep_folder_still_gets_its_resident_lab(tmp_path: Path) -> None:
    """An AF_UNIX address holds 107 bytes; a state this deep is served through its directory's descriptor
    (a CI temp dir or a long home is no reason for one process per call)."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    state = init_state(deep / "lab", "nsg-deny")
    assert len(os.fsencode(str(state.root / SOCKET_NAME))) > 107
    bin_dir = create_bin_dir(state.root)
    resident = start_resident(state.root)
    try:
        assert resident.running, resident.problem
        before = resident.control("status")["calls"]
        assert _run(bin_dir, ["vm", "show", *WEB, "--query", "name", "-o", "tsv"])[:2] == (0, b"web-vm-01\n")
        assert resident.control("status")["calls"] == before + 1  # answered by the resident lab
    finally:
        resident.stop()
    assert not (state.root / SOCKET_NAME).exists()


def test_no_server_in_a_read_only_state_dir_and_the_shims_still_work(lab: tuple[LabState, Path]) -> None:
    state, bin_dir = lab
    if os.geteuid() == 0:  # root writes anywhere: make the socket impossible another way
        (state.root / SOCKET_NAME).mkdir()
        (state.root / SOCKET_NAME / "x").write_text("")
    else:
        state.root.chmod(0o500)
    try:
        resident = start_resident(state.root)
        assert not resident.running and resident.problem
        assert _run(bin_dir, ["vm", "show", *WEB, "--query", "name", "-o", "tsv"])[:2] == (0, b"web-vm-01\n")
    finally:
        state.root.chmod(0o700)


def test_prepare_lab_starts_the_resident_lab_and_close_stops_it(tmp_path: Path) -> None:
    setup = prepare_lab("nsg-deny", tmp_path / "audit")
    info = json.loads((tmp_path / "audit" / "lab" / ".resident.json").read_text())
    assert _alive(info["pid"]) and info["owner"] == os.getpid()
    resident = Resident(tmp_path / "audit" / "lab", True)
    assert resident.control("ping")["pid"] == info["pid"]
    setup.close()
    assert not _alive(info["pid"])
    assert not (tmp_path / "audit" / "lab" / SOCKET_NAME).exists()


def test_prepare_lab_warns_and_the_lab_still_works_when_the_resident_lab_cannot_start(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit"
    (audit / "lab" / SOCKET_NAME / "x").mkdir(parents=True)  # a directory where the socket must go
    setup = prepare_lab("nsg-deny", audit)
    assert "resident lab could not start" in capsys.readouterr().err
    proc = subprocess.run(["az", "vm", "show", *WEB, "--query", "name", "-o", "tsv"], capture_output=True, text=True,
                          env={"PATH": setup.path, "HOME": os.environ["HOME"], **setup.env}, timeout=120, check=False)
    assert (proc.returncode, proc.stdout) == (0, "web-vm-01\n")  # one process per call, same answer
    setup.close()  # nothing to stop: harmless
