"""SafeExecShell end to end with real subprocesses and a real WAL (table classifier for verdicts)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from netghost.contracts.shell import ShellResponse
from netghost.errors import ShellError
from netghost.governance.wal import read_wal, verify
from netghost.shell import HitlDecision, SafeExecShell
from tests.shell.shell_helpers import Recorder, table_classify

KEYS = {
    "status", "classification", "action", "output", "stderr", "exit_code", "error", "audit_id", "tier",
    "risk_reason", "environment", "output_metadata", "plan_token", "denial_reason", "decided_by", "modified_command",
}  # fmt: skip


def _shell(tmp_path: Path, recorder: Recorder, **kw: Any) -> SafeExecShell:
    return SafeExecShell(
        "s1",
        recorder,
        audit_dir=tmp_path / "audit",
        classifier=table_classify,  # type: ignore[arg-type]
        cwd=tmp_path,
        **kw,
    )


def _records(shell: SafeExecShell) -> list[dict[str, object]]:
    return read_wal(shell.audit_path).records


def test_safe_command_runs_without_asking(tmp_path: Path) -> None:
    rec = Recorder()
    with _shell(tmp_path, rec) as shell:
        res = shell.execute({"command": "echo hello", "reasoning": "smoke"})
    assert set(res) == KEYS
    ShellResponse.model_validate(res)
    assert (res["status"], res["classification"], res["action"]) == ("completed", "SAFE", "auto_approved")
    assert res["output"] == "hello\n"
    assert res["exit_code"] == 0
    assert res["audit_id"] == "s1_001"
    assert res["plan_token"].startswith("sha256:")
    assert res["output_metadata"] == {
        "truncation_applied": False,
        "original_lines": 1,
        "shown_lines": 1,
        "format": "text",
        "redactions": 0,
    }
    assert rec.requests == []


def test_risky_approved_runs_and_request_is_bound(tmp_path: Path) -> None:
    rec = Recorder([HitlDecision.approve()])
    with _shell(tmp_path, rec) as shell:
        res = shell.execute({"command": f"touch {tmp_path / 'made'}", "reasoning": "need a marker"})
    assert (res["status"], res["action"], res["classification"]) == ("completed", "user_approved", "RISKY")
    assert (tmp_path / "made").exists()
    (req,) = rec.requests
    assert req.plan_token == res["plan_token"]
    assert req.why == "need a marker"
    assert req.context["tier"] == 3
    assert req.context["session_id"] == "s1"


@pytest.mark.parametrize(("reason", "expected"), [("wrong file", "wrong file"), ("", None)])
def test_risky_denied_does_not_run(tmp_path: Path, reason: str, expected: str | None) -> None:
    rec = Recorder([HitlDecision.deny(reason=reason)])
    with _shell(tmp_path, rec) as shell:
        res = shell.execute({"command": f"touch {tmp_path / 'nope'}", "reasoning": "x"})
    assert (res["status"], res["action"], res["denial_reason"]) == ("denied", "user_denied", expected)
    assert res["exit_code"] is None
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize("exc", [EOFError(), KeyboardInterrupt(), RuntimeError("callback bug")])
def test_abandoned_prompt_fails_closed(tmp_path: Path, exc: BaseException) -> None:
    with _shell(tmp_path, Recorder([exc])) as shell:
        res = shell.execute({"command": f"touch {tmp_path / 'nope'}", "reasoning": "x"})
        (record,) = _records(shell)
    assert (res["status"], res["action"]) == ("denied", "user_abandoned")
    assert not (tmp_path / "nope").exists()
    assert record["action"] == "user_abandoned"


def test_modified_command_is_reclassified_and_audited_with_original(tmp_path: Path) -> None:
    rec = Recorder([HitlDecision.modify("echo safer", reason="just print")])
    with _shell(tmp_path, rec) as shell:
        res = shell.execute({"command": f"touch {tmp_path / 'orig'}", "reasoning": "x"})
        (record,) = _records(shell)
    assert (res["status"], res["action"], res["classification"]) == ("completed", "user_modified", "SAFE")
    assert res["output"] == "safer\n"
    assert not (tmp_path / "orig").exists()
    assert record["command"] == f"touch {tmp_path / 'orig'}"
    assert record["modified_command"] == "echo safer"
    assert res["plan_token"] != rec.requests[0].plan_token


def test_modified_risky_counts_as_approved_by_the_human(tmp_path: Path) -> None:
    rec = Recorder([HitlDecision.modify(f"touch {tmp_path / 'other'}")])
    with _shell(tmp_path, rec) as shell:
        res = shell.execute({"command": f"touch {tmp_path / 'orig'}", "reasoning": "x"})
    assert (res["action"], res["classification"]) == ("user_modified", "RISKY")
    assert len(rec.requests) == 1
    assert (tmp_path / "other").exists()


def test_modified_into_forbidden_stays_blocked(tmp_path: Path) -> None:
    rec = Recorder([HitlDecision.modify("sudo touch /etc/x")])
    with _shell(tmp_path, rec) as shell:
        res = shell.execute({"command": f"touch {tmp_path / 'orig'}", "reasoning": "x"})
    assert (res["status"], res["action"], res["classification"]) == ("denied", "blocked", "FORBIDDEN")
    assert res["error"] == "forbidden_command"


def test_forbidden_never_reaches_the_callback(tmp_path: Path) -> None:
    rec = Recorder()
    with _shell(tmp_path, rec) as shell:
        res = shell.execute({"command": "sudo reboot", "reasoning": "x"})
        chained = shell.execute({"command": "echo a; rm -rf /", "reasoning": "x"})
    assert (res["status"], res["action"], res["error"]) == ("denied", "blocked", "forbidden_command")
    assert res["plan_token"] is None
    assert chained["error"] == "not_a_single_command"
    assert rec.requests == []


def test_timeout_and_not_found_are_errors(tmp_path: Path) -> None:
    rec = Recorder([HitlDecision.approve(), HitlDecision.approve()])
    with _shell(tmp_path, rec, timeout_s=0.5) as shell:
        slow = shell.execute({"command": "sleep 30", "reasoning": "x"})
        missing = shell.execute({"command": "no-such-tool-netghost --x", "reasoning": "x"})
    assert (slow["status"], slow["error"], slow["exit_code"]) == ("error", "timeout", None)
    assert (missing["status"], missing["error"], missing["exit_code"]) == ("error", "command_not_found", 127)


def test_output_is_redacted_and_counted(tmp_path: Path) -> None:
    key = "U5dCsSyZWs8ZaGdM1ESKhcVcDKkRMThQKL0nFKJkuw76o5bSO34AM6zmDM0HTGsFjON8xzbnDgozkfn9wb3oZQ=="
    with _shell(tmp_path, Recorder()) as shell:
        res = shell.execute({"command": f"echo AccountKey={key}", "reasoning": "x"})
        raw = shell.audit_path.read_text()
    assert key not in res["output"]
    assert key not in raw
    assert "[REDACTED:" in res["output"]
    assert res["output_metadata"]["redactions"] >= 1


def test_secret_in_command_line_is_redacted_in_audit_and_request(tmp_path: Path) -> None:
    rec = Recorder([HitlDecision.deny()])
    with _shell(tmp_path, rec) as shell:
        shell.execute(
            {
                "command": "az storage blob list --account-key 'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg=='",
                "reasoning": "the key is Password=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg==",
            }
        )
        raw = shell.audit_path.read_text()
    assert "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg" not in raw
    assert "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg" not in rec.requests[0].what
    assert "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg" not in rec.requests[0].why
    assert "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg" not in json.dumps(rec.requests[0].context)


def test_long_output_is_truncated(tmp_path: Path) -> None:
    with _shell(tmp_path, Recorder([HitlDecision.approve()])) as shell:
        res = shell.execute({"command": "seq 1 1000", "reasoning": "x"})
    meta = res["output_metadata"]
    assert meta["truncation_applied"] is True
    assert meta["original_lines"] == 1000
    assert meta["shown_lines"] <= 200
    assert res["output"].splitlines()[-1] == "1000"


def test_children_do_not_see_our_model_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyD-not-for-children-000000000000000")
    with _shell(tmp_path, Recorder([HitlDecision.approve()]), env={"LAB_MARK": "1"}) as shell:
        res = shell.execute({"command": "env", "reasoning": "x"})
    assert "GEMINI_API_KEY" not in res["output"]
    assert "LAB_MARK=1" in res["output"]


def test_path_override_runs_the_simulator(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "az").write_text("#!/bin/sh\necho '[]'\n")
    (bindir / "az").chmod(0o755)
    with _shell(
        tmp_path, Recorder([HitlDecision.approve()]), path=f"{bindir}{os.pathsep}/usr/bin:/bin"
    ) as shell:
        res = shell.execute({"command": "az network nsg list", "reasoning": "x"})
    assert (res["output"], res["environment"], res["output_metadata"]["format"]) == ("[]\n", "azure", "json")


def test_one_chained_record_per_call_and_shared_writer(tmp_path: Path) -> None:
    rec = Recorder([HitlDecision.deny()])
    first = _shell(tmp_path, rec)
    second = _shell(tmp_path, rec)  # same session: shares the one WalWriter
    ids = [
        first.execute({"command": "echo 1", "reasoning": "x"})["audit_id"],
        second.execute({"command": "true", "reasoning": "x"})["audit_id"],
        first.execute({"command": "ls", "reasoning": "x"})["audit_id"],
    ]
    first.close()
    assert second.execute({"command": "sudo ls", "reasoning": "x"})["audit_id"] == "s1_004"
    second.close()
    assert ids == ["s1_001", "s1_002", "s1_003"]
    report = verify(second.audit_path)
    assert report.ok and report.records == 4
    with pytest.raises(ShellError, match="closed"):
        second.execute({"command": "echo", "reasoning": "x"})


def test_internal_failure_is_still_audited(tmp_path: Path) -> None:
    def broken(command: str, policy: object) -> object:
        raise RuntimeError("classifier bug")

    shell = SafeExecShell("s2", Recorder(), audit_dir=tmp_path, classifier=broken)  # type: ignore[arg-type]
    res = shell.execute({"command": "echo hi", "reasoning": "x"})
    shell.close()
    assert (res["status"], res["error"]) == ("error", "exec_error")
    assert "classifier bug" in res["stderr"]
    assert len(read_wal(shell.audit_path).records) == 1


def test_bad_requests_are_audited_not_raised(tmp_path: Path) -> None:
    with _shell(tmp_path, Recorder()) as shell:
        for bad in ({"cmd": "echo"}, "echo", {"command": None}, {"command": "true", "reasoning": 7}):
            res = shell.execute(bad)  # type: ignore[arg-type]
            assert (res["status"], res["action"]) == ("error", "blocked")
            assert res["error"] == "bad_request"
            ShellResponse.model_validate(res)
        assert len(_records(shell)) == 4
        assert verify(shell.audit_path).ok
    with pytest.raises(ShellError):
        shell.execute({"command": "true"})  # closed: still raises
    with pytest.raises(ShellError):
        SafeExecShell("../evil", Recorder(), audit_dir=tmp_path, classifier=table_classify)  # type: ignore[arg-type]


def test_audit_file_permissions(tmp_path: Path) -> None:
    with _shell(tmp_path, Recorder()) as shell:
        shell.execute({"command": "true", "reasoning": "x"})
        mode = shell.audit_path.stat().st_mode & 0o777
    assert mode == 0o600
    assert sys.platform != "win32"


def test_concurrent_calls_in_one_session_get_distinct_consecutive_ids(tmp_path: Path) -> None:
    import threading

    shells = [_shell(tmp_path, Recorder()) for _ in range(2)]
    ids: list[str] = []

    def work(shell: SafeExecShell) -> None:
        for _ in range(5):
            ids.append(shell.execute({"command": "echo x", "reasoning": "x"})["audit_id"])

    threads = [threading.Thread(target=work, args=(s,)) for s in shells]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in shells:
        s.close()
    assert sorted(ids) == [f"s1_{i:03d}" for i in range(1, 11)]
    assert verify(shells[0].audit_path).ok


def test_plan_token_mismatch_refuses_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If the token handed to execution is not the hash of what is about to run, nothing runs."""
    import netghost.shell.shell as shell_module

    monkeypatch.setattr(shell_module, "compute_plan_token", lambda plan: "sha256:" + "0" * 64)
    with _shell(tmp_path, Recorder()) as shell:
        res = shell.execute({"command": f"echo {tmp_path}", "reasoning": "x"})
        (record,) = _records(shell)
    assert (res["status"], res["error"], res["exit_code"], res["output"]) == (
        "error",
        "plan_token_mismatch",
        None,
        "",
    )
    assert record["error"] == "plan_token_mismatch"


