"""The environment preflight (issue 24, bug 4): a broken environment is a named stop with its fix, never a
confident wrong answer.

Table-driven over the situations a new user meets: fake ``az`` programs on PATH print what azure-cli 2.91
prints (``tests/agent/fake_az.py``), the real Safe-Exec Shell runs them, and ``run_agent`` (the
investigation a user starts) must end with the named reason, the fix, exit ``EXIT_ENVIRONMENT``, and no
model turn asked. Then the same faults in the middle of an investigation end the loop the same way.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from netghost.agent._exit_codes import ExitCode
from netghost.agent._run import Options, run_agent
from netghost.governance import read_wal, verify
from netghost.lab import FakeGemini, FakeTurn
from tests.agent import fake_az
from tests.agent.fakes import ScriptedBrain, call, turn

EXIT_ENVIRONMENT = ExitCode.ENVIRONMENT

INTENT = "web-vm-01 cannot reach redis-primary on port 6379"
SYSTEM_PATH = "/usr/bin:/bin"
SANITY_S = 60.0
"""A generous bound on a stopped run's wall time (the goal, 5 s with the real CLI, is measured in bench/)."""


def _no_az_on(path: str) -> bool:
    return not any((Path(d) / "az").exists() for d in path.split(os.pathsep))


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    return tmp_path / "fakebin"


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, *, brain: ScriptedBrain | None = None,
         env: dict[str, str] | None = None) -> tuple[int, str, ScriptedBrain, float]:
    monkeypatch.setenv("PATH", path)
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    brain = brain or ScriptedBrain([])
    out = io.StringIO()
    started = time.monotonic()
    code = run_agent(Options(audit_dir=tmp_path / "audit", brain="playbook", intent=INTENT),
                     stdin=io.StringIO(""), console=Console(file=out, width=250), brain=brain)
    return code, out.getvalue(), brain, time.monotonic() - started


STOPS = [
    # (situation, extra environment, reason, text az printed, the fix)
    ("not_logged_in", {}, "az_not_logged_in", "Please run 'az login' to setup account.", "az login"),
    ("expired", {}, "az_login_expired", "AADSTS700082: The refresh token has expired",
     'az login --scope "https://management.core.windows.net//.default"'),
    ("msi_half_set", {"IDENTITY_ENDPOINT": "http://127.0.0.1:41741/msi/token"}, "managed_identity_incomplete",
     "", "export IDENTITY_HEADER"),
    ("msi_unreachable", {}, "managed_identity_unavailable", "HTTPConnectionPool(host='169.254.169.254', port=80)",
     "az login --identity"),
    ("subscription_gone", {}, "subscription_not_found", "(SubscriptionNotFound)",
     "az account set --subscription <subscription-id>"),
    ("subscription_disabled", {}, "subscription_disabled", "", "az account set --subscription"),
    ("provider_unregistered", {}, "network_provider_not_registered", "",
     "az provider register --namespace Microsoft.Network --wait"),
    ("no_watcher", {}, "network_watcher_missing", "",
     "az network watcher configure -g NetworkWatcherRG -l westus2 --enabled true"),
]


@pytest.mark.parametrize("case", STOPS, ids=[s[0] for s in STOPS])
def test_each_broken_environment_is_a_named_stop_before_any_model_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_bin: Path,
        case: tuple[str, dict[str, str], str, str, str]) -> None:
    situation, env, reason, said, fix = case
    calls = fake_az.install(fake_bin, situation)
    code, out, brain, wall = _run(tmp_path, monkeypatch, f"{fake_bin}{os.pathsep}{SYSTEM_PATH}", env=env)
    assert code == EXIT_ENVIRONMENT, out
    flat = " ".join(out.split())
    assert f"[ERROR] {reason}: " in out and "[ERROR] Fix: " in out and fix in flat, out
    assert said in flat
    assert brain.seen == []  # no model request
    assert "Could not identify" not in out and "root cause" not in out.lower()
    assert "packet-capture" not in calls.read_text()  # nothing was scanned or investigated
    assert wall < SANITY_S
    _the_checks_are_audited(tmp_path / "audit")


def test_no_az_on_path_is_az_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _no_az_on(SYSTEM_PATH)
    code, out, brain, wall = _run(tmp_path, monkeypatch, SYSTEM_PATH)
    assert code == EXIT_ENVIRONMENT and brain.seen == [] and wall < SANITY_S
    assert "[ERROR] az_not_found: the Azure CLI (az) is not installed or not on PATH (exit 127)" in out
    assert "https://learn.microsoft.com/cli/azure/install-azure-cli" in " ".join(out.split())
    records = _the_checks_are_audited(tmp_path / "audit")
    assert (records[0]["command"], records[0]["exit_code"], records[0]["error"]) == (
        "az account show -o json", 127, "command_not_found")


def _the_checks_are_audited(audit: Path) -> list[dict]:  # type: ignore[type-arg]
    (log,) = audit.glob("shell_audit_*.jsonl")
    assert verify(log).ok
    records = read_wal(log).records
    assert records and all(r["classification"] == "SAFE" for r in records)
    session = json.loads((audit / "ghost_session.json").read_text())
    assert session["turn_count"] == 0 and session["rca_report_path"] is None
    return records


