"""Every bad path, audit directory, session id or session file: one line, the next step, the right exit code.

Table-driven: each row is a command line a person could type, the exit code the table in
``netghost.agent._exit_codes`` gives it, and what the message must name (the path or id, and the command
to run next). No row may print a traceback or call a mistyped id a broken audit trail. One real lab
session (the offline world, the playbook brain) gives the rows that need a session its trail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from netghost.agent._exit_codes import ExitCode
from netghost.agent.cli import main

INTENT = "web-vm-01 cannot reach redis-primary on port 6379"


@dataclass(frozen=True)
class Session:
    audit: Path
    sid: str
    home: Path


def _home(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """The installation (its audit key and checkpoints) the session was sealed with, never the developer's."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def real_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    root = tmp_path_factory.mktemp("real")
    audit, home = root / "audit", root / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        _home(patch, home)
        assert main(["--lab", "nsg-deny", "--yes", "--brain", "playbook", "--audit-dir", str(audit),
                     "--intent", INTENT]) == 0
    sid = json.loads((audit / "ghost_session.json").read_text())["session_id"]
    yield Session(audit, sid, home)


@pytest.fixture
def session(real_session: Session, monkeypatch: pytest.MonkeyPatch) -> Session:
    _home(monkeypatch, real_session.home)  # after the autouse clean HOME: the session's own installation
    return real_session


@dataclass(frozen=True)
class Row:
    name: str
    argv: Callable[[Path, Session], list[str]]
    code: int
    says: Callable[[Path, Session], list[str]]
    """What the message must contain (the place or id, and the next step)."""


def _file(tmp: Path) -> Path:
    path = tmp / "a-file"
    path.write_text("not a directory\n")
    return path


def _copy(tmp: Path, s: Session) -> Path:
    copy = tmp / "copied"
    shutil.copytree(s.audit, copy)
    return copy


def _corrupt(tmp: Path, s: Session) -> Path:
    copy = tmp / "corrupt"
    shutil.copytree(s.audit, copy)
    (copy / "ghost_session.json").write_text("{not json")
    return copy


def _bad_yaml(tmp: Path) -> Path:
    path = tmp / "broken-world.yaml"
    path.write_text("name: broken\nvnets: [\n")
    return path


