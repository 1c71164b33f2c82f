"""``ghost-agent eval``: the playbook brain diagnoses the lab worlds and recovers from scripted denials.

The fast tests run control-plane worlds (no capture); the slow ones run every shipped world (the issue's
bar: rca_f1 = 1.0 everywhere, no fault on the healthy control, median <= 8 turns and <= 2 critical-path
approvals) and the denial scripts (deny the capture, every cat, or three steps of one hypothesis).
"""

from __future__ import annotations

import json
import shutil
import statistics
from collections import Counter
from pathlib import Path

import pytest

from netghost.agent.cli import main
from netghost.agent.eval import RunResult, evaluate
from netghost.governance import read_wal
from netghost.lab import scenario_names
from netghost.lab.world import SCENARIO_DIR


def _shell_records(result: RunResult) -> list[dict[str, object]]:
    (path,) = Path(result.audit_dir).glob("shell_audit_*.jsonl")
    return read_wal(path).records


def _never_repeats_a_denied_command(result: RunResult) -> None:
    records = _shell_records(result)
    denied = Counter(str(r["command"]) for r in records if r.get("action") == "user_denied")
    assert all(n == 1 for n in denied.values()), denied
    for command in denied:
        assert [r["action"] for r in records if r["command"] == command] == ["user_denied"]


def test_control_plane_worlds_and_a_world_from_anywhere_on_disk(tmp_path: Path) -> None:
    worlds = tmp_path / "worlds"
    (worlds / "answers").mkdir(parents=True)
    shutil.copy(SCENARIO_DIR / "udr-dead-appliance.yaml", worlds / "my-udr.yaml")
    shutil.copy(SCENARIO_DIR / "answers" / "udr-dead-appliance.json", worlds / "answers" / "my-udr.json")
    results = evaluate(["nsg-deny", "dns-private-zone-not-linked", str(worlds)], root=tmp_path / "runs")
    assert [r.world for r in results] == ["nsg-deny", "dns-private-zone-not-linked", "udr-dead-appliance"]
    for r in results:
        assert (r.exit_code, r.rca_f1, r.detection) == (0, 1.0, True), r
        assert r.turns <= 5 and r.critical_approvals == 0 and r.tool_errors == 0, r


def test_the_command_writes_the_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eval.json"
    assert main(["eval", "peering-disconnected", "--audit-dir", str(tmp_path / "runs"), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["summary"]["ALL"]["rca_f1"] == 1.0 and doc["runs"][0]["world"] == "peering-disconnected"
    assert "Diagnosis benchmark" in capsys.readouterr().out
    assert main(["eval", "no-such-world", "--audit-dir", str(tmp_path / "runs")]) == 2


def test_at_least_twenty_shipped_worlds_with_healthy_controls() -> None:
    names = scenario_names()
    assert len(names) >= 20
    assert len([n for n in names if n.startswith("healthy")]) >= 3


PENDING = Path(__file__).resolve().parent.parent / "data" / "playbook_pending_worlds.txt"


def pending_worlds() -> list[str]:
    """The shipped worlds the playbook does not solve yet (one list, kept in tests/data)."""
    lines = PENDING.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_the_pending_list_names_shipped_worlds_only() -> None:
    assert set(pending_worlds()) <= set(scenario_names())


@pytest.mark.slow
@pytest.mark.parametrize("shard", [0, 1])
def test_every_shipped_world_is_diagnosed(shard: int, tmp_path: Path) -> None:
    """Half the shipped worlds each (two shards run side by side under xdist). The medians hold over the
    whole set when they hold in each half: a median is <= x exactly when half the values are. The worlds
    the playbook does not solve yet are listed in tests/data/playbook_pending_worlds.txt."""
    pending = set(pending_worlds())
    results = evaluate([n for n in scenario_names() if n not in pending][shard::2], root=tmp_path)
    wrong = [(r.world, r.diagnosis, r.truth) for r in results if r.rca_f1 != 1.0 or not r.detection]
    assert not wrong, wrong
    healthy = [r for r in results if r.truth and r.truth.get("fault_type") == "none"]
    assert healthy and all(r.diagnosis and not r.diagnosis["is_anomaly"] for r in healthy)
    assert statistics.median(r.turns for r in results) <= 8
    assert statistics.median(r.critical_approvals for r in results) <= 2
    assert all(r.tool_errors == 0 and r.exit_code == 0 for r in results)


@pytest.mark.slow
def test_a_denied_capture_is_not_repeated_and_lowers_confidence(tmp_path: Path) -> None:
    (r,) = evaluate(["service-down"], root=tmp_path, deny=[("packet-capture create", "no captures in prod today")])
    assert r.exit_code == 0 and r.confidence == "low" and r.denials == 1
    _never_repeats_a_denied_command(r)


@pytest.mark.slow
def test_a_denial_reason_that_names_another_vm_is_followed(tmp_path: Path) -> None:
    (r,) = evaluate(["service-down"], root=tmp_path,
                    deny=[("packet-capture create .*--vm web-vm-01", "capture on redis-primary instead")])
    creates = [str(x["command"]) for x in _shell_records(r) if "packet-capture create" in str(x["command"])]
    assert len(creates) == 2 and "--vm redis-primary" in creates[1]
    assert r.rca_f1 == 1.0  # the server's own capture shows the RST from the port
    _never_repeats_a_denied_command(r)


@pytest.mark.slow
def test_three_denied_reads_make_the_hypotheses_unverifiable(tmp_path: Path) -> None:
    """Every cat denied: the summary, then the report, then the semantic JSON (each once), then UNVERIFIABLE."""
    (r,) = evaluate(["service-down"], root=tmp_path, deny=[(r"^cat ", "not during the incident")])
    cats = [x for x in _shell_records(r) if str(x["command"]).startswith("cat ")]
    assert [str(x["command"]).rsplit("_", 1)[-1] for x in cats][:3] == [
        "summary.md", "report.md", "semantic.json"]
    assert r.exit_code == 0 and r.confidence == "low"
    session = json.loads((Path(r.audit_dir) / "ghost_session.json").read_text())
    states = {h["id"]: h["state"] for h in session["hypothesis_log"]}
    assert "UNVERIFIABLE" in states.values(), states
    rca = Path(session["rca_report_path"]).read_text()
    assert "Unverifiable" in rca
    _never_repeats_a_denied_command(r)


def test_tokens_are_read_as_the_gemini_brain_records_them(tmp_path: Path) -> None:
    from netghost.agent._journal import Journal
    from netghost.agent.eval import _trail
    from netghost.governance import WalWriter

    sid = "ghost_20261122_050000"
    (tmp_path / "ghost_session.json").write_text(json.dumps({"session_id": sid}))
    journal = Journal(tmp_path, sid)
    for total in (120, 80):
        journal.write("model_turn", turn=1, brain="gemini", model="m", message={"role": "model", "parts": []},
                      finish_reason="STOP", usage={"prompt_tokens": 1, "output_tokens": 2, "total_tokens": total},
                      after_audit_id=None)
    journal.close()
    shell = WalWriter(tmp_path / f"shell_audit_{sid}.jsonl")
    shell.append({"audit_id": f"{sid}_001", "command": "rm x", "action": "user_denied", "status": "denied"})
    shell.close()
    trail = _trail(tmp_path)
    assert (trail["turns"], trail["tokens"], trail["approvals"], trail["denials"]) == (2, 200, 1, 1)
