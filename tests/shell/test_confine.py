"""The sealed lab: what stays in the lab, and every way a command would reach the real machine.

The confinement is built exactly as a lab session builds it (the lab's real ``bin/`` launchers, the session
directory, its captures, the lab's state kept private) and judged with the PATH the lab gives the shell.
The classes: the lab's launchers by file and content (never by name), the engine, plain reads of the
session's outputs, removal of its capture files; and against them, interpreters on files, writers,
wrappers, paths to system binaries, programs the lab's PATH does not shadow, files the model wrote,
symlinks out of the session, a launcher written over, and simulated programs pointed at files outside.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from netghost.contracts import DecidedBy
from netghost.governance import read_wal
from netghost.lab import init_state, lab_path_env
from netghost.shell import HitlDecision, LabConfinement, SafeExecShell
from netghost.shell.confine import resolve_program


class Lab:
    """A lab session's layout: audit dir (the session directory), its lab state, its captures, the PATH."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "audit"
        self.state = self.root / "lab"
        self.captures = self.root / "captures"
        self.captures.mkdir(parents=True)
        init_state(self.state, "nsg-deny")
        env = lab_path_env(self.state, base={"PATH": "/usr/local/bin:/usr/bin:/bin"})
        head, *rest = env["PATH"].split(os.pathsep)
        self.path = os.pathsep.join([head, str(Path(sys.executable).parent), *rest])
        self.env = {k: v for k, v in env.items() if k.startswith("NETGHOST_LAB")}
        self.confinement = LabConfinement("lab:nsg-deny", bin_dir=self.state / "bin", root=self.root, captures=self.captures,
                         private=[self.state])
        (self.root / "notes.md").write_text("the session's own output\n")
        (self.captures / "t1").mkdir()
        (self.captures / "t1" / "t1.cap").write_bytes(b"\xd4\xc3\xb2\xa1")

    def judge(self, command: str) -> tuple[bool, str, str]:
        import shlex

        verdict = self.confinement.judge(shlex.split(command), search_path=self.path, cwd=str(self.root))
        return verdict.simulated, verdict.kind, verdict.reason


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab(tmp_path)


STAYS_IN_THE_LAB = [
    ("az vm list -o json", "lab_program"),
    ("az network watcher packet-capture delete -l eastus -n ghost_x", "lab_program"),
    ("az storage blob download --account-name sa -c captures -n b.cap -f captures/t1/b.cap", "lab_program"),
    ("ping -c 1 10.1.2.4", "lab_program"),
    ("dig redis-primary.prod.internal", "lab_program"),
    ("curl -sS -m 5 -o /dev/null http://10.1.2.4:6379/", "lab_program"),
    ("ss -tan", "lab_program"),
    ("traceroute 10.1.2.4", "lab_program"),
    ("pcap-forensics captures/t1/t1.cap --report-dir captures/t1 --semantic-dir captures/t1 --format md,json,html",
     "engine"),
    ("python -m netghost.forensics captures/t1/t1.cap --report-dir captures/t1", "engine"),
    ("cat notes.md", "session_read"),
    ("cat -n -- notes.md captures/t1/t1.cap", "session_read"),
    ("head -n 5 notes.md", "session_read"),
    ("tail --lines=3 notes.md", "session_read"),
    ("wc -l notes.md", "session_read"),
    ("rm -f captures/t1/t1.cap", "session_capture_removal"),
    ("rm -f captures/t1/gone-already.cap", "session_capture_removal"),
]


@pytest.mark.parametrize(("command", "kind"), STAYS_IN_THE_LAB)
def test_what_the_lab_simulates_stays_in_the_lab(lab: Lab, command: str, kind: str) -> None:
    simulated, got, reason = lab.judge(command)
    assert (simulated, got) == (True, kind), reason