ROWS = [
    Row("audit dir is a file", lambda t, s: ["--brain", "playbook", "--intent", "x", "--audit-dir", str(_file(t))],
        ExitCode.USAGE, lambda t, s: [str(t / "a-file"), "is a file", "--audit-dir ./audit"]),
    Row("audit dir under a file", lambda t, s: ["--lab", "nsg-deny", "--yes", "--intent", "x",
                                                "--audit-dir", str(_file(t) / "sub")],
        ExitCode.USAGE, lambda t, s: ["has a file in its way", "give a directory"]),
    Row("demo audit dir is a file", lambda t, s: ["demo", "--yes", "--audit-dir", str(_file(t))],
        ExitCode.USAGE, lambda t, s: ["is a file", "--audit-dir ./audit"]),
    Row("eval audit dir is a file", lambda t, s: ["eval", "nsg-deny", "--audit-dir", str(_file(t))],
        ExitCode.USAGE, lambda t, s: ["is a file", "--audit-dir ./audit"]),
    Row("audit dir that cannot be created", lambda t, s: ["--lab", "nsg-deny", "--yes", "--intent", "x",
                                                          "--audit-dir", "/proc/netghost-audit"],
        ExitCode.ERROR, lambda t, s: ["/proc/netghost-audit", "cannot be written", "a directory you can write"]),
    Row("resume: not a session id", lambda t, s: ["--resume", "../../etc", "--audit-dir", str(s.audit)],
        ExitCode.USAGE, lambda t, s: ["'../../etc' is not a session id", "ghost_YYYYMMDD_HHMMSS"]),
    Row("resume: wrong session id", lambda t, s: ["--brain", "playbook", "--resume", "ghost_20200101_000000",
                                                  "--audit-dir", str(s.audit)],
        ExitCode.ERROR, lambda t, s: ["No session 'ghost_20200101_000000'", s.sid,
                                      f"ghost-agent --resume {s.sid} --audit-dir {s.audit}"]),
    Row("resume: directory that does not exist", lambda t, s: ["--brain", "playbook", "--resume", s.sid,
                                                               "--audit-dir", str(t / "nowhere")],
        ExitCode.ERROR, lambda t, s: [str(t / "nowhere"), "--resume SID --audit-dir DIR"]),
    Row("resume: a copied audit dir", lambda t, s: ["--brain", "playbook", "--resume", s.sid,
                                                    "--audit-dir", str(_copy(t, s))],
        ExitCode.ERROR, lambda t, s: [f"ran in {s.audit}", f"--resume {s.sid} --audit-dir {s.audit}",
                                      f"ghost-agent report {s.sid} --audit-dir {t / 'copied'}"]),
    Row("resume: a corrupt session file", lambda t, s: ["--brain", "playbook", "--resume", s.sid,
                                                        "--audit-dir", str(_corrupt(t, s))],
        ExitCode.ERROR, lambda t, s: ["ghost_session.json is unreadable",
                                      f"ghost-agent report {s.sid} --audit-dir {t / 'corrupt'}"]),
    Row("report: wrong session id", lambda t, s: ["report", "ghost_20200101_000000", "--audit-dir", str(s.audit)],
        ExitCode.USAGE, lambda t, s: [s.sid, f"ghost-agent report {s.sid} --audit-dir {s.audit}"]),
    Row("report: not a session id", lambda t, s: ["report", "a/b", "--audit-dir", str(s.audit)],
        ExitCode.USAGE, lambda t, s: ["'a/b' is not a session id"]),
    Row("lab world: broken YAML", lambda t, s: ["--lab", str(_bad_yaml(t)), "--yes", "--intent", "x",
                                                "--audit-dir", str(t / "audit")],
        ExitCode.USAGE, lambda t, s: [str(t / "broken-world.yaml"), "line 3, column 1", "fix the file"]),
    Row("lab show: broken YAML", lambda t, s: ["lab", "show", str(_bad_yaml(t))],
        1, lambda t, s: [str(t / "broken-world.yaml"), "line 3, column 1"]),
    Row("lab world: missing file", lambda t, s: ["--lab", str(t / "absent.yaml"), "--yes", "--intent", "x",
                                                 "--audit-dir", str(t / "audit")],
        ExitCode.USAGE, lambda t, s: [str(t / "absent.yaml")]),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_a_bad_place_gets_one_line_and_the_next_step(row: Row, session: Session, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    argv = row.argv(tmp_path, session)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    text = out + err
    assert code == row.code, text
    assert "Traceback" not in text and "Error:" not in text.replace("[ERROR]", "")
    assert "Audit trail broken" not in text
    assert "<unicode string>" not in text
    flat = " ".join(text.split())
    for needle in row.says(tmp_path, session):
        assert needle in flat, (needle, text)


def test_a_wrong_session_id_creates_nothing(session: Session, tmp_path: Path) -> None:
    nowhere = tmp_path / "nowhere"
    assert main(["--brain", "playbook", "--resume", session.sid, "--audit-dir", str(nowhere)]) == ExitCode.ERROR
    assert not nowhere.exists()


def test_audit_verify_without_a_path_names_the_default_and_the_next_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "verify"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "./audit" in err and "ghost-agent audit verify DIR" in err


def test_audit_verify_without_a_path_checks_dot_audit(session: Session, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(session.audit.parent)
    assert main(["audit", "verify"]) == 0
    assert "broken" in capsys.readouterr().out


def test_an_unwritable_directory_that_exists_is_refused_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    if os.access(locked, os.W_OK):  # root writes anywhere: a directory of a read-only file system instead
        locked = Path("/sys")
        if not locked.is_dir() or _writable(locked):
            pytest.skip("no unwritable directory on this machine")
    assert main(["--lab", "nsg-deny", "--yes", "--intent", "x", "--audit-dir", str(locked)]) == ExitCode.ERROR
    err = " ".join(capsys.readouterr().err.split())
    assert f"--audit-dir {locked} cannot be written" in err and "a directory you can write" in err


def _writable(directory: Path) -> bool:
    try:
        (directory / ".netghost-probe").touch()
    except OSError:
        return False
    (directory / ".netghost-probe").unlink()
    return True


def test_the_installed_command_prints_no_traceback_for_a_file_as_audit_dir(tmp_path: Path) -> None:
    """The default path users get: the real entry point in a fresh process."""
    proc = subprocess.run([sys.executable, "-m", "netghost", "--brain", "playbook", "--intent", "x",
                           "--audit-dir", str(_file(tmp_path))], capture_output=True, text=True, check=False,
                          timeout=120)
    assert proc.returncode == ExitCode.USAGE
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "is a file, not a directory" in proc.stderr
