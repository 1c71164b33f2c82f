"""SafeExecShell with the real classifier (issue 28): the forensics engine runs as itself, its outputs stay in
the session directory, secret values are masked in what the human sees and the audit keeps, and the scope
the shell holds decides the probes."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from netghost.governance.wal import read_wal
from netghost.shell import EgressScope, HitlDecision, SafeExecShell
from netghost.shell.engine import engine_argv
from tests.shell.shell_helpers import Recorder


@pytest.mark.parametrize(
    ("argv", "rest"),
    [(["pcap-forensics", "a.pcap", "--out", "o"], ["a.pcap", "--out", "o"]),
     (["python3", "pcap_forensics.py", "a.pcap"], ["a.pcap"]), (["python", "-m", "netghost.forensics", "--help"], ["--help"]),
     (["python3.11", "pcap_forensics.py", "--fleet", "caps"], ["--fleet", "caps"])],
)  # fmt: skip
def test_engine_spellings_resolve_to_the_installed_module(argv: list[str], rest: list[str]) -> None:
    assert engine_argv(argv) == [sys.executable, "-I", "-m", "netghost.forensics", *rest]


@pytest.mark.parametrize("argv", [["./pcap_forensics.py", "a"], ["/tmp/pcap-forensics", "a"], ["python3", "x.py"], ["ping", "x"], []])
def test_other_commands_run_as_typed(argv: list[str]) -> None:
    assert engine_argv(argv) is None


def _planted(tmp_path: Path) -> tuple[Path, Path]:
    """A session directory holding every impostor: pcap_forensics.py, a netghost/ package that would shadow
    the installed one under `python -m`, and a `pcap-forensics` first on PATH. Each writes a marker file."""
    session = tmp_path / "session"
    marker = tmp_path / "PWNED"
    payload = f"open({str(marker)!r}, 'w').write('x')\n"
    (session / "netghost" / "forensics").mkdir(parents=True)
    (session / "pcap_forensics.py").write_text(payload)
    (session / "netghost" / "__init__.py").write_text(payload)
    (session / "netghost" / "forensics" / "__init__.py").write_text(payload)
    (session / "netghost" / "forensics" / "__main__.py").write_text(payload)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "pcap-forensics"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return session, bindir


@pytest.mark.parametrize("command", ["pcap-forensics --help", "python3 pcap_forensics.py --help", "python3 -m netghost.forensics --help"])
def test_the_engine_runs_as_itself_not_a_planted_file(tmp_path: Path, command: str) -> None:
    session, bindir = _planted(tmp_path)
    with SafeExecShell("s1", Recorder(), audit_dir=tmp_path / "audit", cwd=session,
                       path=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}") as shell:  # fmt: skip
        res = shell.execute({"command": command, "reasoning": "engine help"})
        record = read_wal(shell.audit_path).records[-1]
    assert (res["status"], res["classification"]) == ("completed", "SAFE"), res
    assert "pcap-forensics" in res["output"]  # the real engine's usage text
    assert not (tmp_path / "PWNED").exists()
    assert record["executed"] == f"{sys.executable} -I -m netghost.forensics --help"
    assert record["command"] == command


def test_engine_outputs_are_confined_to_the_session_directory(tmp_path: Path) -> None:
    session = tmp_path / "session"
    session.mkdir()
    rec = Recorder(answers=[HitlDecision(decision="deny", reason="no")])
    with SafeExecShell("s1", rec, audit_dir=tmp_path / "audit", cwd=session) as shell:
        assert shell.classify(f"pcap-forensics a.pcap --report-dir {session}/reports").verdict == "SAFE"
        assert shell.classify("pcap-forensics a.pcap --report-dir reports").verdict == "SAFE"
        assert shell.classify(f"pcap-forensics a.pcap --report-dir {tmp_path}/elsewhere").verdict == "RISKY"
        assert shell.classify("pcap-forensics a.pcap --out /tmp/x").verdict == "RISKY"
        res = shell.execute({"command": f"pcap-forensics a.pcap --report-dir {tmp_path}/x", "reasoning": "r"})
    assert res["action"] == "user_denied"
    # the human was shown what would run: the installed engine
    assert rec.requests[0].context["argv"][:4] == [sys.executable, "-I", "-m", "netghost.forensics"]


def test_a_secret_value_is_masked_where_the_human_and_the_audit_see_it(tmp_path: Path) -> None:
    signature = "4f0c1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f"
    url = f"http://10.0.0.4/k?X-Amz-Algorithm=AWS4&X-Amz-Signature={signature}"  # the redactor has no rule for it
    rec = Recorder(answers=[HitlDecision(decision="deny", reason="no"), HitlDecision(decision="deny", reason="no")])
    with SafeExecShell("s1", rec, audit_dir=tmp_path / "audit", cwd=tmp_path) as shell:
        res = shell.execute({"command": f"curl -s '{url}'", "reasoning": "probe"})
        other = shell.execute({"command": f"mytool --source '{url}'", "reasoning": "any program"})
        raw = shell.audit_path.read_text()
    assert res["classification"] == other["classification"] == "RISKY"
    assert "secret value" in other["risk_reason"]  # an unknown program is relaxable by name, but not this
    assert signature not in raw
    for request in rec.requests:
        assert signature not in " ".join(request.context["argv"])
        assert "[REDACTED:" in request.context["argv"][-1]


def test_the_scope_the_shell_holds_decides_probes(tmp_path: Path) -> None:
    with SafeExecShell("s1", Recorder(), audit_dir=tmp_path / "audit", cwd=tmp_path) as shell:
        assert shell.classify("dig +short api.contoso.com").verdict == "RISKY"
        shell.scope = shell.scope.with_text("users cannot reach api.contoso.com")
        assert shell.classify("dig +short api.contoso.com").verdict == "SAFE"
        assert shell.classify("dig +short attacker.example").verdict == "RISKY"
    narrow = EgressScope(networks=(), azure=False)
    with SafeExecShell("s2", Recorder(), audit_dir=tmp_path / "audit", cwd=tmp_path, scope=narrow) as shell:
        assert shell.classify("ping -c 1 10.0.0.4").verdict == "RISKY"


def test_relative_paths_are_judged_from_the_shells_working_directory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    with SafeExecShell("s1", Recorder(), audit_dir=tmp_path / "audit", cwd=home / ".ssh") as shell:
        assert shell.classify("cat id_rsa").verdict == "FORBIDDEN"
        assert shell.classify("tee rc").verdict == "FORBIDDEN"
