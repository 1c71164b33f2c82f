"""Every tamper case is refused with a one-line reason, and nothing forged reaches the chain, the RCA or the model.

One investigation is run once (the real CLI in-process, the real google-genai SDK against the fake Gemini
server, the lab's ``nsg-deny`` world) and stopped by an API error, so that ``--resume`` has work to do.
Each case then starts from a copy of that audit directory and of the installation's anchors, tampers the
way someone who can write the audit directory but cannot read the key would, and runs ``--resume``,
``audit verify`` and ``report``. Asserted per case: the exit codes, the one-line reason, that the forged
text is in no model request, no RCA and no record of the chain. The end-to-end test at the bottom runs
the installed ``ghost-agent`` command itself (``--lab nsg-deny --brain playbook --intent``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from netghost.agent._exit_codes import ExitCode
from netghost.agent._session import load_session, new_session, save_session
from netghost.agent.cli import main
from netghost.contracts import HypothesisState, compute_session_checksum
from netghost.governance import WalWriter, read_wal, session_seal_body, write_provisional
from netghost.lab.fake_gemini import FakeCall, FakeGemini, FakeTurn
from netghost.shell import HitlDecision, SafeExecShell

pytestmark = pytest.mark.slow

INTENT = "web-vm-01 cannot reach redis-primary on port 6379"
FORGED_COMMAND = "az network nsg rule delete -g prod-rg --nsg-name nsg-data -n AllowRedis"
FORGED_HYPOTHESIS = "FORGED-H1 the deny rule was confirmed and deleted"
OTHER = "ghost_20200101_000000"
DONE = FakeTurn.call("complete_investigation", {"confidence": "low", "root_cause_summary": "Not enough evidence."})
FIRST = FakeTurn(text="Reading the NSGs.", calls=(FakeCall("run_shell_cmd", {
    "command": "az network nsg list -g prod-rg -o json", "reasoning": "Read the NSGs.",
    "hypotheses": [{"id": "H1", "description": "An NSG rule blocks 6379"}], "active_hypothesis_ids": ["H1"]}),))


@dataclass
class Trail:
    """The investigation's directory, its installation key, and material from another session."""

    base: Path
    audit: Path
    key: Path
    sid: str
    other_seal: str
    other_shell_log: Path
    other_inflight: bytes
    early_inflight: bytes

    @property
    def anchors(self) -> Path:
        return self.key.parent / "anchors"

    @property
    def session_file(self) -> Path:
        return self.audit / "ghost_session.json"

    @property
    def shell_log(self) -> Path:
        return self.audit / f"shell_audit_{self.sid}.jsonl"

    @property
    def inflight(self) -> Path:
        return self.audit / f"shell_audit_{self.sid}.jsonl.inflight"


def _forged_record(sid: str, seq: int) -> dict[str, Any]:
    """A completed, user-approved delete in the shell's own record shape (what the attacker claims)."""
    return {"v": 1, "kind": "shell_command", "audit_id": f"{sid}_{seq:03d}", "session_id": sid,
            "command": FORGED_COMMAND, "reasoning": "cleanup", "classification": "RISKY", "tier": 2,
            "risk_reason": "delete verb", "environment": "azure", "action": "user_approved", "status": "completed",
            "exit_code": 0, "error": None, "output": "{}", "stderr": "", "denial_reason": None,
            "modified_command": None, "plan_token": None, "policy_hash": None, "policy_rule": None,
            "duration_ms": 812.0, "output_metadata": {"truncation_applied": False, "original_lines": 1,
                                                      "shown_lines": 1, "format": "json", "redactions": 0}}