WOULD_RUN_FOR_REAL = [
    # interpreters on files, the session's own audit file included
    "bash shell_audit_ghost_1.jsonl", "sh notes.md", "python3 notes.md", "python notes.md", "perl notes.md",
    # deleting, copying, writing, changing files
    "rm -f /tmp/precious", "rm notes.md", "rm -rf captures", "rm -r captures/t1", "rm -f captures",
    "rm -f lab/world.json", "cp notes.md /tmp/x", "mv notes.md x", "chmod +x notes.md", "tee notes.md",
    "touch x", "ln -s /etc/passwd x", "dd if=notes.md of=/tmp/x",
    # wrappers around a simulated program: the wrapper itself is a real program
    "env az vm list", "timeout 5 az vm list", "nice ping -c 1 x", "xargs az", "command az vm list",
    # a path to a system binary, programs the lab does not shadow (even SAFE ones)
    "/usr/bin/cat notes.md", "/bin/ls", "ip addr show", "host example.com", "ls -la", "id", "git status",
    # readers outside the session's outputs, or with options that are not a plain read
    "cat /etc/passwd", "cat ../outside", "cat lab/scenario.yaml", "head --files0-from=notes.md",
    "tail -f notes.md", "cat notes.md /etc/hostname",
    # a program that is not there at all
    "no-such-program-anywhere --flag",
    # simulated programs given files outside the session's capture directory
    "az storage blob download --account-name sa -c c -n b -f /tmp/x.cap",
    "az storage blob download --account-name sa -c c -n b --file=shell_audit_ghost_1.jsonl",
    "az storage blob download --account-name sa -c c -n b -f lab/bin/az",
    "az network watcher packet-capture create -g rg -n x --vm v --filters @/etc/passwd",
    "az vm update -g rg -n v --set tags.x=@/etc/shadow",
    "az vm list --query=@~/.azure/msal_token_cache.json",
    "curl -so /tmp/x http://10.1.2.4/", "curl -o/tmp/x http://10.1.2.4/", "curl --output /tmp/x http://a/",
    "curl -K /tmp/cfg http://a/",
    # the engine on files outside the session, or reaching out of the lab
    "pcap-forensics /tmp/a.cap", "pcap-forensics captures/t1/t1.cap --report-dir /etc/cron.d",
    "pcap-forensics --fleet az://captures/tier --out out", "pcap-forensics --fleet=https://a.example/x --out out",
    "python -m netghost.lab.az vm list", "python -c 'import os'",
]


@pytest.mark.parametrize("command", WOULD_RUN_FOR_REAL)
def test_everything_else_would_run_for_real(lab: Lab, command: str) -> None:
    simulated, kind, reason = lab.judge(command)
    assert (simulated, kind) == (False, "unsimulated"), reason
    assert reason


def test_a_launcher_is_recognised_by_its_file_not_its_name(lab: Lab, tmp_path: Path) -> None:
    launcher = lab.state / "bin" / "az"
    assert lab.judge(f"{launcher} vm list")[0]  # the lab's own launcher, called by its path: still the lab's
    elsewhere = tmp_path / "fake-bin"
    elsewhere.mkdir()
    shutil.copy2(launcher, elsewhere / "az")  # the same bytes under the same name, not the lab's file
    verdict = lab.confinement.judge(["az", "vm", "list"], search_path=f"{elsewhere}{os.pathsep}{lab.path}", cwd=str(lab.root))
    assert not verdict.simulated and str(elsewhere) in str(verdict.program)


def test_a_launcher_written_over_is_no_longer_the_labs(lab: Lab) -> None:
    launcher = lab.state / "bin" / "az"
    launcher.write_text(launcher.read_text() + "touch /tmp/owned\n")
    simulated, _, reason = lab.judge("az vm list")
    assert not simulated and "changed" in reason


def test_a_file_the_model_wrote_is_never_a_reader_or_a_launcher(lab: Lab) -> None:
    own = lab.root / "cat"
    own.write_text("#!/bin/sh\ntouch /tmp/owned\n")
    own.chmod(0o755)
    # a relative PATH entry resolves against the shell's directory, as the child's execve does
    verdict = lab.confinement.judge(["cat", "notes.md"], search_path=f".{os.pathsep}{lab.path}", cwd=str(lab.root))
    assert not verdict.simulated and verdict.program == str(own)
    assert not lab.judge("./cat notes.md")[0]


def test_a_symlink_out_of_the_session_is_followed(lab: Lab) -> None:
    (lab.root / "passwd").symlink_to("/etc/passwd")
    (lab.captures / "t1" / "link.cap").symlink_to("/etc/hostname")
    assert not lab.judge("cat passwd")[0]
    assert not lab.judge("rm -f captures/t1/link.cap")[0]
    assert not lab.judge("az storage blob download --account-name sa -c c -n b -f captures/t1/link.cap")[0]