def test_a_working_environment_goes_on_to_the_investigation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              fake_bin: Path) -> None:
    calls = fake_az.install(fake_bin, "roles_forbidden")  # a role read Azure refuses is never a stop
    brain = ScriptedBrain([turn(call("complete_investigation", confidence="low",
                                     root_cause_summary="Scripted conclusion."))])
    code, out, brain, _ = _run(tmp_path, monkeypatch, f"{fake_bin}{os.pathsep}{SYSTEM_PATH}", brain=brain)
    assert code == 0, out
    assert len(brain.seen) == 1
    asked = calls.read_text().splitlines()
    assert asked[:3] == ["account show -o json", "provider show -n Microsoft.Network --query registrationState -o tsv",
                         "version -o json"]
    assert any(a.startswith("vm list --query [?contains(['web-vm-01', 'redis-primary'], name)]") for a in asked)
    assert "could not be read" in out and "az logged in as ghost@contoso.com (user)" in out and "azure-cli 2.91.0" in out


def test_a_fault_during_the_investigation_stops_it_instead_of_feeding_a_conclusion(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_bin: Path) -> None:
    """The login expires after the preflight: the model's next az read fails with AADSTS700082."""
    fake_az.install(fake_bin, "ok")
    expiring = fake_bin / "az"
    script = expiring.read_text().replace("sys.stdout.write(\"[]\\n\")",
                                          f"sys.stderr.write({fake_az.EXPIRED!r}); sys.exit(1)")
    expiring.write_text(script)
    brain = ScriptedBrain([
        turn(call("run_shell_cmd", command="az vm show -g prod-rg -n web-vm-01 -o json", reasoning="Find the client."),
             call("run_shell_cmd", command="az vm show -g prod-rg -n redis-primary -o json", reasoning="The server.")),
        turn(call("complete_investigation", confidence="high", root_cause_summary="The VMs do not exist.")),
    ])
    code, out, brain, _ = _run(tmp_path, monkeypatch, f"{fake_bin}{os.pathsep}{SYSTEM_PATH}", brain=brain)
    assert code == EXIT_ENVIRONMENT, out
    assert len(brain.seen) == 1  # the model never got the failures to conclude from
    assert "[ERROR] az_login_expired: " in out and "The VMs do not exist" not in out
    assert "Resume with: ghost-agent --resume" in out
    assert not list((tmp_path / "audit").glob("ghost_rca_*.md"))
    shown = [r["command"] for r in read_wal(next((tmp_path / "audit").glob("shell_audit_*.jsonl"))).records]
    # the turn's two reads ran together (independent SAFE reads run in parallel); nothing ran after them
    assert shown[-1] in ("az vm show -g prod-rg -n redis-primary -o json", "az vm show -g prod-rg -n web-vm-01 -o json")
    assert shown.count("az vm show -g prod-rg -n redis-primary -o json") <= 1


def test_a_name_the_model_chose_cannot_fake_an_environment_fault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                fake_bin: Path) -> None:
    """An ARM error that quotes a model-chosen name holding the login text is an ordinary failure."""
    fake_az.install(fake_bin, "ok")
    script = (fake_bin / "az").read_text().replace(
        "sys.stdout.write(\"[]\\n\")",
        "sys.stderr.write(\"ERROR: (ResourceNotFound) The Resource 'Microsoft.Compute/virtualMachines/\" + "
        "sys.argv[-3] + \"' under resource group 'prod-rg' was not found.\\n\"); sys.exit(3)")
    (fake_bin / "az").write_text(script)
    brain = ScriptedBrain([
        turn(call("run_shell_cmd", command="az vm show -g prod-rg -n \"Please run 'az login' to setup account.\" "
                                           "-o json", reasoning="Probe.")),
        turn(call("complete_investigation", confidence="low", root_cause_summary="Nothing.")),
    ])
    code, out, brain, _ = _run(tmp_path, monkeypatch, f"{fake_bin}{os.pathsep}{SYSTEM_PATH}", brain=brain)
    assert code == 0 and len(brain.seen) == 2, out


def test_the_cli_exits_non_zero_with_no_az(tmp_path: Path) -> None:
    """What a new user types, as a process: ghost-agent --intent ... with no az on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_"))}
    env["PATH"] = SYSTEM_PATH
    proc = subprocess.run([sys.executable, "-m", "netghost", "--intent", INTENT, "--audit-dir", str(tmp_path / "a")],
                          capture_output=True, text=True, env=env, timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode == EXIT_ENVIRONMENT, proc.stdout + proc.stderr
    assert "az_not_found" in proc.stdout and "Could not identify" not in proc.stdout


def test_with_gemini_no_request_reaches_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  fake_bin: Path) -> None:
    """The real Gemini brain and SDK against the fake server: a stopped preflight sends it nothing."""
    fake_az.install(fake_bin, "not_logged_in")
    fake = FakeGemini([FakeTurn.say("should never be asked")])
    try:
        monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{SYSTEM_PATH}")
        monkeypatch.setenv("GEMINI_API_KEY", "AIzaSy-test-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        out = io.StringIO()
        code = run_agent(Options(audit_dir=tmp_path / "audit", brain="gemini", intent=INTENT),
                         stdin=io.StringIO(""), console=Console(file=out, width=250))
        assert code == EXIT_ENVIRONMENT and "[ERROR] az_not_logged_in: " in out.getvalue()
        assert fake.requests == []
    finally:
        fake.close()