def _other_session(base: Path, trail_audit: Path, sid: str) -> tuple[str, Path, bytes, bytes]:
    """Another session of this installation (its sealed file, its shell log, a genuine provisional
    record of it), and a genuine provisional record of *this* session written at an earlier point."""
    other = base / "other"
    other.mkdir()
    state = new_session(OTHER, model="m", audit_dir=other, now=datetime(2020, 1, 1, tzinfo=UTC))
    seal = json.loads(save_session(other, state).read_text())["_seal"]
    with SafeExecShell(OTHER, lambda request: HitlDecision.deny("no"), audit_dir=other) as shell:
        shell.execute({"command": "rm -f /nonexistent-file", "reasoning": "denied on purpose"})
        write_provisional(shell._writer, _forged_record(OTHER, 2), session_id=OTHER)
    other_inflight = (other / f"shell_audit_{OTHER}.jsonl.inflight").read_bytes()
    early = base / "early"
    early.mkdir()
    first = (trail_audit / f"shell_audit_{sid}.jsonl").read_bytes().splitlines(keepends=True)[0]
    unsealed = first[: first.rindex(b',"hmac":')] + b"}\n"  # record 1 as a legacy line: same hash, same chain
    (early / f"shell_audit_{sid}.jsonl").write_bytes(unsealed)
    with WalWriter(early / f"shell_audit_{sid}.jsonl") as writer:  # the log as it stood after record 1
        write_provisional(writer, _forged_record(sid, 2), session_id=sid)
    early_inflight = (early / f"shell_audit_{sid}.jsonl.inflight").read_bytes()
    return seal, other / f"shell_audit_{OTHER}.jsonl", other_inflight, early_inflight


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trail]:
    base = tmp_path_factory.mktemp("tamper")
    key = base / "installation" / "audit.key"
    audit = base / "audit"
    with pytest.MonkeyPatch.context() as mp, FakeGemini([FIRST, FakeTurn.fail(400, "bad request")]) as fake:
        for name in list(os.environ):
            if name.startswith(("GEMINI_", "GOOGLE_", "AZURE_", "GHOST_", "NETGHOST_")):
                mp.delenv(name)
        mp.setenv("HOME", str(base / "home"))
        mp.setenv("NETGHOST_AUDIT_KEY", str(key))
        mp.setenv("GEMINI_API_KEY", "x")
        mp.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        mp.setattr("sys.stdin", io.StringIO(""))
        assert main(["--lab", "nsg-deny", "--audit-dir", str(audit), "--intent", INTENT]) == ExitCode.MODEL_API
        sid = str(json.loads((audit / "ghost_session.json").read_text())["session_id"])
        seal, other_log, other_inflight, early = _other_session(base, audit, sid)
    shutil.copytree(audit, base / "snapshot" / "audit", symlinks=True)
    shutil.copytree(key.parent / "anchors", base / "snapshot" / "anchors")
    yield Trail(base, audit, key, sid, seal, other_log, other_inflight, early)


@pytest.fixture
def trail(pristine: Trail, monkeypatch: pytest.MonkeyPatch) -> Trail:
    """The investigation as it was left, the installation's anchors as they were."""
    for live, saved in ((pristine.audit, "audit"), (pristine.anchors, "anchors")):
        shutil.rmtree(live, ignore_errors=True)
        shutil.copytree(pristine.base / "snapshot" / saved, live, symlinks=True)
    monkeypatch.setenv("NETGHOST_AUDIT_KEY", str(pristine.key))
    monkeypatch.setenv("GEMINI_API_KEY", "x")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    return pristine


# ---- the tampering ------------------------------------------------------------------------------------------

def _session(t: Trail) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(t.session_file.read_text())
    return data


def _write_session(t: Trail, data: dict[str, Any], *, checksum: bool = True) -> None:
    if checksum:  # what anyone can do: the seed's digest is unkeyed
        data = dict(data, _checksum=compute_session_checksum(data))
    t.session_file.write_text(json.dumps(data, indent=2))


def _confirm_h1(data: dict[str, Any]) -> dict[str, Any]:
    """The tamper the issue saw reach the RCA: H1 turned CONFIRMED with a forged description."""
    (h1,) = [h for h in data["hypothesis_log"] if h["id"] == "H1"]
    h1.update(state="CONFIRMED", description=FORGED_HYPOTHESIS, resolving_audit_id=data["session_id"] + "_003")
    return data


def checksum_removed(t: Trail) -> None:
    data = _confirm_h1(_session(t))
    del data["_checksum"]
    _write_session(t, data, checksum=False)


def seal_removed(t: Trail) -> None:
    data = _confirm_h1(_session(t))
    del data["_seal"]
    _write_session(t, data)