def test_huge_output_is_cut_before_redaction_and_keeps_its_line_count(tmp_path: Path) -> None:
    with _shell(tmp_path, Recorder([HitlDecision.approve()])) as shell:
        res = shell.execute({"command": "seq 1 400000", "reasoning": "x"})
    meta = res["output_metadata"]
    assert meta["original_lines"] == 400000
    assert meta["truncation_applied"] is True
    lines = res["output"].splitlines()
    assert lines[0] == "1"
    assert lines[-1] == "400000"
    assert len(res["output"]) <= 16_000


def test_ctrl_c_during_execution_is_audited_then_propagates(tmp_path: Path) -> None:
    def interrupted(command: str, policy: object) -> object:
        raise KeyboardInterrupt

    shell = SafeExecShell("s3", Recorder(), audit_dir=tmp_path, classifier=interrupted)  # type: ignore[arg-type]
    with pytest.raises(KeyboardInterrupt):
        shell.execute({"command": "echo hi", "reasoning": "x"})
    shell.close()
    (record,) = read_wal(shell.audit_path).records
    assert (record["status"], record["error"]) == ("error", "exec_error")
    assert "interrupted" in record["stderr"]


def test_audit_file_held_by_another_writer_is_refused(tmp_path: Path) -> None:
    from netghost.errors import WalLockedError
    from netghost.governance.wal import WalWriter

    with WalWriter(tmp_path / "shell_audit_held.jsonl"), pytest.raises(WalLockedError):
        SafeExecShell("held", Recorder(), audit_dir=tmp_path, classifier=table_classify)  # type: ignore[arg-type]


def test_stderr_has_a_smaller_budget(tmp_path: Path) -> None:
    script = "import sys\nfor i in range(500): print('err', i, file=sys.stderr)\nprint('ok')"
    with _shell(tmp_path, Recorder([HitlDecision.approve()])) as shell:
        res = shell.execute({"command": f'{sys.executable} -c "{script}"', "reasoning": "x"})
    assert res["output"] == "ok\n"
    err_lines = res["stderr"].splitlines()
    assert len(err_lines) <= 50
    assert err_lines[0] == "err 0" and err_lines[-1] == "err 499"
    assert res["output_metadata"]["truncation_applied"] is True


def test_terminal_control_sequences_are_removed_from_output(tmp_path: Path) -> None:
    script = tmp_path / "colour.py"
    script.write_text("print('\\x1b[31mred\\x1b[0m \\x1b]0;title\\x07ok\\x07\\r\\nnext')\n")
    with _shell(tmp_path, Recorder([HitlDecision.approve()])) as shell:
        res = shell.execute({"command": f"{sys.executable} {script}", "reasoning": "x"})
    assert res["output"] == "red ok\nnext\n"
