"""Execution: argv without a shell, process-group timeout, scrubbed environment, PATH override."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from netghost.shell.exec._run import run_argv, scrub_env


def _env(**extra: str) -> dict[str, str]:
    return scrub_env(extra=extra)


def test_runs_argv_and_captures_streams() -> None:
    res = run_argv(
        [sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
        timeout_s=10,
        env=_env(),
    )
    assert res.stdout == "out\n"
    assert res.stderr == "err\n"
    assert res.exit_code == 3
    assert res.error is None
    assert res.duration_ms > 0


def test_no_shell_metacharacters_are_interpreted(tmp_path: Path) -> None:
    res = run_argv(["echo", "a;", "touch", str(tmp_path / "pwned"), "$(id)"], timeout_s=5, env=_env())
    assert res.stdout.strip() == f"a; touch {tmp_path / 'pwned'} $(id)"
    assert not (tmp_path / "pwned").exists()


def test_not_found_is_127_command_not_found() -> None:
    res = run_argv(["no-such-binary-netghost"], timeout_s=5, env=_env())
    assert res.exit_code == 127
    assert res.error == "command_not_found"


def test_exit_127_from_a_program_is_command_not_found() -> None:
    res = run_argv([sys.executable, "-c", "import sys; sys.exit(127)"], timeout_s=5, env=_env())
    assert res.error == "command_not_found"


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )
    res = run_argv([sys.executable, "-c", script], timeout_s=1.5, env=_env())
    assert res.error == "timeout"
    assert res.exit_code is None
    assert "started" in res.stdout
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"grandchild {grandchild} survived the timeout")


def test_env_is_scrubbed_of_our_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyD-gemini-secret")
    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaSyD-google-secret")
    monkeypatch.setenv("MY_DB_PASSWORD", "hunter22")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    monkeypatch.setenv("HARMLESS_SETTING", "1")
    env = scrub_env(extra={"GEMINI_API_KEY": "explicit", "LAB_WORLD": "w.yaml"})
    res = run_argv(["env"], timeout_s=5, env=env)
    names = {line.split("=", 1)[0] for line in res.stdout.splitlines()}
    assert {"GEMINI_API_KEY", "GOOGLE_API_KEY", "MY_DB_PASSWORD", "GITHUB_TOKEN"}.isdisjoint(names)
    assert {"HARMLESS_SETTING", "LAB_WORLD", "PATH"} <= names


def test_path_override_puts_a_simulator_first(tmp_path: Path) -> None:
    fake = tmp_path / "az"
    fake.write_text('#!/bin/sh\necho simulated az "$@"\n')
    fake.chmod(0o755)
    env = scrub_env(path=f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    res = run_argv(["az", "network", "nsg", "list"], timeout_s=5, env=env)
    assert res.stdout == "simulated az network nsg list\n"


def test_stdin_is_closed() -> None:
    res = run_argv(
        [sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"], timeout_s=5, env=_env()
    )
    assert res.stdout.strip() == "''"


def test_cwd_is_used(tmp_path: Path) -> None:
    res = run_argv(["pwd"], timeout_s=5, env=_env(), cwd=tmp_path)
    assert Path(res.stdout.strip()).resolve() == tmp_path.resolve()


def test_empty_argv_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="empty"):
        run_argv([], timeout_s=1, env=_env())


def test_runaway_output_is_capped_and_the_command_stopped() -> None:
    res = run_argv(["yes"], timeout_s=20, env=_env(), max_bytes=100_000)
    assert res.error is None
    assert res.exit_code is not None and res.exit_code < 0  # killed by signal
    assert res.stdout.startswith("y\ny\n")
    assert "output exceeded 100000 bytes" in res.stdout
    assert len(res.stdout) < 100_200
    assert res.duration_ms < 20_000


def test_background_grandchild_holding_the_pipe_does_not_block(tmp_path: Path) -> None:
    script = (
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('parent done', flush=True)\n"
    )
    res = run_argv([sys.executable, "-c", script], timeout_s=30, env=_env())
    assert "parent done" in res.stdout
    assert (res.error, res.exit_code) == (None, 0)  # the parent's exit decides; the helper is killed
    assert res.duration_ms < 10_000


LEAKY_ENV = {
    "AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc123==",
    "IDENTITY_HEADER": "3f1c6a4e-hdr",
    "IDENTITY_ENDPOINT": "http://127.0.0.1:41741/msi/token",
    "MSI_SECRET": "msisecret",
    "AZURE_DEVOPS_EXT_PAT": "yibdgp2hytirmzc22ven4j5z6ro35p7rn6ybqqtun2dfglkvsome",
    "GITHUB_PAT": "github_pat_x",
    "CUSTOMCONNSTR_main": "Server=db;Database=d;",
    "SQLAZURECONNSTR_db": "Server=tcp:x.database.windows.net;Database=d;",
    "MYSQL_PWD": "S3cretPassw0rd",
    "PGPASS": "S3cretPassw0rd",
    "PGPASSWORD": "S3cretPassw0rd",
    "APP_SETTING": "Server=db;User Id=sa;Password=Hunter2Hunter2;",
    "LD_PRELOAD": "/tmp/evil.so",
    "BASH_ENV": "/tmp/evil.sh",
    "PYTHONSTARTUP": "/tmp/evil.py",
}


def test_env_scrub_drops_cloud_and_database_credentials() -> None:
    base = {
        **LEAKY_ENV,
        "PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "TZ": "UTC", "LC_ALL": "C",
        "AZURE_CONFIG_DIR": "/home/u/.azure", "HTTP_PROXY": "http://proxy:3128", "NO_PROXY": "localhost",
        "DATABASE_URL": "postgresql://app:pw0rd!x@db.internal:5432/prod",
        "REDIS_URL": "redis://:redispass@cache:6379/0",
        "HTTPS_PROXY": "http://bob:proxypw@proxy:3128", "EDITOR": "vi",
    }  # fmt: skip
    env = scrub_env(base)
    assert not set(LEAKY_ENV) & set(env)
    assert env["DATABASE_URL"] == "postgresql://app@db.internal:5432/prod"
    assert env["REDIS_URL"] == "redis://@cache:6379/0"
    assert env["HTTPS_PROXY"] == "http://bob@proxy:3128"
    assert "AZURE_CONFIG_DIR" not in env  # az's own setting: only az gets it (test_child_env.py)
    for kept in (
        "PATH",
        "HOME",
        "LANG",
        "TZ",
        "LC_ALL",
        "HTTP_PROXY",
        "NO_PROXY",
        "EDITOR",
    ):
        assert env[kept] == base[kept]
    assert "pw0rd" not in repr(env) and "proxypw" not in repr(env) and "redispass" not in repr(env)