def seal_unkeyed(t: Trail) -> None:
    data = _confirm_h1(_session(t))
    body = json.dumps(session_seal_body(data), sort_keys=True).encode()
    data["_seal"] = hashlib.sha256(body).hexdigest()
    _write_session(t, data)


def seal_from_another_session(t: Trail) -> None:
    _write_session(t, dict(_confirm_h1(_session(t)), _seal=t.other_seal))


def field_edited(t: Trail) -> None:
    _write_session(t, _confirm_h1(_session(t)))


def session_file_rolled_back(t: Trail) -> None:
    """A genuine, sealed, older copy of the session's own file put back after the session moved on."""
    older = t.session_file.read_bytes()
    state = load_session(t.session_file).state
    assert state is not None
    state.turn_count += 1
    state.hypothesis_log[0].state = HypothesisState.REFUTED
    save_session(t.audit, state)
    t.session_file.write_bytes(older)


def forged_inflight(t: Trail) -> None:
    last = read_wal(t.shell_log).records[-1]["seq"]
    t.inflight.write_text(json.dumps(_forged_record(t.sid, last + 1)))


def replayed_inflight_other_session(t: Trail) -> None:
    t.inflight.write_bytes(t.other_inflight)


def replayed_inflight_earlier_point(t: Trail) -> None:
    t.inflight.write_bytes(t.early_inflight)


def log_deleted(t: Trail) -> None:
    t.shell_log.unlink()


def journal_deleted(t: Trail) -> None:
    (t.audit / f"ghost_turns_{t.sid}.jsonl").unlink()


def log_truncated(t: Trail) -> None:
    lines = t.shell_log.read_bytes().splitlines(keepends=True)
    t.shell_log.write_bytes(b"".join(lines[:-2]))


def log_replaced_by_another_sessions(t: Trail) -> None:
    shutil.copyfile(t.other_shell_log, t.shell_log)


@dataclass(frozen=True)
class Case:
    tamper: Callable[[Trail], None]
    target: str  # "session", "inflight" or "log"
    reason: str  # in the one-line refusal


CASES = [
    Case(checksum_removed, "session", "its seal does not match its content"),
    Case(seal_removed, "session", "it has no seal (_seal is missing)"),
    Case(seal_unkeyed, "session", "its seal is not an HMAC under an installation key"),
    Case(seal_from_another_session, "session", "or the seal was copied from another session's file"),
    Case(field_edited, "session", "its seal does not match its content: a field was edited"),
    Case(session_file_rolled_back, "session", "it is an older copy of this session's file"),
    Case(forged_inflight, "inflight", "it carries no MAC"),
    Case(replayed_inflight_other_session, "inflight",
         f"it was written for shell_audit_{OTHER}.jsonl of session {OTHER}"),
    Case(replayed_inflight_earlier_point, "inflight", "replayed from an earlier point of the log"),
    Case(log_deleted, "log", "missing"),
    Case(journal_deleted, "log", "missing, but its checkpoint says it held"),
    Case(log_truncated, "log", "ends at record"),
    Case(log_replaced_by_another_sessions, "log", f"it holds records of session {OTHER}"),
]


# ---- what each case must show -------------------------------------------------------------------------------

def _run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _everything_written(t: Trail, *, forged: str) -> str:
    """Every file of the audit directory but the forged one itself (left in place, or kept aside, as evidence)."""
    return "\n".join(p.read_text(errors="replace") for p in sorted(t.audit.glob("*"))
                     if p.is_file() and ".rejected-" not in p.name and p.name != forged)


