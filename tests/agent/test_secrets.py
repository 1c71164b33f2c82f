"""No secret from a tool output or from the user's text reaches the model.

Secrets are planted where an investigation meets them: in a lab world (an NSG rule's description, which
``az network nsg show`` prints, carries a storage connection string with its account key and a SAS URL),
in a local file that a RISKY ``cat`` (approved by ``--yes`` in the lab) prints, and in the problem
statement. The investigation runs through the real google-genai SDK against the fake Gemini server;
every request body the server received is searched, as raw bytes and as decoded JSON, for each secret.
The non-secret parts of the same texts must arrive, so the test proves the outputs did reach the model.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from netghost.agent.cli import main
from netghost.contracts import SessionState
from netghost.governance import read_wal
from netghost.lab.fake_gemini import FakeCall, FakeGemini, FakeTurn
from netghost.lab.world import SCENARIO_DIR

ACCOUNT_KEY = "c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5MTI="
SAS_SIG = "Qk9HVVNTSUdOQVRVUkVWQUxVRTEyMzQ1Njc4OTBhYmNk%3D"
PASSWORD = "Tr0ub4dor-Planted-77"
INTENT_KEY = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MTIzNA=="
SECRETS = (ACCOUNT_KEY, SAS_SIG, SAS_SIG.replace("%3D", "="), PASSWORD, INTENT_KEY)

CONNECTION = (f"DefaultEndpointsProtocol=https;AccountName=forensicssa;AccountKey={ACCOUNT_KEY};"
              "EndpointSuffix=core.windows.net")
SAS_URL = (f"https://forensicssa.blob.core.windows.net/captures/seed.cap?sv=2022-11-02&ss=b&srt=o&sp=r"
           f"&se=2030-01-01T00:00:00Z&spr=https&sig={SAS_SIG}")


def _world(tmp_path: Path) -> Path:
    """nsg-deny with the deny rule's description carrying a connection string and a SAS URL."""
    data = yaml.safe_load((SCENARIO_DIR / "nsg-deny.yaml").read_text())
    data["name"] = "nsg-deny-secrets"
    rule = data["nsgs"][1]["rules"][0]
    rule["description"] = f"INC-4411 lockdown; conn {CONNECTION}; evidence {SAS_URL}"
    path = tmp_path / "nsg-deny-secrets.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _script(notes: Path) -> list[FakeTurn]:
    return [
        FakeTurn.call("run_shell_cmd", {"command": "az network nsg show -g prod-rg -n nsg-data -o json",
                                        "reasoning": "Read the data subnet's NSG."}, text="Reading the NSG."),
        FakeTurn(calls=(FakeCall("run_shell_cmd", {"command": f"cat {notes}", "reasoning": "Read the notes."}),
                        FakeCall("run_shell_cmd", {"command": "az network nsg rule list -g prod-rg "
                                                              "--nsg-name nsg-data -o json",
                                                   "reasoning": "List the rules."}))),
        FakeTurn.call("complete_investigation", {"confidence": "high",
                                                 "root_cause_summary": "DenyAllFromWebSubnet blocks 6379."}),
    ]


def _sent(fake: FakeGemini) -> list[str]:
    """Every request body as it went over the wire, and decoded (JSON escapes undone)."""
    bodies = [raw.decode("utf-8", "replace") for raw in fake.raw]
    bodies += [json.dumps(body, ensure_ascii=False) for body in fake.requests]
    return bodies


def test_no_planted_secret_reaches_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit"
    audit.mkdir()
    notes = audit / "notes.txt"
    notes.write_text(f"redis admin\npassword={PASSWORD}\nstorage {CONNECTION}\n")
    world = _world(tmp_path)
    with FakeGemini(_script(notes)) as fake:
        monkeypatch.setenv("GEMINI_API_KEY", "x")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        code = main(["--lab", str(world), "--audit-dir", str(audit), "--yes", "--intent",
                     f"web cannot reach redis on 6379; my key is AccountKey={INTENT_KEY} and my password={PASSWORD}"])
        sent = _sent(fake)
        assert fake.failures == []
    out = capsys.readouterr().out
    assert code == 0, out
    assert len(fake.raw) == 3
    # the outputs did reach the model: their non-secret parts are there
    joined = "\n".join(sent)
    assert "INC-4411 lockdown" in joined and "AccountName=forensicssa" in joined
    assert "forensicssa.blob.core.windows.net/captures/seed.cap" in joined and "redis admin" in joined
    for secret in SECRETS:
        leaks = [i for i, body in enumerate(sent) if secret in body]
        assert leaks == [], f"{secret[:12]}... reached the model in request(s) {leaks}"
    # the cat really ran (approved by --yes), so its output was there to leak
    sid = SessionState.model_validate(json.loads((audit / "ghost_session.json").read_text())).session_id
    records = read_wal(audit / f"shell_audit_{sid}.jsonl").records
    cat = next(r for r in records if str(r["command"]).startswith("cat "))
    assert (cat["classification"], cat["action"], cat["exit_code"]) == ("RISKY", "user_approved", 0)
    # nor does the agent's own journal keep one
    journal = (audit / f"ghost_turns_{sid}.jsonl").read_text()
    assert not [s for s in SECRETS if s in journal]