def test_programs_resolve_the_way_execve_does(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for d in (first, second):
        d.mkdir()
        (d / "tool").write_text("#!/bin/sh\n")
        (d / "tool").chmod(0o755)
    (first / "tool").chmod(0o644)  # not executable: execve skips it
    assert resolve_program("tool", f"{first}{os.pathsep}{second}", str(tmp_path)) == str(second / "tool")
    assert resolve_program("a/tool", None, str(tmp_path)) is None
    assert resolve_program("b/tool", None, str(tmp_path)) == str(second / "tool")
    assert resolve_program("missing", str(first), str(tmp_path)) is None


# ---- the shell enforces the verdict, whatever an approver says ---------------------------------------

class Approver:
    """An approver that says yes to everything, as the given decider (a buggy --yes, a human ...)."""

    def __init__(self, by: DecidedBy, command: str | None = None) -> None:
        self.by, self.command, self.asked = by, command, 0

    def __call__(self, request: object) -> HitlDecision:
        self.asked += 1
        if self.command is not None:
            return HitlDecision.modify(self.command, by=self.by)
        return HitlDecision.approve(by=self.by)


YES = DecidedBy(kind="flag", name="--yes", detail="lab nsg-deny")
HUMAN = DecidedBy(kind="human", name="terminal")


def _shell(lab: Lab, approver: Approver) -> SafeExecShell:
    return SafeExecShell("confine1", approver, audit_dir=lab.root, path=lab.path, env=lab.env, cwd=lab.root,
                         confinement=lab.confinement)


def test_an_automatic_approval_of_an_unsimulated_command_is_refused(lab: Lab, tmp_path: Path) -> None:
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    approver = Approver(YES)
    with _shell(lab, approver) as shell:
        res = shell.execute({"command": f"rm -f {victim}", "reasoning": "clean up"})
        (record,) = read_wal(shell.audit_path).records
    assert victim.read_text() == "keep me\n" and approver.asked == 1
    assert (res["status"], res["action"], res["exit_code"]) == ("denied", "user_denied", None)
    assert "sealed lab" in res["denial_reason"] and "/rm" in res["denial_reason"]
    assert record["decided_by"]["kind"] == "policy" and record["decided_by"]["name"] == "sealed_lab"
    assert record["confinement"]["simulated"] is False and record["confinement"]["program"].endswith("/rm")


def test_a_safe_unsimulated_command_is_asked_and_only_a_person_runs_it(lab: Lab) -> None:
    auto = Approver(YES)
    with _shell(lab, auto) as shell:
        refused = shell.execute({"command": "ip addr show", "reasoning": "local addresses"})
    assert auto.asked == 1 and refused["classification"] == "SAFE" and refused["exit_code"] is None
    human = Approver(HUMAN)
    with _shell(lab, human) as shell:
        ran = shell.execute({"command": "ip addr show", "reasoning": "local addresses"})
    assert human.asked == 1 and ran["action"] == "user_approved" and ran["decided_by"] == HUMAN.model_dump()
    assert ran["exit_code"] is not None  # it ran, on this machine, because a person said so


def test_a_modification_into_an_unsimulated_command_needs_a_person_too(lab: Lab, tmp_path: Path) -> None:
    victim = tmp_path / "v.txt"
    victim.write_text("x")
    approver = Approver(YES, command=f"rm -f {victim}")
    with _shell(lab, approver) as shell:
        res = shell.execute({"command": "az vm delete -g prod-rg -n web-vm-01 --yes", "reasoning": "x"})
    assert victim.exists() and res["status"] == "denied" and "sealed lab" in res["denial_reason"]


def test_simulated_commands_run_as_before(lab: Lab) -> None:
    approver = Approver(YES)
    with _shell(lab, approver) as shell:
        safe = shell.execute({"command": "az vm list --query '[].name' -o json", "reasoning": "VMs"})
        risky = shell.execute({"command": "cat notes.md", "reasoning": "read my notes"})
        records = read_wal(shell.audit_path).records
    assert approver.asked == 1  # the SAFE simulated read was not asked
    assert safe["exit_code"] == 0 and "web-vm-01" in safe["output"]
    assert (safe["decided_by"]["kind"], safe["decided_by"]["name"]) == ("policy", "safe_tier")
    assert risky["exit_code"] == 0 and risky["decided_by"] == YES.model_dump()
    assert [r["confinement"]["kind"] for r in records] == ["lab_program", "session_read"]


def test_without_a_seal_nothing_changes(tmp_path: Path) -> None:
    approver = Approver(YES)
    with SafeExecShell("plain", approver, audit_dir=tmp_path / "a", cwd=tmp_path) as shell:
        res = shell.execute({"command": "ip addr show", "reasoning": "x"})
        (record,) = read_wal(shell.audit_path).records
    assert approver.asked == 0 and res["action"] == "auto_approved" and "confinement" not in record