@pytest.mark.parametrize("case", CASES, ids=[c.tamper.__name__ for c in CASES])
def test_each_tamper_case_is_refused_with_a_one_line_reason(trail: Trail, case: Case,
                                                              capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    t = trail
    case.tamper(t)
    code, before, _ = _run_main(["audit", "verify", str(t.audit)], capsys)
    assert code == 1, before
    assert [line for line in before.splitlines() if case.reason in line], before
    with FakeGemini([DONE]) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        resumed, out, _ = _run_main(["--resume", t.sid, "--lab", "nsg-deny", "--audit-dir", str(t.audit)], capsys)
        sent = json.dumps(fake.requests)
    lines = [line for line in out.splitlines() if case.reason in line]
    assert len(lines) >= 1, out
    assert FORGED_COMMAND not in sent and FORGED_HYPOTHESIS not in sent  # nothing forged reached the model
    records = read_wal(t.shell_log).records if t.shell_log.exists() else []
    assert all(FORGED_COMMAND not in json.dumps(r) for r in records)  # nor the chain
    reported, _, report_err = _run_main(["report", t.sid, "--audit-dir", str(t.audit)], capsys)
    if t.shell_log.exists():
        html = (t.audit / f"ghost_rca_{t.sid}.html").read_text()
        assert reported == 0 and FORGED_COMMAND not in html and FORGED_HYPOTHESIS not in html  # nor the RCA
    else:
        assert reported == 2 and "no shell_audit_" in report_err  # nothing to rebuild it from
    forged = {"session": t.session_file.name, "inflight": t.inflight.name}.get(case.target, "")
    written = _everything_written(t, forged=forged)
    assert FORGED_COMMAND not in written and FORGED_HYPOTHESIS not in written  # nor anything else written
    if case.target == "session":
        assert resumed == 1 and fake.requests == []
        (line,) = [x for x in out.splitlines() if "refused" in x]
        assert line.startswith("[ERROR] Session file ghost_session.json refused: ") and case.reason in line
        assert line.endswith(f"Start a new session, or rebuild the report from the audit trail: "
                             f"ghost-agent report {t.sid} --audit-dir {t.audit}")
        (verdict,) = [x for x in before.splitlines() if "ghost_session.json: refused: " in x]
        assert case.reason in verdict
        (unused,) = [x for x in report_err.splitlines() if "ghost_session.json not used: " in x]
        assert case.reason in unused and unused.endswith("the report is built from the audit trail alone")
        assert not list(t.audit.glob("ghost_rca_*.md"))  # no RCA was written from it
    elif case.target == "inflight":
        assert resumed == 0 and fake.requests, out
        (line,) = lines
        assert line.startswith(f"[ERROR] Provisional audit record {t.inflight.name} refused, not appended: ")
        (rejected,) = [r for r in records if r.get("kind") == "provisional_rejected"]
        assert case.reason in rejected["reason"] and rejected["audit_id"] == f"{t.sid}_{rejected['seq']:03d}"
        assert not t.inflight.exists() and (t.audit / rejected["file"]).exists()
        rca = (t.audit / f"ghost_rca_{t.sid}.md").read_text()
        shown = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", rca)  # the Markdown as read: CommonMark escapes undone
        assert line.removeprefix("[ERROR] ") in shown  # the RCA's warnings say so too
        code, after, _ = _run_main(["audit", "verify", str(t.audit)], capsys)
        assert code == 0, after  # the chain is whole and records the refusal
        assert f"a provisional record was refused, not appended: {rejected['reason']}" in after
    else:
        assert resumed == 1 and fake.requests == []
        assert any(x.startswith("[ERROR] Audit trail broken: ") for x in lines), out


# ---- the installed command, end to end ----------------------------------------------------------------------

def _cli(*argv: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "netghost", *argv], env=env, cwd=cwd, capture_output=True,
                          text=True, check=False, timeout=600)


