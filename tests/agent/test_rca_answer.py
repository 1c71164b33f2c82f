"""The RCA opens with one screen that answers: symptom, root cause, fix, confidence and why, evidence."""

from __future__ import annotations

import json
import re

import pytest

from netghost.agent._answer import first_sentence, fix_command
from netghost.agent.cli import main

INTENT = "web-vm-01 cannot reach redis-primary on 6379"


def test_the_fix_is_the_first_command_the_actions_give() -> None:
    assert fix_command(["Narrow the rule (`az network nsg rule update -g rg --nsg-name n -n r ...`), then retest."]) \
        == ("az network nsg rule update -g rg --nsg-name n -n r ...",
            "Narrow the rule (`az network nsg rule update -g rg --nsg-name n -n r ...`), then retest.")
    assert fix_command(["Ask the network team.", "az network vnet peering sync -g rg --vnet-name v -n p"]) \
        == ("az network vnet peering sync -g rg --vnet-name v -n p", None)  # a bare command needs no words
    assert fix_command(["Use `rm -rf /` now."]) == (None, "Use `rm -rf /` now.")  # not a command a CLI fix names
    assert fix_command([]) == (None, None)


def test_the_root_cause_is_one_sentence_and_addresses_stay_whole() -> None:
    assert first_sentence("Rule X denies 10.1.2.4:6379. Evidence: a, b.") == "Rule X denies 10.1.2.4:6379."
    assert first_sentence("no full stop at all") == "no full stop at all"
    assert len(first_sentence("x" * 1000)) == 400


@pytest.fixture(scope="module")
def rca(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, set[str]]:
    root = tmp_path_factory.mktemp("answer")
    home = root / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
            patch.delenv(name, raising=False)
        assert main(["--lab", "nsg-deny", "--yes", "--brain", "playbook", "--audit-dir", str(root / "audit"),
                     "--intent", INTENT]) == 0
    audit = root / "audit"
    ids = {json.loads(line)["audit_id"] for line in next(audit.glob("shell_audit_*.jsonl")).read_text().splitlines()}
    return next(audit.glob("ghost_rca_*.md")).read_text(), next(audit.glob("ghost_rca_*.html")).read_text(), ids


def test_the_markdown_opens_with_the_answer_and_ends_with_the_command_table(rca: tuple[str, str, set[str]]) -> None:
    md, _, ids = rca
    first_screen = "\n".join(md.splitlines()[:24])
    assert "## The Answer" in first_screen
    assert f"- Symptom: {INTENT}" in first_screen
    assert "- Root cause: NSG nsg-data rule DenyAllFromWebSubnet" in first_screen
    assert "- Fix: `az network nsg rule update" in first_screen
    assert re.search(r"- Confidence: high — the claim checks found", first_screen)
    cited = re.findall(r"ghost_\d{8}_\d{6}_\d{3}", first_screen.split("- Evidence:", 1)[1].splitlines()[0])
    assert cited and set(cited) <= ids  # the evidence is cited, and every id is in the trail
    assert "- Confirmed: h1 “An NSG rule denies" in first_screen  # hypotheses by their text, not bare ids
    headings = re.findall(r"^## (.+)$", md, flags=re.M)
    assert headings[0] == "The Answer" and headings[-1] == "Command Evidence"


def test_the_html_opens_with_the_answer_and_folds_the_command_table(rca: tuple[str, str, set[str]]) -> None:
    _, html, _ = rca
    answer = html.index('<section class="answer"><h2>The Answer</h2>')
    assert answer < html.index("<table")  # before any table
    assert "<dt>Fix</dt><dd><code>az network nsg rule update" in html
    assert re.search(r"<dt>Evidence</dt><dd><a href=\"#ghost_\d{8}_\d{6}_\d{3}\">", html)  # cited ids link
    assert re.search(r"<details><summary><h2>Command Evidence \(\d+ commands\)</h2></summary>", html)
    assert "<script" not in html