def test_the_ghost_agent_command_refuses_tampering_end_to_end(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_", "AZURE_", "NETGHOST_"))}
    env.update(HOME=str(tmp_path / "home"), NETGHOST_AUDIT_KEY=str(tmp_path / "key" / "audit.key"), COLUMNS="200")
    first = _cli("--lab", "nsg-deny", "--brain", "playbook", "--intent", INTENT, "--yes", env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    audit = tmp_path / "audit"
    sid = str(json.loads((audit / "ghost_session.json").read_text())["session_id"])
    clean = _cli("audit", "verify", env=env, cwd=tmp_path)  # no path: ./audit
    assert clean.returncode == 0 and "1 session(s) checked, 0 incomplete" in clean.stdout, clean.stdout
    shutil.copytree(audit, tmp_path / "saved")
    shutil.copytree(tmp_path / "key" / "anchors", tmp_path / "saved-anchors")

    def restore() -> None:
        for live, saved in ((audit, "saved"), (tmp_path / "key" / "anchors", "saved-anchors")):
            shutil.rmtree(live)
            shutil.copytree(tmp_path / saved, live)

    # a forged provisional record claiming a completed, user-approved delete
    seq = read_wal(audit / f"shell_audit_{sid}.jsonl").records[-1]["seq"] + 1
    (audit / f"shell_audit_{sid}.jsonl.inflight").write_text(json.dumps(_forged_record(sid, seq)))
    pending = _cli("audit", "verify", "audit", env=env, cwd=tmp_path)
    assert pending.returncode == 1 and "refused: it carries no MAC" in pending.stdout
    resumed = _cli("--resume", sid, "--lab", "nsg-deny", "--brain", "playbook", "--audit-dir", "audit",
                   env=env, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    refusal = [x for x in resumed.stdout.splitlines() if "Provisional audit record" in x]
    assert len(refusal) == 1 and "refused, not appended: it carries no MAC" in refusal[0]
    records = read_wal(audit / f"shell_audit_{sid}.jsonl").records
    assert next(r["kind"] for r in records if r["seq"] >= seq) == "provisional_rejected"
    assert all(FORGED_COMMAND not in json.dumps(r) for r in records)
    after = _cli("audit", "verify", "audit", env=env, cwd=tmp_path)
    assert after.returncode == 0 and "a provisional record was refused, not appended" in after.stdout

    # the session file edited (its unkeyed checksum recomputed)
    restore()
    data = json.loads((audit / "ghost_session.json").read_text())
    data["turn_count"] += 1
    data["_checksum"] = compute_session_checksum(data)
    (audit / "ghost_session.json").write_text(json.dumps(data))
    resumed = _cli("--resume", sid, "--lab", "nsg-deny", "--brain", "playbook", "--audit-dir", "audit",
                   env=env, cwd=tmp_path)
    assert resumed.returncode == 1
    (line,) = [x for x in resumed.stdout.splitlines() if "refused" in x]
    assert "Session file ghost_session.json refused: its seal does not match its content" in line
    assert line.endswith(f"ghost-agent report {sid} --audit-dir {audit}")
    verified = _cli("audit", "verify", "audit", env=env, cwd=tmp_path)
    assert verified.returncode == 1 and "ghost_session.json: refused: its seal does not match" in verified.stdout

    # the shell audit deleted whole
    restore()
    (audit / f"shell_audit_{sid}.jsonl").unlink()
    verified = _cli("audit", "verify", env=env, cwd=tmp_path)
    assert verified.returncode == 1
    (line,) = [x for x in verified.stdout.splitlines() if f"shell_audit_{sid}.jsonl: missing" in x]
    assert "its checkpoint says it held" in line
    resumed = _cli("--resume", sid, "--lab", "nsg-deny", "--brain", "playbook", "--audit-dir", "audit",
                   env=env, cwd=tmp_path)
    assert resumed.returncode == 1 and "Audit trail broken: " in resumed.stdout


class _Terminal(io.StringIO):
    """Answers typed at a terminal (the run is interactive)."""

    def isatty(self) -> bool:
        return True


def test_continuing_past_a_cut_log_at_the_terminal_ends_cleanly_and_appends_nothing(trail: Trail) -> None:
    """A human may [C]ontinue past the broken trail; the log's writer still refuses to extend a log that
    does not match its checkpoint, and that is one line and exit 1, never a traceback."""
    from rich.console import Console

    from netghost.agent._run import Options, run_agent
    from netghost.agent.demo import prepare_lab

    log_truncated(trail)
    cut = trail.shell_log.read_bytes()
    screen = io.StringIO()
    code = run_agent(Options(audit_dir=trail.audit, resume=trail.sid, brain="playbook",
                             lab=prepare_lab("nsg-deny", trail.audit, fresh=False)),
                     stdin=_Terminal("c\n"), console=Console(file=screen, width=100))
    out = screen.getvalue()
    assert code == 1, out
    assert "[ERROR] Audit trail broken: " in out and "Traceback" not in out
    (line,) = [x for x in out.splitlines() if "does not match its checkpoint" in x]
    assert line.split("> ", 1)[-1].startswith(f"[ERROR] audit log {trail.shell_log} does not match its checkpoint: ")
    assert trail.shell_log.read_bytes() == cut  # not extended, not re-anchored
